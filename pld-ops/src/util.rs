//! Shared argument checks for deducers: every helper returns a `Diagnostic` instead of
//! panicking, names the op (`cx.def.name`) in its message, and treats dynamic dims as
//! trusted (rules fire only when every participating value is static).

use pld_ir::{DeduceCx, Diagnostic, Expr, MemorySpace, TensorType, TileType, Type};

/// The items of the tuple argument `i` (shape, offsets, indices).
pub(crate) fn tuple_arg<'a>(cx: &'a DeduceCx<'_>, i: usize, what: &str) -> Result<&'a [Expr], Diagnostic> {
    match cx.arg(i).and_then(Expr::as_tuple) {
        Some(items) => Ok(items),
        None => Err(cx.arg_error(
            i,
            format!("{} {what} must be a tuple/list of ints or index expressions", cx.def.name),
        )),
    }
}

/// The optional tuple argument `i`: `None` when absent.
pub(crate) fn opt_tuple_arg<'a>(
    cx: &'a DeduceCx<'_>,
    i: usize,
    what: &str,
) -> Result<Option<&'a [Expr]>, Diagnostic> {
    if cx.arg(i).is_none() {
        return Ok(None);
    }
    tuple_arg(cx, i, what).map(Some)
}

/// Every element of a tuple must be an integer-typed scalar expression.
pub(crate) fn check_index_items(
    cx: &DeduceCx<'_>,
    i: usize,
    items: &[Expr],
    what: &str,
) -> Result<(), Diagnostic> {
    for (k, e) in items.iter().enumerate() {
        let ty = e.ty(cx.env.values);
        match ty {
            Type::Scalar(d) if d.is_int() => {}
            other => {
                return Err(cx.arg_error(
                    i,
                    format!(
                        "{} {what}[{k}] must be an integer scalar expression, got {}",
                        cx.def.name,
                        other.kind_name()
                    ),
                ))
            }
        }
    }
    Ok(())
}

/// A shape tuple: integer items, static ones positive.
pub(crate) fn shape_arg<'a>(cx: &'a DeduceCx<'_>, i: usize, what: &str) -> Result<&'a [Expr], Diagnostic> {
    let items = tuple_arg(cx, i, what)?;
    if items.is_empty() {
        return Err(cx.arg_error(i, format!("{} {what} must have at least one dimension", cx.def.name)));
    }
    check_index_items(cx, i, items, what)?;
    for (k, d) in items.iter().enumerate() {
        if let Some(v) = d.as_int() {
            if v <= 0 {
                return Err(cx.arg_error(i, format!("{} {what}[{k}] must be positive, got {v}", cx.def.name)));
            }
        }
    }
    Ok(items)
}

/// An offsets / indices tuple: integer items of the given rank, static ones non-negative.
pub(crate) fn offsets_arg<'a>(
    cx: &'a DeduceCx<'_>,
    i: usize,
    rank: usize,
    what: &str,
) -> Result<&'a [Expr], Diagnostic> {
    let items = tuple_arg(cx, i, what)?;
    if items.len() != rank {
        return Err(cx.arg_error(
            i,
            format!("{} {what} must have {rank} element(s) (one per dim), got {}", cx.def.name, items.len()),
        ));
    }
    check_index_items(cx, i, items, what)?;
    for (k, d) in items.iter().enumerate() {
        if let Some(v) = d.as_int() {
            if v < 0 {
                return Err(
                    cx.arg_error(i, format!("{} {what}[{k}] must be non-negative, got {v}", cx.def.name))
                );
            }
        }
    }
    Ok(items)
}

/// A valid-region tuple `valid` (argument `i`, named `what`) of a rank-`rank` operand: one
/// integer item per dim.
pub(crate) fn valid_items(
    cx: &DeduceCx<'_>,
    i: usize,
    valid: &[Expr],
    rank: usize,
    what: &str,
) -> Result<(), Diagnostic> {
    if valid.len() != rank {
        return Err(cx.arg_error(
            i,
            format!("{} {what} must have {rank} element(s), got {}", cx.def.name, valid.len()),
        ));
    }
    check_index_items(cx, i, valid, what)
}

/// The `shape` (argument 1) and `offsets` (argument 2) of a slice of an operand with `dims`:
/// one item per dim, the region inside the operand; `rank_note` follows the count in the
/// message. Returns the shape.
pub(crate) fn slice_region<'a>(
    cx: &'a DeduceCx<'_>,
    dims: &[Expr],
    rank_note: &str,
) -> Result<&'a [Expr], Diagnostic> {
    let shape = shape_arg(cx, 1, "shape")?;
    if shape.len() != dims.len() {
        return Err(cx.arg_error(
            1,
            format!(
                "{} shape must have {} element(s){rank_note}, got {}",
                cx.def.name,
                dims.len(),
                shape.len()
            ),
        ));
    }
    let offsets = offsets_arg(cx, 2, dims.len(), "offsets")?;
    check_in_bounds(cx, 2, offsets, shape, dims, "region")?;
    Ok(shape)
}

