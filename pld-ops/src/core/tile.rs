//! Core tile ops: load/store between tensors and tiles, tile creation and fill, elementwise
//! arithmetic (tile-tile and tile-scalar), casts, row/column reductions, valid-shape updates,
//! scalar read/write, slices and reshapes. Each deducer rejects wrong kinds, mismatched
//! ranks/dtypes and provably out-of-bounds static regions with a diagnostic naming the op.

use crate::record::OpSpec;
use crate::record::{op, optional, optional_writes, reads, updates, value, writes, ATOMIC_OPT};
use crate::util::{
    check_atomic_dtype, check_in_bounds, element_index_arg, int_scalar_arg, memory_attr, offsets_arg,
    opt_tuple_arg, provably_ne, same_numel, scalar_arg, shape_arg, slice_region, tensor_like_arg, tile_arg,
    valid_items,
};
use pld_ir::registry::{AttrDefault, AttrType};
use pld_ir::{
    register_op, Affinity, AttrDef, DataType, DeduceCx, Diagnostic, Expr, MemorySpace, OpDef, ParamDef,
    TileType, Type,
};

const FAMILY: &str = "core";

/// A tile op's record: it runs on the lane that holds its first tile unless it says otherwise.
const fn tile_op(name: &'static str, summary: &'static str) -> OpSpec {
    op(name, FAMILY, summary).affinity(Affinity::FromFirstTileArg)
}
const TARGET_MEMORY_VEC: AttrDef =
    AttrDef::with_default("target_memory", AttrType::Str, AttrDefault::Str("Vec"));

