//! Type annotations: `pl.Tensor[[16, 64], pl.FP32]` (and the legacy call form),
//! `pl.Out[...]`, `pl.InOut[...]`, `pld.DistributedTensor[...]`, `pl.Tile[...]`,
//! `pl.Scalar[...]`, `pl.Array[...]`, `pl.Tuple[...]`, `pld.CommCtx`, `pld.Ptr`, `pld.WindowBuffer`.
//!
//! Guarantees: every unsupported or malformed annotation is a diagnostic at the offending
//! node; dims are evaluated by the caller's closure (constants, symbols, and in bodies local
//! values), so the same code serves parameters and annotated assignments.

use crate::util::{dotted, span_of};
use pld_ir::{
    ArrayType, DataType, Diagnostic, Direction, DistTensorType, Expr, ExprKind, FileId, Layout, MemorySpace,
    TensorType, TensorView, TileType, Type,
};
use rustpython_parser::ast;

/// Evaluates one dim (or a dtype / enum) expression.
pub type DimFn<'a> = dyn FnMut(&ast::Expr) -> Result<Expr, Diagnostic> + 'a;

const SUPPORTED: &str = "supported annotations: pl.Tensor[[dims], dtype], pld.DistributedTensor[[dims], dtype], \
pl.Tile[[dims], dtype, memory], pl.Scalar[dtype], pl.Array[extent, dtype], pl.Out[...], pl.InOut[...], pl.Tuple[...], pld.CommCtx, pld.Ptr";

/// Parses a parameter annotation, with its direction wrapper.
pub fn param_type(file: FileId, e: &ast::Expr, dim: &mut DimFn<'_>) -> Result<(Type, Direction), Diagnostic> {
    if let ast::Expr::Subscript(s) = e {
        let dir = match dotted(&s.value).as_deref() {
            Some("pl.Out" | "pld.Out") => Some(Direction::Out),
            Some("pl.InOut" | "pld.InOut") => Some(Direction::InOut),
            _ => None,
        };
        if let Some(dir) = dir {
            return Ok((parse_type(file, &s.slice, dim)?, dir));
        }
    }
    Ok((parse_type(file, e, dim)?, Direction::In))
}

/// Parses a return annotation: `tuple[A, B]` is two results, anything else one.
pub fn return_types(file: FileId, e: &ast::Expr, dim: &mut DimFn<'_>) -> Result<Vec<Type>, Diagnostic> {
    if let ast::Expr::Constant(c) = e {
        if matches!(c.value, ast::Constant::None) {
            return Ok(Vec::new());
        }
    }
    if let ast::Expr::Subscript(s) = e {
        if matches!(dotted(&s.value).as_deref(), Some("tuple" | "Tuple" | "typing.Tuple")) {
            return items(&s.slice).iter().map(|x| parse_type(file, x, dim)).collect();
        }
    }
    Ok(vec![parse_type(file, e, dim)?])
}

fn items(e: &ast::Expr) -> Vec<&ast::Expr> {
    match e {
        ast::Expr::Tuple(t) => t.elts.iter().collect(),
        other => vec![other],
    }
}

/// Deepest nesting of type annotations (`pl.Tuple[pl.Tuple[...]]`).
const MAX_TYPE_DEPTH: usize = 64;

/// Parses a value type annotation.
pub fn parse_type(file: FileId, e: &ast::Expr, dim: &mut DimFn<'_>) -> Result<Type, Diagnostic> {
    parse_type_at(file, e, dim, 0)
}

fn parse_type_at(file: FileId, e: &ast::Expr, dim: &mut DimFn<'_>, depth: usize) -> Result<Type, Diagnostic> {
    let span = span_of(file, e);
    if depth > MAX_TYPE_DEPTH {
        return Err(Diagnostic::error(
            span,
            format!("type annotation nested more than {MAX_TYPE_DEPTH} levels deep"),
        ));
    }
    let unsupported = || Diagnostic::error(span, "unsupported type annotation").with_note(SUPPORTED);
    match e {
        ast::Expr::Subscript(s) => {
            let g = Generic { head: dotted(&s.value).ok_or_else(unsupported)?, args: items(&s.slice), span };
            shaped(file, &g, dim, depth)?.ok_or_else(unsupported)
        }
        ast::Expr::Call(c) => {
            let head = dotted(&c.func).ok_or_else(unsupported)?;
            if !c.keywords.is_empty() {
                return Err(unsupported());
            }
            let g = Generic { head, args: c.args.iter().collect(), span };
            shaped(file, &g, dim, depth)?.ok_or_else(unsupported)
        }
        ast::Expr::Attribute(_) | ast::Expr::Name(_) => {
            let path = dotted(e).ok_or_else(unsupported)?;
            match path.as_str() {
                "pld.CommCtx" => Ok(Type::CommCtx),
                "pld.Ptr" | "pl.Ptr" => Ok(Type::Ptr),
                "pld.WindowBuffer" => Ok(Type::WindowBuffer),
                "pl.Unknown" => Ok(Type::Unknown),
                _ => match crate::consts::named_constant(&path) {
                    Some(ExprKind::DType(d)) => Ok(Type::Scalar(d)),
                    _ => Err(unsupported()),
                },
            }
        }
        _ => Err(unsupported()),
    }
}

