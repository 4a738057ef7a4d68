//! `MaterializeDistTensorCtx`: the communication context becomes explicit dataflow.
//!
//! Afterwards: every function with DistributedTensor parameters has one trailing `In`
//! parameter of type `CommCtx` per such parameter (named `<param>_ctx`, unique in the
//! function), in DistributedTensor-parameter order; every call of such a function passes the
//! context of each window argument — the caller's own context parameter for its parameters
//! and anything aliasing them (plain copies, views of the window, the result of any op that
//! writes the window and returns it — per the registry's effects, at any operand position —
//! or of a DSL function whose only written window parameter of the result's type it is bound
//! to, and loop carries), or, in a host orchestration only, a fresh
//! `pld.system.get_comm_ctx(arg)` just before the call. Outside host orchestration every
//! `pld.system.get_comm_ctx(x)` is replaced by the context of `x`; a context that cannot be
//! resolved there is a user error.

use crate::ops::GET_COMM_CTX;
use crate::pass::{Pass, PassCx};
use pld_ir::{
    Block, Builder, Callee, Diagnostic, Diagnostics, Direction, Expr, ExprKind, Function, FunctionKind,
    Param, Program, Stmt, StmtKind, Type, ValueId,
};
use std::collections::{HashMap, HashSet};

/// See the module docs.
pub struct MaterializeDistTensorCtx;

impl Pass for MaterializeDistTensorCtx {
    crate::pass_info!("MaterializeDistTensorCtx", produced: [DistTensorCtxMaterialized]);
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        cx.report_changes();
        // Plans: which parameter indices of each function are windows; and which parameters
        // each function writes (its signature's directions), for results of calls.
        let mut plans = Plans::default();
        for f in &program.functions {
            plans.writes.insert(
                f.name.clone(),
                f.params.iter().map(|p| matches!(p.dir, Direction::Out | Direction::InOut)).collect(),
            );
        }
        for f in &program.functions {
            let idx: Vec<usize> = f
                .params
                .iter()
                .enumerate()
                .filter(|(_, p)| matches!(f.values.ty(p.value), Type::DistTensor(_)))
                .map(|(i, _)| i)
                .collect();
            if !idx.is_empty() && !f.params.iter().any(|p| *f.values.ty(p.value) == Type::CommCtx) {
                plans.windows.insert(f.name.clone(), idx);
            }
        }
        let mut diags = Diagnostics::new();
        for f in program.functions.iter_mut() {
            let mut ctx_of: HashMap<ValueId, ValueId> = HashMap::new();
            let mut changed = false;
            if let Some(idx) = plans.windows.get(&f.name) {
                changed = true;
                // Fresh names as `fresh_name` picks them (first free `base`, `base_1`, …), against
                // the function's value names borrowed rather than copied.
                let names: Vec<String> = {
                    let taken: HashSet<&str> = f.values.iter().map(|(_, d)| d.name.as_str()).collect();
                    let mut names: Vec<String> = Vec::with_capacity(idx.len());
                    for &i in idx {
                        let base = format!("{}_ctx", f.values.name(f.params[i].value));
                        let (mut name, mut k) = (base.clone(), 1);
                        while taken.contains(name.as_str()) || names.contains(&name) {
                            name = format!("{base}_{k}");
                            k += 1;
                        }
                        names.push(name);
                    }
                    names
                };
                for (&i, name) in idx.iter().zip(names) {
                    let pv = f.params[i].value;
                    let c = f.values.add(name, Type::CommCtx, f.span);
                    ctx_of.insert(pv, c);
                }
                let ctx_params: Vec<Param> = idx
                    .iter()
                    .map(|i| Param { value: ctx_of[&f.params[*i].value], dir: Direction::In })
                    .collect();
                f.params.extend(ctx_params);
            }
            let mut body = std::mem::take(&mut f.body);
            let mut subst: HashMap<ValueId, ValueId> = HashMap::new();
            rewrite(&mut body, f, &plans, &mut ctx_of, &mut subst, &mut changed, &mut diags);
            if !subst.is_empty() {
                body.walk_mut(&mut |s| {
                    s.for_each_expr_mut(&mut |e| {
                        e.walk_mut(&mut |x| {
                            if let ExprKind::Var(v) = &mut x.kind {
                                if let Some(n) = subst.get(v) {
                                    *v = *n;
                                }
                            }
                        })
                    })
                });
            }
            f.body = body;
            if changed {
                cx.changed(&f.name);
            }
        }
        diags.into_result(())
    }
}

