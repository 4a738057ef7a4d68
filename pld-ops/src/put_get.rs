//! The put_get family: `pld.tensor.put` (TPUT) / `pld.tensor.get` (TGET) in full-slice and
//! subregion forms, and the internal staging forms `pld.tile.put` / `pld.tile.get` that
//! `ConvertTensorToTileOps` produces (IR order `dst, peer, src, stage[, stage2][, dst_offsets,
//! src_offsets, shape]`).
//!
//! Guarantees: the window side (put.dst, get.src) is exactly a `DistributedTensor`; the local
//! side (put.src, get.dst) may be a plain or window-bound tensor; static shapes and regions are
//! checked for positivity and bounds; a dynamic transfer dim is accepted on the tensor forms
//! only when a static chunk bounds the staging tile; `pipeline` needs both chunks; the atomic
//! add dtype allow-list and the bf16-only-on-a2a3 rule apply to put. All four are declared
//! VECTOR (TPUT/TGET stream through a Vec staging tile) and produce `UnknownType`.

use crate::record::{op, optional, optional_writes, reads, value, writes, OpSpec, ATOMIC_OPT};
use crate::util::{check_atomic_dtype, describe, peer_arg, window_arg};
use pld_ir::registry::{AbiEnumKind, AttrDefault, AttrType};
use pld_ir::{
    register_op, Affinity, AttrDef, Call, DeduceCx, Diagnostic, Effect, Expr, OpDef, ParamDef, TensorType,
    Type,
};

const FAMILY: &str = "put_get";

/// A put_get record: VECTOR, as TPUT/TGET stream through a Vec staging tile.
const fn transfer_op(name: &'static str, summary: &'static str) -> OpSpec {
    op(name, FAMILY, summary).affinity(Affinity::Vector)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    Put,
    Get,
}

/// The chunking attributes of the tensor forms (`0`: no chunking in that dim).
const CHUNKING: [AttrDef; 3] = [
    AttrDef::with_default("chunk_rows", AttrType::Int, AttrDefault::Int(0)),
    AttrDef::with_default("chunk_cols", AttrType::Int, AttrDefault::Int(0)),
    AttrDef::with_default("pipeline", AttrType::Bool, AttrDefault::Bool(false)),
];
const TENSOR_PUT_ATTRS: &[AttrDef] = &[ATOMIC_OPT, CHUNKING[0], CHUNKING[1], CHUNKING[2]];

/// A transfer's parameters in IR order: `dst, peer, src` (one of the two a peer's window),
/// then the optional subregion `dst_offsets, src_offsets, shape`.
const fn transfer(dst: ParamDef, src: ParamDef) -> [ParamDef; 6] {
    [dst, value("peer"), src, optional("dst_offsets"), optional("src_offsets"), optional("shape")]
}

/// The internal tile form of a transfer: its Vec staging tile(s) follow `src`.
const fn staged([dst, peer, src, dst_offsets, src_offsets, shape]: [ParamDef; 6]) -> [ParamDef; 8] {
    [dst, peer, src, writes("stage"), optional_writes("stage2"), dst_offsets, src_offsets, shape]
}

/// `put` pushes into the peer's `dst`; `get` pulls from the peer's `src` into a local `dst`.
const PUT: [ParamDef; 6] = transfer(writes("dst").peer(), reads("src"));
const GET: [ParamDef; 6] = transfer(writes("dst"), reads("src").peer());
const TILE_PUT_PARAMS: &[ParamDef] = &staged(PUT);
const TILE_GET_PARAMS: &[ParamDef] = &staged(GET);

/// `pld.tensor.put(dst, peer, src[, dst_offsets, src_offsets, shape], *, atomic=None_, chunk_rows=0,
/// chunk_cols=0, pipeline=False)`.
pub static TENSOR_PUT: OpDef = transfer_op(
    "pld.tensor.put",
    "write local GM data into a peer rank's window slice through a Vec staging tile (TPUT)",
)
.params(&PUT)
.attrs(TENSOR_PUT_ATTRS)
.effects(put_effects)
.deduce(deduce_tensor_put);

/// `pld.tensor.get(dst, peer, src[, dst_offsets, src_offsets, shape], *, chunk_rows=0,
/// chunk_cols=0, pipeline=False)`.
pub static TENSOR_GET: OpDef = transfer_op(
    "pld.tensor.get",
    "read a peer rank's window slice into local GM through a Vec staging tile (TGET)",
)
.params(&GET)
.attrs(&CHUNKING)
.deduce(deduce_tensor_get);

