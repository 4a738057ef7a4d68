//! `ExpandMixedKernel`: splits InCore kernels into cube (AIC) and vector (AIV) kernels.
//!
//! Afterwards: no InCore function and no placement stamp remains. Every statement is
//! classified by the registry's affinity (declared VECTOR/CUBE, SHARED, or derived from the
//! first tile argument's memory space; a call producing a tile in a cube-side memory counts
//! as CUBE; a stamped call counts as VECTOR). A kernel whose
//! statements are all SHARED/VECTOR becomes AIV, all SHARED/CUBE becomes AIC. A mixed kernel
//! `k` becomes `k_aic` (no results) and `k_aiv` (the original results): SHARED statements
//! are duplicated onto both lanes, each lane drops the other lane's statements, dead copies
//! are removed by DCE, and every call statement `k(...)` becomes `k_aic(...)` then
//! `k_aiv(...)` (both carry the attribute `group="k"`). A value flowing between the lanes
//! (which would need tpush/tpop) is rejected with a diagnostic.
//!
//! An AIV kernel that had `split_aiv` regions gets `dual_aiv_dispatch=True` (a region runs
//! on both vector sub-lanes; sharding by lane is the author's job).
//!
//! Before splitting, every function containing `pld.system.defer_wait` is audited against
//! the deferred-waiter contract: it carries `deferred_completion_waiter=True`, is InCore or
//! AIV, has no `core_num`/`sync_start`, is called from a chip orchestration, and lowers to a
//! pure AIV kernel.

use crate::pass::{Pass, PassCx};
use crate::passes::dce::dce_block;
use crate::util::{call_stmt, for_each_call, is_placement_stamp};
use pld_ir::{
    Attr, Block, Call, Callee, Diagnostic, Diagnostics, Expr, ExprKind, Function, FunctionKind, Program,
    SignalRole, Stmt, StmtKind, Values,
};
use std::collections::HashSet;

/// Which lane(s) a call or statement may run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Affinity {
    /// Cube lane only.
    Cube,
    /// Vector lane only.
    Vector,
    /// Either lane; duplicated onto both.
    Shared,
    /// Contains work for both lanes.
    Mixed,
}

impl Affinity {
    /// SHARED is the identity; equal stays; anything else is MIXED.
    pub fn combine(self, other: Affinity) -> Affinity {
        match (self, other) {
            (a, b) if a == b => a,
            (Affinity::Shared, b) => b,
            (a, Affinity::Shared) => a,
            _ => Affinity::Mixed,
        }
    }
}

/// The registry's answer for `call`, without any placement stamp.
///
/// A call whose result is a tile in a cube-side memory (`Mat`, `Left`, `Right`, `Acc`,
/// `Bias`) is cube work whatever the op's declared affinity: `tile.load(…,
/// target_memory=Mat)` is an MTE2 transfer into the cube core's L1, not vector work, and
/// only the cube lane can consume its result (`tile.move` to `Left`/`Right`).
pub fn intrinsic_affinity(call: &Call, values: &Values) -> Affinity {
    let Some(def) = call.op() else { return Affinity::Shared };
    if call.ty.as_tile().is_some_and(|t| t.memory.is_some_and(|m| m.is_cube_side())) {
        return Affinity::Cube;
    }
    match def.affinity {
        pld_ir::Affinity::Vector => Affinity::Vector,
        pld_ir::Affinity::Cube => Affinity::Cube,
        pld_ir::Affinity::Shared => Affinity::Shared,
        pld_ir::Affinity::FromFirstTileArg => {
            for a in &call.args {
                if let Some(t) = a.as_var().and_then(|v| values.ty(v).as_tile().cloned()) {
                    return match t.memory {
                        Some(m) if m.is_cube_side() => Affinity::Cube,
                        Some(_) => Affinity::Vector,
                        None => Affinity::Shared,
                    };
                }
            }
            Affinity::Shared
        }
    }
}

/// The affinity of one statement (compound statements combine their children).
pub fn stmt_affinity(s: &Stmt, values: &Values) -> Affinity {
    if is_placement_stamp(s) {
        let inner = s.blocks().into_iter().flat_map(|b| b.stmts.iter()).fold(Affinity::Shared, |acc, x| {
            let a = stmt_affinity(x, values);
            acc.combine(if a == Affinity::Shared { Affinity::Vector } else { a })
        });
        return inner;
    }
    if let Some((c, _)) = call_stmt(s) {
        return intrinsic_affinity(c, values);
    }
    s.blocks()
        .into_iter()
        .flat_map(|b| b.stmts.iter())
        .fold(Affinity::Shared, |acc, x| acc.combine(stmt_affinity(x, values)))
}

fn block_affinity(b: &Block, values: &Values) -> Affinity {
    b.stmts.iter().fold(Affinity::Shared, |acc, s| acc.combine(stmt_affinity(s, values)))
}

/// See the module docs.
pub struct ExpandMixedKernel;

