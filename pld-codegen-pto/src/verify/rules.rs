//! The encoded acceptance rules, one function each, with the assembler or ISA source each
//! mirrors (`docs/decisions/codegen.md` D-cg-16 lists the same table).
//!
//! Guarantees: every rule only reads the kernel's typed instructions, signature and tile plan
//! (through the verifier's `Code` view); a violation is an error diagnostic at the span of the
//! instruction that produced the offending value, naming the kernel and the instruction, and —
//! where the fix is mechanical — a note saying what to write instead.

use super::code::Code;
use super::{OpClass, TileBuf};
use crate::mlir;
use crate::pto::{Inst, Line, PtoType};
use pld_ir::Diagnostic;
use std::collections::HashSet;

/// One encoded rule.
#[derive(Debug)]
pub struct Rule {
    /// Short stable name (used in messages and tests).
    pub id: &'static str,
    /// The assembler / ISA source the rule mirrors.
    pub mirrors: &'static str,
    /// The check.
    pub(crate) check: fn(&Code<'_>, &mut Vec<Diagnostic>),
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
        id: "tile-buffer-reuse",
        mirrors: "pto-isa docs/isa (a tile is a buffer at its TASSIGN/addr address; an instruction reads its sources from and writes its destination to those bytes, elementwise ops element by element) and ptoas level3 (addresses taken as given): a tile whose bytes a later allocation took holds that tile's data, not its own",
        check: super::reuse::reuse,
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

/// The constant `valid_row` / `valid_col` operands of an allocation (`None` when absent or a
/// runtime value).
fn alloc_valid(c: &Code<'_>, row: &Option<String>, col: &Option<String>) -> [Option<i64>; 2] {
    [row.as_deref().and_then(|v| c.int(v)), col.as_deref().and_then(|v| c.int(v))]
}

/// A tile the rules check: its SSA name, type, constant valid operands and the line naming it.
type NamedTile<'k> = (&'k str, &'k TileBuf, [Option<i64>; 2], &'k Line);

/// Every allocated tile, then every other tile a tile instruction names (a `pto.subview` is
/// a tile type of its own), once each.
fn tiles<'k>(c: &Code<'k>) -> Vec<NamedTile<'k>> {
    let mut seen = HashSet::new();
    let mut tiles = Vec::new();
    for l in c.lines() {
        if let Inst::AllocTile { result, valid_row, valid_col, ty, .. } = &l.inst {
            seen.insert(result.as_str());
            tiles.push((result.as_str(), ty, alloc_valid(c, valid_row, valid_col), l));
        }
    }
    for l in c.lines() {
        if let Inst::Dps(d) = &l.inst {
            for (ssa, ty) in d.tiles() {
                if seen.insert(ssa) {
                    tiles.push((ssa, ty, [None, None], l));
                }
            }
        }
    }
    tiles
}

fn row_align(c: &Code<'_>, out: &mut Vec<Diagnostic>) {
    for (ssa, ty, valid, line) in tiles(c) {
        let at = Some(line);
        let Some(eb) = ty.elem_bytes() else {
            let msg = format!("tile {ssa} has element type {} with no known size", ty.dtype);
            out.push(c.error(at, "tile-row-align", msg));
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
                let msg = format!(
                    "tile {ssa} [{}, {}] {}: a {} {other} must be a multiple of 32 bytes, but {dim} x {eb} bytes = {} bytes",
                    ty.rows,
                    ty.cols,
                    ty.dtype,
                    ty.blayout.replace('_', "-"),
                    dim.saturating_mul(eb)
                );
                out.push(c.error(at, "tile-row-align", msg).with_note(format!(
                    "pad {what} to {fix} (shape [{pr}, {pc}]) and pass valid_shape=[{vr}, {vc}] to keep the logical extent"
                )));
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
            let msg = format!(
                "tile {ssa} [{}, {}] {} in {} ({} boxes): rows must be a multiple of {ir} and cols of {ic}",
                ty.rows, ty.cols, ty.dtype, ty.loc, ty.slayout
            );
            out.push(c.error(at, "tile-row-align", msg).with_note(format!(
                "pad the shape to [{}, {}] and pass valid_shape=[{vr}, {vc}]",
                align_up(ty.rows, ir),
                align_up(ty.cols, ic)
            )));
        }
    }
}

fn check_valid(c: &Code<'_>, tile: NamedTile<'_>, out: &mut Vec<Diagnostic>) {
    let (ssa, ty, valid, line) = tile;
    let at = Some(line);
    if ty.rows <= 0 || ty.cols <= 0 {
        let msg = format!("tile {ssa} has a non-positive physical shape [{}, {}]", ty.rows, ty.cols);
        out.push(c.error(at, "tile-valid-shape", msg));
        return;
    }
    for (what, v, phys) in [("row", ty.valid[0], ty.rows), ("col", ty.valid[1], ty.cols)] {
        if let Some(v) = v {
            if v <= 0 || v > phys {
                let msg = format!("tile {ssa} has v_{what}={v} outside its physical extent 1..={phys}");
                out.push(c.error(at, "tile-valid-shape", msg));
            }
        }
    }
    for (what, v, phys) in [("rows", valid[0], ty.rows), ("cols", valid[1], ty.cols)] {
        if let Some(v) = v {
            if v < 0 || v > phys {
                let msg = format!("tile {ssa}: valid {what} {v} exceed its physical {what} {phys} (valid_shape must lie within the shape)");
                out.push(c.error(at, "tile-valid-shape", msg));
            }
        }
    }
}

