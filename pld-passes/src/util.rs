//! Shared pass machinery: statement rewriting, registry-driven lowering application and
//! small queries over calls and values.
//!
//! Nothing here names an op family: lowerings are found through
//! [`pld_ir::OpDef::lowering`], effects through [`pld_ir::OpDef::arg_effects`].

use crate::pass::PassCx;
use pld_ir::{
    Block, Builder, Call, Diagnostic, Diagnostics, Expr, ExprKind, Function, FunctionKind, LoweringKind,
    Program, Stmt, StmtKind, Target, ValueId,
};
use std::collections::{HashMap, HashSet};

/// Rewrites every statement of `block` (recursively, children first) with `f`, which returns
/// the statements replacing it (return `vec![stmt]` to keep it). Errors are collected; a
/// statement whose rewrite failed is dropped (the pass reports the error, so its output is
/// discarded) — keeping it would mean deep-copying every statement before its rewrite.
pub fn map_block(
    block: &mut Block,
    f: &mut dyn FnMut(Stmt) -> Result<Vec<Stmt>, Diagnostic>,
    diags: &mut Diagnostics,
) {
    let old = std::mem::take(&mut block.stmts);
    block.stmts.reserve(old.len());
    for mut s in old {
        for b in s.blocks_mut() {
            map_block(b, f, diags);
        }
        match f(s) {
            Ok(new) => block.stmts.extend(new),
            Err(d) => diags.push(d),
        }
    }
}

/// The call of a plain `x = call` / `call` statement, with the values it defines.
pub fn call_stmt(s: &Stmt) -> Option<(&Call, &[ValueId])> {
    match &s.kind {
        StmtKind::Assign { targets, value } => value.as_call().map(|c| (c, targets.as_slice())),
        StmtKind::Eval(value) => value.as_call().map(|c| (c, &[][..])),
        _ => None,
    }
}

/// Applies the registered lowering of `kind` to every call statement in the functions for
/// which `select` holds. Lowered statements are lowered again (an expansion may produce ops
/// that lower at the same stage), up to a fixed depth.
pub fn apply_lowerings(
    program: &mut Program,
    kind: LoweringKind,
    target: Target,
    select: &dyn Fn(&Function) -> bool,
) -> Result<bool, Diagnostics> {
    lower_selected(program, kind, target, select, &mut |_| {})
}

/// Runs `each` on every function `select` picks, independently and in parallel (rayon's
/// pool), for passes that rewrite one function at a time. `each` returns whether it changed
/// the function (reported to `cx`, which the caller has asked to collect) and pushes its
/// diagnostics; they come back in program order, so nothing depends on threads.
pub fn per_function(
    program: &mut Program,
    cx: &mut PassCx,
    select: impl Fn(&Function) -> bool + Sync,
    each: impl Fn(&mut Function, &mut Diagnostics) -> bool + Sync,
) -> Diagnostics {
    use rayon::prelude::*;
    let results: Vec<(Option<String>, Diagnostics)> = program
        .functions
        .par_iter_mut()
        .filter(|f| select(f))
        .map(|f| {
            let mut d = Diagnostics::new();
            let changed = each(f, &mut d);
            (changed.then(|| f.name.clone()), d)
        })
        .collect();
    let mut diags = Diagnostics::new();
    for (name, d) in results {
        if let Some(n) = name {
            cx.changed(&n);
        }
        diags.extend(d);
    }
    diags
}

/// [`apply_lowerings`] for a pass that reports its changes: opts in with
/// [`PassCx::report_changes`] and reports every function in which a lowering applied
/// (functions the lowerings add are new, so the manager verifies them anyway).
pub fn apply_lowerings_reporting(
    program: &mut Program,
    kind: LoweringKind,
    cx: &mut PassCx,
    select: &dyn Fn(&Function) -> bool,
) -> Result<bool, Diagnostics> {
    cx.report_changes();
    let target = cx.target;
    lower_selected(program, kind, target, select, &mut |name| cx.changed(name))
}

