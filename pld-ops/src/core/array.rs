//! On-core scalar arrays (`pl.array`): `array.create`, `array.get_element` and
//! `array.update_element`.
//!
//! An array is a small fixed-size 1-D array of integers (or BOOL / TASK_ID) living on the
//! scalar register file / C stack of one function. Writes are SSA-functional:
//! `update_element(arr, i, v)` yields a new array value (the frontend rebinds `arr`), and
//! codegen realises the chain in place.
//!
//! Guarantees (the reference deducers' rules): the extent is a positive integer constant;
//! the element dtype is an integer, BOOL or TASK_ID; an index is an integer scalar and, when
//! it is a constant, lies in `[0, extent)`; an updated value is a scalar whose dtype equals
//! the element dtype, or either side is INDEX and the other an integer (`arr[i] = i` with
//! `i` from `pl.range`). Every violation is a diagnostic at the offending argument.
//! `create` also accepts the reference's positional dtype (`pl.array.create(8, pl.INT32)`),
//! canonicalized to `dtype=` at call-build time.

use crate::record::{op, reads, updates, value};
use pld_ir::registry::AttrType;
use pld_ir::{
    register_canonicalize, register_op, ArrayType, Attr, AttrDef, DataType, DeduceCx, DeduceEnv, Diagnostic,
    Expr, ExprKind, OpDef, Type,
};

const FAMILY: &str = "core";

/// `array.create(extent, *, dtype)`: a zero-initialised on-core array.
pub static ARRAY_CREATE: OpDef = op(
    "array.create",
    FAMILY,
    "allocate a zero-initialised on-core scalar array (1-D, constant extent, integer dtype)",
)
.aliases(&["pl.array.create"])
.params(&[value("extent")])
.attrs(&[AttrDef::required("dtype", AttrType::DType)])
.deduce(deduce_create);

/// `array.get_element(array, index)`: one element as a scalar.
pub static ARRAY_GET_ELEMENT: OpDef =
    op("array.get_element", FAMILY, "read one element of an on-core array as a scalar")
        .aliases(&["pl.array.get_element"])
        .params(&[reads("array"), value("index")])
        .deduce(deduce_get_element);

/// `array.update_element(array, index, value)`: the array with one element replaced.
pub static ARRAY_UPDATE_ELEMENT: OpDef = op(
    "array.update_element",
    FAMILY,
    "functional update: the array with the element at index replaced by value",
)
.aliases(&["pl.array.update_element"])
.params(&[updates("array"), value("index"), value("value")])
.deduce(deduce_update_element);

register_op!(ARRAY_CREATE, ARRAY_GET_ELEMENT, ARRAY_UPDATE_ELEMENT);

/// Whether `d` may be an array element type.
pub fn is_array_dtype(d: DataType) -> bool {
    d.is_int() || d == DataType::BOOL || d == DataType::TASK_ID
}

fn deduce_create(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let name = cx.def.name;
    let dtype = cx
        .attr("dtype")
        .and_then(Attr::as_dtype)
        .ok_or_else(|| cx.error(format!("{name} requires a dtype, e.g. dtype=pl.INT32")))?;
    if !is_array_dtype(dtype) {
        return Err(cx.error(format!("{name} dtype must be an integer, BOOL or TASK_ID, got {dtype}")));
    }
    let extent = cx.arg(0).and_then(Expr::as_int).ok_or_else(|| {
        cx.arg_error(
            0,
            format!("{name} extent must be a compile-time integer constant, got {}", cx.ty(0).kind_name()),
        )
        .with_note("an on-core array has a fixed size known when the kernel is compiled")
    })?;
    if extent <= 0 {
        return Err(cx.arg_error(0, format!("{name} extent must be positive, got {extent}")));
    }
    Ok(Type::Array(ArrayType { dtype, extent: Expr::int(extent) }))
}

/// Argument 0 as an array.
fn array_arg<'a>(cx: &'a DeduceCx<'_>) -> Result<&'a ArrayType, Diagnostic> {
    match cx.ty(0) {
        Type::Array(a) => Ok(a),
        other => Err(cx.arg_error(
            0,
            format!(
                "{} first argument must be an ArrayType (pl.Array), got {}",
                cx.def.name,
                other.kind_name()
            ),
        )),
    }
}

/// Argument 1 as an in-range integer index.
fn index_arg(cx: &DeduceCx<'_>, a: &ArrayType) -> Result<(), Diagnostic> {
    let name = cx.def.name;
    match cx.ty(1) {
        Type::Scalar(d) if d.is_int() => {}
        Type::Scalar(d) => {
            return Err(cx.arg_error(1, format!("{name} index must have an integer dtype, got {d}")));
        }
        other => {
            return Err(
                cx.arg_error(1, format!("{name} index must be a ScalarType, got {}", other.kind_name()))
            );
        }
    }
    if let (Some(i), Some(n)) = (cx.arg(1).and_then(Expr::as_int), a.static_extent()) {
        if i < 0 || i >= n {
            return Err(
                cx.arg_error(1, format!("{name} index {i} is out of range for an array of extent {n}"))
            );
        }
    }
    Ok(())
}

fn deduce_get_element(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let a = array_arg(cx)?;
    index_arg(cx, a)?;
    Ok(Type::Scalar(a.dtype))
}

fn deduce_update_element(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let name = cx.def.name;
    let a = array_arg(cx)?;
    index_arg(cx, a)?;
    let v = match cx.ty(2) {
        Type::Scalar(d) => *d,
        other => {
            return Err(
                cx.arg_error(2, format!("{name} value must be a ScalarType, got {}", other.kind_name()))
            );
        }
    };
    // INDEX is the machine-word integer of loop variables and literals: compatible with any
    // integer element type on either side.
    let ok = v == a.dtype
        || (v == DataType::INDEX && a.dtype.is_int())
        || (a.dtype == DataType::INDEX && v.is_int());
    if !ok {
        return Err(cx
            .arg_error(2, format!("{name} value dtype ({v}) must match the array dtype ({})", a.dtype))
            .with_note(format!("convert it first: pl.cast(value, pl.{})", a.dtype.dsl_name())));
    }
    Ok(Type::Array(a.clone()))
}

/// `array.create(8, pl.INT32)`: moves the positional dtype into `dtype=`.
fn canon_create(
    args: &mut Vec<Expr>,
    attrs: &mut Vec<(String, Attr)>,
    _: &DeduceEnv<'_>,
) -> Option<&'static str> {
    if args.len() == 2 && !attrs.iter().any(|(k, _)| k == "dtype") {
        if let ExprKind::DType(d) = args[1].kind {
            args.remove(1);
            attrs.push(("dtype".into(), Attr::DType(d)));
        }
    }
    None
}

register_canonicalize!("array.create", canon_create);
