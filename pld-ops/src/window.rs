//! The window family: allocating symmetric windows and querying the communication context.
//!
//! `alloc_window_buffer` yields an allocation token (`Ptr`), `window` views it as a
//! window-bound `DistributedTensor`, `world_size` is the host's rank count, and
//! `get_comm_ctx` / `rank` / `nranks` read the runtime `CommContext` inside kernels. None of
//! these ops moves data; all are SHARED and write nothing.

use crate::record::{op, value};
use pld_ir::registry::AttrType;
use pld_ir::{
    register_canonicalize, register_op, Attr, AttrDef, BinOp, DataType, DeduceCx, DeduceEnv, Diagnostic,
    Expr, ExprKind, FunctionKind, OpDef, Type,
};

/// `pld.tensor.alloc_window_buffer(size, *, name)`: reserve `size` bytes in every rank's window.
/// The DSL also takes `(shape, *, dtype)` (bytes = product of the shape × the dtype's width,
/// rewritten to the byte form by this module's `canon_alloc`), and names the buffer after the assignment
/// it is the right-hand side of (`buf = pld.alloc_window_buffer(…)`) unless `name=` is given.
pub static ALLOC_WINDOW_BUFFER: OpDef = op(
    "pld.tensor.alloc_window_buffer",
    "window",
    "allocate a symmetric window buffer of `size` bytes on every rank",
)
.aliases(&["pld.alloc_window_buffer"])
.params(&[value("size").or_keyword("shape")])
.attrs(&[AttrDef::assigned_name("name"), AttrDef::optional("dtype", AttrType::DType)])
.deduce(deduce_alloc);

/// `alloc_window_buffer([d0, d1, …], dtype=D)` → `alloc_window_buffer(width(D) * d0 * d1 * …)`:
/// the static dims fold into one integer, the symbolic ones multiply onto it, and `dtype` goes.
/// An empty shape, a shape without `dtype` or a `dtype` with a byte size is left for
/// [`deduce_alloc`] to report.
fn canon_alloc(
    args: &mut Vec<Expr>,
    attrs: &mut Vec<(String, Attr)>,
    _: &DeduceEnv<'_>,
) -> Option<&'static str> {
    let at = attrs.iter().position(|(k, _)| k == "dtype")?;
    let (Attr::DType(d), [Expr { kind: ExprKind::Tuple(dims), span }]) = (&attrs[at].1, args.as_slice())
    else {
        return None;
    };
    if dims.is_empty() {
        return None;
    }
    let span = *span;
    let width = i64::try_from(d.bytes()).unwrap_or(1);
    let (fixed, symbolic): (Vec<Expr>, Vec<Expr>) = dims.iter().cloned().partition(|x| x.as_int().is_some());
    let mut bytes = Expr::int(width).at(span);
    for dim in fixed.into_iter().chain(symbolic) {
        bytes = Expr::binary(BinOp::Mul, bytes, dim).at(span);
    }
    args[0] = bytes;
    attrs.remove(at);
    None
}

register_canonicalize!("pld.tensor.alloc_window_buffer", canon_alloc);

/// The DSL forms [`canon_alloc`] does not rewrite: an empty shape, a shape without `dtype`, a
/// `dtype` with a byte size. (A call nothing names is the frontend's error, at the call.)
fn check_alloc_form(cx: &DeduceCx<'_>) -> Result<(), Diagnostic> {
    match cx.arg(0).map(|a| &a.kind) {
        Some(ExprKind::Tuple(dims)) if dims.is_empty() => {
            Err(cx.arg_error(0, "pld.alloc_window_buffer shape must be non-empty"))
        }
        Some(ExprKind::Tuple(_)) => Err(cx.arg_error(
            0,
            "pld.alloc_window_buffer with a shape needs dtype=..., e.g. alloc_window_buffer([1, 256], dtype=pl.FP32)",
        )),
        _ if cx.attr("dtype").is_some() => {
            Err(cx.error("dtype=... is only valid with a shape list: alloc_window_buffer([dims], dtype=...)"))
        }
        _ => Ok(()),
    }
}

fn deduce_alloc(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    check_alloc_form(cx)?;
    if cx.attr_str("name").is_none_or(|n| n.is_empty()) {
        return Err(cx.error("pld.tensor.alloc_window_buffer requires a non-empty 'name' kwarg"));
    }
    if let Some(kind) = cx.env.func_kind {
        if kind != FunctionKind::Host {
            return Err(
                cx.error("pld.tensor.alloc_window_buffer can only be called in HOST orchestration context")
            );
        }
    }
    if let Some(size) = cx.arg(0).and_then(|a| a.as_int()) {
        if size <= 0 {
            return Err(
                cx.arg_error(0, format!("pld.tensor.alloc_window_buffer size must be positive, got {size}"))
            );
        }
    }
    match cx.ty(0) {
        Type::Scalar(d) if d.is_int() => Ok(Type::Ptr),
        other => Err(cx.arg_error(
            0,
            format!("pld.tensor.alloc_window_buffer size must be an integer scalar (bytes), got {other}"),
        )),
    }
}

