//! `OutlineIncoreScopes`: `pl.at(...)` regions become InCore functions.
//!
//! Afterwards: no `pl.at` region (other than a placement stamp) remains in a host, chip or
//! opaque function. Each region became a fresh InCore function `<caller>_incore_<k>` whose
//! parameters are the values the region reads from outside (in first-definition order, all
//! `In`; written ones are upgraded by `ConvertTensorToTileOps`) and whose results are the
//! values it defines that are used after it; the region is replaced by a call of it. A
//! region holding `pl.split_aiv` regions marks the function `split_aiv=True`.
//!
//! Deferred waiters: a region containing `pld.system.defer_wait` must be a CORE_GROUP region
//! of its own (loops, branches and `pl.manual_scope()` around it are fine; a `pl.spmd` or
//! other launch scope is not), carry
//! no `predicate` and no `allow_early_resolve=True`, export nothing, and satisfy the body
//! contract (registrations, scalar bookkeeping and control flow only; at most 64
//! registrations); its function is marked `deferred_completion_waiter=True`.

use crate::pass::{Pass, PassCx};
use crate::util::{for_each_call, is_placement_stamp, used_values};
use pld_ir::{
    Attr, Block, Call, Callee, DataType, Diagnostic, Diagnostics, Direction, Expr, ExprKind, Function,
    FunctionKind, Param, Program, ScopeKind, SignalRole, Stmt, StmtKind, Type, ValueId, Values,
};
use std::collections::{HashMap, HashSet};

/// See the module docs.
pub struct OutlineIncoreScopes;

impl Pass for OutlineIncoreScopes {
    crate::pass_info!("OutlineIncoreScopes", produced: [SplitIncoreOrch]);
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        outline_program(program, Outlined::Kernel, cx)
    }
}

/// What a region becomes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Outlined {
    /// A CORE_GROUP region of a host, chip or opaque function: an InCore kernel.
    Kernel,
    /// A `pl.at(level=pl.Level.CHIP, ...)` region of a host function: a chip orchestration.
    Chip,
}

impl Outlined {
    fn kind(self) -> FunctionKind {
        match self {
            Outlined::Kernel => FunctionKind::InCore,
            Outlined::Chip => FunctionKind::ChipOrch,
        }
    }
    fn infix(self) -> &'static str {
        match self {
            Outlined::Kernel => "incore",
            Outlined::Chip => "chip",
        }
    }
    fn outlines_from(self, f: &Function) -> bool {
        match self {
            Outlined::Kernel => !f.kind.is_incore(),
            Outlined::Chip => f.kind == FunctionKind::Host,
        }
    }
}

/// Outlines every region of `what` from the functions it applies to; reports to `cx` the
/// functions it outlines from (the outlined ones are new).
pub(crate) fn outline_program(
    program: &mut Program,
    what: Outlined,
    cx: &mut PassCx,
) -> Result<(), Diagnostics> {
    let mut taken: HashSet<String> = program.functions.iter().map(|f| f.name.clone()).collect();
    let mut diags = Diagnostics::new();
    let mut outlined = Vec::new();
    cx.report_changes();
    for f in program.functions.iter_mut().filter(|f| what.outlines_from(f)) {
        // A function without a region (anywhere: the outermost one is reached) is left as is.
        let mut any = false;
        f.body.walk(&mut |s| any |= is_region(s, what));
        if !any {
            continue;
        }
        cx.changed(&f.name);
        let mut body = std::mem::take(&mut f.body);
        let mut uses = HashMap::new();
        count_uses(&body.stmts, &mut uses);
        let mut cx =
            OutlineCx { what, uses: &uses, taken: &mut taken, out: &mut outlined, diags: &mut diags };
        outline_block(&mut body, f, 0, &mut cx);
        f.body = body;
    }
    program.functions.extend(outlined);
    diags.into_result(())
}

struct OutlineCx<'a> {
    what: Outlined,
    /// Uses of each value in the function's body before outlining.
    uses: &'a HashMap<ValueId, usize>,
    taken: &'a mut HashSet<String>,
    out: &'a mut Vec<Function>,
    diags: &'a mut Diagnostics,
}