fn valid_shape(c: &Code<'_>, out: &mut Vec<Diagnostic>) {
    for l in c.lines() {
        match &l.inst {
            Inst::AllocTile { result, valid_row, valid_col, ty, .. } => {
                check_valid(c, (result, ty, alloc_valid(c, valid_row, valid_col), l), out);
            }
            Inst::Dps(d) => {
                for (ssa, ty) in d.tiles() {
                    check_valid(c, (ssa, ty, [None, None], l), out);
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

fn one_tile_type(c: &Code<'_>, out: &mut Vec<Diagnostic>) {
    for l in c.lines() {
        let Inst::Dps(d) = &l.inst else { continue };
        let tiles: Vec<(&str, &TileBuf)> = d.tiles().collect();
        if d.class == OpClass::Other || tiles.len() < 2 {
            continue;
        }
        let Some(((dst, dty), srcs)) = tiles.split_last() else { continue };
        let convert = d.class == OpClass::Convert;
        let what = if convert { "one tile type apart from the element type" } else { "one tile type" };
        // Two sources that differ are the program's to fix; a destination unlike its (agreeing)
        // sources is how it was allocated.
        let mut mismatch = |pair: String, diff: Vec<String>, note: &str| {
            if !diff.is_empty() {
                let msg = format!("{pair}, but they differ in {}", diff.join(", "));
                out.push(c.error(Some(l), "elementwise-one-tile-type", msg).with_note(note));
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

fn capacity(c: &Code<'_>, out: &mut Vec<Diagnostic>) {
    let Some(addrs) = &c.k.plan.addrs else { return };
    let plan = &c.k.plan;
    // (slot, loc, start, end, ssa) of every live non-alias allocation; a slot is dead from the
    // allocation its region's release let reuse its space.
    let mut live: Vec<(usize, &str, u64, u64, &str)> = Vec::new();
    for l in c.lines() {
        let Inst::AllocTile { result: ssa, slot, ty, .. } = &l.inst else { continue };
        live.retain(|o| plan.freed_at.get(o.0).copied().flatten().is_none_or(|at| at > *slot));
        if plan.aliases.get(*slot).copied().flatten().is_some() {
            continue;
        }
        let at = Some(l);
        let Some(&addr) = addrs.get(*slot) else {
            out.push(c.error(at, "tile-buffer-capacity", format!("tile {ssa} has no address")));
            continue;
        };
        let end = addr.saturating_add(ty.bytes().max(0) as u64);
        let cap = mlir::capacity(&ty.loc, c.k.target);
        if end > cap {
            let msg = format!(
                "tile {ssa} occupies {} bytes {addr}..{end} of {}, past its {cap}-byte capacity on '{}'",
                ty.bytes(),
                ty.loc,
                c.k.target.name()
            );
            out.push(c.error(at, "tile-buffer-capacity", msg));
        }
        if addr % 32 != 0 {
            let msg = format!("tile {ssa} address {addr} is not 32-byte aligned");
            out.push(c.error(at, "tile-buffer-capacity", msg));
        }
        if let Some(o) = live.iter().find(|o| o.1 == ty.loc && o.2 < end && addr < o.3) {
            let msg = format!(
                "tile {ssa} ({addr}..{end} of {}) overlaps live tile {} ({}..{})",
                ty.loc, o.4, o.2, o.3
            );
            out.push(c.error(at, "tile-buffer-capacity", msg));
        }
        live.push((*slot, ty.loc.as_str(), addr, end, ssa.as_str()));
    }
}

fn level3(c: &Code<'_>, out: &mut Vec<Diagnostic>) {
    let plan = &c.k.plan;
    if plan.addrs.is_some() || !c.lines().any(|l| matches!(l.inst, Inst::AllocTile { .. })) {
        return;
    }
    let over: Vec<String> = plan
        .high
        .iter()
        .filter_map(|(loc, h)| {
            let cap = mlir::capacity(loc, c.k.target);
            (*h > cap).then(|| format!("{h} bytes of {loc} (capacity {cap})"))
        })
        .collect();
    let detail = if over.is_empty() { "its tiles have no addresses".to_string() } else { over.join(", ") };
    let msg = format!(
        "the tile buffers do not fit the '{}' target: {detail}; ptoas --pto-level={} needs an address on every pto.alloc_tile",
        c.k.target.name(),
        super::PTO_LEVEL
    );
    out.push(
        c.error(None, "level3-addresses", msg)
            .with_note("use smaller tiles (process the data in chunks) or release tiles earlier by scoping them in a loop body"),
    );
}

/// The element type a pointer, view or tile type holds.
fn elem_of(t: &PtoType) -> Option<&str> {
    match t {
        PtoType::Ptr(e) | PtoType::TensorView { elem: e, .. } | PtoType::PartitionView { elem: e, .. } => {
            Some(e)
        }
        PtoType::Tile(t) => Some(&t.dtype),
        PtoType::Scalar(_) | PtoType::LocalArray { .. } => None,
    }
}

fn comm_stage(c: &Code<'_>, out: &mut Vec<Diagnostic>) {
    for l in c.lines() {
        // A transfer's operands are its destination and source views; `buf(…)` its stages.
        let Inst::Comm { operands, buf, .. } = &l.inst else { continue };
        let src_dtype = operands.get(1).and_then(|o| elem_of(&o.ty));
        let stages: Vec<(&str, &TileBuf)> =
            buf.iter().filter_map(|o| o.ty.as_tile().map(|t| (o.value.as_str(), t))).collect();
        let at = Some(l);
        for (ssa, ty) in &stages {
            if ty.loc != "vec" {
                let msg = format!(
                    "staging tile {ssa} is in {}; comm staging tiles must be in the vec address space",
                    ty.loc
                );
                out.push(c.error(at, "comm-stage-vec", msg));
            }
            if ty.rows <= 0 || ty.cols <= 0 {
                let msg = format!("staging tile {ssa} needs static positive rows/cols");
                out.push(c.error(at, "comm-stage-vec", msg));
            }
            if let Some(src) = src_dtype.filter(|s| *s != ty.dtype) {
                let msg =
                    format!("staging tile {ssa} has element type {}, the transfer moves {src}", ty.dtype);
                out.push(c.error(at, "comm-stage-vec", msg));
            }
        }
        if let [(_, a), (pong, b)] = stages.as_slice() {
            if a != b {
                let msg = format!("pong tile {pong} must have the ping tile's type");
                out.push(c.error(at, "comm-stage-vec", msg));
            }
        }
    }
}

fn partition(c: &Code<'_>, out: &mut Vec<Diagnostic>) {
    for l in c.lines() {
        let Inst::PartitionView { result, view, offsets, sizes, view_ty, tail_slack, .. } = &l.inst else {
            continue;
        };
        let rank = match view_ty {
            PtoType::TensorView { rank, .. } => *rank,
            _ => offsets.len(),
        };
        let dims = c.view_dims(view, rank);
        let rank = dims.len();
        let at = Some(l);
        let what = format!("partition {result} of {view}");
        if offsets.len() != rank || sizes.len() != rank {
            let msg = format!(
                "{what} has {} offsets and {} sizes for a rank-{rank} tensor view",
                offsets.len(),
                sizes.len()
            );
            out.push(c.error(at, "partition-view", msg));
            continue;
        }
        for (i, ((d, o), s)) in dims.iter().zip(offsets).zip(sizes).enumerate() {
            let (o, s) = (c.int(o), c.int(s));
            if let Some(o) = o.filter(|o| *o < 0) {
                out.push(c.error(
                    at,
                    "partition-view",
                    format!("{what} has offset {o} < 0 in dimension {i}"),
                ));
            }
            let Some(s) = s else { continue };
            if s <= 0 {
                out.push(c.error(at, "partition-view", format!("{what} has size {s} <= 0 in dimension {i}")));
            }
            if let Some(d) = d {
                let end = o.unwrap_or(0).saturating_add(s);
                let slack = if i + 1 == rank { *tail_slack } else { 0 };
                if end > d.saturating_add(slack) {
                    let msg =
                        format!("{what} exceeds dimension {i}: offset {} + size {s} > {d}", o.unwrap_or(0));
                    out.push(c.error(at, "partition-view", msg));
                }
            }
        }
    }
}

/// Whether `ty` is a scalar type pto accepts: signless integers of the ISA's widths, `index`,
/// or a float.
fn pto_scalar(ty: &str) -> bool {
    matches!(ty, "i1" | "i8" | "i16" | "i32" | "i64" | "index" | "f16" | "bf16" | "f32")
}

fn signless(c: &Code<'_>, out: &mut Vec<Diagnostic>) {
    let bad = |what: String, ty: String, at: Option<&Line>| {
        c.error(
            at,
            "signless-scalar",
            format!("{what} has scalar type {ty}; pto scalars are signless (iN), index or float"),
        )
        .with_note("unsigned integers are spelled as signless iN of the same width")
    };
    for (name, ty) in &c.k.params {
        if let PtoType::Scalar(t) = ty {
            if !pto_scalar(&t.name()) {
                out.push(bad(format!("parameter {name}"), t.name(), None));
            }
        }
    }
    for l in c.lines() {
        let Inst::Dps(d) = &l.inst else { continue };
        if let Some((r, t)) = &d.result {
            if !pto_scalar(&t.name()) {
                out.push(bad(format!("result {r}"), t.name(), Some(l)));
            }
        }
        for o in &d.ins {
            if let PtoType::Scalar(t) = &o.ty {
                if !pto_scalar(&t.name()) {
                    out.push(bad(format!("scalar operand {}", o.value), t.name(), Some(l)));
                }
            }
        }
    }
}
