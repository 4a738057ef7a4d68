//! The lowerings the pass pipeline applies, registered apart from the ops' records (D4).
//!
//! Passes find these through `OpDef::lowering(kind)`; they never name an op family.
//! [`comm`] is the one shared barrier helper every collective expansion uses.
//!
//! - tensor-to-tile: [`put_get`] (put/get staging), `remote_store` (1:1 with a Vec bridge),
//!   `tensor_elementwise` (core tensor arithmetic on Vec tiles);
//! - composite: [`allreduce`] (mesh and ring), `collectives` (barrier, broadcast,
//!   reduce_scatter, allgather, all_to_all, all_to_all_v);
//! - host builtin: `host` (per-device `builtin.tensor.*` dispatches);
//! - chip builtin: `chip` (one synthesized AIV task per chip-orchestration collective).

pub mod allreduce;
mod chip;
mod collectives;
pub mod comm;
mod host;
pub mod put_get;
mod remote_store;
mod tensor_elementwise;

pub use allreduce::{mesh_chunk_cols, ring_boundary};