fn is_region(s: &Stmt, what: Outlined) -> bool {
    let StmtKind::Scope { kind: ScopeKind::At { .. }, attrs, .. } = &s.kind else { return false };
    !is_placement_stamp(s) && (what == Outlined::Kernel || is_chip_level(attrs))
}

fn is_chip_level(attrs: &[(String, Attr)]) -> bool {
    attrs.iter().any(|(k, v)| k == "level" && v.as_str().is_some_and(|s| s.ends_with("CHIP")))
}

fn outline_block(block: &mut Block, f: &mut Function, depth: usize, cx: &mut OutlineCx<'_>) {
    let old = std::mem::take(&mut block.stmts);
    for mut s in old {
        if !is_region(&s, cx.what) {
            // Loops, branches and the manual scope are transparent; a launch scope is not.
            let launch = matches!(s.kind, StmtKind::Scope { kind: ScopeKind::Spmd, .. });
            for b in s.blocks_mut() {
                outline_block(b, f, depth + usize::from(launch), cx);
            }
            block.stmts.push(s);
            continue;
        }
        match outline(&s, f, depth, cx) {
            Ok((func, call)) => {
                cx.out.push(func);
                block.stmts.push(call);
            }
            Err(d) => {
                cx.diags.push(d);
                block.stmts.push(s);
            }
        }
    }
}

fn level_ok(attrs: &[(String, Attr)]) -> bool {
    match attrs.iter().find(|(k, _)| k == "level").map(|(_, v)| v) {
        None => true,
        Some(Attr::Str(s)) => s.contains("CORE_GROUP") || s.contains("InCore") || s.contains("INCORE"),
        Some(_) => true,
    }
}

