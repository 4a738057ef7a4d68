//! The encoded acceptance rules, one function each, with the assembler or ISA source each
//! mirrors (`docs/decisions/codegen.md` D-cg-16 lists the same table).
//!
//! Guarantees: every rule only reads [`KernelFacts`]; a violation is an error diagnostic at
//! the span of the op that produced the offending value, naming the kernel, and — where the
//! fix is mechanical — a note saying what to write instead.

use super::{Fact, KernelFacts, OpClass, TileBuf};
use crate::mlir;
use pld_ir::{Diagnostic, Span};

/// One encoded rule.
#[derive(Debug)]
pub struct Rule {
    /// Short stable name (used in messages and tests).
    pub id: &'static str,
    /// The assembler / ISA source the rule mirrors.
    pub mirrors: &'static str,
    /// The check.
    pub check: fn(&KernelFacts, &mut Vec<Diagnostic>),
}

/// Every rule, in the order they are checked.
pub const RULES: &[Rule] = &[
    Rule {
        id: "tile-row-align",
        mirrors: "pto-isa include/pto/common/pto_tile.hpp Tile static_assert (row_major/none_box: Cols*sizeof(T) % 32; col_major/none_box: Rows*sizeof(T) % 32; boxed: Rows/Cols multiples of the inner box); ptoas 0.60 pto.alloc_tile verifier (\"row byte size (cols * sizeof(dtype)) to be 32-byte aligned\")",
        check: row_align,
    },
    Rule {
        id: "tile-valid-shape",
        mirrors: "PTOAS lib/PTO/IR/PTO.cpp verifyTileBufCommon (valid_shape[i] <= shape[i]); pto_tile.hpp static_assert(ValidRow <= Rows && ValidCol <= Cols)",
        check: valid_shape,
    },
    Rule {
        id: "elementwise-one-tile-type",
        mirrors: "PTOAS lib/PTO/IR/PTO.cpp TAddOp::verify (verifyTileBufSameElemType, verifyTileBufSameValidShape, row-major operands); pto-isa CPU-simulation TADD_IMPL/TMAX_IMPL/... take one TileData type for src0, src1 and dst",
        check: one_tile_type,
    },
    Rule {
        id: "tile-buffer-capacity",
        mirrors: "runtime.md §2.1 (UB 192 KiB on A2/A3, 256 KiB on A5; L1 512 KiB; L0A/L0B 64 KiB; L0C 128/256 KiB); ptoas level3 takes pto.alloc_tile addr as given (no PlanMemory pass)",
        check: capacity,
    },
    Rule {
        id: "level3-addresses",
        mirrors: "PTOAS tools/ptoas/ptoas.cpp: \"requires 'addr' operand when --pto-level=level3\"",
        check: level3,
    },
    Rule {
        id: "comm-stage-vec",
        mirrors: "codegen.md §6 V3 (pto.comm.tput/tget staging tiles: loc=vec, static positive rows/cols, element type of src, pong type == ping type)",
        check: comm_stage,
    },
    Rule {
        id: "partition-view",
        mirrors: "codegen.md §6 V7 / PTOAS PartitionViewOp verifier (offset/size count == source rank, constant offset >= 0, constant size > 0, static offset+size <= static dim)",
        check: partition,
    },
    Rule {
        id: "signless-scalar",
        mirrors: "MLIR arith (integer operands are signless iN) and ptoas P5 (scalar operands index/i1/iN/f16/bf16/f32)",
        check: signless,
    },
];

fn error(k: &KernelFacts, span: Span, rule: &str, msg: String) -> Diagnostic {
    Diagnostic::error(span.or(k.span), format!("kernel '{}': {msg} [pto verifier: {rule}]", k.kernel))
}

fn align_up(v: i64, to: i64) -> i64 {
    if to <= 0 {
        return v;
    }
    v.saturating_add(to - 1) / to * to
}

/// The extent the fix suggestion keeps as `valid_shape`.
fn logical(valid: Option<i64>, ty_valid: Option<i64>, phys: i64) -> i64 {
    valid.or(ty_valid).unwrap_or(phys)
}

