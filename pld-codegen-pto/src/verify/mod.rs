//! The PTO verifier: the assembler's and the ISA's own acceptance rules, checked on the typed
//! instructions of each emitted kernel, before any module is written.
//!
//! Guarantees:
//! - The verifier reads a kernel's typed PTO ([`Kernel`]: its signature, its instruction lines
//!   with their regions, and its tile-address plan), the same data the printer renders into
//!   the module, so it sees what `ptoas` sees; tile types are [`TileBuf`] values compared field
//!   by field. Nothing is recorded on the side while emitting.
//! - [`verify_kernel`] checks every rule in [`rules`] and returns one diagnostic per violation,
//!   at the span of the instruction's line (the IR statement that produced it), naming the
//!   kernel and the instruction, with the instruction as printed in a note.
//! - Nothing here panics on any input: an undecodable type is itself a violation.

mod code;
mod reuse;
pub mod rules;

use crate::pto::{Line, PtoType};
use pld_ir::{Diagnostic, Span, Target};

pub use crate::pto::{elem_bytes, OpClass, TileBuf};

/// One emitted kernel as the verifier reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// The kernel's name.
    pub name: String,
    /// The kernel's own span (for kernel-wide diagnostics and the signature).
    pub span: Span,
    /// The target the module is written for.
    pub target: Target,
    /// The signature's parameters: SSA name and type.
    pub params: Vec<(String, PtoType)>,
    /// The function's lines in print order: hoisted constants, the view prologue, the body.
    pub lines: Vec<Line>,
    /// The tile-address plan the allocations' slots index.
    pub plan: TilePlan,
}

/// The tile-address plan of one kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TilePlan {
    /// The byte address of each allocation slot (`None` when the module prints no `addr`:
    /// some memory's high-water mark exceeds its capacity).
    pub addrs: Option<Vec<u64>>,
    /// The slot whose buffer each slot aliases (a new valid region on the same memory).
    pub aliases: Vec<Option<usize>>,
    /// When each slot's buffer is freed: the number of slots allocated by the time the
    /// planner released the region that allocated it (its space is reused from that slot on);
    /// `None` while the kernel runs.
    pub freed_at: Vec<Option<usize>>,
    /// Peak bytes per `loc` of the stack plan (what did not fit is why `addrs` is `None`).
    pub high: Vec<(String, u64)>,
}

/// The ptoas build level pld writes modules for: `level3` (every `pto.alloc_tile` carries
/// its address), as the reference compiler's default PYPTO memory planner does.
pub const PTO_LEVEL: &str = "level3";

/// Checks one kernel against every rule; one diagnostic per violation.
pub fn verify_kernel(k: &Kernel) -> Vec<Diagnostic> {
    let code = code::Code::new(k);
    let mut out = Vec::new();
    for rule in rules::RULES {
        (rule.check)(&code, &mut out);
    }
    out
}