fn outline(
    s: &Stmt,
    f: &mut Function,
    depth: usize,
    cx: &mut OutlineCx<'_>,
) -> Result<(Function, Stmt), Diagnostic> {
    let StmtKind::Scope { attrs, body, .. } = &s.kind else {
        return Err(Diagnostic::error(s.span, "internal: not a region"));
    };
    let kernel = cx.what == Outlined::Kernel;
    if kernel && !level_ok(attrs) {
        return Err(Diagnostic::error(
            s.span,
            "only pl.at(level=pl.Level.CORE_GROUP) regions are outlined by this pipeline",
        ));
    }
    let mut has_waiter = false;
    if kernel {
        for_each_call(body, &mut |c, _| has_waiter |= c.signal_role() == SignalRole::DeferredWait);
    }
    // Values defined in the region (anywhere) and at its top level (visible after it).
    let mut inner_defs: HashSet<ValueId> = HashSet::new();
    body.walk(&mut |x| inner_defs.extend(x.defs()));
    let mut top_defs = Vec::new();
    visible_defs(body, &mut top_defs);
    // Free values: used inside (expressions and the types of inner values), defined outside.
    let mut free: Vec<ValueId> = used_values(body).into_iter().filter(|v| !inner_defs.contains(v)).collect();
    for &d in &inner_defs {
        for v in type_uses(f.values.ty(d)) {
            if !inner_defs.contains(&v) && !free.contains(&v) {
                free.push(v);
            }
        }
    }
    free.sort();
    // Outputs: top-level definitions used outside the region (a region's values are visible
    // only in it and after it, so a use the region does not hold is a use after it).
    let mut inside = HashMap::new();
    count_uses(std::slice::from_ref(s), &mut inside);
    let outputs: Vec<ValueId> = top_defs
        .iter()
        .copied()
        .filter(|v| cx.uses.get(v).copied().unwrap_or(0) > inside.get(v).copied().unwrap_or(0))
        .collect();
    if has_waiter {
        if depth > 0 {
            return Err(Diagnostic::error(
                s.span,
                "pld.system.defer_wait must be the body of its own CORE_GROUP / InCore task, not nested in pl.spmd or another launch scope",
            ));
        }
        if attrs.iter().any(|(k, _)| k == "predicate") {
            return Err(Diagnostic::error(
                s.span,
                "a deferred waiter task must not carry a dispatch predicate",
            ));
        }
        if attrs.iter().any(|(k, v)| k == "allow_early_resolve" && v.as_bool() == Some(true)) {
            return Err(Diagnostic::error(
                s.span,
                "a deferred waiter task must not set allow_early_resolve=True",
            ));
        }
        crate::waiter::validate_waiter_body(body, &f.values)?;
        if !outputs.is_empty() {
            return Err(Diagnostic::error(
                s.span,
                "a deferred waiter task exports nothing; its values are not visible after it",
            ));
        }
    }
    let name = crate::util::fresh_name(cx.taken, &format!("{}_{}_0", f.name, cx.what.infix()));
    let mut g = Function::new(name.clone(), cx.what.kind());
    g.span = s.span;
    let mut map: HashMap<ValueId, ValueId> = HashMap::new();
    for &v in &free {
        let d = f.values.get(v).cloned();
        let (n, ty, sp) = d.map_or(("arg".to_string(), Type::Unknown, s.span), |d| (d.name, d.ty, d.span));
        let nv = g.values.add(n, ty, sp);
        map.insert(v, nv);
        g.params.push(Param { value: nv, dir: Direction::In });
    }
    let mut new_body = body.clone();
    remap_block(&mut new_body, &f.values, &mut g.values, &mut map);
    // Types of new values may mention outer values: remap them too.
    let ids: Vec<ValueId> = g.values.iter().map(|(v, _)| v).collect();
    for v in ids {
        if let Some(d) = g.values.get_mut(v) {
            remap_type(&mut d.ty, &map);
        }
    }
    let ret_vals: Vec<Expr> = outputs.iter().map(|v| Expr::var(map[v])).collect();
    g.ret = outputs.iter().map(|v| f.values.ty(*v).clone()).collect();
    new_body.stmts.push(Stmt::new(StmtKind::Return(ret_vals), s.span));
    g.body = new_body;
    if has_waiter {
        g.attrs.push(("deferred_completion_waiter".into(), Attr::Bool(true)));
    }
    let mut split = false;
    g.body.walk(&mut |x| split |= matches!(x.kind, StmtKind::Scope { kind: ScopeKind::SplitAiv { .. }, .. }));
    if split {
        g.attrs.push(("split_aiv".into(), Attr::Bool(true)));
    }
    let args = free.iter().map(|v| Expr::var(*v)).collect();
    let mut call = Call::new(Callee::Func(name), args, Vec::new(), g.call_type());
    let mut outputs = outputs;
    if let StmtKind::Scope { kind: ScopeKind::At { task }, args: deps, .. } = &s.kind {
        // A task with explicit dependencies or a bound id is a submit: its id comes last.
        if task.is_some() || !deps.is_empty() {
            let mut ret = g.ret.clone();
            ret.push(Type::Scalar(DataType::TASK_ID));
            call.ty = if ret.len() == 1 { ret[0].clone() } else { Type::Tuple(ret) };
            call.deps = Some(deps.clone());
            if task.is_some() || !outputs.is_empty() {
                let tid =
                    task.unwrap_or_else(|| f.values.add("_tid", Type::Scalar(DataType::TASK_ID), s.span));
                outputs.push(tid);
            }
        }
    }
    let call = Expr::new(ExprKind::Call(Box::new(call)), s.span);
    let stmt = if outputs.is_empty() {
        Stmt::new(StmtKind::Eval(call), s.span)
    } else {
        Stmt::new(StmtKind::Assign { targets: outputs, value: call }, s.span)
    };
    Ok((g, stmt))
}

/// The values a block defines that are visible after it: its statements' own definitions and,
/// since scopes are transparent to SSA, those of the scopes nested in it.
fn visible_defs(block: &Block, out: &mut Vec<ValueId>) {
    for s in &block.stmts {
        out.extend(s.defs());
        if let StmtKind::Scope { body, .. } = &s.kind {
            visible_defs(body, out);
        }
    }
}