/// A generic annotation `head[args]` (or `head(args)`), at `span`.
struct Generic<'e> {
    head: String,
    args: Vec<&'e ast::Expr>,
    span: pld_ir::Span,
}

/// The type a generic annotation names, `None` for a head that is not a type.
fn shaped(
    file: FileId,
    g: &Generic<'_>,
    dim: &mut DimFn<'_>,
    depth: usize,
) -> Result<Option<Type>, Diagnostic> {
    let (head, args, span) = (g.head.as_str(), g.args.as_slice(), g.span);
    match head {
        "pl.Tensor" | "pld.DistributedTensor" => {
            let dist = head == "pld.DistributedTensor";
            let (shape, dtype) = shape_dtype(file, g, dim)?;
            let mut t = TensorType::new(shape, dtype);
            let mut window = None;
            for extra in args.iter().skip(2) {
                if let ast::Expr::Constant(c) = extra {
                    if let ast::Constant::Str(s) = &c.value {
                        if let Some(w) = s.strip_prefix("window_buffer=") {
                            window = Some(w.to_string());
                            continue;
                        }
                    }
                }
                let view = tensor_view(file, extra, dim)?;
                t = t.with_view(view);
            }
            if dist {
                Ok(Some(Type::DistTensor(DistTensorType { tensor: t, window })))
            } else if window.is_some() {
                Err(Diagnostic::error(span, "a window_buffer marker is only valid on pld.DistributedTensor"))
            } else {
                Ok(Some(Type::Tensor(t)))
            }
        }
        "pl.Tile" => {
            let (shape, dtype) = shape_dtype(file, g, dim)?;
            let mut t = TileType::new(shape, dtype, None);
            for extra in args.iter().skip(2) {
                let path = dotted(extra);
                if let Some(m) = path.as_deref().and_then(memory_space) {
                    t.memory = Some(m);
                    continue;
                }
                if let ast::Expr::Call(c) = extra {
                    if dotted(&c.func).as_deref() == Some("pl.TileView") && c.args.is_empty() {
                        for kw in &c.keywords {
                            match kw.arg.as_deref() {
                                Some("valid_shape") => {
                                    let v = dims(file, &kw.value, dim)?;
                                    t = t.with_valid_shape(v);
                                }
                                _ => {
                                    return Err(Diagnostic::error(
                                        span_of(file, kw),
                                        "unsupported pl.TileView field (only valid_shape is supported)",
                                    ))
                                }
                            }
                        }
                        continue;
                    }
                }
                return Err(Diagnostic::error(
                    span_of(file, *extra),
                    "expected a memory space (pl.MemorySpace.Vec) or pl.TileView(valid_shape=[...])",
                ));
            }
            Ok(Some(Type::Tile(t)))
        }
        "pl.Scalar" => {
            let [d] = args else {
                return Err(Diagnostic::error(span, "pl.Scalar takes one dtype, e.g. pl.Scalar[pl.INT32]"));
            };
            Ok(Some(Type::Scalar(dtype_of(file, d, dim)?)))
        }
        "pl.Array" => {
            let [n, d] = args else {
                return Err(Diagnostic::error(
                    span,
                    "pl.Array takes an extent and a dtype, e.g. pl.Array[8, pl.INT32]",
                ));
            };
            let extent = dim_value(file, n, dim)?.as_int().filter(|v| *v > 0);
            let Some(extent) = extent else {
                return Err(Diagnostic::error(
                    span_of(file, *n),
                    "a pl.Array extent must be a positive integer constant",
                ));
            };
            let dtype = dtype_of(file, d, dim)?;
            Ok(Some(Type::Array(ArrayType { dtype, extent: Expr::int(extent) })))
        }
        "pl.Tuple" => {
            let items =
                args.iter().map(|a| parse_type_at(file, a, dim, depth + 1)).collect::<Result<Vec<_>, _>>()?;
            Ok(Some(Type::Tuple(items)))
        }
        "pl.Out" | "pl.InOut" | "pld.Out" | "pld.InOut" => Err(Diagnostic::error(
            span,
            format!("{head}[...] is only valid as the outermost annotation of a function parameter"),
        )),
        _ => Ok(None),
    }
}

