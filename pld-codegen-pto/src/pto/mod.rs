//! The typed PTO representation of an emitted function and its one printer.
//!
//! Emitters push typed instructions ([`Inst`]) whose types are [`PtoType`]s (compared
//! structurally, never as text); [`print`] is the only place that renders them as MLIR text.
//!
//! Guarantees: a typed instruction prints exactly the text the emitter used to write by hand
//! (the goldens are byte-identical); an instruction not yet ported to a typed form is carried
//! as [`Inst::Text`] and printed verbatim.

mod inst;
pub mod print;
mod types;

pub use inst::{Dps, Inst, Line, Operand, SyncOp};
pub use types::{elem_bytes, PtoType, TileBuf};