fn lower_selected(
    program: &mut Program,
    kind: LoweringKind,
    target: Target,
    select: &dyn Fn(&Function) -> bool,
    report: &mut dyn FnMut(&str),
) -> Result<bool, Diagnostics> {
    let mut diags = Diagnostics::new();
    let mut new_functions = Vec::new();
    let mut any = false;
    let mut taken = FreshNames::new(program.functions.iter().map(|f| f.name.clone()));
    for f in program.functions.iter_mut().filter(|f| select(f)) {
        // Most statements have no lowering of this kind: a read-only scan skips functions
        // with none (no body rebuild).
        let mut lowers = false;
        f.body.walk(&mut |s| {
            lowers |= call_stmt(s).is_some_and(|(c, _)| lowers_at(c, kind)) || has_nested_lowering(s, kind);
        });
        if !lowers {
            continue;
        }
        let mut changed = false;
        let mut body = std::mem::take(&mut f.body);
        let mut cx = LowerCx {
            kind,
            target,
            new_functions: &mut new_functions,
            changed: &mut changed,
            diags: &mut diags,
            domains: Vec::new(),
            taken: &mut taken,
            loop_depth: 0,
        };
        lower_block(&mut body, f, 0, &mut cx);
        f.body = body;
        if changed {
            any = true;
            report(&f.name);
        }
    }
    program.functions.extend(new_functions);
    diags.into_result(any)
}

/// The expressions of `s` whose nested calls run before the statement itself: the arguments
/// of an assigned or evaluated call, and returned or yielded values (loop and branch
/// conditions are left alone: a `while` condition runs every iteration).
fn nested_exprs(s: &mut Stmt) -> Vec<&mut Expr> {
    match &mut s.kind {
        StmtKind::Assign { value, .. } | StmtKind::Eval(value) => {
            if !matches!(value.kind, ExprKind::Call(_)) {
                return vec![value];
            }
            match &mut value.kind {
                ExprKind::Call(c) => c.args.iter_mut().collect(),
                _ => Vec::new(),
            }
        }
        StmtKind::Return(vals) | StmtKind::Yield(vals) => vals.iter_mut().collect(),
        _ => Vec::new(),
    }
}

/// Whether `c` is an op call with a lowering of `kind`.
fn lowers_at(c: &Call, kind: LoweringKind) -> bool {
    c.op().is_some_and(|d| d.lowering(kind).is_some())
}

/// Whether a call [`hoist_nested`] would move sits in `s`.
fn has_nested_lowering(s: &Stmt, kind: LoweringKind) -> bool {
    let exprs: &[Expr] = match &s.kind {
        StmtKind::Assign { value, .. } | StmtKind::Eval(value) => match &value.kind {
            ExprKind::Call(c) => &c.args,
            _ => std::slice::from_ref(value),
        },
        StmtKind::Return(vals) | StmtKind::Yield(vals) => vals,
        _ => &[],
    };
    let mut found = false;
    for e in exprs {
        e.walk(&mut |x| found |= x.as_call().is_some_and(|c| lowers_at(c, kind)));
    }
    found
}

/// Moves the calls nested in `s` whose op lowers at this stage into statements of their own,
/// innermost first (their evaluation order), leaving a fresh value in their place, so the
/// lowering sees them (`pl.assemble(out, pl.sub(a, b), [0, 0])`).
fn hoist_nested(s: &mut Stmt, values: &mut pld_ir::Values, kind: LoweringKind) -> Vec<Stmt> {
    let mut out = Vec::new();
    for e in nested_exprs(s) {
        e.walk_mut(&mut |x| {
            let Some(c) = x.as_call().filter(|c| lowers_at(c, kind)) else {
                return;
            };
            let name = format!("{}_v", c.callee.name().rsplit('.').next().unwrap_or("call"));
            let span = x.span;
            let v = values.add(name, c.ty.clone(), span);
            let call = std::mem::replace(x, Expr::var(v).at(span));
            out.push(Stmt::new(StmtKind::Assign { targets: vec![v], value: call }, span));
        });
    }
    out
}

