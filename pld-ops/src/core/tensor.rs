//! Core tensor ops: creation, scalar read/write, views, slices, reshapes, assembly and the
//! tensor-level elementwise ops that `ConvertTensorToTileOps` turns into tile ops. Views of a
//! window-bound tensor stay window-bound (kinds are preserved, never widened).

use crate::record::{op, optional, reads, value, writes, ATOMIC_OPT};
use crate::util::{
    check_atomic_dtype, check_in_bounds, element_index_arg, offsets_arg, opt_tuple_arg, provably_ne,
    same_kind, same_numel, scalar_arg, shape_arg, slice_region, tensor_like_arg, valid_items,
};
use pld_ir::registry::AttrType;
use pld_ir::{
    register_op, AttrDef, DataType, DeduceCx, Diagnostic, Layout, OpDef, TensorType, TensorView, Type,
};

const FAMILY: &str = "core";

/// `tensor.create(shape, *, dtype)`: a new plain tensor.
pub static TENSOR_CREATE: OpDef = op("tensor.create", FAMILY, "allocate a plain tensor in global memory")
    .aliases(&["pl.create_tensor", "pl.tensor.create"])
    .params(&[value("shape")])
    .attrs(&[AttrDef::required("dtype", AttrType::DType)])
    .deduce(deduce_create);

fn deduce_create(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let shape = shape_arg(cx, 0, "shape")?;
    let dtype = cx.attr("dtype").and_then(|a| a.as_dtype()).unwrap_or(DataType::FP32);
    Ok(Type::tensor(shape.to_vec(), dtype))
}

fn point<'a>(cx: &'a DeduceCx<'_>) -> Result<&'a TensorType, Diagnostic> {
    let t = tensor_like_arg(cx, 0, "tensor")?;
    element_index_arg(cx, 1, &t.shape)?;
    Ok(t)
}

/// `tensor.read(tensor, indices)`: one element as a scalar.
pub static TENSOR_READ: OpDef =
    op("tensor.read", FAMILY, "read one element of a (window-bound) tensor as a scalar")
        .aliases(&["pl.tensor.read"])
        .params(&[reads("tensor"), value("indices")])
        .deduce(deduce_read);

fn deduce_read(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    Ok(Type::Scalar(point(cx)?.dtype))
}

/// `tensor.write(tensor, indices, value)`: write one element; returns the tensor.
pub static TENSOR_WRITE: OpDef =
    op("tensor.write", FAMILY, "write one element of a (window-bound) tensor; returns the tensor")
        .aliases(&["pl.tensor.write"])
        .params(&[writes("tensor").scalar_store(), value("indices"), value("value")])
        .deduce(deduce_write);

fn deduce_write(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    point(cx)?;
    scalar_arg(cx, 2, "value")?;
    Ok(cx.ty(0).clone())
}

/// `tensor.view(tensor, shape, valid_shape=None, *, layout=None)`: the same packed bytes
/// under a new shape (and optionally a valid region or layout).
pub static TENSOR_VIEW: OpDef =
    op("tensor.view", FAMILY, "reinterpret a packed tensor under a new shape, valid region or layout")
        .aliases(&["pl.view", "pl.tensor.view"])
        .params(&[reads("tensor"), optional("shape"), optional("valid_shape")])
        .attrs(&[AttrDef::optional("layout", AttrType::Str)])
        .deduce(deduce_view);

fn deduce_view(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let t = tensor_like_arg(cx, 0, "tensor")?;
    let shape = if cx.arg(1).is_some() { shape_arg(cx, 1, "shape")?.to_vec() } else { t.shape.clone() };
    same_numel(cx, 1, &t.shape, &shape)?;
    let mut view = TensorView::default();
    if let Some(valid) = opt_tuple_arg(cx, 2, "valid_shape")? {
        valid_items(cx, 2, valid, shape.len(), "valid_shape")?;
        view.valid_shape = valid.to_vec();
    }
    if let Some(l) = cx.attr_str("layout") {
        view.layout = Layout::from_dsl_name(&l)
            .ok_or_else(|| cx.error(format!("tensor.view layout must be ND, DN or NZ, got {l:?}")))?;
    } else {
        view.layout = t.layout();
    }
    Ok(same_kind(cx.ty(0), TensorType::new(shape, t.dtype).with_view(view)))
}

