//! `SynthesizeAllReduceSignals`: host collectives that omit their signal get a private one.
//!
//! Afterwards: in every host orchestration, every call of an op with a private-signal rule
//! (registry data, [`pld_ir::auto_signal`]) whose optional `signal` parameter was omitted
//! passes an explicit signal window: a private INT32 window of the shape the rule gives
//! (e.g. `[world_size, core_num]` for a mesh allreduce), whose `world_size` is bound by its
//! own `pld.system.world_size()` statement, allocated (element count × 4 bytes) at the top
//! of the function. The seed lets host code omit a signal only outside `for` and `while`
//! loops: a signal-less call inside one is refused at the call, with why (a synthesized signal
//! is private to one call site) and the fix (allocate the signal before the loop and pass
//! it). Names are `__allreduce_signal_*_<k>` with a
//! program-wide counter skipping names in use. A call returned directly is first bound to
//! `__allreduce_result_<k>`. A rule may refuse a call (a ring allreduce without a static
//! `nranks=`): its message is reported at the call. A signal-less call nested inside another
//! expression is rejected.

use crate::ops::{ALLOC_WINDOW_BUFFER, WINDOW, WORLD_SIZE};
use crate::pass::{Pass, PassCx};
use crate::util::for_each_call;
use pld_ir::auto_signal::{private_signal, SignalDim};
use pld_ir::{
    Attr, BinOp, Block, Builder, Call, DataType, Diagnostic, Diagnostics, Expr, Function, FunctionKind,
    Program, Stmt, StmtKind,
};
use std::collections::HashSet;

/// See the module docs.
pub struct SynthesizeAllReduceSignals;

fn missing_signal(c: &Call) -> Option<usize> {
    let def = c.op()?;
    private_signal(def.name)?;
    let i = def.params.iter().position(|p| p.name == "signal")?;
    // Left off (an optional trailing signal), or a shape list standing in for it.
    let open = match c.args.get(i) {
        None => c.args.len() == i && def.params[i].optional,
        Some(a) => a.as_tuple().is_some(),
    };
    open.then_some(i)
}

impl Pass for SynthesizeAllReduceSignals {
    crate::pass_info!("SynthesizeAllReduceSignals");
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        // Only host functions change, and only when some call (anywhere in them, nested ones
        // included) lacks its signal; otherwise the rewrite below has nothing to rewrite or
        // report, and the program is left untouched.
        cx.report_changes();
        let mut needed = false;
        for f in program.functions.iter().filter(|f| f.kind == FunctionKind::Host) {
            for_each_call(&f.body, &mut |c, _| needed |= missing_signal(c).is_some());
        }
        if !needed {
            return Ok(());
        }
        let mut taken: HashSet<String> = HashSet::new();
        for f in &program.functions {
            taken.extend(f.values.iter().map(|(_, d)| d.name.clone()));
            for_each_call(&f.body, &mut |c, _| {
                if c.callee.name() == ALLOC_WINDOW_BUFFER {
                    if let Some(Attr::Str(n)) = c.attr("name") {
                        taken.insert(n.clone());
                    }
                }
            });
        }
        let mut counter = 0usize;
        let mut diags = Diagnostics::new();
        for f in program.functions.iter_mut().filter(|f| f.kind == FunctionKind::Host) {
            cx.changed(&f.name);
            let mut prologue = Vec::new();
            let mut body = std::mem::take(&mut f.body);
            let mut cx = Rewrite {
                taken: &mut taken,
                counter: &mut counter,
                prologue: &mut prologue,
                diags: &mut diags,
            };
            rewrite(&mut body, f, &mut cx, false);
            prologue.extend(body.stmts);
            f.body = Block { stmts: prologue };
        }
        diags.into_result(())
    }
}

fn next_names(taken: &mut HashSet<String>, counter: &mut usize) -> (String, String, String, String) {
    loop {
        let k = *counter;
        *counter += 1;
        let names = (
            format!("__allreduce_signal_world_size_{k}"),
            format!("__allreduce_signal_buf_{k}"),
            format!("__allreduce_signal_{k}"),
            format!("__allreduce_result_{k}"),
        );
        if [&names.0, &names.1, &names.2].iter().all(|n| !taken.contains(*n)) {
            taken.extend([names.0.clone(), names.1.clone(), names.2.clone(), names.3.clone()]);
            return names;
        }
    }
}

