//! The typed PTO representation of an emitted function and its one printer.
//!
//! Emitters push typed instructions ([`Inst`]) whose types are [`PtoType`]s (compared
//! structurally, never as text); [`print`](mod@print) is the only place that renders them as MLIR text.
//!
//! Guarantees: every instruction of a function body is typed (no line of text is carried);
//! a typed instruction prints exactly the text the emitter used to write by hand (the goldens
//! are byte-identical); structured control flow holds its regions as nested lines.

mod inst;
pub mod print;
mod scf;
mod types;

pub use inst::{Dps, Inst, KernelKind, Line, Literal, OpClass, Operand, SyncOp};
pub use scf::{Results, ScfFor, ScfIf, ScfWhile};
pub use types::{elem_bytes, PtoType, TileBuf};

/// The name of a PTO instruction (`pto.tadd`, `arith.addi`).
pub type OpName = &'static str;