/// Internal `pld.tile.put(dst, peer, src, stage[, stage2][, dst_offsets, src_offsets, shape],
/// *, atomic)`.
pub static TILE_PUT: OpDef =
    transfer_op("pld.tile.put", "TPUT with explicit Vec staging tile(s); created by ConvertTensorToTileOps")
        .params(TILE_PUT_PARAMS)
        .attrs(&[AttrDef::required("atomic", AttrType::Enum(AbiEnumKind::AtomicType))])
        .internal()
        .effects(put_effects)
        .deduce(deduce_tile_put);

/// Internal `pld.tile.get(dst, peer, src, stage[, stage2][, dst_offsets, src_offsets, shape])`.
pub static TILE_GET: OpDef =
    transfer_op("pld.tile.get", "TGET with explicit Vec staging tile(s); created by ConvertTensorToTileOps")
        .params(TILE_GET_PARAMS)
        .internal()
        .deduce(deduce_tile_get);

/// put's dst is overwritten, or read-modify-written with atomic Add; the rest keep their
/// declared effects.
fn put_effects(call: &Call) -> Vec<Effect> {
    let dst = if call.attr_int("atomic") == Some(1) { Effect::ReadWrite } else { Effect::Write };
    let params = call.op().map_or(&[][..], |d| d.params);
    (0..call.args.len())
        .map(|i| if i == 0 { dst } else { params.get(i).map_or(Effect::None, |p| p.effect) })
        .collect()
}

/// The put/get contract on `dst`, `peer`, `src`: returns `(dst, src)` tensor fields.
fn endpoints<'a>(cx: &'a DeduceCx<'_>, dir: Dir) -> Result<(&'a TensorType, &'a TensorType), Diagnostic> {
    let op = cx.def.name;
    let local = |i: usize, role: &str| -> Result<&'a TensorType, Diagnostic> {
        match cx.ty(i) {
            Type::Tensor(t) => Ok(t),
            Type::DistTensor(d) => Ok(&d.tensor),
            other => {
                let mut d = cx.arg_error(
                    i,
                    format!("{op} {role} must be a Tensor or DistributedTensor, got {}", other.kind_name()),
                );
                if dir == Dir::Put && matches!(other, Type::Tile(_)) {
                    d = d.with_note(
                        "TPUT transfers between two GM regions and a tile has no GM address; push a computed \
                         value with pld.tensor.remote_store (pld.remote_store dispatches to it)",
                    );
                }
                Err(d)
            }
        }
    };
    let (dst, src) = match dir {
        Dir::Put => {
            let dst = window_arg(cx, 0, "dst")?;
            peer_arg(cx, 1)?;
            (dst, local(2, "src")?)
        }
        Dir::Get => {
            let dst = local(0, "dst")?;
            peer_arg(cx, 1)?;
            (dst, window_arg(cx, 2, "src")?)
        }
    };
    if dst.dtype != src.dtype {
        return Err(cx.arg_error(
            2,
            format!(
                "{op} dst and src must have the same element type, got dst {} vs src {}",
                dst.dtype, src.dtype
            ),
        ));
    }
    Ok((dst, src))
}