/// The leading shape and dtype of `pl.Tensor[...]`-like annotations.
fn shape_dtype(
    file: FileId,
    g: &Generic<'_>,
    dim: &mut DimFn<'_>,
) -> Result<(Vec<Expr>, DataType), Diagnostic> {
    let [shape, dtype, ..] = g.args.as_slice() else {
        let head = &g.head;
        return Err(Diagnostic::error(
            g.span,
            format!("{head} needs a shape and a dtype, e.g. {head}[[16, 64], pl.FP32]"),
        ));
    };
    let shape = dims(file, shape, dim)?;
    let dtype = dtype_of(file, dtype, dim)?;
    Ok((shape, dtype))
}

/// A list of dims: a list/tuple literal, or a name bound to a constant tuple.
pub fn dims(file: FileId, e: &ast::Expr, dim: &mut DimFn<'_>) -> Result<Vec<Expr>, Diagnostic> {
    match e {
        ast::Expr::List(l) => l.elts.iter().map(|x| dim_value(file, x, dim)).collect(),
        ast::Expr::Tuple(t) => t.elts.iter().map(|x| dim_value(file, x, dim)).collect(),
        other => match dim(other)? {
            Expr { kind: ExprKind::Tuple(items), .. } => Ok(items),
            _ => Err(Diagnostic::error(span_of(file, other), "expected a list of dimensions, e.g. [16, 64]")),
        },
    }
}

fn dim_value(file: FileId, e: &ast::Expr, dim: &mut DimFn<'_>) -> Result<Expr, Diagnostic> {
    let v = dim(e)?;
    match v.kind {
        ExprKind::Str(_)
        | ExprKind::DType(_)
        | ExprKind::Tuple(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_) => {
            Err(Diagnostic::error(span_of(file, e), "a dimension must be an integer expression"))
        }
        _ => Ok(v),
    }
}

fn dtype_of(file: FileId, e: &ast::Expr, dim: &mut DimFn<'_>) -> Result<DataType, Diagnostic> {
    match dim(e) {
        Ok(Expr { kind: ExprKind::DType(d), .. }) => Ok(d),
        Err(d) if !d.message.starts_with("expected a constant") => Err(d),
        _ => Err(Diagnostic::error(span_of(file, e), "expected a dtype, e.g. pl.FP32")),
    }
}

fn memory_space(path: &str) -> Option<MemorySpace> {
    let rest = path.strip_prefix("pl.MemorySpace.").or_else(|| path.strip_prefix("pl.Mem."))?;
    MemorySpace::from_dsl_name(rest)
}

fn layout(path: &str) -> Option<Layout> {
    let rest = path.strip_prefix("pl.Layout.").or_else(|| path.strip_prefix("pl."))?;
    Layout::from_dsl_name(rest)
}

fn tensor_view(file: FileId, e: &ast::Expr, dim: &mut DimFn<'_>) -> Result<TensorView, Diagnostic> {
    if let Some(l) = dotted(e).as_deref().and_then(layout) {
        return Ok(TensorView { layout: l, ..TensorView::default() });
    }
    if let ast::Expr::Call(c) = e {
        if dotted(&c.func).as_deref() == Some("pl.TensorView") && c.args.is_empty() {
            let mut v = TensorView::default();
            for kw in &c.keywords {
                match kw.arg.as_deref() {
                    Some("stride") => v.stride = dims(file, &kw.value, dim)?,
                    Some("valid_shape") => v.valid_shape = dims(file, &kw.value, dim)?,
                    Some("layout") => {
                        v.layout = dotted(&kw.value).as_deref().and_then(layout).ok_or_else(|| {
                            Diagnostic::error(
                                span_of(file, &kw.value),
                                "expected pl.Layout.ND, pl.Layout.DN or pl.Layout.NZ",
                            )
                        })?
                    }
                    _ => {
                        return Err(Diagnostic::error(
                            span_of(file, kw),
                            "unsupported pl.TensorView field (stride, layout and valid_shape are supported)",
                        ))
                    }
                }
            }
            return Ok(v);
        }
    }
    Err(Diagnostic::error(
        span_of(file, e),
        "expected a layout (pl.NZ), pl.TensorView(...) or a \"window_buffer=<name>\" marker",
    ))
}