struct LowerCx<'a> {
    kind: LoweringKind,
    target: Target,
    new_functions: &'a mut Vec<Function>,
    changed: &'a mut bool,
    diags: &'a mut Diagnostics,
    /// Enclosing comm domains, outermost first: (devices, windows).
    domains: Vec<(Vec<i64>, HashSet<String>)>,
    /// Function names in use (synthesized functions get fresh ones).
    taken: &'a mut FreshNames,
    /// Enclosing for/while loops.
    loop_depth: i64,
}

/// The rank list of the innermost enclosing comm domain holding every window operand of
/// `call` (empty = all ranks), when there is one: the `devices` a lowering sees.
fn enclosing_devices(call: &Call, f: &Function, domains: &[(Vec<i64>, HashSet<String>)]) -> Option<Vec<i64>> {
    let windows: Vec<String> = call
        .args
        .iter()
        .filter_map(|a| match a.ty(&f.values) {
            pld_ir::Type::DistTensor(d) => d.window,
            _ => None,
        })
        .collect();
    domains.iter().rev().find(|(_, ws)| windows.iter().all(|w| ws.contains(w))).map(|(devs, _)| devs.clone())
}

fn lower_block(block: &mut Block, f: &mut Function, depth: usize, cx: &mut LowerCx<'_>) {
    let old = std::mem::take(&mut block.stmts);
    for mut s in old {
        let domain = match &s.kind {
            StmtKind::Scope { kind: pld_ir::ScopeKind::CommDomain { devices, windows, .. }, .. } => {
                Some((devices.clone(), windows.iter().cloned().collect::<HashSet<String>>()))
            }
            _ => None,
        };
        let pushed = domain.is_some();
        if let Some(d) = domain {
            cx.domains.push(d);
        }
        let is_loop = matches!(s.kind, StmtKind::For { .. } | StmtKind::While { .. });
        cx.loop_depth += i64::from(is_loop);
        for b in s.blocks_mut() {
            lower_block(b, f, depth, cx);
        }
        cx.loop_depth -= i64::from(is_loop);
        if pushed {
            cx.domains.pop();
        }
        let mut hoisted = Block { stmts: hoist_nested(&mut s, &mut f.values, cx.kind) };
        if !hoisted.stmts.is_empty() {
            *cx.changed = true;
            lower_block(&mut hoisted, f, depth + 1, cx);
            block.stmts.extend(hoisted.stmts);
        }
        let lowering = call_stmt(&s).and_then(|(c, _)| c.op()).and_then(|d| d.lowering(cx.kind));
        let Some(lowering) = lowering else {
            block.stmts.push(s);
            continue;
        };
        let Some((call, results)) = call_stmt(&s).map(|(c, r)| (c.clone(), r.to_vec())) else {
            block.stmts.push(s);
            continue;
        };
        if depth > 8 {
            cx.diags.push(Diagnostic::error(
                s.span,
                format!(
                    "{} lowering did not terminate (it keeps producing {})",
                    cx.kind.name(),
                    call.callee.name()
                ),
            ));
            block.stmts.push(s);
            continue;
        }
        let context = pld_ir::LowerContext {
            function: Some(f.name.clone()),
            loop_depth: cx.loop_depth,
            devices: enclosing_devices(&call, f, &cx.domains),
            kernel_request: None,
        };
        let fkind = f.kind;
        let mut b = Builder::new(&mut f.values, fkind);
        b.target = cx.target;
        b.span = s.span;
        b.context = context;
        match (lowering.run)(&mut b, &call, &results, s.span) {
            Ok(()) => {
                let (mut stmts, funcs) = b.finish();
                for mut nf in funcs {
                    let fresh = cx.taken.fresh(&nf.name);
                    if fresh != nf.name {
                        rename_calls(&mut stmts, &nf.name, &fresh);
                        nf.name = fresh;
                    }
                    cx.new_functions.push(nf);
                }
                retype_results(&stmts, &results, &mut f.values);
                *cx.changed = true;
                let mut produced = Block { stmts };
                lower_block(&mut produced, f, depth + 1, cx);
                block.stmts.extend(produced.stmts);
            }
            Err(d) => {
                cx.diags.push(d.or_span(s.span));
                block.stmts.push(s);
            }
        }
    }
}