impl Pass for ExpandMixedKernel {
    crate::pass_info!("ExpandMixedKernel", produced: [MixedKernelExpanded]);
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        let mut diags = Diagnostics::new();
        audit_waiters(program, &mut diags);
        if diags.has_errors() {
            return Err(diags);
        }
        // Every InCore kernel is retyped; with a split, its callers change too (below).
        cx.report_changes();
        let mut split: HashSet<String> = HashSet::new();
        let mut added = Vec::new();
        for f in program.functions.iter_mut().filter(|f| f.kind == FunctionKind::InCore) {
            cx.changed(&f.name);
            let aff = block_affinity(&f.body, &f.values);
            let waiter = contains_defer_wait(&f.body);
            if waiter && matches!(aff, Affinity::Cube | Affinity::Mixed) {
                diags.push(Diagnostic::error(
                    f.span,
                    format!(
                        "deferred waiter `{}` must lower to a pure AIV kernel, but it contains cube work",
                        f.name
                    ),
                ));
                continue;
            }
            f.attrs.retain(|(k, _)| k != "split");
            match aff {
                Affinity::Cube => {
                    f.kind = FunctionKind::Aic;
                    unwrap_stamps(&mut f.body);
                }
                Affinity::Vector | Affinity::Shared => {
                    f.kind = FunctionKind::Aiv;
                    unwrap_stamps(&mut f.body);
                    mark_dual_dispatch(f);
                }
                Affinity::Mixed => match split_function(f) {
                    Ok((aic, aiv)) => {
                        split.insert(f.name.clone());
                        added.push(aic);
                        added.push(aiv);
                    }
                    Err(d) => diags.push(d),
                },
            }
        }
        if diags.has_errors() {
            return Err(diags);
        }
        if split.is_empty() {
            return diags.into_result(());
        }
        cx.changed_everything();
        program.functions.retain(|f| !split.contains(&f.name));
        program.functions.extend(added);
        for f in program.functions.iter_mut() {
            let mut body = std::mem::take(&mut f.body);
            rewrite_group_calls(&mut body, &split, &mut diags);
            f.body = body;
        }
        diags.into_result(())
    }
}

fn lane_body(block: &Block, values: &Values, side: Affinity) -> Block {
    let other = if side == Affinity::Cube { Affinity::Vector } else { Affinity::Cube };
    let mut out = Vec::new();
    for s in &block.stmts {
        if is_placement_stamp(s) {
            if side == Affinity::Vector {
                for b in s.blocks() {
                    out.extend(lane_body(b, values, side).stmts);
                }
            }
            continue;
        }
        let aff = stmt_affinity(s, values);
        if aff == other {
            // The other lane's work (a use of its results on this lane is cross-lane data
            // flow, diagnosed after the split).
            continue;
        }
        let mut s = s.clone();
        if aff == Affinity::Mixed {
            for b in s.blocks_mut() {
                *b = lane_body(b, values, side);
            }
        }
        out.push(s);
    }
    Block { stmts: out }
}

fn split_function(f: &Function) -> Result<(Function, Function), Diagnostic> {
    let mut aic = f.clone();
    aic.name = format!("{}_aic", f.name);
    aic.kind = FunctionKind::Aic;
    aic.ret.clear();
    aic.body = lane_body(&f.body, &f.values, Affinity::Cube);
    strip_return_values(&mut aic.body);
    dce_block(&mut aic.body);
    let mut aiv = f.clone();
    aiv.name = format!("{}_aiv", f.name);
    aiv.kind = FunctionKind::Aiv;
    aiv.body = lane_body(&f.body, &f.values, Affinity::Vector);
    dce_block(&mut aiv.body);
    mark_dual_dispatch(&mut aiv);
    for lane in [&mut aic, &mut aiv] {
        lane.attrs.push(("group".into(), Attr::Str(f.name.clone())));
        if let Err(errs) = pld_ir::verify_function(lane) {
            let detail = errs.iter().next().map(|d| d.message.clone()).unwrap_or_default();
            return Err(Diagnostic::error(
                f.span,
                format!(
                    "mixed kernel `{}` passes a value between the cube and vector lanes; cross-core transfer (tpush/tpop) is not supported by this pipeline",
                    f.name
                ),
            )
            .with_note(format!("in the `{}` lane: {detail}", lane.name))
            .with_note("keep cube and vector work on separate values, or move the comm phase into its own kernel"));
        }
    }
    Ok((aic, aiv))
}

fn strip_return_values(b: &mut Block) {
    b.walk_mut(&mut |s| {
        if let StmtKind::Return(v) = &mut s.kind {
            v.clear();
        }
    });
}

fn unwrap_stamps(block: &mut Block) {
    let old = std::mem::take(&mut block.stmts);
    for mut s in old {
        for b in s.blocks_mut() {
            unwrap_stamps(b);
        }
        if is_placement_stamp(&s) {
            if let StmtKind::Scope { body, .. } = s.kind {
                block.stmts.extend(body.stmts);
            }
        } else {
            block.stmts.push(s);
        }
    }
}

