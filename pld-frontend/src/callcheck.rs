//! Calls between DSL functions are checked against the callee's annotations.
//!
//! Every call of a program function (`self.k(...)`, `k(...)` between `@pl.jit` functions,
//! host dispatches with `device=r`, task submits with `deps=`) is checked argument by
//! argument, where the frontend resolves the call. Guarantees, each a diagnostic on the
//! argument's span with a label on the parameter's annotation:
//!
//! - **kind**: a `pl.Tensor`, `pld.DistributedTensor`, `pl.Tile` or `pl.Scalar` parameter
//!   gets an argument of exactly that kind (a window is never a plain tensor);
//! - **dtype**: shaped arguments have the declared element type; a scalar's dtype class
//!   matches (integer / index arguments pass integer parameters, float literals any float
//!   parameter), so `r` of `pl.range` can be a `pl.Scalar[pl.INT32]` rank;
//! - **rank** and **static dims**: the ranks agree (except that a window may be passed
//!   with or without unit dims when both shapes are static, `[64]` for `[1, 64]`: the same
//!   bytes of the symmetric buffer, D-fe-12); a literal dim of the parameter equals the argument's dim
//!   whenever that one is known at compile time (a symbolic argument dim is a run-time fact
//!   and passes);
//! - **dynamic dims**: a parameter dim that is one symbol (`NR`) binds to the argument's dim
//!   (static or symbolic); every later use of that symbol in the same call must agree when
//!   both are known integers; compound dims (`2 * NR`) are compared after substitution; two
//!   shapes in one symbol that differ for every value of it (1..=4096: `[2*(NR-1), NR]` for
//!   `[NR, 1]`) are rejected (the symbol is one value per run);
//! - **direction**: a `pl.Out` / `pl.InOut` parameter needs a writable argument: a value
//!   that aliases a read-only (`In`) tensor parameter of the caller, directly, through a
//!   subscript / slice / reshape of it, or through a name bound to one, is rejected.
//!
//! Arguments whose type is unknown (already reported elsewhere) are not checked.

use crate::body::FnCx;
use pld_ir::{Diagnostic, Direction, Expr, ExprKind, Span, Type, ValueId};
use std::collections::{HashMap, HashSet};

/// Ops whose result is a view of their first argument (what subscripts build).
const VIEW_OPS: &[&str] = &["tensor.slice", "tensor.reshape"];

/// Whether a parameter of type `ty` and direction `dir` is read-only storage that a callee
/// must not be handed for writing.
pub(crate) fn guards_writes(ty: &Type, dir: Direction) -> bool {
    dir == Direction::In && matches!(ty, Type::Tensor(_) | Type::DistTensor(_))
}

/// The value of `read_only` that `e` is (a view of), if any.
pub(crate) fn read_only_root(e: &Expr, read_only: &HashSet<ValueId>) -> Option<ValueId> {
    match &e.kind {
        ExprKind::Var(v) => read_only.contains(v).then_some(*v),
        ExprKind::Call(c) if c.op().is_some_and(|d| VIEW_OPS.contains(&d.name)) => {
            c.args.first().and_then(|a| read_only_root(a, read_only))
        }
        _ => None,
    }
}

/// Whether `e` is (a view of) a value in `read_only`.
pub(crate) fn aliases_read_only(e: &Expr, read_only: &HashSet<ValueId>) -> bool {
    match &e.kind {
        ExprKind::Var(v) => read_only.contains(v),
        ExprKind::Call(c) => {
            c.op().is_some_and(|d| VIEW_OPS.contains(&d.name))
                && c.args.first().is_some_and(|a| aliases_read_only(a, read_only))
        }
        _ => false,
    }
}

/// The DSL spelling of a type's kind, as users write it in annotations.
fn kind_word(t: &Type) -> &'static str {
    match t {
        Type::Tensor(_) => "pl.Tensor",
        Type::DistTensor(_) => "pld.DistributedTensor",
        Type::Tile(_) => "pl.Tile",
        Type::Scalar(_) => "pl.Scalar",
        Type::Tuple(_) => "tuple",
        Type::CommCtx => "pld.CommCtx",
        Type::Ptr => "pld.Ptr",
        Type::Array(_) => "pl.Array",
        Type::WindowBuffer => "window buffer",
        Type::Unknown => "value without a type",
    }
}

