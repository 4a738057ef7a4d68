//! `NormalizeReturns`: a `return` at the end of an `if` branch of a kernel becomes a yield.
//!
//! Afterwards: in an InCore kernel, no `if` at the top level of the body (or of a branch this
//! pass moved code into) has a branch ending in a `return`. Returns deeper in (inside a loop,
//! or after further statements of a branch) are left alone; codegen diagnoses them. An `if` one of
//! whose branches ends in a `return` takes the statements that followed it into its other
//! branch; once both branches end in a return, the `if` yields the returned values as its
//! results and the function returns those. What runs is unchanged: the moved statements ran
//! exactly when the returning branch was not taken.
//!
//! `if my_rank == root: ...; return pl.store(recv, [0, 0], out)` followed by `return out`
//! becomes `r = if ...: ...; yield pl.store(...) else: yield out` and `return r`, which has a
//! structured (scf.if) form.
//!
//! A kernel that returns values on one path and none on another (an early `return out` with
//! no `return` at the end, or a bare `return` beside `return out`) has no such form: the `if`
//! would yield a value on one branch only. That is an error at the return that carries values,
//! with a label where the other path ends, and the kernel is left as written.

use crate::pass::{Pass, PassCx};
use pld_ir::{Block, Diagnostic, Diagnostics, Expr, Function, Program, Span, Stmt, StmtKind, Type, Values};

/// See the module docs.
pub struct NormalizeReturns;

impl Pass for NormalizeReturns {
    crate::pass_info!("NormalizeReturns");
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        cx.report_changes();
        crate::util::per_function(program, cx, |f| f.kind.is_incore(), normalize_function).into_result(())
    }
}

fn ends_in_return(b: &Block) -> bool {
    matches!(b.stmts.last(), Some(Stmt { kind: StmtKind::Return(_), .. }))
}

/// An `if` (without results) one of whose branches ends in a return.
fn returning_if(s: &Stmt) -> bool {
    matches!(&s.kind, StmtKind::If { then_body, else_body, results, .. }
        if results.is_empty() && (ends_in_return(then_body) || ends_in_return(else_body)))
}

fn normalize_function(f: &mut Function, diags: &mut Diagnostics) -> bool {
    if !f.body.stmts.iter().any(returning_if) {
        return false;
    }
    let mut body = f.body.clone();
    let mut values = f.values.clone();
    if let Err(d) = normalize(&mut body, &f.ret, &mut values, true) {
        diags.push(d.with_note(format!(
            "every path through `{}` must return the same number of values: a kernel has no `None` to return on the path that gives none",
            f.name
        )));
        return false;
    }
    f.body = body;
    f.values = values;
    true
}

/// Where a path of the function ends: its `return` (with the values it returns), or the end
/// of the function, reached without a `return` after the `if` at the span.
enum PathEnd {
    Return(Vec<Expr>, Span),
    FallsOff(Span),
}

impl PathEnd {
    fn values(&self) -> usize {
        match self {
            PathEnd::Return(v, _) => v.len(),
            PathEnd::FallsOff(_) => 0,
        }
    }
    fn label(&self) -> (Span, String) {
        match self {
            PathEnd::Return(v, at) if v.is_empty() => (*at, "this path returns no value".to_string()),
            PathEnd::Return(v, at) => (*at, format!("this path returns {} value(s)", v.len())),
            PathEnd::FallsOff(at) => {
                (*at, "on the other path of this `if` the kernel ends without a `return`".to_string())
            }
        }
    }
}

/// The error for two paths that return different numbers of values, at the one returning more.
fn mismatch(a: &PathEnd, b: &PathEnd) -> Diagnostic {
    let (more, fewer) = if a.values() >= b.values() { (a, b) } else { (b, a) };
    let (at, _) = more.label();
    let (other, label) = fewer.label();
    let msg = format!(
        "this `return` gives {} value(s), but another path through the kernel returns {}",
        more.values(),
        fewer.values()
    );
    Diagnostic::error(at, msg).with_label(other, label)
}

/// Rewrites `block` (a function body, or a branch that now ends the function) so that no `if`
/// branch in it ends in a return. `terminal`: the block ends the function, so falling off
/// its end returns nothing. Fails when two paths return different numbers of values.
fn normalize(block: &mut Block, ret: &[Type], values: &mut Values, terminal: bool) -> Result<(), Diagnostic> {
    let Some(i) = block.stmts.iter().position(returning_if) else {
        return Ok(());
    };
    let span = block.stmts[i].span;
    let mut tail: Vec<Stmt> = block.stmts.drain(i + 1..).collect();
    let falls_off = terminal && !tail.last().is_some_and(|s| matches!(s.kind, StmtKind::Return(_)));
    if falls_off {
        tail.push(Stmt::new(StmtKind::Return(Vec::new()), span));
    }
    let StmtKind::If { then_body, else_body, results, .. } = &mut block.stmts[i].kind else {
        return Ok(());
    };
    // The statements after the `if` run when the branch that returns was not taken (after
    // an `if` both of whose branches return they never run).
    if !ends_in_return(else_body) {
        else_body.stmts.append(&mut tail);
    } else if !ends_in_return(then_body) {
        then_body.stmts.append(&mut tail);
    }
    normalize(then_body, ret, values, true)?;
    normalize(else_body, ret, values, true)?;
    // Both branches end in a return now: they yield the returned values instead. The return
    // this pass added for falling off the end has the `if`'s span and no values.
    let take_return = |b: &mut Block| match b.stmts.pop() {
        Some(Stmt { kind: StmtKind::Return(vals), span: at })
            if falls_off && at == span && vals.is_empty() =>
        {
            PathEnd::FallsOff(at)
        }
        Some(Stmt { kind: StmtKind::Return(vals), span: at }) => PathEnd::Return(vals, at),
        Some(other) => {
            b.stmts.push(other);
            PathEnd::Return(Vec::new(), span)
        }
        None => PathEnd::Return(Vec::new(), span),
    };
    let (then_end, else_end) = (take_return(then_body), take_return(else_body));
    if then_end.values() != else_end.values() {
        return Err(mismatch(&then_end, &else_end));
    }
    let (PathEnd::Return(then_vals, _), PathEnd::Return(else_vals, _)) = (then_end, else_end) else {
        block.stmts.push(Stmt::new(StmtKind::Return(Vec::new()), span));
        return Ok(());
    };
    if then_vals.is_empty() {
        block.stmts.push(Stmt::new(StmtKind::Return(Vec::new()), span));
        return Ok(());
    }
    let names: Vec<_> = then_vals
        .iter()
        .enumerate()
        .map(|(k, v)| {
            values.add(format!("ret{k}"), ret.get(k).cloned().unwrap_or_else(|| v.ty(values)), span)
        })
        .collect();
    then_body.stmts.push(Stmt::new(StmtKind::Yield(then_vals), span));
    else_body.stmts.push(Stmt::new(StmtKind::Yield(else_vals), span));
    *results = names.clone();
    block.stmts.push(Stmt::new(StmtKind::Return(names.into_iter().map(Expr::var).collect()), span));
    Ok(())
}
