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

use crate::pass::{Pass, PassCx};
use pld_ir::{Block, Diagnostics, Expr, Function, Program, Stmt, StmtKind, Type, Values};

/// See the module docs.
pub struct NormalizeReturns;

impl Pass for NormalizeReturns {
    crate::pass_info!("NormalizeReturns");
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        cx.report_changes();
        crate::util::per_function(program, cx, |f| f.kind.is_incore(), |f, _| normalize_function(f))
            .into_result(())
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

fn normalize_function(f: &mut Function) -> bool {
    if !f.body.stmts.iter().any(returning_if) {
        return false;
    }
    let mut body = std::mem::take(&mut f.body);
    normalize(&mut body, &f.ret, &mut f.values, true);
    f.body = body;
    true
}

/// Rewrites `block` (a function body, or a branch that now ends the function) so that no `if`
/// branch in it ends in a return. `terminal`: the block ends the function, so falling off
/// its end returns nothing.
fn normalize(block: &mut Block, ret: &[Type], values: &mut Values, terminal: bool) {
    let Some(i) = block.stmts.iter().position(returning_if) else {
        return;
    };
    let span = block.stmts[i].span;
    let mut tail: Vec<Stmt> = block.stmts.drain(i + 1..).collect();
    if terminal && !tail.last().is_some_and(|s| matches!(s.kind, StmtKind::Return(_))) {
        tail.push(Stmt::new(StmtKind::Return(Vec::new()), span));
    }
    let StmtKind::If { then_body, else_body, results, .. } = &mut block.stmts[i].kind else {
        return;
    };
    // The statements after the `if` run when the branch that returns was not taken (after
    // an `if` both of whose branches return they never run).
    if !ends_in_return(else_body) {
        else_body.stmts.append(&mut tail);
    } else if !ends_in_return(then_body) {
        then_body.stmts.append(&mut tail);
    }
    normalize(then_body, ret, values, true);
    normalize(else_body, ret, values, true);
    // Both branches end in a return now: they yield the returned values instead.
    let take_return = |b: &mut Block| match b.stmts.pop() {
        Some(Stmt { kind: StmtKind::Return(vals), .. }) => vals,
        Some(other) => {
            b.stmts.push(other);
            Vec::new()
        }
        None => Vec::new(),
    };
    let (then_vals, else_vals) = (take_return(then_body), take_return(else_body));
    if then_vals.is_empty() {
        block.stmts.push(Stmt::new(StmtKind::Return(Vec::new()), span));
        return;
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
}
