//! `MaterializeCommDomainScopes`: window buffers and the ranks that use them.
//!
//! Afterwards, in every host orchestration: each `pld.tensor.alloc_window_buffer` is a
//! window buffer whose `pld.tensor.window` views are typed as bound to it (the buffer name
//! on the DistributedTensor type, carried through every value derived from a view), and the
//! body is wrapped in one `comm_domain` scope per distinct set of participating devices
//! (outermost first, in first-seen order; `devices=[]` means all ranks), each listing its
//! buffers in allocation order. The devices of a buffer come from the chip dispatches it is
//! passed to (`device=` a constant, or the loop variable of a `range(world_size())` or a
//! constant-bounded `range(a, N)`; a part of `range(world_size())` is an error, never every
//! rank), and a collective's operands share their evidence (so a signal lives in its data's
//! domain). A host body already wrapped is left alone.

use crate::ops::{ALLOC_WINDOW_BUFFER, WINDOW, WORLD_SIZE};
use crate::pass::{Pass, PassCx};
use crate::util::{call_stmt, rededuce};
use pld_ir::{
    Block, Callee, Diagnostic, Diagnostics, Expr, Function, FunctionKind, LoweringKind, Program, ScopeKind,
    Stmt, StmtKind, Target, Type, ValueId,
};
use std::collections::{BTreeSet, HashMap, HashSet};

/// See the module docs.
pub struct MaterializeCommDomainScopes;