fn row_align(k: &KernelFacts, out: &mut Vec<Diagnostic>) {
    // Every allocation, and every other tile an instruction names (a `pto.subview` is a tile
    // type of its own), once.
    let mut seen = std::collections::HashSet::new();
    let mut tiles: Vec<(&str, TileBuf, [Option<i64>; 2], Span)> = Vec::new();
    for f in &k.facts {
        if let Fact::Alloc { ssa, ty, valid, span, .. } = f {
            seen.insert(ssa.as_str());
            tiles.push((ssa, ty.clone(), *valid, *span));
        }
    }
    for f in &k.facts {
        if let Fact::TileOp { tiles: ops, span, .. } = f {
            for (ssa, ty) in ops {
                if seen.insert(ssa.as_str()) {
                    tiles.push((ssa, ty.clone(), [None, None], *span));
                }
            }
        }
    }
    for (ssa, ty, valid, span) in &tiles {
        let (ssa, ty, valid, span) = (*ssa, ty, valid, span);
        let Some(eb) = ty.elem_bytes() else {
            out.push(error(
                k,
                *span,
                "tile-row-align",
                format!("tile {ssa} has element type {} with no known size", ty.dtype),
            ));
            continue;
        };
        let (vr, vc) = (logical(valid[0], ty.valid[0], ty.rows), logical(valid[1], ty.valid[1], ty.cols));
        if ty.slayout == "none_box" {
            let (dim, what, other) = match ty.blayout.as_str() {
                "col_major" => (ty.rows, "rows", "column"),
                _ => (ty.cols, "cols", "row"),
            };
            if dim.saturating_mul(eb) % 32 != 0 {
                let fix = align_up(dim, 32 / eb.max(1));
                let (pr, pc) = if what == "cols" { (ty.rows, fix) } else { (fix, ty.cols) };
                out.push(
                    error(
                        k,
                        *span,
                        "tile-row-align",
                        format!(
                            "tile {ssa} [{}, {}] {}: a {} {other} must be a multiple of 32 bytes, but {dim} x {eb} bytes = {} bytes",
                            ty.rows,
                            ty.cols,
                            ty.dtype,
                            ty.blayout.replace('_', "-"),
                            dim.saturating_mul(eb)
                        ),
                    )
                    .with_note(format!(
                        "pad {what} to {fix} (shape [{pr}, {pc}]) and pass valid_shape=[{vr}, {vc}] to keep the logical extent"
                    )),
                );
            }
            continue;
        }
        // Boxed (fractal) layouts: whole inner boxes.
        let (ir, ic) = match ty.fractal {
            1024 => (16, 16),
            32 => (16, 2),
            _ if ty.slayout == "row_major" => (16, 32 / eb.max(1)),
            _ => (32 / eb.max(1), 16),
        };
        let rows_ok = ty.loc == "vec" || ty.fractal == 32 || ty.rows % ir == 0;
        if !rows_ok || ty.cols % ic != 0 {
            out.push(
                error(
                    k,
                    *span,
                    "tile-row-align",
                    format!(
                        "tile {ssa} [{}, {}] {} in {} ({} boxes): rows must be a multiple of {ir} and cols of {ic}",
                        ty.rows, ty.cols, ty.dtype, ty.loc, ty.slayout
                    ),
                )
                .with_note(format!(
                    "pad the shape to [{}, {}] and pass valid_shape=[{vr}, {vc}]",
                    align_up(ty.rows, ir),
                    align_up(ty.cols, ic)
                )),
            );
        }
    }
}

fn check_valid(
    k: &KernelFacts,
    ssa: &str,
    ty: &TileBuf,
    valid: [Option<i64>; 2],
    span: Span,
    out: &mut Vec<Diagnostic>,
) {
    if ty.rows <= 0 || ty.cols <= 0 {
        out.push(error(
            k,
            span,
            "tile-valid-shape",
            format!("tile {ssa} has a non-positive physical shape [{}, {}]", ty.rows, ty.cols),
        ));
        return;
    }
    for (what, v, phys) in [("row", ty.valid[0], ty.rows), ("col", ty.valid[1], ty.cols)] {
        if let Some(v) = v {
            if v <= 0 || v > phys {
                out.push(error(
                    k,
                    span,
                    "tile-valid-shape",
                    format!("tile {ssa} has v_{what}={v} outside its physical extent 1..={phys}"),
                ));
            }
        }
    }
    for (what, v, phys) in [("rows", valid[0], ty.rows), ("cols", valid[1], ty.cols)] {
        if let Some(v) = v {
            if v < 0 || v > phys {
                out.push(error(
                    k,
                    span,
                    "tile-valid-shape",
                    format!("tile {ssa}: valid {what} {v} exceed its physical {what} {phys} (valid_shape must lie within the shape)"),
                ));
            }
        }
    }
}

fn valid_shape(k: &KernelFacts, out: &mut Vec<Diagnostic>) {
    for f in &k.facts {
        match f {
            Fact::Alloc { ssa, ty, valid, span, .. } => check_valid(k, ssa, ty, *valid, *span, out),
            Fact::TileOp { tiles, span, .. } => {
                for (ssa, ty) in tiles {
                    check_valid(k, ssa, ty, [None, None], *span, out);
                }
            }
            _ => {}
        }
    }
}