/// Every value used anywhere in `block` (expressions of all statements, recursively).
pub fn used_values(block: &Block) -> HashSet<ValueId> {
    let mut used = HashSet::new();
    block.walk_exprs(&mut |e| {
        if let ExprKind::Var(v) = e.kind {
            used.insert(v);
        }
    });
    used
}

/// Every call expression in `block`, recursively (including calls nested in expressions).
pub fn for_each_call(block: &Block, f: &mut dyn FnMut(&Call, &Expr)) {
    block.walk_exprs(&mut |e| {
        if let Some(c) = e.as_call() {
            f(c, e);
        }
    });
}

/// Whether `f` is a host orchestration.
pub fn is_host(f: &Function) -> bool {
    f.kind == FunctionKind::Host
}

/// Whether `f` is a device kernel (InCore, AIC or AIV).
pub fn is_kernel(f: &Function) -> bool {
    f.kind.is_incore()
}

/// A fresh name not in `taken`, built from `base` (`base`, `base_1`, …); records it.
pub fn fresh_name(taken: &mut HashSet<String>, base: &str) -> String {
    let mut name = base.to_string();
    let mut i = 1;
    while taken.contains(&name) {
        name = format!("{base}_{i}");
        i += 1;
    }
    taken.insert(name.clone());
    name
}

/// A set of names in use that hands out fresh ones like [`fresh_name`] (`base`, `base_1`, …,
/// the first not in use) without re-probing, for each base, the suffixes it already found
/// taken: names are never released, so a suffix once taken stays taken and the answer is
/// the same as probing from the start.
#[derive(Debug, Default)]
pub struct FreshNames {
    taken: HashSet<String>,
    /// Per base, the first suffix not yet known to be taken.
    next: HashMap<String, usize>,
}

impl FreshNames {
    /// A set holding `names`.
    pub fn new(names: impl IntoIterator<Item = String>) -> Self {
        FreshNames { taken: names.into_iter().collect(), next: HashMap::new() }
    }

    /// Whether `name` is in use.
    pub fn contains(&self, name: &str) -> bool {
        self.taken.contains(name)
    }

    /// A fresh name built from `base` (same answer as [`fresh_name`]); records it.
    pub fn fresh(&mut self, base: &str) -> String {
        if self.taken.insert(base.to_string()) {
            return base.to_string();
        }
        let mut i = self.next.get(base).copied().unwrap_or(1);
        let mut name = format!("{base}_{i}");
        while self.taken.contains(&name) {
            i += 1;
            name = format!("{base}_{i}");
        }
        self.next.insert(base.to_string(), i + 1);
        self.taken.insert(name.clone());
        name
    }
}

/// Whether the `At` scope is a placement stamp made by `LowerAutoVectorSplit`.
pub fn is_placement_stamp(s: &Stmt) -> bool {
    matches!(&s.kind, StmtKind::Scope { kind: pld_ir::ScopeKind::At { .. }, attrs, .. }
        if attrs.iter().any(|(k, _)| k == crate::ops::PLACEMENT_ATTR))
}

/// A lowering may change what the original statement's results are (a tensor-level value
/// becomes a tile): re-type each result to the type of the value the lowering bound to it.
fn retype_results(stmts: &[Stmt], results: &[ValueId], values: &mut pld_ir::Values) {
    for s in stmts {
        if let StmtKind::Assign { targets, value } = &s.kind {
            if targets.len() == 1 && results.contains(&targets[0]) {
                let ty = value.ty(values);
                if ty != pld_ir::Type::Unknown {
                    if let Some(v) = values.get_mut(targets[0]) {
                        v.ty = ty;
                    }
                }
            }
        }
    }
}

