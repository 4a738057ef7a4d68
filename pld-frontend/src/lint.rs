//! Warnings about programs the frontend accepts: things that are legal but almost certainly
//! not what the user meant. A warning never rejects a program (D-fe-15, `docs/decisions/frontend.md`).
//!
//! Guarantees: [`unwritten_outputs`] warns, at the parameter, about every `pl.Out` parameter
//! that no path of its function writes, where "writes" is decided by the same records
//! everything else reads (an op's effects, a callee's parameter directions, the call-result
//! rule of `pld_ir::results`) and errs towards "written": anything that may write the
//! parameter (through a view, a copy, a loop carry, a call result) counts, so a correct
//! program gets no warning. Host callbacks (whose bodies are Python) are not judged.

use pld_ir::{
    results::is_host_callback, Callee, Diagnostic, Direction, Expr, ExprKind, Function, Program, StmtKind,
};
use std::collections::HashSet;

/// One warning per `pl.Out` parameter of `program` that no path of its function writes.
pub fn unwritten_outputs(program: &Program) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for f in program.functions.iter().filter(|f| !is_host_callback(f)) {
        let outs: Vec<usize> = f
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.dir == Direction::Out && f.values.ty(p.value).as_tensor_like().is_some())
            .map(|(i, _)| i)
            .collect();
        if outs.is_empty() {
            continue;
        }
        let written = written_params(program, f);
        for i in outs.into_iter().filter(|i| !written.contains(i)) {
            out.push(warning(f, i));
        }
    }
    out
}

/// The parameters (indices) of `f` that some statement of its body may write.
fn written_params(program: &Program, f: &Function) -> HashSet<usize> {
    let mut written = HashSet::new();
    f.body.walk_exprs(&mut |e| {
        let Some(c) = e.as_call() else { return };
        let writes: Vec<usize> = match &c.callee {
            Callee::Op(def) => {
                let effects = def.arg_effects(c);
                (0..c.args.len()).filter(|&i| effects.get(i).is_some_and(|x| x.writes())).collect()
            }
            Callee::Func(name) => match program.function(name) {
                Some(g) => (0..c.args.len())
                    .filter(|&i| g.params.get(i).is_some_and(|p| p.dir != Direction::In))
                    .collect(),
                // An unknown callee is reported elsewhere; assume it writes.
                None => (0..c.args.len()).collect(),
            },
        };
        for i in writes {
            if let Some(p) = c.args.get(i).and_then(|a| root_param(program, f, a)) {
                written.insert(p);
            }
        }
    });
    f.body.walk(&mut |s| {
        if let StmtKind::Return(vals) = &s.kind {
            written.extend(vals.iter().filter_map(|v| root_param(program, f, v)));
        }
    });
    written
}

/// The parameter of `f` that `e` is or views: through copies, loop carries and call results
/// (`Program::expr_param`), and through any op producing a tensor from it (a slice, a
/// reshape, a subscript), whose first operand it is taken to view.
fn root_param(program: &Program, f: &Function, e: &Expr) -> Option<usize> {
    if let Some(p) = program.expr_param(f, e) {
        return Some(p);
    }
    match &e.kind {
        ExprKind::Var(v) => program.param_alias(f, *v),
        ExprKind::Call(c) if matches!(c.callee, Callee::Op(_)) && c.ty.as_tensor_like().is_some() => {
            c.args.first().and_then(|a| root_param(program, f, a))
        }
        _ => None,
    }
}

fn warning(f: &Function, i: usize) -> Diagnostic {
    let v = f.params[i].value;
    let name = f.values.name(v);
    let at = f.values.get(v).map_or(f.span, |d| d.span);
    Diagnostic::warning(at, format!("output `{name}` of `{}` is never written", f.name))
        .with_label(f.span, format!("no path of `{}` writes `{name}`", f.name))
        .with_note(
            "an output is written by an op that writes it (e.g. `pl.store(tile, offsets, out)`), by passing it \
             to a pl.Out / pl.InOut parameter of a call, or by returning it; unwritten output bytes are \
             undefined on the runtime",
        )
        .with_help(format!("write `{name}`, or declare it `pl.Tensor` if it is an input"))
}