fn rewrite_group_calls(block: &mut Block, split: &HashSet<String>, diags: &mut Diagnostics) {
    if split.is_empty() {
        return;
    }
    let old = std::mem::take(&mut block.stmts);
    for mut s in old {
        for b in s.blocks_mut() {
            rewrite_group_calls(b, split, diags);
        }
        let target = call_stmt(&s).and_then(|(c, _)| match &c.callee {
            Callee::Func(n) if split.contains(n) => Some(n.clone()),
            _ => None,
        });
        if let (Some(name), Some((call, targets))) =
            (target, call_stmt(&s).map(|(c, t)| (c.clone(), t.to_vec())))
        {
            let mut aic = call.clone();
            aic.callee = Callee::Func(format!("{name}_aic"));
            aic.ty = pld_ir::Type::Unknown;
            let mut aiv = call;
            aiv.callee = Callee::Func(format!("{name}_aiv"));
            block
                .stmts
                .push(Stmt::new(StmtKind::Eval(Expr::new(ExprKind::Call(Box::new(aic)), s.span)), s.span));
            let aiv = Expr::new(ExprKind::Call(Box::new(aiv)), s.span);
            block.stmts.push(Stmt::new(
                if targets.is_empty() {
                    StmtKind::Eval(aiv)
                } else {
                    StmtKind::Assign { targets, value: aiv }
                },
                s.span,
            ));
            continue;
        }
        let mut nested = false;
        s.for_each_expr(&mut |e| {
            e.walk(&mut |x| {
                if let Some(c) = x.as_call() {
                    if matches!(&c.callee, Callee::Func(n) if split.contains(n)) {
                        nested = true;
                    }
                }
            })
        });
        if nested {
            diags.push(Diagnostic::error(
                s.span,
                "a call of a split mixed kernel must be a statement of its own",
            ));
        }
        block.stmts.push(s);
    }
}

/// Whether `block` contains a deferred-wait registration anywhere.
pub fn contains_defer_wait(block: &Block) -> bool {
    let mut found = false;
    for_each_call(block, &mut |c, _| found |= c.signal_role() == SignalRole::DeferredWait);
    found
}

fn audit_waiters(program: &Program, diags: &mut Diagnostics) {
    for f in &program.functions {
        if !contains_defer_wait(&f.body) {
            continue;
        }
        let marked = f.attr("deferred_completion_waiter").and_then(Attr::as_bool) == Some(true);
        if !marked {
            diags.push(Diagnostic::error(
                f.span,
                format!(
                    "pld.system.defer_wait in function '{}' bypasses the deferred-waiter task contract; write it as the body of a dedicated top-level pl.at(level=pl.Level.CORE_GROUP) task",
                    f.name
                ),
            ));
            continue;
        }
        if !matches!(f.kind, FunctionKind::InCore | FunctionKind::Aiv) {
            diags.push(Diagnostic::error(
                f.span,
                format!("deferred waiter `{}` must be an InCore or AIV kernel", f.name),
            ));
        }
        if f.attr("core_num").is_some() || f.attr("sync_start").is_some() {
            diags.push(Diagnostic::error(
                f.span,
                format!(
                    "deferred waiter `{}` must be a single-block task (no core_num or sync_start)",
                    f.name
                ),
            ));
        }
        if let Err(d) = crate::waiter::validate_waiter_body(&f.body, &f.values) {
            diags.push(d);
        }
        let mut sites = 0;
        for caller in &program.functions {
            for_each_call(&caller.body, &mut |c, e| {
                if matches!(&c.callee, Callee::Func(n) if *n == f.name) {
                    sites += 1;
                    if caller.kind != FunctionKind::ChipOrch {
                        diags.push(Diagnostic::error(
                            e.span,
                            format!(
                                "deferred waiter `{}` must be called from a chip orchestration, not `{}`",
                                f.name, caller.name
                            ),
                        ));
                    }
                    for bad in ["allow_early_resolve", "predicate", "core_num", "sync_start"] {
                        if c.attr(bad).is_some() {
                            diags.push(Diagnostic::error(
                                e.span,
                                format!("a call of deferred waiter `{}` must not carry `{bad}`", f.name),
                            ));
                        }
                    }
                }
            });
        }
        if sites == 0 {
            diags.push(Diagnostic::error(
                f.span,
                format!("deferred waiter `{}` has no task-level Orchestration call site", f.name),
            ));
        }
    }
}

/// An AIV kernel that had `split_aiv` regions runs on both vector sub-lanes.
fn mark_dual_dispatch(f: &mut Function) {
    let split = f.attr("split_aiv").and_then(Attr::as_bool) == Some(true);
    if split && f.attr("dual_aiv_dispatch").is_none() {
        f.attrs.push(("dual_aiv_dispatch".into(), Attr::Bool(true)));
    }
}