/// `pld.tensor.window(buf, shape, *, dtype)`: view an allocation as a window-bound tensor.
pub static WINDOW: OpDef = op(
    "pld.tensor.window",
    "window",
    "view a window allocation as a DistributedTensor of `shape` and `dtype`",
)
.aliases(&["pld.window"])
.params(&[value("buf"), value("shape")])
.attrs(&[AttrDef::required("dtype", AttrType::DType)])
.deduce(deduce_window);

fn deduce_window(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    if *cx.ty(0) != Type::Ptr {
        return Err(cx.arg_error(
            0,
            format!(
                "pld.tensor.window 'buf' must have type Ptr (output of pld.tensor.alloc_window_buffer), got {}",
                cx.ty(0).kind_name()
            ),
        ));
    }
    let Some(shape) = cx.arg(1).and_then(|a| a.as_tuple()) else {
        return Err(
            cx.arg_error(1, "pld.tensor.window second argument must be a shape tuple (list of ints / exprs)")
        );
    };
    if shape.is_empty() {
        return Err(cx.arg_error(1, "pld.tensor.window shape must have at least one dimension"));
    }
    for (i, d) in shape.iter().enumerate() {
        if d.ty(cx.env.values).as_scalar().is_some_and(DataType::is_float) {
            return Err(Diagnostic::error(
                d.span.or(cx.span),
                format!(
                    "pld.tensor.window shape dimension[{i}] `{d}` is a float; dimensions must be integers"
                ),
            ));
        }
        if let Some(v) = d.as_int() {
            if v <= 0 {
                return Err(cx.arg_error(
                    1,
                    format!("pld.tensor.window shape dimension[{i}] is {v}; all dimensions must be positive"),
                ));
            }
        }
    }
    let dtype = cx.attr("dtype").and_then(|a| a.as_dtype()).unwrap_or(DataType::FP32);
    Ok(Type::dist_tensor(shape.to_vec(), dtype))
}

/// `pld.system.world_size()`: the number of ranks, on the host.
pub static WORLD_SIZE: OpDef =
    op("pld.system.world_size", "window", "the number of participating ranks (host orchestration only)")
        .aliases(&["pld.world_size"])
        .deduce(deduce_world_size);

fn deduce_world_size(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    match cx.env.func_kind {
        Some(FunctionKind::Host) | None => Ok(Type::Scalar(DataType::INT64)),
        Some(_) => Err(cx.error(
            "pld.system.world_size() can only be called in HOST orchestration context; \
             inside kernels use pld.system.nranks(pld.system.get_comm_ctx(t))",
        )),
    }
}

/// `pld.system.get_comm_ctx(t)`: the communication context of a window-bound tensor.
pub static GET_COMM_CTX: OpDef =
    op("pld.system.get_comm_ctx", "window", "the CommContext a window-bound tensor belongs to")
        .aliases(&["pld.get_comm_ctx"])
        .params(&[value("tensor")])
        .deduce(deduce_get_comm_ctx);

fn deduce_get_comm_ctx(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    match cx.ty(0) {
        Type::DistTensor(_) => Ok(Type::CommCtx),
        other => Err(cx.arg_error(
            0,
            format!(
                "pld.system.get_comm_ctx expects a DistributedTensor (window-bound), got {}",
                other.kind_name()
            ),
        )),
    }
}

fn deduce_ctx_query(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    match cx.ty(0) {
        Type::CommCtx => Ok(Type::Scalar(DataType::INT32)),
        other => Err(cx.arg_error(
            0,
            format!(
                "{} expects a CommCtx (output of pld.system.get_comm_ctx), got {}",
                cx.def.name,
                other.kind_name()
            ),
        )),
    }
}

/// `pld.system.rank(ctx)`: this rank's index.
pub static RANK: OpDef = op("pld.system.rank", "window", "this rank's index in the communication context")
    .aliases(&["pld.rank"])
    .params(&[value("ctx")])
    .rank_index()
    .deduce(deduce_ctx_query);

/// `pld.system.nranks(ctx)`: the number of ranks in the context.
pub static NRANKS: OpDef =
    op("pld.system.nranks", "window", "the number of ranks in the communication context")
        .aliases(&["pld.nranks"])
        .params(&[value("ctx")])
        .deduce(deduce_ctx_query);

register_op!(ALLOC_WINDOW_BUFFER, WINDOW, WORLD_SIZE, GET_COMM_CTX, RANK, NRANKS);