impl Pass for MaterializeCommDomainScopes {
    crate::pass_info!("MaterializeCommDomainScopes", produced: [CommDomainScopesMaterialized]);
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        let chips: HashSet<String> = program
            .functions
            .iter()
            .filter(|f| f.kind == FunctionKind::ChipOrch)
            .map(|f| f.name.clone())
            .collect();
        let mut diags = Diagnostics::new();
        let target = cx.target;
        cx.report_changes();
        for f in program.functions.iter_mut().filter(|f| f.kind == FunctionKind::Host) {
            match materialize(f, &chips, target) {
                Ok(false) => {}
                Ok(true) => cx.changed(&f.name),
                Err(d) => {
                    cx.changed(&f.name);
                    diags.extend(d);
                }
            }
        }
        diags.into_result(())
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Devices {
    All,
    Set(BTreeSet<i64>),
}

impl Devices {
    fn merge(self, other: Devices) -> Devices {
        match (self, other) {
            (Devices::Set(mut a), Devices::Set(b)) => {
                a.extend(b);
                Devices::Set(a)
            }
            _ => Devices::All,
        }
    }
}

struct Alloc {
    name: String,
    span: pld_ir::Span,
    views: Vec<ValueId>,
    evidence: Option<Devices>,
    /// A dispatch passing one of its views had an invalid `device=` (already reported, with a
    /// label here): no "not consumed" error follows.
    orphaned: bool,
}

/// Materializes the scopes of host function `f`; whether it changed `f`.
fn materialize(f: &mut Function, chips: &HashSet<String>, target: Target) -> Result<bool, Diagnostics> {
    if matches!(
        f.body.stmts.as_slice(),
        [Stmt { kind: StmtKind::Scope { kind: ScopeKind::CommDomain { .. }, .. }, .. }]
    ) {
        return Ok(false);
    }
    // 1. Allocations, views, aliases and definitions.
    let mut allocs: Vec<Alloc> = Vec::new();
    let mut alloc_of: HashMap<ValueId, usize> = HashMap::new();
    let mut window_of: HashMap<ValueId, usize> = HashMap::new();
    let mut defs: HashMap<ValueId, Expr> = HashMap::new();
    f.body.walk(&mut |s| {
        let StmtKind::Assign { targets, value } = &s.kind else { return };
        if let [t] = targets.as_slice() {
            defs.insert(*t, value.clone());
            if let Some(c) = value.as_call() {
                if c.callee.name() == ALLOC_WINDOW_BUFFER {
                    let name = c.attr("name").and_then(|a| a.as_str()).unwrap_or_default().to_string();
                    alloc_of.entry(*t).or_insert(allocs.len());
                    allocs.push(Alloc {
                        name,
                        span: s.span,
                        views: Vec::new(),
                        evidence: None,
                        orphaned: false,
                    });
                } else if c.callee.name() == WINDOW {
                    if let Some(i) =
                        c.args.first().and_then(Expr::as_var).and_then(|p| alloc_of.get(&p).copied())
                    {
                        allocs[i].views.push(*t);
                        window_of.insert(*t, i);
                    }
                } else if matches!(c.ty, Type::DistTensor(_)) {
                    // A writing op's result is the operand it wrote (per the registry's
                    // effects); a view's aliases the operand of the same type.
                    if let Some(i) = c
                        .written_result_operand(&f.values)
                        .and_then(|i| c.args.get(i))
                        .or_else(|| c.args.iter().find(|a| a.ty(&f.values) == c.ty))
                        .and_then(|a| a.as_var())
                        .and_then(|v| window_of.get(&v).copied())
                    {
                        window_of.insert(*t, i);
                    }
                }
            } else if let Some(i) = value.as_var().and_then(|v| window_of.get(&v).copied()) {
                window_of.insert(*t, i);
            }
        }
    });
    if allocs.is_empty() {
        return Ok(false);
    }
    // 2./3. Dispatch evidence and collective operand sharing.
    let mut diags = Diagnostics::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut loops: Vec<(ValueId, Expr, Expr, Expr)> = Vec::new();
    analyze(&f.body, chips, &defs, &window_of, &mut loops, &mut allocs, &mut groups, &mut diags);
    // Rounds over the groups until one changes nothing (at most one round per group, as
    // many as a chain of groups needs), so the cost follows the groups' overlap.
    for _ in 0..groups.len().max(1) {
        let mut moved = false;
        for g in &groups {
            let merged = g.iter().filter_map(|&i| allocs[i].evidence.clone()).reduce(Devices::merge);
            if let Some(m) = merged {
                for &i in g {
                    if allocs[i].evidence.as_ref() != Some(&m) {
                        allocs[i].evidence = Some(m.clone());
                        moved = true;
                    }
                }
            }
        }
        if !moved {
            break;
        }
    }
    // 4. Sanity.
    for a in &allocs {
        if a.views.is_empty() {
            diags.push(Diagnostic::error(
                a.span,
                format!("window buffer `{}` has no pld.tensor.window view (dead allocation)", a.name),
            ));
        } else if a.evidence.is_none() && !a.orphaned {
            diags.push(
                Diagnostic::error(a.span, format!("window buffer `{}` is not consumed by any chip orchestration dispatch", a.name))
                    .with_note("pass one of its views to a chip function dispatched with device=..., or add a device= annotation"),
            );
        }
    }
    if diags.has_errors() {
        return Err(diags);
    }
    // 5./6. Bind every view and re-type everything derived from it.
    let mut pinned = HashSet::new();
    for a in &allocs {
        for &v in &a.views {
            if let Some(d) = f.values.get_mut(v) {
                if let Type::DistTensor(dt) = &mut d.ty {
                    dt.window = Some(a.name.clone());
                }
            }
            pinned.insert(v);
        }
    }
    rededuce(f, target, &pinned)?;
    // 7. Cluster by device set, first-seen order.
    let mut clusters: Vec<(Devices, Vec<String>)> = Vec::new();
    for a in &allocs {
        let d = a.evidence.clone().unwrap_or(Devices::All);
        match clusters.iter_mut().find(|(k, _)| *k == d) {
            Some((_, names)) => names.push(a.name.clone()),
            None => clusters.push((d, vec![a.name.clone()])),
        }
    }
    // 8. Wrap, innermost last.
    let mut body = std::mem::take(&mut f.body);
    for (i, (d, windows)) in clusters.into_iter().enumerate().rev() {
        let devices = match d {
            Devices::All => Vec::new(),
            Devices::Set(s) => s.into_iter().collect(),
        };
        let span = f.span;
        body = Block {
            stmts: vec![Stmt::new(
                StmtKind::Scope {
                    kind: ScopeKind::CommDomain { name: format!("comm_d{i}"), devices, windows },
                    attrs: Vec::new(),
                    args: Vec::new(),
                    body,
                },
                span,
            )],
        };
    }
    f.body = body;
    Ok(true)
}

fn unwrap_def(e: &Expr, defs: &HashMap<ValueId, Expr>) -> Expr {
    let mut cur = e.clone();
    for _ in 0..16 {
        match cur.as_var().and_then(|v| defs.get(&v)) {
            Some(d) => cur = d.clone(),
            None => break,
        }
    }
    cur
}

fn device_set(
    d: &Expr,
    loops: &[(ValueId, Expr, Expr, Expr)],
    defs: &HashMap<ValueId, Expr>,
) -> Result<Devices, Diagnostic> {
    if let Some(n) = d.as_int() {
        if n >= 0 {
            return Ok(Devices::Set([n].into_iter().collect()));
        }
    }
    if let Some(v) = d.as_var() {
        if let Some((_, start, stop, step)) = loops.iter().rev().find(|(lv, ..)| *lv == v) {
            let stop = unwrap_def(stop, defs);
            let (a, s) = (unwrap_def(start, defs).as_int(), unwrap_def(step, defs).as_int());
            if stop.as_call().is_some_and(|c| c.callee.name() == WORLD_SIZE) {
                // Only the whole range is every rank; a part of a runtime rank count is no
                // static device set (it used to be taken as every rank, silently).
                if (a, s) == (Some(0), Some(1)) {
                    return Ok(Devices::All);
                }
            } else if let (Some(n), Some(a), Some(1)) = (stop.as_int(), a, s) {
                if 0 <= a && a <= n {
                    return Ok(Devices::Set((a..n).collect()));
                }
            }
            return Err(Diagnostic::error(
                d.span,
                "a device= loop must be range(world_size()) (every rank) or a constant range(a, N) with \
                 step 1; a part of the runtime rank count, like range(1, world_size()), is not a static \
                 device set: bind the rank count (a builder parameter) and loop over constants",
            ));
        }
    }
    Err(Diagnostic::error(
        d.span,
        "device= must be a constant rank or the variable of an enclosing rank loop",
    ))
}

#[allow(clippy::too_many_arguments)]
fn analyze(
    block: &Block,
    chips: &HashSet<String>,
    defs: &HashMap<ValueId, Expr>,
    window_of: &HashMap<ValueId, usize>,
    loops: &mut Vec<(ValueId, Expr, Expr, Expr)>,
    allocs: &mut [Alloc],
    groups: &mut Vec<Vec<usize>>,
    diags: &mut Diagnostics,
) {
    for s in &block.stmts {
        s.for_each_expr(&mut |e| {
            e.walk(&mut |x| {
                let Some(c) = x.as_call() else { return };
                match &c.callee {
                    Callee::Func(name) if chips.contains(name) => {
                        let Some(d) = &c.device else { return };
                        match device_set(d, loops, defs) {
                            Ok(devs) => {
                                for a in &c.args {
                                    if let Some(&i) = a.as_var().and_then(|v| window_of.get(&v)) {
                                        let prev = allocs[i].evidence.take();
                                        allocs[i].evidence = Some(match prev {
                                            Some(p) => p.merge(devs.clone()),
                                            None => devs.clone(),
                                        });
                                    }
                                }
                            }
                            Err(mut d) => {
                                // Label the windows this dispatch leaves without devices, instead
                                // of a second error per window.
                                for a in &c.args {
                                    if let Some(&i) = a.as_var().and_then(|v| window_of.get(&v)) {
                                        allocs[i].orphaned = true;
                                        let label = format!(
                                            "window buffer `{}` gets its devices from that dispatch",
                                            allocs[i].name
                                        );
                                        d = d.with_label(allocs[i].span, label);
                                    }
                                }
                                diags.push(d);
                            }
                        }
                    }
                    Callee::Op(def) if def.lowering(LoweringKind::HostBuiltin).is_some() => {
                        let g: Vec<usize> = c
                            .args
                            .iter()
                            .filter_map(|a| a.as_var().and_then(|v| window_of.get(&v).copied()))
                            .collect();
                        if g.len() > 1 {
                            groups.push(g);
                        }
                    }
                    _ => {}
                }
            })
        });
        if call_stmt(s).is_none() {
            if let StmtKind::For { var, start, stop, step, body, .. } = &s.kind {
                loops.push((*var, start.clone(), stop.clone(), step.clone()));
                analyze(body, chips, defs, window_of, loops, allocs, groups, diags);
                loops.pop();
                continue;
            }
            for b in s.blocks() {
                analyze(b, chips, defs, window_of, loops, allocs, groups, diags);
            }
        }
    }
}
