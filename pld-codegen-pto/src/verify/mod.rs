//! The PTO verifier: the assembler's and the ISA's own acceptance rules, checked on what a
//! kernel's emitter rendered, before any module is written.
//!
//! Guarantees:
//! - The emitter records one typed [`Fact`] per tile allocation, region end, tile
//!   instruction, partition view, comm staging group and scalar it renders (each with the
//!   source span of the statement that produced it); [`verify_kernel`] checks those facts
//!   against every rule in [`rules`] and returns one diagnostic per violation, at that span.
//! - Tile types are the exact `!pto.tile_buf<…>` strings the module prints, decoded once
//!   ([`TileBuf::parse`]), so the verifier sees what `ptoas` sees.
//! - Nothing here panics on any input: an undecodable type is itself a violation.

mod record;
pub mod rules;

use pld_ir::{Diagnostic, Span, Target};

/// A decoded long-form `!pto.tile_buf<…>` type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileBuf {
    /// `loc=` (`vec`, `mat`, `left`, `right`, `acc`, `bias`, `scaling`).
    pub loc: String,
    /// `dtype=` spelling.
    pub dtype: String,
    /// Physical rows.
    pub rows: i64,
    /// Physical cols.
    pub cols: i64,
    /// The valid extent `[v_row=, v_col=]` (`None` for `?`, a dynamic extent).
    pub valid: [Option<i64>; 2],
    /// `blayout=`.
    pub blayout: String,
    /// `slayout=`.
    pub slayout: String,
    /// `fractal=`.
    pub fractal: i64,
    /// `pad=`.
    pub pad: i64,
}

impl TileBuf {
    /// Decodes a long-form tile buffer type; `None` when `ty` is not one.
    pub fn parse(ty: &str) -> Option<TileBuf> {
        let body = ty.trim().strip_prefix("!pto.tile_buf<")?.strip_suffix('>')?;
        let mut t = TileBuf {
            loc: String::new(),
            dtype: String::new(),
            rows: 0,
            cols: 0,
            valid: [None; 2],
            blayout: String::new(),
            slayout: String::new(),
            fractal: 0,
            pad: 0,
        };
        let num = |v: &str| v.parse::<i64>().ok();
        let valid = |v: &str| if v == "?" { Some(None) } else { num(v).map(Some) };
        let mut seen = 0;
        for field in body.split(", ") {
            let (k, v) = field.split_once('=')?;
            match k {
                "loc" => t.loc = v.to_string(),
                "dtype" => t.dtype = v.to_string(),
                "rows" => t.rows = num(v)?,
                "cols" => t.cols = num(v)?,
                "v_row" => t.valid[0] = valid(v)?,
                "v_col" => t.valid[1] = valid(v)?,
                "blayout" => t.blayout = v.to_string(),
                "slayout" => t.slayout = v.to_string(),
                "fractal" => t.fractal = num(v)?,
                "pad" => t.pad = num(v)?,
                "compact" => continue,
                _ => return None,
            }
            seen += 1;
        }
        (seen == 10).then_some(t)
    }

    /// Bytes of one element (`None` for an unknown spelling).
    pub fn elem_bytes(&self) -> Option<i64> {
        elem_bytes(&self.dtype)
    }

    /// The buffer's byte size (`rows * cols * elem`), saturating.
    pub fn bytes(&self) -> i64 {
        self.rows.saturating_mul(self.cols).saturating_mul(self.elem_bytes().unwrap_or(1))
    }
}

impl std::fmt::Display for TileBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let q = |v: Option<i64>| v.map_or_else(|| "?".to_string(), |x| x.to_string());
        write!(
            f,
            "!pto.tile_buf<loc={}, dtype={}, rows={}, cols={}, v_row={}, v_col={}, blayout={}, slayout={}, fractal={}, pad={}>",
            self.loc,
            self.dtype,
            self.rows,
            self.cols,
            q(self.valid[0]),
            q(self.valid[1]),
            self.blayout,
            self.slayout,
            self.fractal,
            self.pad
        )
    }
}

/// Bytes of one element of a PTO element-type spelling (sub-byte packed types count 1).
pub fn elem_bytes(dtype: &str) -> Option<i64> {
    Some(match dtype {
        "f32" | "i32" | "ui32" => 4,
        "f16" | "bf16" | "i16" | "ui16" => 2,
        "i8" | "ui8" | "i1" | "f8E4M3FN" | "f8E5M2" | "!pto.f8E8M0" | "!pto.hif8" | "!pto.f4E2M1x2" => 1,
        "i64" | "ui64" => 8,
        _ => return None,
    })
}

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
        tiles: Vec<(String, String)>,
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
        stages: Vec<(String, String)>,
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