/// The fields in which two tile types differ (`dtype` ignored when `skip_dtype`).
fn differing(a: &TileBuf, b: &TileBuf, skip_dtype: bool) -> Vec<String> {
    let q = |v: Option<i64>| v.map_or_else(|| "?".to_string(), |x| x.to_string());
    let mut d = Vec::new();
    let mut cmp = |name: &str, x: String, y: String| {
        if x != y {
            d.push(format!("{name} {x} vs {y}"));
        }
    };
    cmp("loc", a.loc.clone(), b.loc.clone());
    if !skip_dtype {
        cmp("dtype", a.dtype.clone(), b.dtype.clone());
    }
    cmp("rows", a.rows.to_string(), b.rows.to_string());
    cmp("cols", a.cols.to_string(), b.cols.to_string());
    cmp("v_row", q(a.valid[0]), q(b.valid[0]));
    cmp("v_col", q(a.valid[1]), q(b.valid[1]));
    cmp("blayout", a.blayout.clone(), b.blayout.clone());
    cmp("slayout", a.slayout.clone(), b.slayout.clone());
    cmp("fractal", a.fractal.to_string(), b.fractal.to_string());
    cmp("pad", a.pad.to_string(), b.pad.to_string());
    d
}

fn one_tile_type(k: &KernelFacts, out: &mut Vec<Diagnostic>) {
    for f in &k.facts {
        let Fact::TileOp { inst, class, tiles, span } = f else { continue };
        if *class == OpClass::Other || tiles.len() < 2 {
            continue;
        }
        let Some(((dst, dty), srcs)) = tiles.split_last() else { continue };
        let convert = *class == OpClass::Convert;
        let what = if convert { "one tile type apart from the element type" } else { "one tile type" };
        // Two sources that differ are the program's to fix; a destination unlike its (agreeing)
        // sources is how it was allocated.
        let mut mismatch = |pair: String, d: Vec<String>, note: &str| {
            if !d.is_empty() {
                let msg = format!("{inst} {pair}, but they differ in {}", d.join(", "));
                out.push(error(k, *span, "elementwise-one-tile-type", msg).with_note(note));
            }
        };
        if let Some((first, fty)) = srcs.first() {
            for (ssa, ty) in &srcs[1..] {
                mismatch(
                    format!("sources {first} and {ssa} must be one tile type"),
                    differing(fty, ty, false),
                    "give both operands the same shape, valid_shape and padding (apply pl.fillpad to both or to neither)",
                );
            }
            mismatch(
                format!("source {first} and destination {dst} must be {what}"),
                differing(fty, dty, convert),
                "the ISA's CPU-simulation build instantiates the instruction with one tile type for every operand; allocate the destination like its sources (same shape, layout, fractal and pad)",
            );
        }
    }
}

fn capacity(k: &KernelFacts, out: &mut Vec<Diagnostic>) {
    let Some(addrs) = &k.addrs else { return };
    // (slot, loc, start, end, ssa) of every live non-alias allocation.
    let mut live: Vec<(usize, String, u64, u64, String)> = Vec::new();
    for f in &k.facts {
        match f {
            Fact::Release { from } => live.retain(|l| l.0 < *from),
            Fact::Alloc { ssa, ty, slot, alias_of: None, span, .. } => {
                let Some(&addr) = addrs.get(*slot) else {
                    out.push(error(k, *span, "tile-buffer-capacity", format!("tile {ssa} has no address")));
                    continue;
                };
                let end = addr.saturating_add(ty.bytes().max(0) as u64);
                let cap = mlir::capacity(&ty.loc, k.target);
                if end > cap {
                    out.push(error(
                        k,
                        *span,
                        "tile-buffer-capacity",
                        format!(
                            "tile {ssa} occupies {} bytes {addr}..{end} of {}, past its {cap}-byte capacity on '{}'",
                            ty.bytes(),
                            ty.loc,
                            k.target.name()
                        ),
                    ));
                }
                if addr % 32 != 0 {
                    out.push(error(
                        k,
                        *span,
                        "tile-buffer-capacity",
                        format!("tile {ssa} address {addr} is not 32-byte aligned"),
                    ));
                }
                if let Some(o) = live.iter().find(|l| l.1 == ty.loc && l.2 < end && addr < l.3) {
                    out.push(error(
                        k,
                        *span,
                        "tile-buffer-capacity",
                        format!(
                            "tile {ssa} ({addr}..{end} of {}) overlaps live tile {} ({}..{})",
                            ty.loc, o.4, o.2, o.3
                        ),
                    ));
                }
                live.push((*slot, ty.loc.clone(), addr, end, ssa.clone()));
            }
            _ => {}
        }
    }
}