/// What the pass knows about every function's signature.
#[derive(Default)]
struct Plans {
    /// Which parameter indices of each function are windows (functions gaining contexts).
    windows: HashMap<String, Vec<usize>>,
    /// Which parameters each function writes (`pl.Out` / `pl.InOut`).
    writes: HashMap<String, Vec<bool>>,
}

impl Plans {
    /// For a call of a DSL function returning a window (`data = self.publish(x, data)`): the
    /// argument bound to the only parameter the callee writes whose argument has the result's
    /// type — the function counterpart of an op's written operand.
    fn written_result_argument(&self, c: &pld_ir::Call, values: &pld_ir::Values) -> Option<usize> {
        let Callee::Func(name) = &c.callee else { return None };
        let writes = self.writes.get(name)?;
        let mut found = (0..c.args.len())
            .filter(|&i| writes.get(i).copied().unwrap_or(false) && c.args[i].ty(values) == c.ty);
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }
}

fn resolve(e: &Expr, ctx_of: &HashMap<ValueId, ValueId>) -> Option<ValueId> {
    e.as_var().and_then(|v| ctx_of.get(&v).copied())
}

fn rewrite(
    block: &mut Block,
    f: &mut Function,
    plans: &Plans,
    ctx_of: &mut HashMap<ValueId, ValueId>,
    subst: &mut HashMap<ValueId, ValueId>,
    changed: &mut bool,
    diags: &mut Diagnostics,
) {
    let old = std::mem::take(&mut block.stmts);
    for mut s in old {
        // Alias propagation for this statement's definitions.
        match &s.kind {
            StmtKind::Assign { targets, value } if targets.len() == 1 => {
                let src = match &value.kind {
                    ExprKind::Var(_) => resolve(value, ctx_of),
                    // A writing op returning the window it wrote (`w = pl.store(t, offs, w)`,
                    // a collective's window-as-result) is that window, whatever the operand's
                    // position; a view is its first argument's window.
                    ExprKind::Call(c) if matches!(c.ty, Type::DistTensor(_)) => c
                        .written_result_operand(&f.values)
                        .or_else(|| plans.written_result_argument(c, &f.values))
                        .map_or_else(|| c.args.first(), |i| c.args.get(i))
                        .and_then(|a| resolve(a, ctx_of)),
                    _ => None,
                };
                if let Some(c) = src {
                    ctx_of.insert(targets[0], c);
                }
            }
            StmtKind::For { iter_args, results, .. } | StmtKind::While { iter_args, results, .. } => {
                for (a, r) in iter_args.iter().zip(results) {
                    if let Some(c) = resolve(&a.init, ctx_of) {
                        ctx_of.insert(a.value, c);
                        ctx_of.insert(*r, c);
                    }
                }
            }
            _ => {}
        }
        for b in s.blocks_mut() {
            rewrite(b, f, plans, ctx_of, subst, changed, diags);
        }
        check_merges(&s, ctx_of, diags);
        let mut prefix: Vec<Stmt> = Vec::new();
        let span = s.span;
        let is_host = f.kind == FunctionKind::Host;
        let mut err: Option<Diagnostic> = None;
        // Device-side context queries become the resolved context.
        if !is_host {
            if let StmtKind::Assign { value, targets } = &s.kind {
                if let Some(c) = value.as_call().filter(|c| c.callee.name() == GET_COMM_CTX) {
                    match c.args.first().and_then(|a| resolve(a, ctx_of)) {
                        Some(cv) => {
                            // The query disappears; its uses read the context parameter.
                            for t in targets {
                                subst.insert(*t, cv);
                            }
                            *changed = true;
                            continue;
                        }
                        None => {
                            err = Some(Diagnostic::error(
                                value.span.or(span),
                                format!("pld.system.get_comm_ctx in `{}` queries a window whose context cannot be resolved; only host orchestration can query a context at runtime, so pass the window as a parameter", f.name),
                            ))
                        }
                    }
                }
            }
        }
        // A query nested inside a larger expression (`pld.rank(pld.get_comm_ctx(x))`) reads
        // the resolved context in place.
        if !is_host {
            s.for_each_expr_mut(&mut |e| {
                e.walk_mut(&mut |x| {
                    let Some(c) = x.as_call().filter(|c| c.callee.name() == GET_COMM_CTX) else { return };
                    match c.args.first().and_then(|a| resolve(a, ctx_of)) {
                        Some(cv) => {
                            *x = Expr::var(cv).at(x.span);
                            *changed = true;
                        }
                        None => {
                            err = Some(Diagnostic::error(
                                x.span.or(span),
                                format!("pld.system.get_comm_ctx in `{}` queries a window whose context cannot be resolved; only host orchestration can query a context at runtime, so pass the window as a parameter", f.name),
                            ))
                        }
                    }
                })
            });
        }
        // Calls of planned functions pass their windows' contexts.
        s.for_each_expr_mut(&mut |e| {
            e.walk_mut(&mut |x| {
                let Some(call) = x.as_call_mut() else { return };
                let Callee::Func(name) = &call.callee else { return };
                let Some(idx) = plans.windows.get(name) else { return };
                let mut extra = Vec::new();
                for &i in idx {
                    let Some(arg) = call.args.get(i) else { continue };
                    match resolve(arg, ctx_of) {
                        Some(c) => extra.push(Expr::var(c)),
                        None if is_host => {
                            let base = arg.as_var().map_or("window".to_string(), |v| f.values.name(v).to_string());
                            let mut b = Builder::new(&mut f.values, f.kind);
                            b.span = span;
                            match b.assign_op(format!("{base}_ctx"), GET_COMM_CTX, vec![arg.clone()], vec![]) {
                                Ok(c) => {
                                    extra.push(Expr::var(c));
                                    prefix.extend(b.finish().0);
                                }
                                Err(d) => err = Some(d),
                            }
                        }
                        None => {
                            err = Some(Diagnostic::error(
                                arg.span.or(span),
                                format!("the window passed to `{name}` has no communication context in `{}`; only host orchestration can query a context at runtime", f.name),
                            ))
                        }
                    }
                }
                *changed |= !extra.is_empty();
                call.args.extend(extra);
            })
        });
        if let Some(d) = err {
            diags.push(d);
        }
        *changed |= !prefix.is_empty();
        block.stmts.extend(prefix);
        block.stmts.push(s);
    }
}