fn valid_within(
    cx: &DeduceCx<'_>,
    i: usize,
    valid: &[Expr],
    shape: &[Expr],
    what: &str,
) -> Result<(), Diagnostic> {
    valid_items(cx, i, valid, shape.len(), what)?;
    for (k, (v, s)) in valid.iter().zip(shape).enumerate() {
        if let Some(v) = v.as_int() {
            if v < 0 {
                return Err(
                    cx.arg_error(i, format!("{} {what}[{k}] must be non-negative, got {v}", cx.def.name))
                );
            }
            if let Some(s) = s.as_int() {
                if v > s {
                    return Err(cx.arg_error(
                        i,
                        format!("{} {what}[{k}] = {v} exceeds the tile shape {s}", cx.def.name),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// `tile.load(tensor, offsets, shapes, valid_shape=None, *, target_memory=Vec)`.
pub static TILE_LOAD: OpDef = op("tile.load", FAMILY, "load a region of a (window-bound) tensor into a tile")
    .aliases(&["pl.load", "pl.tile.load"])
    .params(&[reads("tensor"), value("offsets"), value("shapes"), optional("valid_shape")])
    .attrs(&[TARGET_MEMORY_VEC])
    .affinity(Affinity::Vector)
    .deduce(deduce_load);

fn deduce_load(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let t = tensor_like_arg(cx, 0, "tensor")?;
    let offsets = offsets_arg(cx, 1, t.rank(), "offsets")?;
    let shapes = shape_arg(cx, 2, "shapes")?;
    if shapes.len() != t.rank() {
        return Err(cx.arg_error(
            2,
            format!("tile.load shapes must have {} element(s) (tensor rank), got {}", t.rank(), shapes.len()),
        ));
    }
    let memory = memory_attr(cx, "target_memory", Some(MemorySpace::Vec))?;
    let mut tile = TileType::new(shapes.to_vec(), t.dtype, memory);
    // Only the valid region is read: a padded tile (e.g. [8, 1] holding one element) may be
    // larger than the tensor it loads from.
    match opt_tuple_arg(cx, 3, "valid_shape")? {
        Some(valid) => {
            valid_within(cx, 3, valid, shapes, "valid_shape")?;
            check_in_bounds(cx, 3, offsets, valid, &t.shape, "region")?;
            tile = tile.with_valid_shape(valid.to_vec());
        }
        None => check_in_bounds(cx, 2, offsets, shapes, &t.shape, "region")?,
    }
    Ok(Type::Tile(tile))
}

/// `tile.store(tile, offsets, output_tensor, *, atomic=None_)`: returns the output's type.
/// The offsets have the tensor's rank; a tile of lower rank (at most 2-D) lands on the
/// tensor's trailing dims, the leading dims having extent 1 (a `[1, N]` row stored at
/// `[0, j, 0]` of a `[1, R, N]` tensor).
pub static TILE_STORE: OpDef =
    tile_op("tile.store", "store a tile's valid region into a (window-bound) tensor; returns the tensor")
        .aliases(&["pl.store", "pl.tile.store"])
        .params(&[reads("tile"), value("offsets"), writes("output_tensor").bulk_store()])
        .attrs(&[ATOMIC_OPT])
        .deduce(deduce_store);

fn deduce_store(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let tile = tile_arg(cx, 0, "tile")?;
    let out = tensor_like_arg(cx, 2, "output_tensor")?;
    let rank = tile.shape.len();
    if rank > out.rank() {
        return Err(
            cx.arg_error(0, format!("tile.store tile rank {rank} exceeds output tensor rank {}", out.rank()))
        );
    }
    if rank < out.rank() && rank > 2 {
        return Err(cx.arg_error(
            0,
            format!(
                "tile.store tile rank {rank} does not match output tensor rank {}; only a 1-D or 2-D \
                 tile may be stored into the trailing dims of a higher-rank tensor",
                out.rank()
            ),
        ));
    }
    if tile.dtype != out.dtype {
        return Err(cx.arg_error(
            0,
            format!("tile.store tile dtype {} does not match output tensor dtype {}", tile.dtype, out.dtype),
        ));
    }
    let offsets = offsets_arg(cx, 1, out.rank(), "offsets")?;
    let mut region = vec![Expr::int(1); out.rank() - rank];
    region.extend(crate::util::valid_or_shape(&tile.shape, tile.effective_valid_shape()).iter().cloned());
    check_in_bounds(cx, 1, offsets, &region, &out.shape, "region")?;
    check_atomic_dtype(cx, out.dtype)?;
    Ok(cx.ty(2).clone())
}

/// `tile.create(shape, *, dtype, target_memory=Vec)`: an uninitialised tile.
pub static TILE_CREATE: OpDef = op("tile.create", FAMILY, "allocate an uninitialised tile")
    .aliases(&["pl.create_tile", "pl.tile.create"])
    .params(&[value("shape")])
    .attrs(&[AttrDef::required("dtype", AttrType::DType), TARGET_MEMORY_VEC])
    .deduce(deduce_create);

fn deduce_create(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let shape = shape_arg(cx, 0, "shape")?;
    let dtype = cx.attr("dtype").and_then(|a| a.as_dtype()).unwrap_or(DataType::FP32);
    let memory = memory_attr(cx, "target_memory", Some(MemorySpace::Vec))?;
    Ok(Type::tile(shape.to_vec(), dtype, memory))
}

/// `tile.full(shape, value, *, dtype, target_memory=Vec)`: a tile filled with `value`.
pub static TILE_FULL: OpDef = op("tile.full", FAMILY, "a tile with every element set to a scalar")
    .aliases(&["pl.full", "pl.tile.full"])
    .params(&[value("shape"), value("value")])
    .attrs(&[AttrDef::required("dtype", AttrType::DType), TARGET_MEMORY_VEC])
    .affinity(Affinity::Vector)
    .deduce(deduce_full);

fn deduce_full(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let shape = shape_arg(cx, 0, "shape")?;
    scalar_arg(cx, 1, "value")?;
    let dtype = cx.attr("dtype").and_then(|a| a.as_dtype()).unwrap_or(DataType::FP32);
    let memory = memory_attr(cx, "target_memory", Some(MemorySpace::Vec))?;
    Ok(Type::tile(shape.to_vec(), dtype, memory))
}

/// `tile.fillpad_inplace(tile, value)`: fill the padding outside the valid region; the result
/// is fully valid.
pub static TILE_FILLPAD: OpDef = tile_op(
    "tile.fillpad_inplace",
    "fill the elements outside a tile's valid region with a scalar; the result is fully valid",
)
.aliases(&["pl.fillpad_inplace", "pl.fillpad", "pl.tile.fillpad_inplace"])
.params(&[updates("tile"), value("value")])
.deduce(deduce_fillpad);

fn deduce_fillpad(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let tile = tile_arg(cx, 0, "tile")?;
    scalar_arg(cx, 1, "value")?;
    Ok(Type::Tile(tile.clone().with_valid_shape(Vec::new())))
}

/// `tile.set_validshape(tile, valid_rows, valid_cols)`: a 2-D tile with a new valid region.
pub static TILE_SET_VALIDSHAPE: OpDef =
    tile_op("tile.set_validshape", "the same 2-D tile buffer with a new valid region")
        .aliases(&["pl.set_validshape", "pl.tile.set_validshape"])
        .params(&[reads("tile"), value("valid_rows"), value("valid_cols")])
        .deduce(deduce_set_validshape);

fn deduce_set_validshape(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let tile = tile_arg(cx, 0, "tile")?;
    if tile.shape.len() != 2 {
        return Err(cx.arg_error(
            0,
            format!("tile.set_validshape requires a 2-D tile, got rank {}", tile.shape.len()),
        ));
    }
    int_scalar_arg(cx, 1, "valid_rows")?;
    int_scalar_arg(cx, 2, "valid_cols")?;
    let valid: Vec<Expr> = vec![cx.args[1].clone(), cx.args[2].clone()];
    valid_within(cx, 1, &valid, &tile.shape, "valid shape")?;
    Ok(Type::Tile(tile.clone().with_valid_shape(valid)))
}

fn same_tiles<'a>(cx: &'a DeduceCx<'_>) -> Result<&'a TileType, Diagnostic> {
    let lhs = tile_arg(cx, 0, "lhs")?;
    let rhs = tile_arg(cx, 1, "rhs")?;
    if lhs.dtype != rhs.dtype {
        return Err(cx.arg_error(
            1,
            format!("{} operand dtypes differ: lhs {}, rhs {}", cx.def.name, lhs.dtype, rhs.dtype),
        ));
    }
    if lhs.shape.len() != rhs.shape.len() || lhs.shape.iter().zip(&rhs.shape).any(|(a, b)| provably_ne(a, b))
    {
        return Err(cx.arg_error(1, format!("{} operand shapes differ", cx.def.name)));
    }
    Ok(lhs)
}

fn deduce_binary(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    Ok(Type::Tile(same_tiles(cx)?.clone()))
}

fn deduce_scalar_binary(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let tile = tile_arg(cx, 0, "tile")?;
    scalar_arg(cx, 1, "scalar")?;
    Ok(Type::Tile(tile.clone()))
}

/// `tile.cast(tile, *, dtype, mode=None, target_type=None)`: convert the element type.
/// The reference spellings `pl.cast(t, pl.FP16[, mode])` and `target_type=` are
/// canonicalized to `dtype=` / `mode=` ([`super::canon`]).
pub static TILE_CAST: OpDef = tile_op("tile.cast", "convert a tile's element type")
    .aliases(&["pl.tile.cast"])
    .params(&[reads("tile")])
    .attrs(super::CAST_ATTRS)
    .deduce(deduce_cast);

fn deduce_cast(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let tile = tile_arg(cx, 0, "tile")?;
    let dtype = super::cast_dtype(cx, tile.dtype)?;
    Ok(Type::Tile(TileType { dtype, ..tile.clone() }))
}

/// `tile.move(tile, *, target_memory)`: copy a tile into another memory space.
pub static TILE_MOVE: OpDef = tile_op("tile.move", "copy a tile into another on-core memory space")
    .aliases(&["pl.move", "pl.tile.move"])
    .params(&[reads("tile")])
    .attrs(&[AttrDef::required("target_memory", AttrType::Str)])
    .deduce(deduce_move);

fn deduce_move(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let tile = tile_arg(cx, 0, "tile")?;
    let memory = memory_attr(cx, "target_memory", tile.memory)?;
    if memory == Some(MemorySpace::Ddr) {
        return Err(cx.error("tile.move target_memory must be an on-core space, not DDR; use tile.store"));
    }
    Ok(Type::Tile(TileType { memory, ..tile.clone() }))
}

fn deduce_row_reduce(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    reduce(cx, true)
}

fn deduce_col_reduce(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    reduce(cx, false)
}

fn reduce(cx: &DeduceCx<'_>, rows: bool) -> Result<Type, Diagnostic> {
    let tile = tile_arg(cx, 0, "tile")?;
    if tile.shape.len() != 2 {
        return Err(
            cx.arg_error(0, format!("{} requires a 2-D tile, got rank {}", cx.def.name, tile.shape.len()))
        );
    }
    if cx.arg(1).is_some() {
        let tmp = tile_arg(cx, 1, "tmp_tile")?;
        if tmp.dtype != tile.dtype {
            return Err(cx.arg_error(
                1,
                format!(
                    "{} tmp_tile dtype {} does not match the tile dtype {}",
                    cx.def.name, tmp.dtype, tile.dtype
                ),
            ));
        }
        if tmp.shape.len() != tile.shape.len() {
            return Err(cx.arg_error(
                1,
                format!("{} tmp_tile must be 2-D like the tile, got rank {}", cx.def.name, tmp.shape.len()),
            ));
        }
        for (k, (t, s)) in tmp.shape.iter().zip(&tile.shape).enumerate() {
            if let (Some(t), Some(s)) = (t.as_int(), s.as_int()) {
                if t < s {
                    return Err(cx.arg_error(
                        1,
                        format!("{} tmp_tile dim {k} is {t}, smaller than the tile's {s}", cx.def.name),
                    ));
                }
            }
        }
    }
    let valid = crate::util::valid_or_shape(&tile.shape, tile.effective_valid_shape());
    let (shape, valid) = if rows {
        (vec![tile.shape[0].clone(), Expr::int(1)], vec![valid[0].clone(), Expr::int(1)])
    } else {
        (vec![Expr::int(1), tile.shape[1].clone()], vec![Expr::int(1), valid[1].clone()])
    };
    Ok(Type::Tile(TileType::new(shape, tile.dtype, tile.memory).with_valid_shape(valid)))
}

/// The parameters of a tile-tile elementwise op.
const BINARY: &[ParamDef] = &[reads("lhs"), reads("rhs")];
/// The parameters of a tile-scalar elementwise op.
const WITH_SCALAR: &[ParamDef] = &[reads("tile"), value("scalar")];

/// Tile ops that differ only by name, parameter list, deducer and summary: one row each.
macro_rules! tile_ops {
    ($($id:ident = $name:literal, $alias:literal, $params:ident, $deduce:ident, $summary:literal;)*) => {$(
        #[doc = concat!("`", $name, "` (parameters `", stringify!($params), "`): ", $summary, ".")]
        pub static $id: OpDef = tile_op($name, $summary).aliases(&[$alias]).params($params).deduce($deduce);
    )*};
}

/// The parameters of a reduction taking the reference's optional scratch tile.
const REDUCE_WITH_TMP: &[ParamDef] = &[reads("tile"), optional_writes("tmp_tile")];
/// The parameters of a reduction without one.
const REDUCE: &[ParamDef] = &[reads("tile")];

tile_ops! {
    TILE_ADD = "tile.add", "pl.tile.add", BINARY, deduce_binary, "elementwise sum of two tiles";
    TILE_SUB = "tile.sub", "pl.tile.sub", BINARY, deduce_binary, "elementwise difference of two tiles";
    TILE_MUL = "tile.mul", "pl.tile.mul", BINARY, deduce_binary, "elementwise product of two tiles";
    TILE_DIV = "tile.div", "pl.tile.div", BINARY, deduce_binary, "elementwise quotient of two tiles";
    TILE_MAXIMUM = "tile.maximum", "pl.tile.maximum", BINARY, deduce_binary, "elementwise maximum of two tiles";
    TILE_MINIMUM = "tile.minimum", "pl.tile.minimum", BINARY, deduce_binary, "elementwise minimum of two tiles";
    TILE_ADDS = "tile.adds", "pl.tile.adds", WITH_SCALAR, deduce_scalar_binary, "add a scalar to every element";
    TILE_SUBS = "tile.subs", "pl.tile.subs", WITH_SCALAR, deduce_scalar_binary, "subtract a scalar from every element";
    TILE_MULS = "tile.muls", "pl.tile.muls", WITH_SCALAR, deduce_scalar_binary, "multiply every element by a scalar";
    TILE_DIVS = "tile.divs", "pl.tile.divs", WITH_SCALAR, deduce_scalar_binary, "divide every element by a scalar";
    TILE_ROW_SUM = "tile.row_sum", "pl.row_sum", REDUCE_WITH_TMP, deduce_row_reduce, "sum of each row, as an [R, 1] tile";
    TILE_ROW_MAX = "tile.row_max", "pl.row_max", REDUCE_WITH_TMP, deduce_row_reduce, "maximum of each row, as an [R, 1] tile";
    TILE_ROW_MIN = "tile.row_min", "pl.row_min", REDUCE_WITH_TMP, deduce_row_reduce, "minimum of each row, as an [R, 1] tile";
    TILE_COL_SUM = "tile.col_sum", "pl.col_sum", REDUCE_WITH_TMP, deduce_col_reduce, "sum of each column, as a [1, C] tile";
    TILE_COL_MAX = "tile.col_max", "pl.col_max", REDUCE, deduce_col_reduce, "maximum of each column, as a [1, C] tile";
    TILE_COL_MIN = "tile.col_min", "pl.col_min", REDUCE, deduce_col_reduce, "minimum of each column, as a [1, C] tile";
}

/// `tile.read(tile, indices)`: one element as a scalar.
pub static TILE_READ: OpDef = tile_op("tile.read", "read one element of a tile as a scalar")
    .aliases(&["pl.tile.read"])
    .params(&[reads("tile"), value("indices")])
    .deduce(deduce_tile_read);

fn deduce_tile_read(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let tile = tile_arg(cx, 0, "tile")?;
    element_index_arg(cx, 1, &tile.shape)?;
    Ok(Type::Scalar(tile.dtype))
}

/// `tile.write(tile, indices, value)`: set one element; returns the tile.
pub static TILE_WRITE: OpDef =
    tile_op("tile.write", "write one element of a tile from a scalar; returns the tile")
        .aliases(&["pl.tile.write"])
        .params(&[writes("tile"), value("indices"), value("value")])
        .deduce(deduce_tile_write);

fn deduce_tile_write(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let tile = tile_arg(cx, 0, "tile")?;
    element_index_arg(cx, 1, &tile.shape)?;
    scalar_arg(cx, 2, "value")?;
    Ok(cx.ty(0).clone())
}

/// `tile.slice(tile, shape, offsets, valid_shape=None)`: a sub-tile.
pub static TILE_SLICE: OpDef = tile_op("tile.slice", "a rectangular sub-tile")
    .aliases(&["pl.tile.slice"])
    .params(&[reads("tile"), value("shape"), value("offsets"), optional("valid_shape")])
    .deduce(deduce_tile_slice);

fn deduce_tile_slice(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let tile = tile_arg(cx, 0, "tile")?;
    let shape = slice_region(cx, &tile.shape, "")?;
    let mut out = TileType::new(shape.to_vec(), tile.dtype, tile.memory);
    if let Some(valid) = opt_tuple_arg(cx, 3, "valid_shape")? {
        valid_within(cx, 3, valid, shape, "valid_shape")?;
        out = out.with_valid_shape(valid.to_vec());
    }
    Ok(Type::Tile(out))
}

/// `tile.reshape(tile, shape)`: the same elements with a new shape.
pub static TILE_RESHAPE: OpDef =
    tile_op("tile.reshape", "reinterpret a fully valid tile with a new shape of the same element count")
        .aliases(&["pl.tile.reshape"])
        .params(&[reads("tile"), value("shape")])
        .deduce(deduce_tile_reshape);

fn deduce_tile_reshape(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let tile = tile_arg(cx, 0, "tile")?;
    let shape = shape_arg(cx, 1, "shape")?;
    same_numel(cx, 1, &tile.shape, shape)?;
    Ok(Type::tile(shape.to_vec(), tile.dtype, tile.memory))
}

/// `tile.matmul(lhs, rhs)`: `[M, K] x [K, N] -> [M, N]` in Acc.
pub static TILE_MATMUL: OpDef = op("tile.matmul", FAMILY, "matrix product of two 2-D tiles on the cube unit")
    .aliases(&["pl.matmul", "pl.tile.matmul"])
    .params(&[reads("lhs"), reads("rhs")])
    .attrs(&[AttrDef::optional("out_dtype", AttrType::DType)])
    .affinity(Affinity::Cube)
    .deduce(deduce_matmul);

fn deduce_matmul(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let lhs = tile_arg(cx, 0, "lhs")?;
    let rhs = tile_arg(cx, 1, "rhs")?;
    if lhs.shape.len() != 2 || rhs.shape.len() != 2 {
        return Err(cx.error("tile.matmul requires 2-D tiles"));
    }
    if provably_ne(&lhs.shape[1], &rhs.shape[0]) {
        return Err(cx.arg_error(
            1,
            format!("tile.matmul inner dimensions differ: {} vs {}", lhs.shape[1], rhs.shape[0]),
        ));
    }
    let dtype = cx.attr("out_dtype").and_then(|a| a.as_dtype()).unwrap_or(DataType::FP32);
    Ok(Type::tile(vec![lhs.shape[0].clone(), rhs.shape[1].clone()], dtype, Some(MemorySpace::Acc)))
}

register_op!(
    TILE_LOAD,
    TILE_STORE,
    TILE_CREATE,
    TILE_FULL,
    TILE_FILLPAD,
    TILE_SET_VALIDSHAPE,
    TILE_ADD,
    TILE_SUB,
    TILE_MUL,
    TILE_DIV,
    TILE_MAXIMUM,
    TILE_MINIMUM,
    TILE_ADDS,
    TILE_SUBS,
    TILE_MULS,
    TILE_DIVS,
    TILE_CAST,
    TILE_MOVE,
    TILE_ROW_SUM,
    TILE_ROW_MAX,
    TILE_ROW_MIN,
    TILE_COL_SUM,
    TILE_COL_MAX,
    TILE_COL_MIN,
    TILE_READ,
    TILE_WRITE,
    TILE_SLICE,
    TILE_RESHAPE,
    TILE_MATMUL,
);