/// Ranks, static positivity and (full-slice only) shape agreement.
fn shape_contract(
    cx: &DeduceCx<'_>,
    dst: &TensorType,
    src: &TensorType,
    full: bool,
) -> Result<(), Diagnostic> {
    let op = cx.def.name;
    if dst.rank() == 0 || src.rank() == 0 {
        return Err(cx.error(format!("{op} requires at least one dimension on dst/src")));
    }
    if dst.rank() != src.rank() {
        return Err(cx.error(format!("{op} dst rank ({}) must match src rank ({})", dst.rank(), src.rank())));
    }
    for (i, d) in dst.shape.iter().enumerate() {
        if let Some(v) = d.as_int().filter(|v| *v <= 0) {
            return Err(cx.arg_error(0, format!("{op} shape dimension {i} must be positive, got {v}")));
        }
    }
    for (i, d) in src.shape.iter().enumerate() {
        if let Some(v) = d.as_int().filter(|v| *v <= 0) {
            return Err(cx.arg_error(2, format!("{op} src shape dimension {i} must be positive, got {v}")));
        }
    }
    if full {
        for (i, (a, b)) in dst.shape.iter().zip(&src.shape).enumerate() {
            match (a.as_int(), b.as_int()) {
                (Some(x), Some(y)) if x != y => {
                    return Err(cx.error(format!(
                        "{op} dst and src must have the same static shape; dimension {i} differs (dst={x}, src={y})"
                    )))
                }
                (Some(_), Some(_)) => {}
                _ if a != b => {
                    return Err(cx.error(format!(
                        "{op} full-slice dst and src must have the same shape; dimension {i} differs \
                         (dynamic dims must match structurally)"
                    ))
                    .with_note("pass dst_offsets, src_offsets and shape to transfer a subregion"))
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// The subregion tuples starting at argument `at`; returns the transfer shape.
fn region<'a>(
    cx: &'a DeduceCx<'_>,
    at: usize,
    dst: &TensorType,
    src: &TensorType,
) -> Result<&'a [Expr], Diagnostic> {
    let op = cx.def.name;
    let tuple = |i: usize, name: &str| -> Result<&'a [Expr], Diagnostic> {
        let Some(items) = cx.arg(i).and_then(Expr::as_tuple) else {
            return Err(cx.arg_error(
                i,
                format!(
                    "{op} {name} must be a tuple, got {}",
                    cx.arg(i).map_or("nothing".to_string(), |e| describe(&e.ty(cx.env.values)))
                ),
            ));
        };
        for (k, e) in items.iter().enumerate() {
            if !matches!(e.ty(cx.env.values), Type::Scalar(d) if d.is_int()) {
                return Err(cx.arg_error(i, format!("{op} {name} element {k} must be an integer scalar")));
            }
        }
        Ok(items)
    };
    let dst_off = tuple(at, "dst_offsets")?;
    let src_off = tuple(at + 1, "src_offsets")?;
    let shape = tuple(at + 2, "shape")?;
    if dst_off.len() != dst.rank() {
        return Err(cx.arg_error(at, format!("{op} dst_offsets rank must match dst rank")));
    }
    if src_off.len() != src.rank() {
        return Err(cx.arg_error(at + 1, format!("{op} src_offsets rank must match src rank")));
    }
    if shape.len() != dst.rank() {
        return Err(cx.arg_error(at + 2, format!("{op} shape rank must match tensor rank")));
    }
    for (i, s) in shape.iter().enumerate() {
        if let Some(v) = s.as_int().filter(|v| *v <= 0) {
            return Err(cx.arg_error(at + 2, format!("{op} shape dimension {i} must be positive, got {v}")));
        }
    }
    for (side, offs, t, idx) in [("dst", dst_off, dst, at), ("src", src_off, src, at + 1)] {
        for (i, (o, s)) in offs.iter().zip(shape).enumerate() {
            let Some(o) = o.as_int() else { continue };
            if o < 0 {
                return Err(cx.arg_error(
                    idx,
                    format!("{op} {side}_offsets dimension {i} must be non-negative, got {o}"),
                ));
            }
            if let (Some(s), Some(d)) = (s.as_int(), t.shape[i].as_int()) {
                if o.saturating_add(s) > d {
                    return Err(cx.arg_error(
                        idx,
                        format!(
                            "{op} {side} subregion dimension {i} exceeds {side} shape (offset={o}, shape={s}, {side}_dim={d})"
                        ),
                    ));
                }
            }
        }
    }
    Ok(shape)
}

/// The chunk and pipeline rules of the tensor forms.
fn chunk_rules(cx: &DeduceCx<'_>, transfer: &[Expr]) -> Result<(), Diagnostic> {
    let op = cx.def.name;
    let rows = cx.attr_int("chunk_rows").unwrap_or(0);
    let cols = cx.attr_int("chunk_cols").unwrap_or(0);
    for (name, v) in [("chunk_rows", rows), ("chunk_cols", cols)] {
        if v < 0 {
            return Err(cx.error(format!("{op}: {name} must be non-negative (0 = full), got {v}")));
        }
    }
    if let Some((last, lead)) = transfer.split_last() {
        if lead.iter().any(|d| d.as_int().is_none()) && rows == 0 {
            return Err(cx.error(format!(
                "{op}: a dynamic leading transfer dim needs a static chunk_rows to bound the VEC staging tile"
            )));
        }
        if last.as_int().is_none() && cols == 0 {
            return Err(cx.error(format!(
                "{op}: a dynamic innermost transfer dim needs a static chunk_cols to bound the VEC staging tile"
            )));
        }
    }
    if cx.attr_bool("pipeline").unwrap_or(false) && (rows <= 0 || cols <= 0) {
        return Err(cx.error(format!(
            "{op}: pipeline=True requires both chunk_rows>0 and chunk_cols>0 (double-buffering needs a chunked \
             transfer to ping-pong through two staging tiles)"
        )));
    }
    Ok(())
}

fn deduce_tensor(cx: &DeduceCx<'_>, dir: Dir) -> Result<Type, Diagnostic> {
    let op = cx.def.name;
    let n = cx.arity();
    if n != 3 && n != 6 {
        return Err(cx.error(format!(
            "{op} requires 3 positional arguments (dst, peer, src) or 6 (dst, peer, src, dst_offsets, src_offsets, \
             shape), but got {n}"
        )));
    }
    let (dst, src) = endpoints(cx, dir)?;
    shape_contract(cx, dst, src, n == 3)?;
    if dir == Dir::Put {
        check_atomic_dtype(cx, dst.dtype)?;
    }
    let transfer = if n == 6 { region(cx, 3, dst, src)? } else { &dst.shape[..] };
    chunk_rules(cx, transfer)?;
    Ok(Type::Unknown)
}

fn deduce_tensor_put(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    deduce_tensor(cx, Dir::Put)
}

fn deduce_tensor_get(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    deduce_tensor(cx, Dir::Get)
}

fn deduce_tile(cx: &DeduceCx<'_>, dir: Dir) -> Result<Type, Diagnostic> {
    let op = cx.def.name;
    let n = cx.arity();
    let (stages, region_at) = match n {
        4 => (1, None),
        5 => (2, None),
        7 => (1, Some(4)),
        8 => (2, Some(5)),
        _ => {
            return Err(cx.error(format!(
                "{op} requires 4/5 (single/double stage, full-slice) or 7/8 (single/double stage, subregion) \
                 positional arguments (dst, peer, src, stage[, stage2][, dst_offsets, src_offsets, shape]), but got {n}"
            )))
        }
    };
    let (dst, src) = endpoints(cx, dir)?;
    shape_contract(cx, dst, src, region_at.is_none())?;
    let mut stage_shape: Option<&[Expr]> = None;
    for (k, name) in ["stage", "stage2"].iter().enumerate().take(stages) {
        let i = 3 + k;
        let Type::Tile(t) = cx.ty(i) else {
            return Err(
                cx.arg_error(i, format!("{op} {name} must be a TileType, got {}", cx.ty(i).kind_name()))
            );
        };
        if t.dtype != dst.dtype {
            return Err(cx.arg_error(
                i,
                format!("{op} {name} dtype must match dst dtype, got {name}={} dst={}", t.dtype, dst.dtype),
            ));
        }
        if t.shape.len() != 2 {
            return Err(cx.arg_error(
                i,
                format!("{op} {name} must be a 2D VEC staging tile, got rank {}", t.shape.len()),
            ));
        }
        if let Some(first) = stage_shape {
            if first != t.shape.as_slice() {
                return Err(
                    cx.arg_error(i, format!("{op} ping/pong staging tiles must have identical shape"))
                );
            }
        }
        // The stage's valid region is the chunk (its physical row is padded to 32 bytes).
        stage_shape = Some(t.effective_valid_shape());
    }
    if dir == Dir::Put {
        check_atomic_dtype(cx, dst.dtype)?;
    }
    let transfer = match region_at {
        Some(at) => region(cx, at, dst, src)?,
        None => &dst.shape[..],
    };
    if let Some(stage) = stage_shape {
        stage_fits(cx, stage, transfer)?;
    }
    Ok(Type::Unknown)
}

/// The staging tile's valid region may be a chunk of the flattened transfer, never larger (a compiler bug
/// if violated: the stage is made by `ConvertTensorToTileOps`).
fn stage_fits(cx: &DeduceCx<'_>, stage: &[Expr], transfer: &[Expr]) -> Result<(), Diagnostic> {
    let op = cx.def.name;
    let (Some(r), Some(c)) = (stage[0].as_int(), stage[1].as_int()) else {
        return Err(cx.error(format!("internal error: {op} stage dims must be static")));
    };
    if r <= 0 || c <= 0 {
        return Err(cx.error(format!("internal error: {op} stage dims must be positive, got [{r}, {c}]")));
    }
    let Some((last, lead)) = transfer.split_last() else { return Ok(()) };
    let rows = lead.iter().try_fold(1i64, |acc, d| d.as_int().and_then(|v| acc.checked_mul(v)));
    if let Some(t) = rows {
        if r > t {
            return Err(cx.error(format!(
                "internal error: {op} stage rows {r} must fit within flattened transfer rows {t} \
                 (pto-isa auto-chunks a smaller stage)"
            )));
        }
    }
    if let Some(t) = last.as_int() {
        if c > t {
            return Err(cx.error(format!(
                "internal error: {op} stage cols {c} must fit within flattened transfer cols {t} \
                 (pto-isa auto-chunks a smaller stage)"
            )));
        }
    }
    Ok(())
}

fn deduce_tile_put(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    deduce_tile(cx, Dir::Put)
}

fn deduce_tile_get(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    deduce_tile(cx, Dir::Get)
}

register_op!(TENSOR_PUT, TENSOR_GET, TILE_PUT, TILE_GET);