/// Emits the private signal into `prologue` and returns the rebuilt call.
fn with_signal(
    call: &Call,
    f: &mut Function,
    names: &(String, String, String, String),
    prologue: &mut Vec<Stmt>,
    span: pld_ir::Span,
) -> Result<Expr, Diagnostic> {
    let op = call.callee.name();
    let rule = private_signal(op)
        .ok_or_else(|| Diagnostic::error(span, format!("{op} has no private signal")).about_call(call))?;
    let dims = rule(call).map_err(|m| Diagnostic::error(span, m).about_call(call))?;
    let mut b = Builder::new(&mut f.values, f.kind);
    b.span = span;
    let ws = b.assign_op(names.0.clone(), WORLD_SIZE, vec![], vec![])?;
    let shape: Vec<Expr> = dims
        .iter()
        .map(|d| match d {
            SignalDim::WorldSize => Expr::var(ws),
            SignalDim::Int(n) => Expr::int(*n),
        })
        .collect();
    let numel =
        shape.iter().cloned().reduce(|acc, d| Expr::binary(BinOp::Mul, acc, d)).unwrap_or(Expr::int(1));
    let bytes = Expr::binary(BinOp::Mul, numel, Expr::int(4));
    let buf = b.assign_op(
        names.1.clone(),
        ALLOC_WINDOW_BUFFER,
        vec![bytes],
        vec![("name", Attr::Str(names.1.clone()))],
    )?;
    let sig = b.assign_op(
        names.2.clone(),
        WINDOW,
        vec![Expr::var(buf), Expr::tuple(shape)],
        vec![("dtype", Attr::DType(DataType::INT32))],
    )?;
    let mut args = call.args.clone();
    match missing_signal(call) {
        Some(i) if i < args.len() => args[i] = Expr::var(sig),
        _ => args.push(Expr::var(sig)),
    }
    let attrs = call.attr_args();
    let mut e = b.op(op, args, attrs).map_err(|d| d.about_call(call))?;
    if let Some(c) = e.as_call_mut() {
        // The rebuilt call is still the one the user wrote.
        c.spelled = call.spelled;
    }
    prologue.extend(b.finish().0);
    Ok(e)
}

/// What the rewrite threads through a host function's blocks.
struct Rewrite<'a> {
    taken: &'a mut HashSet<String>,
    counter: &'a mut usize,
    prologue: &'a mut Vec<Stmt>,
    diags: &'a mut Diagnostics,
}

/// The seed: "host-orchestrator user code may omit signal outside for and while loops". A
/// synthesized signal is private to one call site; inside a loop that one site is every
/// iteration's call, so the signal-less call is refused at the call.
fn in_loop_error(c: &Call, span: pld_ir::Span) -> Diagnostic {
    let op = c.callee.name();
    Diagnostic::error(span, format!("{op} without a signal inside a `for`/`while` loop"))
        .with_note(
            "the seed lets host code omit a collective's signal only outside for and while loops: each synthesized signal is private to one call site, allocated once for it, not once per iteration",
        )
        .with_note(format!(
            "allocate the signal window before the loop (`sig = pld.window(pld.alloc_window_buffer(...), [...], dtype=pl.INT32)`) and pass it: `{op}(..., sig, ...)`"
        ))
        .about_call(c)
}

/// Rewrites the signal-less calls of `block`; `in_loop` is whether a `for` / `while` is
/// around it.
fn rewrite(block: &mut Block, f: &mut Function, cx: &mut Rewrite<'_>, in_loop: bool) {
    let Rewrite { taken, counter, prologue, diags } = cx;
    let old = std::mem::take(&mut block.stmts);
    for mut s in old {
        let inner = in_loop || matches!(s.kind, StmtKind::For { .. } | StmtKind::While { .. });
        for b in s.blocks_mut() {
            let mut cx = Rewrite { taken, counter, prologue, diags };
            rewrite(b, f, &mut cx, inner);
        }
        let span = s.span;
        if in_loop {
            let mut refused = false;
            s.for_each_expr(&mut |e| {
                e.walk(&mut |x| {
                    if let Some(c) = x.as_call().filter(|c| missing_signal(c).is_some()) {
                        diags.push(in_loop_error(c, x.span.or(span)));
                        refused = true;
                    }
                })
            });
            if refused {
                block.stmts.push(s);
                continue;
            }
        }
        match &mut s.kind {
            StmtKind::Assign { value, .. } | StmtKind::Eval(value)
                if value.as_call().and_then(missing_signal).is_some() =>
            {
                let call = value.as_call().cloned();
                if let Some(call) = call {
                    let names = next_names(taken, counter);
                    match with_signal(&call, f, &names, prologue, span) {
                        Ok(e) => *value = e,
                        Err(d) => diags.push(d),
                    }
                }
            }
            StmtKind::Return(values) => {
                let mut pre = Vec::new();
                for v in values.iter_mut() {
                    let Some(call) = v.as_call().filter(|c| missing_signal(c).is_some()).cloned() else {
                        continue;
                    };
                    let names = next_names(taken, counter);
                    match with_signal(&call, f, &names, prologue, span) {
                        Ok(e) => {
                            let ty = e.ty(&f.values);
                            let r = f.values.add(names.3.clone(), ty, span);
                            pre.push(Stmt::new(StmtKind::Assign { targets: vec![r], value: e }, span));
                            *v = Expr::var(r);
                        }
                        Err(d) => diags.push(d),
                    }
                }
                block.stmts.extend(pre);
            }
            _ => {}
        }
        // Anything left is nested inside another expression.
        let top_level = matches!(s.kind, StmtKind::Assign { .. } | StmtKind::Eval(_) | StmtKind::Return(_));
        s.for_each_expr(&mut |e| {
            e.walk(&mut |x| {
                if top_level && std::ptr::eq(x, e) {
                    return;
                }
                if let Some(c) = x.as_call() {
                    if missing_signal(c).is_some() {
                        diags.push(Diagnostic::error(
                            x.span.or(span),
                            format!("{} without a signal must be a direct assignment, expression statement, or return value", c.callee.name()),
                        ).about_call(c));
                    }
                }
            })
        });
        block.stmts.push(s);
    }
}