/// Adds the variable uses in `stmts` (recursively, expressions only) to `counts`.
fn count_uses(stmts: &[Stmt], counts: &mut HashMap<ValueId, usize>) {
    for s in stmts {
        s.for_each_expr(&mut |e| {
            e.walk(&mut |x| {
                if let ExprKind::Var(v) = x.kind {
                    *counts.entry(v).or_insert(0) += 1;
                }
            })
        });
        for b in s.blocks() {
            count_uses(&b.stmts, counts);
        }
    }
}

fn type_uses(t: &Type) -> Vec<ValueId> {
    let mut out = Vec::new();
    let mut dims = |ds: &[Expr]| ds.iter().for_each(|d| out.extend(d.uses()));
    match t {
        Type::Tensor(t) => {
            dims(&t.shape);
            if let Some(v) = &t.view {
                dims(&v.valid_shape);
                dims(&v.stride);
            }
        }
        Type::DistTensor(d) => {
            dims(&d.tensor.shape);
            if let Some(v) = &d.tensor.view {
                dims(&v.valid_shape);
                dims(&v.stride);
            }
        }
        Type::Tile(t) => {
            dims(&t.shape);
            dims(&t.valid_shape);
        }
        Type::Tuple(items) => {
            for i in items {
                out.extend(type_uses(i));
            }
        }
        _ => {}
    }
    out
}

fn remap_expr(e: &mut Expr, map: &HashMap<ValueId, ValueId>) {
    e.walk_mut(&mut |x| match &mut x.kind {
        ExprKind::Var(v) => {
            if let Some(n) = map.get(v) {
                *v = *n;
            }
        }
        ExprKind::Call(c) => remap_type(&mut c.ty, map),
        _ => {}
    });
}

fn remap_type(t: &mut Type, map: &HashMap<ValueId, ValueId>) {
    let dims = |ds: &mut Vec<Expr>| ds.iter_mut().for_each(|d| remap_expr(d, map));
    match t {
        Type::Tensor(t) => {
            dims(&mut t.shape);
            if let Some(v) = &mut t.view {
                dims(&mut v.valid_shape);
                dims(&mut v.stride);
            }
        }
        Type::DistTensor(d) => {
            dims(&mut d.tensor.shape);
            if let Some(v) = &mut d.tensor.view {
                dims(&mut v.valid_shape);
                dims(&mut v.stride);
            }
        }
        Type::Tile(t) => {
            dims(&mut t.shape);
            dims(&mut t.valid_shape);
        }
        Type::Tuple(items) => items.iter_mut().for_each(|i| remap_type(i, map)),
        _ => {}
    }
}

/// Moves `block` from the arena `src` into `dst`: every value it defines gets a new id in
/// `dst` (recorded in `map`), every use is rewritten through `map`.
fn remap_block(block: &mut Block, src: &Values, dst: &mut Values, map: &mut HashMap<ValueId, ValueId>) {
    block.walk_mut(&mut |s| {
        let mut def = |v: &mut ValueId| {
            let n = *map.entry(*v).or_insert_with(|| {
                let (n, ty, sp) =
                    src.get(*v).cloned().map_or(("v".to_string(), Type::Unknown, pld_ir::Span::DUMMY), |d| {
                        (d.name, d.ty, d.span)
                    });
                dst.add(n, ty, sp)
            });
            *v = n;
        };
        match &mut s.kind {
            StmtKind::Assign { targets, .. } => targets.iter_mut().for_each(&mut def),
            StmtKind::For { var, iter_args, results, .. } => {
                def(var);
                iter_args.iter_mut().for_each(|a| def(&mut a.value));
                results.iter_mut().for_each(&mut def);
            }
            StmtKind::While { iter_args, results, .. } => {
                iter_args.iter_mut().for_each(|a| def(&mut a.value));
                results.iter_mut().for_each(&mut def);
            }
            StmtKind::If { results, .. } => results.iter_mut().for_each(&mut def),
            StmtKind::Scope { kind: ScopeKind::SplitAiv { lane: Some(l) }, .. }
            | StmtKind::Scope { kind: ScopeKind::At { task: Some(l) }, .. } => def(l),
            _ => {}
        }
    });
    block.walk_mut(&mut |s| s.for_each_expr_mut(&mut |e| remap_expr(e, map)));
}