/// One parameter as the checker sees it.
struct ParamInfo<'s> {
    name: &'s str,
    ty: &'s Type,
    dir: Direction,
    annot: Span,
}

/// Checks call `args` (in parameter order) of the unit's function `callee` made from the
/// function `cx` is lowering; reports every mismatch into `cx`.
pub(crate) fn check_call(cx: &mut FnCx<'_, '_>, callee: usize, args: &[Expr]) {
    let sig = &cx.unit.sigs[callee];
    let callee_name = sig.name.clone();
    let params: Vec<(String, Type, Direction, Span)> =
        sig.params.iter().zip(&sig.annots).map(|((n, t, d, _), a)| (n.clone(), t.clone(), *d, *a)).collect();
    let mut bound: Bindings = HashMap::new();
    let mut found = Vec::new();
    for (j, (arg, (name, ty, dir, annot))) in args.iter().zip(&params).enumerate() {
        let p = ParamInfo { name, ty, dir: *dir, annot: *annot };
        let arg_ty = arg.ty(&cx.values);
        let what = describe_arg(j, arg, cx);
        let mut earlier = None;
        let mut report = |msg: String, earlier: Option<(Span, String)>| {
            let mut d = Diagnostic::error(arg.span, msg)
                .with_code(pld_ir::codes::CALL_TYPE_MISMATCH)
                .with_label(p.annot, format!("parameter `{}` of `{callee_name}` declared here", p.name));
            if let Some((span, label)) = earlier {
                d = d.with_label(span, label);
            }
            found.push(d);
        };
        if let Err(msg) = check_type(&what, &arg_ty, &p, (&mut bound, arg.span, &mut earlier)) {
            report(msg, earlier);
            continue;
        }
        if p.dir != Direction::In && aliases_read_only(arg, &cx.read_only) {
            let dir_word = if p.dir == Direction::Out { "pl.Out" } else { "pl.InOut" };
            report(
                format!(
                    "{what} is read-only here (it comes from an input parameter, not pl.Out / pl.InOut), \
                 but parameter `{}` of `{callee_name}` is {dir_word} and is written",
                    p.name
                ),
                None,
            );
        }
    }
    for d in found {
        cx.error(d);
    }
}

fn describe_arg(j: usize, arg: &Expr, cx: &FnCx<'_, '_>) -> String {
    match &arg.kind {
        ExprKind::Var(v) => format!("argument {} (`{}`)", j + 1, cx.values.name(*v)),
        _ => format!("argument {}", j + 1),
    }
}

/// Kind, dtype, rank and dims of one argument against its parameter.
fn check_type(
    what: &str,
    arg: &Type,
    p: &ParamInfo<'_>,
    bind: (&mut Bindings, Span, &mut Option<(Span, String)>),
) -> Result<(), String> {
    if matches!(arg, Type::Unknown) || matches!(p.ty, Type::Unknown) {
        return Ok(());
    }
    let pname = p.name;
    if std::mem::discriminant(arg) != std::mem::discriminant(p.ty) {
        return Err(format!(
            "{what} is a {}, but parameter `{pname}` is declared {}",
            kind_word(arg),
            kind_word(p.ty)
        ));
    }
    if let (Type::Scalar(a), Type::Scalar(want)) = (arg, p.ty) {
        let same_class = a == want || (a.is_int() && want.is_int()) || (a.is_float() && want.is_float());
        if !same_class {
            return Err(format!(
                "{what} is a pl.Scalar[pl.{}], but parameter `{pname}` is declared pl.Scalar[pl.{}]",
                a.dsl_name(),
                want.dsl_name()
            ));
        }
        return Ok(());
    }
    let (Some(a_dt), Some(p_dt)) = (arg.dtype(), p.ty.dtype()) else { return Ok(()) };
    if a_dt != p_dt {
        return Err(format!(
            "{what} has dtype pl.{}, but parameter `{pname}` is declared with dtype pl.{}",
            a_dt.dsl_name(),
            p_dt.dsl_name()
        ));
    }
    let (Some(a_shape), Some(p_shape)) = (arg.shape(), p.ty.shape()) else { return Ok(()) };
    if a_shape.len() != p_shape.len() {
        if matches!(arg, Type::DistTensor(_)) && same_up_to_unit_dims(a_shape, p_shape) {
            return Ok(());
        }
        return Err(format!(
            "{what} has rank {} (shape [{}]), but parameter `{pname}` is declared with rank {} (shape [{}])",
            a_shape.len(),
            join(a_shape),
            p_shape.len(),
            join(p_shape)
        ));
    }
    let (bound, at, earlier) = bind;
    for (d, (ad, pd)) in a_shape.iter().zip(p_shape).enumerate() {
        check_dim(what, pname, d, (ad, pd), (&mut *bound, at, &mut *earlier))?;
    }
    if let Some(sym) = differ_for_every_value(a_shape, p_shape) {
        return Err(format!(
            "{what} has shape [{}], but parameter `{pname}` is declared [{}]: they differ for every value of \
             `{sym}` (a dynamic dimension is one value per run)",
            join(a_shape),
            join(p_shape)
        ));
    }
    Ok(())
}