/// `tensor.slice(tensor, shape, offsets, valid_shape=None)`: a rectangular sub-tensor.
pub static TENSOR_SLICE: OpDef =
    op("tensor.slice", FAMILY, "a rectangular sub-tensor (a window slice stays window-bound)")
        .aliases(&["pl.tensor.slice"])
        .params(&[reads("tensor"), value("shape"), value("offsets"), optional("valid_shape")])
        .deduce(deduce_slice);

fn deduce_slice(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let t = tensor_like_arg(cx, 0, "tensor")?;
    let shape = slice_region(cx, &t.shape, " (tensor rank)")?;
    let mut out = TensorType::new(shape.to_vec(), t.dtype);
    if let Some(valid) = opt_tuple_arg(cx, 3, "valid_shape")? {
        valid_items(cx, 3, valid, shape.len(), "valid_shape")?;
        out = out.with_view(TensorView { valid_shape: valid.to_vec(), ..TensorView::default() });
    }
    Ok(same_kind(cx.ty(0), out))
}

/// `tensor.reshape(tensor, shape)`: the same elements with a new shape.
pub static TENSOR_RESHAPE: OpDef =
    op("tensor.reshape", FAMILY, "reinterpret a packed tensor with a new shape of the same element count")
        .aliases(&["pl.tensor.reshape"])
        .params(&[reads("tensor"), value("shape")])
        .deduce(deduce_reshape);

fn deduce_reshape(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let t = tensor_like_arg(cx, 0, "tensor")?;
    let shape = shape_arg(cx, 1, "shape")?;
    same_numel(cx, 1, &t.shape, shape)?;
    Ok(same_kind(cx.ty(0), TensorType::new(shape.to_vec(), t.dtype)))
}

/// `tensor.assemble(target, source, offsets, *, atomic=None_)`: write `source` into a region
/// of `target`; returns the target.
pub static TENSOR_ASSEMBLE: OpDef =
    op("tensor.assemble", FAMILY, "write a tensor into a region of another; returns the target")
        .aliases(&["pl.assemble", "pl.tensor.assemble"])
        .params(&[writes("target").bulk_store(), reads("source"), value("offsets")])
        .attrs(&[ATOMIC_OPT])
        .deduce(deduce_assemble);

fn deduce_assemble(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let target = tensor_like_arg(cx, 0, "target")?;
    let source = tensor_like_arg(cx, 1, "source")?;
    if source.rank() != target.rank() {
        return Err(cx.arg_error(
            1,
            format!(
                "tensor.assemble source rank {} does not match target rank {}",
                source.rank(),
                target.rank()
            ),
        ));
    }
    if source.dtype != target.dtype {
        return Err(cx.arg_error(
            1,
            format!(
                "tensor.assemble source dtype {} does not match target dtype {}",
                source.dtype, target.dtype
            ),
        ));
    }
    let offsets = offsets_arg(cx, 2, target.rank(), "offsets")?;
    check_in_bounds(cx, 2, offsets, &source.shape, &target.shape, "region")?;
    check_atomic_dtype(cx, target.dtype)?;
    Ok(cx.ty(0).clone())
}

fn deduce_binary(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let lhs = tensor_like_arg(cx, 0, "lhs")?;
    let rhs = tensor_like_arg(cx, 1, "rhs")?;
    if lhs.dtype != rhs.dtype {
        return Err(cx.arg_error(
            1,
            format!("{} operand dtypes differ: lhs {}, rhs {}", cx.def.name, lhs.dtype, rhs.dtype),
        ));
    }
    if lhs.rank() != rhs.rank() || lhs.shape.iter().zip(&rhs.shape).any(|(a, b)| provably_ne(a, b)) {
        return Err(cx.arg_error(1, format!("{} operand shapes differ", cx.def.name)));
    }
    Ok(Type::tensor(lhs.shape.clone(), lhs.dtype))
}