fn last_yield(b: &Block) -> Option<&[Expr]> {
    match b.stmts.last().map(|s| &s.kind) {
        Some(StmtKind::Yield(v)) => Some(v),
        _ => None,
    }
}

/// An `if` merging two windows, or a loop rebinding its carried window to another one,
/// would leave the merged value without one well-defined context.
fn check_merges(s: &Stmt, ctx_of: &HashMap<ValueId, ValueId>, diags: &mut Diagnostics) {
    match &s.kind {
        StmtKind::If { then_body, else_body, results, .. } if !results.is_empty() => {
            if let (Some(a), Some(b)) = (last_yield(then_body), last_yield(else_body)) {
                for (x, y) in a.iter().zip(b) {
                    if let (Some(cx), Some(cy)) = (resolve(x, ctx_of), resolve(y, ctx_of)) {
                        if cx != cy {
                            diags.push(Diagnostic::error(
                                s.span,
                                "the branches of this if yield DistributedTensors of different windows; the merged value has no single communication context",
                            ));
                        }
                    }
                }
            }
        }
        StmtKind::For { iter_args, body, .. } | StmtKind::While { iter_args, body, .. } => {
            if let Some(ys) = last_yield(body) {
                for (a, y) in iter_args.iter().zip(ys) {
                    if let (Some(c0), Some(c1)) = (resolve(&a.init, ctx_of), resolve(y, ctx_of)) {
                        if c0 != c1 {
                            diags.push(Diagnostic::error(
                                s.span,
                                "a loop-carried DistributedTensor is rebound to another window inside the loop; it must keep its communication context across iterations",
                            ));
                        }
                    }
                }
            }
        }
        _ => {}
    }
}