/// A new `shape` (argument `i`) for the elements of `dims`: the same count when both are static.
pub(crate) fn same_numel(
    cx: &DeduceCx<'_>,
    i: usize,
    dims: &[Expr],
    shape: &[Expr],
) -> Result<(), Diagnostic> {
    if let (Some(a), Some(b)) = (static_numel(dims), static_numel(shape)) {
        if a != b {
            return Err(
                cx.arg_error(i, format!("{} cannot change the element count ({a} -> {b})", cx.def.name))
            );
        }
    }
    Ok(())
}

/// Rejects `offset + extent > dim` when all three are static.
pub(crate) fn check_in_bounds(
    cx: &DeduceCx<'_>,
    i: usize,
    offsets: &[Expr],
    extents: &[Expr],
    dims: &[Expr],
    what: &str,
) -> Result<(), Diagnostic> {
    for (k, ((o, e), d)) in offsets.iter().zip(extents).zip(dims).enumerate() {
        if let (Some(o), Some(e), Some(d)) = (o.as_int(), e.as_int(), d.as_int()) {
            if o.saturating_add(e) > d {
                return Err(cx.arg_error(
                    i,
                    format!("{} {what} out of bounds in dim {k}: offset {o} + extent {e} > {d}", cx.def.name),
                ));
            }
        }
    }
    Ok(())
}

/// Argument `i` as the `indices` of one element of an operand with `dims`: one integer per
/// dim, static ones inside it.
pub(crate) fn element_index_arg(cx: &DeduceCx<'_>, i: usize, dims: &[Expr]) -> Result<(), Diagnostic> {
    let idx = offsets_arg(cx, i, dims.len(), "indices")?;
    let ones = vec![Expr::int(1); idx.len()];
    check_in_bounds(cx, i, idx, &ones, dims, "index")
}

/// Argument `i` must be a plain tensor or a window-bound tensor.
pub(crate) fn tensor_like_arg<'a>(
    cx: &'a DeduceCx<'_>,
    i: usize,
    what: &str,
) -> Result<&'a TensorType, Diagnostic> {
    cx.ty(i).as_tensor_like().ok_or_else(|| {
        cx.arg_error(
            i,
            format!(
                "{} {what} must be a Tensor or DistributedTensor, got {}",
                cx.def.name,
                cx.ty(i).kind_name()
            ),
        )
    })
}

/// Argument `i` must be a tile.
pub(crate) fn tile_arg<'a>(cx: &'a DeduceCx<'_>, i: usize, what: &str) -> Result<&'a TileType, Diagnostic> {
    cx.ty(i).as_tile().ok_or_else(|| {
        cx.arg_error(i, format!("{} {what} must be a TileType, got {}", cx.def.name, cx.ty(i).kind_name()))
    })
}

/// Argument `i` must be a scalar; returns its dtype.
pub(crate) fn scalar_arg(cx: &DeduceCx<'_>, i: usize, what: &str) -> Result<pld_ir::DataType, Diagnostic> {
    cx.ty(i).as_scalar().ok_or_else(|| {
        cx.arg_error(i, format!("{} {what} must be a scalar, got {}", cx.def.name, cx.ty(i).kind_name()))
    })
}

/// Argument `i` must be an integer scalar.
pub(crate) fn int_scalar_arg(cx: &DeduceCx<'_>, i: usize, what: &str) -> Result<(), Diagnostic> {
    match cx.ty(i) {
        Type::Scalar(d) if d.is_int() => Ok(()),
        other => Err(cx.arg_error(
            i,
            format!("{} {what} must be an integer scalar, got {}", cx.def.name, describe(other)),
        )),
    }
}

/// `ScalarType(fp32)` style description for diagnostics.
pub(crate) fn describe(t: &Type) -> String {
    match t {
        Type::Scalar(d) => format!("ScalarType({d})"),
        other => other.kind_name().to_string(),
    }
}

/// The memory-space attribute `name` (a `MemorySpace` DSL name), or `default`.
pub(crate) fn memory_attr(
    cx: &DeduceCx<'_>,
    name: &str,
    default: Option<MemorySpace>,
) -> Result<Option<MemorySpace>, Diagnostic> {
    match cx.attr(name) {
        None => Ok(default),
        Some(a) => match a.as_str().and_then(MemorySpace::from_dsl_name) {
            Some(m) => Ok(Some(m)),
            None => Err(cx.error(format!(
                "{} {name} must be a MemorySpace (DDR, Vec, Mat, Left, Right, Acc, Bias, ...)",
                cx.def.name
            ))),
        },
    }
}