/// The dynamic symbol for which two shapes of one rank written in it (and literals only)
/// differ whatever its value (`[2*(NR-1), NR]` and `[NR, 1]`); `None` when they can agree or
/// when they mention other symbols (then only the run knows).
fn differ_for_every_value(a: &[Expr], b: &[Expr]) -> Option<String> {
    let mut syms = HashSet::new();
    for e in a.iter().chain(b) {
        e.walk(&mut |x| {
            if let ExprKind::Sym(s) = &x.kind {
                syms.insert(s.clone());
            }
        });
    }
    let mut it = syms.into_iter();
    let (Some(sym), None) = (it.next(), it.next()) else { return None };
    let differ = |v: i64| -> bool {
        let at = |e: &Expr| e.eval_int(&|_| Some(v));
        a.iter().zip(b).any(|(x, y)| matches!((at(x), at(y)), (Some(p), Some(q)) if p != q))
    };
    (1..=4096).all(differ).then_some(sym)
}

/// Dynamic symbols bound so far in one call: the argument dim and the argument that bound it.
type Bindings = HashMap<String, (Expr, Span)>;

/// Dim `d` of an argument (`ad`) against the parameter's (`pd`); a dynamic symbol binds on
/// first use, and a conflicting later use names the earlier argument in `earlier`.
fn check_dim(
    what: &str,
    pname: &str,
    d: usize,
    (ad, pd): (&Expr, &Expr),
    (bound, at, earlier): (&mut Bindings, Span, &mut Option<(Span, String)>),
) -> Result<(), String> {
    let no_sym = |_: &str| None;
    if let ExprKind::Sym(s) = &pd.kind {
        match bound.get(s) {
            None => {
                bound.insert(s.clone(), (ad.clone(), at));
            }
            Some((prev, prev_at)) => {
                if let (Some(a), Some(b)) = (ad.eval_int(&no_sym), prev.eval_int(&no_sym)) {
                    if a != b {
                        *earlier = Some((*prev_at, format!("`{s}` bound to {b} here")));
                        return Err(format!(
                            "{what} has dimension {d} = {a}, but `{s}` of parameter `{pname}` is already \
                             bound to {b} by an earlier argument of this call (`{s}` is one value per call)"
                        ));
                    }
                }
            }
        }
        return Ok(());
    }
    let sub = |name: &str| bound.get(name).and_then(|(e, _)| e.eval_int(&no_sym));
    if let (Some(want), Some(got)) = (pd.eval_int(&sub), ad.eval_int(&no_sym)) {
        if want != got {
            return Err(format!(
                "{what} has dimension {d} = {got}, but parameter `{pname}` declares {}",
                if pd.as_int().is_some() { want.to_string() } else { format!("{pd} = {want}") }
            ));
        }
    }
    Ok(())
}

/// Both shapes fully static and equal once their 1-dims are dropped (`[64]` and `[1, 64]`):
/// the same bytes of a window, viewed with or without a unit row.
fn same_up_to_unit_dims(a: &[Expr], b: &[Expr]) -> bool {
    let strip =
        |s: &[Expr]| -> Option<Vec<i64>> { s.iter().map(Expr::as_int).filter(|d| *d != Some(1)).collect() };
    matches!((strip(a), strip(b)), (Some(x), Some(y)) if x == y)
}

fn join(dims: &[Expr]) -> String {
    dims.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(", ")
}