fn level3(k: &KernelFacts, out: &mut Vec<Diagnostic>) {
    if k.addrs.is_some() || !k.facts.iter().any(|f| matches!(f, Fact::Alloc { .. })) {
        return;
    }
    let over: Vec<String> = k
        .high
        .iter()
        .filter_map(|(loc, h)| {
            let cap = mlir::capacity(loc, k.target);
            (*h > cap).then(|| format!("{h} bytes of {loc} (capacity {cap})"))
        })
        .collect();
    let detail = if over.is_empty() { "its tiles have no addresses".to_string() } else { over.join(", ") };
    out.push(
        error(
            k,
            k.span,
            "level3-addresses",
            format!(
                "the tile buffers do not fit the '{}' target: {detail}; ptoas --pto-level={} needs an address on every pto.alloc_tile",
                k.target.name(),
                super::PTO_LEVEL
            ),
        )
        .with_note("use smaller tiles (process the data in chunks) or release tiles earlier by scoping them in a loop body"),
    );
}

fn comm_stage(k: &KernelFacts, out: &mut Vec<Diagnostic>) {
    for f in &k.facts {
        let Fact::CommStage { inst, src_dtype, stages, span } = f else { continue };
        for (ssa, ty) in stages {
            if ty.loc != "vec" {
                out.push(error(
                    k,
                    *span,
                    "comm-stage-vec",
                    format!("{inst} staging tile {ssa} is in {}; comm staging tiles must be in the vec address space", ty.loc),
                ));
            }
            if ty.rows <= 0 || ty.cols <= 0 {
                out.push(error(
                    k,
                    *span,
                    "comm-stage-vec",
                    format!("{inst} staging tile {ssa} needs static positive rows/cols"),
                ));
            }
            if &ty.dtype != src_dtype {
                out.push(error(
                    k,
                    *span,
                    "comm-stage-vec",
                    format!(
                        "{inst} staging tile {ssa} has element type {}, the transfer moves {src_dtype}",
                        ty.dtype
                    ),
                ));
            }
        }
        if let [(_, a), (pong, b)] = stages.as_slice() {
            if a != b {
                out.push(error(
                    k,
                    *span,
                    "comm-stage-vec",
                    format!("{inst} pong tile {pong} must have the ping tile's type"),
                ));
            }
        }
    }
}

fn partition(k: &KernelFacts, out: &mut Vec<Diagnostic>) {
    for f in &k.facts {
        let Fact::Partition { tensor, dims, offsets, sizes, tail_slack, span } = f else { continue };
        let rank = dims.len();
        if offsets.len() != rank || sizes.len() != rank {
            out.push(error(
                k,
                *span,
                "partition-view",
                format!(
                    "partition of '{tensor}' has {} offsets and {} sizes for a rank-{rank} tensor view",
                    offsets.len(),
                    sizes.len()
                ),
            ));
            continue;
        }
        for (i, ((d, o), s)) in dims.iter().zip(offsets).zip(sizes).enumerate() {
            if let Some(o) = o {
                if *o < 0 {
                    out.push(error(
                        k,
                        *span,
                        "partition-view",
                        format!("partition of '{tensor}' has offset {o} < 0 in dimension {i}"),
                    ));
                }
            }
            if let Some(s) = s {
                if *s <= 0 {
                    out.push(error(
                        k,
                        *span,
                        "partition-view",
                        format!("partition of '{tensor}' has size {s} <= 0 in dimension {i}"),
                    ));
                }
                if let Some(d) = d {
                    let end = o.unwrap_or(0).saturating_add(*s);
                    let slack = if i + 1 == rank { *tail_slack } else { 0 };
                    if end > d.saturating_add(slack) {
                        out.push(error(
                            k,
                            *span,
                            "partition-view",
                            format!(
                                "partition of '{tensor}' exceeds dimension {i}: offset {} + size {s} > {d}",
                                o.unwrap_or(0)
                            ),
                        ));
                    }
                }
            }
        }
    }
}

fn signless(k: &KernelFacts, out: &mut Vec<Diagnostic>) {
    for f in &k.facts {
        let Fact::Scalar { what, ty, span } = f else { continue };
        let ok =
            matches!(ty.as_str(), "i1" | "i8" | "i16" | "i32" | "i64" | "index" | "f16" | "bf16" | "f32");
        if !ok {
            out.push(
                error(
                    k,
                    *span,
                    "signless-scalar",
                    format!("{what} has scalar type {ty}; pto scalars are signless (iN), index or float"),
                )
                .with_note("unsigned integers are spelled as signless iN of the same width"),
            );
        }
    }
}
