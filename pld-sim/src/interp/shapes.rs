//! The run-time half of the call rule for window shapes (#29 item 3): where `check` cannot
//! judge a window (signal) argument against its parameter — shapes written in several dynamic
//! symbols (`[2*(NR-1), NR]` for `[M, 1]`), or dims bound by `--bind` — the simulator does, at
//! the call, with the run's dimension values.
//!
//! Guarantees: a call whose window argument's shape differs, in any dimension the parameter's
//! declared shape gives a value for, from that value stops the run with a report at the call
//! naming the argument, the parameter (and where it is declared), both shapes as written and
//! with their values, and the dimension values used. Parameters of other types, dims with no
//! value, and rank mismatches (the frontend's) are not judged here.

use crate::report::Fault;
use crate::value::Val;
use pld_ir::{Call, Expr, Function, Span, Type};
use std::collections::HashMap;

/// Checks the window arguments `args` of `call` (made in `caller`) against the parameters of
/// `callee`.
pub(super) fn check_window_args(
    call: &Call,
    caller: &Function,
    callee: &Function,
    args: &[Val],
    syms: &HashMap<String, i64>,
    span: Span,
) -> Result<(), Fault> {
    for (i, (p, a)) in callee.params.iter().zip(args).enumerate() {
        let Type::DistTensor(pt) = callee.values.ty(p.value) else { continue };
        let Val::Tensor(t) = a else { continue };
        let declared = &pt.tensor.shape;
        if declared.len() != t.shape.len() {
            continue;
        }
        let want: Vec<Option<i64>> = declared.iter().map(|d| d.eval_int(&|s| syms.get(s).copied())).collect();
        if want.iter().zip(&t.shape).all(|(w, got)| w.is_none_or(|w| w == *got)) {
            continue;
        }
        let pname = callee.values.name(p.value);
        let written =
            call.args.get(i).and_then(|e| e.ty(&caller.values).as_tensor_like().map(|x| x.shape.clone()));
        let what = match call.args.get(i).and_then(Expr::as_var) {
            Some(v) => format!("argument {} (`{}`)", i + 1, caller.values.name(v)),
            None => format!("argument {}", i + 1),
        };
        let actual = format!("[{}]", t.shape.iter().map(i64::to_string).collect::<Vec<_>>().join(", "));
        let as_written = match &written {
            Some(w) if w.iter().any(|d| d.as_int().is_none()) => format!("{} = {actual}", shape_text(w)),
            _ => actual,
        };
        let values =
            want.iter().map(|w| w.map_or_else(|| "?".to_string(), |w| w.to_string())).collect::<Vec<_>>();
        let mut fault = Fault::runtime(
            span,
            format!(
                "{what} of `{}` is a window of shape {as_written}, but parameter `{pname}` is declared {} = [{}]",
                callee.name,
                shape_text(declared),
                values.join(", ")
            ),
        );
        let mut used = Vec::new();
        Expr::collect_syms(declared.iter().chain(written.iter().flatten()), &mut used);
        let bound: Vec<String> =
            used.iter().filter_map(|s| syms.get(s).map(|v| format!("{s} = {v}"))).collect();
        if !bound.is_empty() {
            fault = fault.note(format!("in this run {}", bound.join(", ")));
        }
        fault = fault.note(
            "a window's shape is the same memory on every rank: the argument must have the parameter's shape \
             for the run's dimension values (check judges shapes in one symbol; this one is known at run time)",
        );
        if let Some(d) = callee.values.get(p.value) {
            fault = fault.note_at(format!("parameter `{pname}` of `{}` is declared", callee.name), d.span);
        }
        return Err(fault);
    }
    Ok(())
}

fn shape_text(dims: &[Expr]) -> String {
    format!("[{}]", dims.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))
}
