//! The lowerings the pass pipeline applies, registered apart from the ops' records (D4).
//!
//! Passes find these through `OpDef::lowering(kind)`; they never name an op family.
//! [`comm`] is the one shared barrier helper every collective expansion uses.

pub mod allreduce;
mod collectives;
pub mod comm;
mod put_get;
mod remote_store;
mod tensor_elementwise;
pub use allreduce::{mesh_chunk_cols, ring_boundary};
mod chip;
mod host;
