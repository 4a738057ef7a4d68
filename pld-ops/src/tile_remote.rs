//! The tile_remote family: `pld.tile.remote_load` (TLOAD from a peer's window slice into a
//! tile), `pld.tile.remote_store` / `pld.tensor.remote_store` (TSTORE of a local value into a
//! peer's window slice) and the unified `pld.remote_store` overload.
//!
//! Guarantees: the window side is always exactly a `DistributedTensor`; remote_load's result
//! valid region is the intersection of the request, the source's valid region and the window
//! (a runtime `min` when not provable); remote_store pushes only the inner two dims, rejects
//! static leading extents > 1 and provable overruns of the peer region, and names the sibling
//! entry point when the source is at the wrong IR level.

use crate::record::{op, optional, reads, value, writes, OpSpec, ATOMIC_OPT};
use crate::util::{check_atomic_dtype, describe, offsets_tuple, peer_arg, window_arg};
use pld_ir::registry::{AttrDefault, AttrType, Overload};
use pld_ir::{
    register_op, register_overload, Affinity, AttrDef, BinOp, Call, DataType, DeduceCx, Diagnostic, Effect,
    Expr, OpDef, ParamDef, TileType, Type,
};

const FAMILY: &str = "tile_remote";

/// `pld.tile.remote_load(target, peer, offsets, shape, valid_shape=None)`.
pub static REMOTE_LOAD: OpDef = op(
    "pld.tile.remote_load",
    FAMILY,
    "read a region of a peer rank's window slice into a local tile (TLOAD)",
)
.aliases(&["pld.remote_load"])
.params(&[reads("target").peer(), value("peer"), value("offsets"), value("shape"), optional("valid_shape")])
.attrs(&[AttrDef::with_default("allow_physical_tail_padding", AttrType::Bool, AttrDefault::Bool(false))])
.deduce(deduce_remote_load);

/// `min(a, b)`, folded when both are static or structurally equal.
fn min_expr(a: &Expr, b: &Expr) -> Expr {
    if a == b {
        return a.clone();
    }
    Expr::binary(BinOp::Min, a.clone(), b.clone())
}

fn tuple<'a>(cx: &'a DeduceCx<'_>, i: usize, name: &str) -> Result<&'a [Expr], Diagnostic> {
    cx.arg(i).and_then(Expr::as_tuple).ok_or_else(|| {
        cx.arg_error(
            i,
            format!(
                "{} {name} must be a tuple (MakeTuple of scalars), got {}",
                cx.def.name,
                cx.arg(i).map_or("nothing".to_string(), |e| describe(&e.ty(cx.env.values)))
            ),
        )
    })
}