/// Re-runs the deducer of every op call in `f` (statement order, inner calls first) and
/// updates the stored result types; a single-target assignment's value takes the new type
/// unless it is in `pinned`. Used after a pass changes the type of some values.
pub fn rededuce(f: &mut Function, target: Target, pinned: &HashSet<ValueId>) -> Result<(), Diagnostics> {
    let mut diags = Diagnostics::new();
    let mut body = std::mem::take(&mut f.body);
    rededuce_block(&mut body, f, target, pinned, &mut diags);
    f.body = body;
    diags.into_result(())
}

fn rededuce_block(
    block: &mut Block,
    f: &mut Function,
    target: Target,
    pinned: &HashSet<ValueId>,
    diags: &mut Diagnostics,
) {
    for s in &mut block.stmts {
        s.for_each_expr_mut(&mut |e| {
            e.walk_mut(&mut |x| {
                let span = x.span;
                if let Some(c) = x.as_call_mut() {
                    if let Some(def) = c.op() {
                        let env = pld_ir::DeduceEnv { values: &f.values, target, func_kind: Some(f.kind) };
                        match pld_ir::registry::deduce(def, &c.args, &c.attrs, span, &env) {
                            Ok(ty) => c.ty = ty,
                            Err(d) => diags.push(d),
                        }
                    }
                }
            })
        });
        if let StmtKind::Assign { targets, value } = &s.kind {
            if let [t] = targets.as_slice() {
                if !pinned.contains(t) {
                    let ty = value.ty(&f.values);
                    if ty != pld_ir::Type::Unknown {
                        if let Some(v) = f.values.get_mut(*t) {
                            v.ty = ty;
                        }
                    }
                }
            }
        }
        if let StmtKind::For { iter_args, results, .. } | StmtKind::While { iter_args, results, .. } = &s.kind
        {
            for (a, r) in iter_args.iter().zip(results.clone()) {
                let ty = a.init.ty(&f.values);
                for v in [a.value, r] {
                    if let Some(d) = f.values.get_mut(v) {
                        d.ty = ty.clone();
                    }
                }
            }
        }
        for b in s.blocks_mut() {
            rededuce_block(b, f, target, pinned, diags);
        }
    }
}

/// Renames calls of function `from` to `to` in `stmts`.
fn rename_calls(stmts: &mut [Stmt], from: &str, to: &str) {
    let mut block = Block { stmts: stmts.to_vec() };
    block.walk_mut(&mut |s| {
        s.for_each_expr_mut(&mut |e| {
            e.walk_mut(&mut |x| {
                if let Some(c) = x.as_call_mut() {
                    if matches!(&c.callee, pld_ir::Callee::Func(n) if n == from) {
                        c.callee = pld_ir::Callee::Func(to.to_string());
                    }
                }
            })
        })
    });
    stmts.clone_from_slice(&block.stmts);
}

#[cfg(test)]
mod tests {
    use super::{fresh_name, FreshNames};
    use std::collections::HashSet;

    #[test]
    fn fresh_names_match_probing_from_the_start() {
        let start = ["k", "k_1", "k_3", "m_2"].map(String::from);
        let mut probe: HashSet<String> = start.iter().cloned().collect();
        let mut fresh = FreshNames::new(start.iter().cloned());
        let bases = ["k", "k", "m", "k", "k_1", "m", "m", "k", "n", "n", "k"];
        let a: Vec<String> = bases.iter().map(|b| fresh_name(&mut probe, b)).collect();
        let b: Vec<String> = bases.iter().map(|b| fresh.fresh(b)).collect();
        assert_eq!(a, b);
        assert_eq!(&b[..4], ["k_2", "k_4", "m", "k_5"]);
        assert_eq!(&b[4..], ["k_1_1", "m_1", "m_3", "k_6", "n", "n_1", "k_7"]);
        assert!(fresh.contains("k_7") && !fresh.contains("k_8"));
    }
}