fn deduce_scalar_binary(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let t = tensor_like_arg(cx, 0, "tensor")?;
    scalar_arg(cx, 1, "scalar")?;
    Ok(Type::tensor(t.shape.clone(), t.dtype))
}

macro_rules! tensor_elementwise {
    ($($id:ident = $name:literal, $alias:literal, $p0:literal, $p1:literal, $deduce:ident, $summary:literal;)*) => {$(
        #[doc = concat!("`", $name, "`: ", $summary, " (lowered to the tile op).")]
        pub static $id: OpDef = op($name, FAMILY, $summary)
            .aliases(&[$alias])
            .params(&[reads($p0), reads($p1)])
            .deduce($deduce);
    )*};
}

tensor_elementwise! {
    TENSOR_ADD = "tensor.add", "pl.tensor.add", "lhs", "rhs", deduce_binary, "elementwise sum of two tensors";
    TENSOR_SUB = "tensor.sub", "pl.tensor.sub", "lhs", "rhs", deduce_binary, "elementwise difference of two tensors";
    TENSOR_MUL = "tensor.mul", "pl.tensor.mul", "lhs", "rhs", deduce_binary, "elementwise product of two tensors";
    TENSOR_DIV = "tensor.div", "pl.tensor.div", "lhs", "rhs", deduce_binary, "elementwise quotient of two tensors";
    TENSOR_MAXIMUM = "tensor.maximum", "pl.tensor.maximum", "lhs", "rhs", deduce_binary, "elementwise maximum of two tensors";
    TENSOR_MINIMUM = "tensor.minimum", "pl.tensor.minimum", "lhs", "rhs", deduce_binary, "elementwise minimum of two tensors";
    TENSOR_ADDS = "tensor.adds", "pl.tensor.adds", "tensor", "scalar", deduce_scalar_binary, "add a scalar to every element";
    TENSOR_SUBS = "tensor.subs", "pl.tensor.subs", "tensor", "scalar", deduce_scalar_binary, "subtract a scalar from every element";
    TENSOR_MULS = "tensor.muls", "pl.tensor.muls", "tensor", "scalar", deduce_scalar_binary, "multiply every element by a scalar";
    TENSOR_DIVS = "tensor.divs", "pl.tensor.divs", "tensor", "scalar", deduce_scalar_binary, "divide every element by a scalar";
}

/// `tensor.cast(tensor, *, dtype, mode=None, target_type=None)`: a plain tensor of the new
/// element type (the reference spellings are canonicalized as for `tile.cast`).
pub static TENSOR_CAST: OpDef =
    op("tensor.cast", FAMILY, "convert a tensor's element type (the result is a plain tensor)")
        .aliases(&["pl.tensor.cast"])
        .params(&[reads("tensor")])
        .attrs(super::CAST_ATTRS)
        .deduce(deduce_cast);

fn deduce_cast(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let t = tensor_like_arg(cx, 0, "tensor")?;
    let dtype = super::cast_dtype(cx, t.dtype)?;
    Ok(Type::tensor(t.shape.clone(), dtype))
}

register_op!(
    TENSOR_CREATE,
    TENSOR_READ,
    TENSOR_WRITE,
    TENSOR_VIEW,
    TENSOR_SLICE,
    TENSOR_RESHAPE,
    TENSOR_ASSEMBLE,
    TENSOR_ADD,
    TENSOR_SUB,
    TENSOR_MUL,
    TENSOR_DIV,
    TENSOR_MAXIMUM,
    TENSOR_MINIMUM,
    TENSOR_ADDS,
    TENSOR_SUBS,
    TENSOR_MULS,
    TENSOR_DIVS,
    TENSOR_CAST,
);
