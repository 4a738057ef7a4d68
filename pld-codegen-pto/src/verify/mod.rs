//! The PTO verifier: the assembler's and the ISA's own acceptance rules, checked on what a
//! kernel's emitter rendered, before any module is written.
//!
//! Guarantees:
//! - The emitter records one typed [`Fact`] per tile allocation, region end, tile
//!   instruction, partition view, comm staging group and scalar it renders (each with the
//!   source span of the statement that produced it); [`verify_kernel`] checks those facts
//!   against every rule in [`rules`] and returns one diagnostic per violation, at that span.
//! - Tile types are the typed [`TileBuf`] values the printer renders into the module, so the
//!   verifier sees what `ptoas` sees; they are compared field by field.
//! - Nothing here panics on any input: an undecodable type is itself a violation.

mod record;
pub mod rules;

use pld_ir::{Diagnostic, Span, Target};

pub use crate::pto::{elem_bytes, TileBuf};

/// How a tile instruction relates its operands' types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpClass {
    /// Sources and destination are one tile type (`tadd`, `tmax`, `tmuls`, …).
    Elementwise,
    /// One tile type except the element type (`tcvt`).
    Convert,
    /// Each operand only has to be a well-formed tile (`tload`, `tstore`, reductions, …).
    Other,
}

/// One thing the emitter rendered, as the verifier sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fact {
    /// A `pto.alloc_tile`.
    Alloc {
        /// Its SSA name.
        ssa: String,
        /// Its type.
        ty: TileBuf,
        /// Its constant valid-row/valid-col operands (`None` when runtime values).
        valid: [Option<i64>; 2],
        /// Its allocation slot (index into [`KernelFacts::addrs`]).
        slot: usize,
        /// The slot whose buffer it re-uses (a new valid region on the same memory).
        alias_of: Option<usize>,
        /// Where it came from.
        span: Span,
    },
    /// The end of a region: every slot numbered `from` or higher is dead.
    Release {
        /// The first released slot.
        from: usize,
    },
    /// A tile instruction with its tile operands, sources first, destination last.
    TileOp {
        /// The instruction (`pto.tadd`).
        inst: String,
        /// How the operands' types must relate.
        class: OpClass,
        /// `(ssa, type)` of each tile operand.
        tiles: Vec<(String, TileBuf)>,
        /// Where it came from.
        span: Span,
    },
    /// A `pto.partition_view` of a tensor view.
    Partition {
        /// The tensor's name.
        tensor: String,
        /// The tensor view's dims (`None` dynamic).
        dims: Vec<Option<i64>>,
        /// Constant offsets (`None` runtime).
        offsets: Vec<Option<i64>>,
        /// Constant sizes (`None` runtime).
        sizes: Vec<Option<i64>>,
        /// Elements the innermost dim may run past its extent: a remote load with
        /// `allow_physical_tail_padding` rounds an FP16 tail's read span up to 32 bytes (less
        /// than one 32-byte unit past the end), else 0.
        tail_slack: i64,
        /// Where it came from.
        span: Span,
    },
    /// The staging tiles of a `pto.comm.tput` / `pto.comm.tget`.
    CommStage {
        /// The instruction.
        inst: String,
        /// The element type of the transfer's source.
        src_dtype: String,
        /// `(ssa, type)` of each staging tile.
        stages: Vec<(String, TileBuf)>,
        /// Where it came from.
        span: Span,
    },
    /// A scalar type the module spells (signature parameters, scalar operands).
    Scalar {
        /// What the scalar is.
        what: String,
        /// Its MLIR type spelling.
        ty: String,
        /// Where it came from.
        span: Span,
    },
}

/// Everything the verifier knows about one emitted kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelFacts {
    /// The kernel's name.
    pub kernel: String,
    /// The kernel's own span (for kernel-wide diagnostics).
    pub span: Span,
    /// The target the module is written for.
    pub target: Target,
    /// The facts, in emission order.
    pub facts: Vec<Fact>,
    /// The byte address of each allocation slot (`None` when the module prints no `addr`).
    pub addrs: Option<Vec<u64>>,
    /// Peak bytes per `loc` of the stack plan (what did not fit is why `addrs` is `None`).
    pub high: Vec<(String, u64)>,
}

/// The ptoas build level pld writes modules for: `level3` (every `pto.alloc_tile` carries
/// its address), as the reference compiler's default PYPTO memory planner does.
pub const PTO_LEVEL: &str = "level3";

/// Checks one kernel against every rule; one diagnostic per violation.
pub fn verify_kernel(k: &KernelFacts) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for rule in rules::RULES {
        (rule.check)(k, &mut out);
    }
    out
}