fn deduce_remote_load(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    const OP: &str = "pld.tile.remote_load";
    let target = window_arg(cx, 0, "target")?;
    peer_arg(cx, 1)?;
    let offsets = tuple(cx, 2, "offsets")?;
    let shape = tuple(cx, 3, "shape")?;
    let valid = if cx.arg(4).is_some() { Some(tuple(cx, 4, "valid_shape")?) } else { None };
    if let Some(valid) = valid {
        for (i, v) in valid.iter().enumerate() {
            match v.ty(cx.env.values) {
                Type::Scalar(d) if d.is_int() => {}
                other => {
                    return Err(cx.arg_error(
                        4,
                        format!(
                            "{OP} valid_shape {i} must be an integer scalar, but got {}",
                            describe(&other)
                        ),
                    ))
                }
            }
            if v.as_int().is_some_and(|x| x < 0) {
                return Err(cx.arg_error(
                    4,
                    format!("{OP} valid_shape {i} is provably negative; a valid region cannot have a negative extent"),
                ));
            }
        }
    }
    let rank = target.rank();
    for (name, items) in [("offsets", Some(offsets)), ("shape", Some(shape)), ("valid_shape", valid)] {
        if let Some(items) = items {
            if items.len() != rank {
                return Err(cx.error(format!(
                    "{OP} {name} rank ({}) must match target tensor rank ({rank})",
                    items.len()
                )));
            }
        }
    }
    if rank == 0 {
        return Err(cx.error(format!("{OP} requires at least one dimension on target")));
    }
    for (i, s) in shape.iter().enumerate() {
        if !matches!(s.ty(cx.env.values), Type::Scalar(d) if d.is_int()) {
            return Err(cx.arg_error(3, format!("{OP} shape {i} must be an integer scalar")));
        }
        if let Some(v) = s.as_int() {
            if v <= 0 {
                return Err(cx.arg_error(3, format!("{OP} shape {i} must be positive, got {v}")));
            }
        }
    }
    let tail_padding = cx.attr_bool("allow_physical_tail_padding").unwrap_or(false);
    let mut src_dims = target.shape.clone();
    let mut src_valid = crate::util::valid_or_shape(&target.shape, target.effective_valid_shape());
    if tail_padding {
        if target.dtype != DataType::FP16 || rank != 2 || valid.is_none() {
            return Err(cx.error(format!(
                "{OP} allow_physical_tail_padding requires an fp16 rank-2 target and an explicit valid_shape"
            )));
        }
        // The allreduce-only mode may read one aligned padding block past the last column.
        src_dims[1] = Expr::binary(BinOp::Add, src_dims[1].clone(), Expr::int(15));
        src_valid = src_dims.clone();
    }
    let mut result_valid = Vec::with_capacity(rank);
    for i in 0..rank {
        let off = &offsets[i];
        if let Some(o) = off.as_int() {
            if o < 0 {
                return Err(cx.arg_error(
                    2,
                    format!(
                        "{OP} offset {i} is provably negative ({o}); a window must start inside its source"
                    ),
                ));
            }
        }
        let requested = valid.map(|v| &v[i]);
        if let (Some(r), Some(s)) = (requested.and_then(Expr::as_int), shape[i].as_int()) {
            if r > s {
                return Err(cx.arg_error(
                    4,
                    format!(
                        "{OP} valid_shape {i} is {r}, which exceeds the window extent {s}; a valid region \
                         cannot be larger than the shape that holds it"
                    ),
                ));
            }
        }
        let reach = requested.unwrap_or(&shape[i]);
        if let (Some(o), Some(e), Some(s)) = (off.as_int(), reach.as_int(), src_dims[i].as_int()) {
            if o.saturating_add(e) > s {
                return Err(cx.arg_error(
                    3,
                    format!(
                        "{OP} reads past the end of dimension {i}: offset {o} + extent {e} exceeds the source \
                         extent {s}. Pass a smaller valid_shape to describe a ragged remote-load tail"
                    ),
                ));
            }
        }
        let fully_valid = src_valid[i] == src_dims[i] && src_valid[i].as_int().is_some();
        let available = if fully_valid {
            shape[i].clone()
        } else if off.as_int() == Some(0) {
            min_expr(&src_valid[i], &shape[i])
        } else {
            let past = Expr::binary(BinOp::Max, src_valid[i].clone(), off.clone());
            min_expr(&Expr::binary(BinOp::Sub, past, off.clone()), &shape[i])
        };
        result_valid.push(match requested {
            Some(r) => min_expr(r, &available),
            None => available,
        });
    }
    let tile = TileType::new(shape.to_vec(), target.dtype, None).with_valid_shape(result_valid);
    Ok(Type::Tile(tile))
}

/// Arg 1 (the peer's region) is overwritten, or read-modify-written with atomic Add.
fn remote_store_effects(call: &Call) -> Vec<Effect> {
    let target = if call.attr_int("atomic") == Some(1) { Effect::ReadWrite } else { Effect::Write };
    (0..call.args.len())
        .map(|i| match i {
            0 => Effect::Read,
            1 => target,
            _ => Effect::None,
        })
        .collect()
}

const REMOTE_STORE_PARAMS: &[ParamDef] =
    &[reads("src"), writes("target").peer(), value("peer"), value("offsets")];
const TILE_REMOTE_STORE_PARAMS: &[ParamDef] =
    &[reads("src_tile"), writes("target").peer(), value("peer"), value("offsets")];

/// The two levels of remote_store differ only by name, summary, source operand and affinity:
/// both take `atomic` and compute the target's effect from it.
const fn remote_store(name: &'static str, summary: &'static str, params: &'static [ParamDef]) -> OpSpec {
    op(name, FAMILY, summary).params(params).attrs(&[ATOMIC_OPT]).effects(remote_store_effects)
}

/// `pld.tile.remote_store(src_tile, target, peer, offsets, *, atomic=None_)`.
pub static TILE_REMOTE_STORE: OpDef = remote_store(
    "pld.tile.remote_store",
    "write a local tile's valid region into a peer rank's window slice (TSTORE)",
    TILE_REMOTE_STORE_PARAMS,
)
.affinity(Affinity::FromFirstTileArg)
.deduce(deduce_tile_remote_store);

/// `pld.tensor.remote_store(src, target, peer, offsets, *, atomic=None_)`.
pub static TENSOR_REMOTE_STORE: OpDef = remote_store(
    "pld.tensor.remote_store",
    "write a local tensor-level value into a peer rank's window slice (lowered to the tile form)",
    REMOTE_STORE_PARAMS,
)
.deduce(deduce_tensor_remote_store);