/// Two dims are provably different (both static and unequal).
pub(crate) fn provably_ne(a: &Expr, b: &Expr) -> bool {
    matches!((a.as_int(), b.as_int()), (Some(x), Some(y)) if x != y)
}

/// Product of static dims, `None` if any is dynamic.
pub(crate) fn static_numel(dims: &[Expr]) -> Option<i64> {
    dims.iter().try_fold(1i64, |acc, d| d.as_int().and_then(|v| acc.checked_mul(v)))
}

/// The same kind as `like` (plain or window-bound) with new tensor fields.
pub(crate) fn same_kind(like: &Type, tensor: TensorType) -> Type {
    match like {
        Type::DistTensor(d) => Type::DistTensor(pld_ir::DistTensorType { tensor, window: d.window.clone() }),
        _ => Type::Tensor(tensor),
    }
}

/// The atomic-add dtype rules shared by every op with an `atomic` kwarg: the hardware
/// allow-list (fp32/bf16/fp16/int32/int16/int8), and bf16 only on A2/A3 (`AtomicAddDtypeValid`).
pub(crate) fn check_atomic_dtype(cx: &DeduceCx<'_>, dtype: pld_ir::DataType) -> Result<(), Diagnostic> {
    if cx.attr_int("atomic") != Some(1) {
        return Ok(());
    }
    if !dtype.supports_atomic_add() {
        return Err(cx.error(format!(
            "{} with atomic=AtomicType.Add requires an fp32/bf16/fp16/int32/int16/int8 dtype \
             (hardware atomic-add dtypes), but got {dtype}",
            cx.def.name
        )));
    }
    if dtype == pld_ir::DataType::BF16 && cx.env.target == pld_ir::Target::A5 {
        return Err(cx
            .error(format!(
                "{}: atomic-add into a bf16 global tensor is not supported on the 'a5' backend \
                 (AtomicAddDtypeValid); bf16 atomic add is only available on Ascend910B (a2a3)",
                cx.def.name
            ))
            .with_note("use fp32 or fp16 for an atomic accumulation on a5, or compile for --target a2a3"));
    }
    Ok(())
}

/// A window-bound slot: argument `i` must be exactly a `DistributedTensor`; a plain tensor
/// gets a note on how to make a window.
pub(crate) fn window_arg<'a>(
    cx: &'a DeduceCx<'_>,
    i: usize,
    role: &str,
) -> Result<&'a TensorType, Diagnostic> {
    match cx.ty(i) {
        Type::DistTensor(d) => Ok(&d.tensor),
        other => {
            let mut d = cx.arg_error(
                i,
                format!(
                    "{} {role} must be a DistributedTensor (window-bound), got {}",
                    cx.def.name,
                    other.kind_name()
                ),
            );
            if matches!(other, Type::Tensor(_)) {
                d = d.with_note(
                    "a plain Tensor is never window-bound; allocate one with pld.alloc_window_buffer and view it with pld.window",
                );
            }
            Err(d)
        }
    }
}

/// `peer` (or any rank index) must be a scalar, and not a floating-point one: a rank index
/// of 1.5 has no meaning (the simulator would truncate it to another rank).
pub(crate) fn peer_arg(cx: &DeduceCx<'_>, i: usize) -> Result<(), Diagnostic> {
    match cx.ty(i) {
        Type::Scalar(d) if d.is_float() => Err(cx.arg_error(
            i,
            format!("{} peer must be an integer scalar (rank index), got a {d} scalar", cx.def.name),
        )),
        Type::Scalar(_) => Ok(()),
        other => Err(cx.arg_error(
            i,
            format!("{} peer must be a scalar (rank index), got {}", cx.def.name, other.kind_name()),
        )),
    }
}

/// An offsets tuple whose rank must equal `rank` (`<what> tensor rank` in the message).
pub(crate) fn offsets_tuple<'a>(
    cx: &'a DeduceCx<'_>,
    i: usize,
    name: &str,
    rank: usize,
    what: &str,
) -> Result<&'a [Expr], Diagnostic> {
    let Some(items) = cx.arg(i).and_then(Expr::as_tuple) else {
        return Err(cx.arg_error(
            i,
            format!(
                "{} {name} must be a tuple (MakeTuple of scalars), got {}",
                cx.def.name,
                cx.arg(i).map_or("nothing".to_string(), |e| describe(&e.ty(cx.env.values)))
            ),
        ));
    };
    if items.len() != rank {
        return Err(cx.arg_error(
            i,
            format!("{} {name} rank ({}) must match {what} rank ({rank})", cx.def.name, items.len()),
        ));
    }
    Ok(items)
}

/// The valid region when it has one extent per dim, else the shape (a malformed valid
/// region never indexes out of bounds).
pub(crate) fn valid_or_shape(shape: &[Expr], valid: &[Expr]) -> Vec<Expr> {
    if valid.len() == shape.len() {
        valid.to_vec()
    } else {
        shape.to_vec()
    }
}