fn deduce_tile_remote_store(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let Type::Tile(tile) = cx.ty(0) else {
        return Err(cx
            .arg_error(
                0,
                format!(
                    "pld.tile.remote_store src_tile must be a TileType, got {}. In a tensor-level kernel (@pl.jit) \
                     call pld.tensor.remote_store instead (pld.remote_store dispatches between the two).",
                    cx.ty(0).kind_name()
                ),
            )
            .with_note("sibling op: pld.tensor.remote_store"));
    };
    remote_store_contract(cx, tile.dtype, tile.effective_valid_shape())
}

fn deduce_tensor_remote_store(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let Type::Tensor(src) = cx.ty(0) else {
        let mut d = cx.arg_error(
            0,
            format!(
                "pld.tensor.remote_store src must be a Tensor (tensor-level value), got {}. In a tile-level kernel \
                 (@pl.jit.incore / @pl.program) call pld.tile.remote_store instead (pld.remote_store dispatches \
                 between the two); to push one window buffer into another, use pld.tensor.put.",
                cx.ty(0).kind_name()
            ),
        );
        d = d.with_note(match cx.ty(0) {
            Type::Tile(_) => "sibling op: pld.tile.remote_store",
            Type::DistTensor(_) => "sibling op: pld.tensor.put (window to window)",
            _ => "sibling ops: pld.tile.remote_store, pld.tensor.put",
        });
        return Err(d);
    };
    remote_store_contract(cx, src.dtype, &src.shape)
}

/// The shared remote_store contract, in the reference's order (dtype before ranks).
fn remote_store_contract(cx: &DeduceCx<'_>, dtype: DataType, extent: &[Expr]) -> Result<Type, Diagnostic> {
    let op = cx.def.name;
    let target = window_arg(cx, 1, "target")?;
    peer_arg(cx, 2)?;
    let offsets = offsets_tuple(cx, 3, "offsets", target.rank(), "target tensor")?;
    if dtype != target.dtype {
        return Err(
            cx.arg_error(0, format!("{op} src dtype ({dtype}) must match target dtype ({})", target.dtype))
        );
    }
    if extent.len() < 2 {
        return Err(cx.arg_error(
            0,
            format!(
                "{op} src must be at least 2-D (it is pushed as a 2-D region), got rank {}",
                extent.len()
            ),
        ));
    }
    let lead = extent.len() - 2;
    for (i, d) in extent[..lead].iter().enumerate() {
        if let Some(v) = d.as_int() {
            if v != 1 {
                return Err(cx.arg_error(
                    0,
                    format!(
                        "{op} src leading dimension {i} must be 1 (only the inner two dims are pushed, and larger \
                         leading dims fold into the row extent and overrun the target), got {v}"
                    ),
                ));
            }
        }
    }
    let rank = target.rank();
    if rank < 2 {
        return Err(cx.arg_error(1, format!("{op} target rank must be >= 2 to hold a 2-D push, got {rank}")));
    }
    for (i, off) in offsets.iter().enumerate() {
        let Some(o) = off.as_int() else { continue };
        if o < 0 {
            return Err(cx.arg_error(3, format!("{op} offsets dimension {i} must be non-negative, got {o}")));
        }
        let Some(t) = target.shape[i].as_int() else { continue };
        let e = if i < rank - 2 { Some(1) } else { extent[extent.len() - (rank - i)].as_int() };
        let Some(e) = e else { continue };
        if o.saturating_add(e) > t {
            return Err(cx.arg_error(
                3,
                format!(
                    "{op} push exceeds the peer's target region in dimension {i} (offset={o}, extent={e}, target_dim={t})"
                ),
            ));
        }
    }
    check_atomic_dtype(cx, target.dtype)?;
    Ok(Type::Unknown)
}

/// `pld.remote_store(src, target, peer, offsets, *, atomic)`: the tile form for a tile
/// source, the tensor form otherwise (whose deducer then explains a wrong kind).
pub static REMOTE_STORE: Overload = Overload {
    name: "pld.remote_store",
    candidates: &["pld.tile.remote_store", "pld.tensor.remote_store"],
    pick: |t: &Type| {
        if matches!(t, Type::Tile(_)) {
            "pld.tile.remote_store"
        } else {
            "pld.tensor.remote_store"
        }
    },
};

register_op!(REMOTE_LOAD, TILE_REMOTE_STORE, TENSOR_REMOTE_STORE);
register_overload!(REMOTE_STORE);
