//! The deferred-wait waiter contract (§8 of the pass spec), shared by the scope outliner
//! and `ExpandMixedKernel`.
//!
//! A waiter body may hold only deferred-wait registrations, scalar bookkeeping and control
//! flow; after the first registration nothing may read a tensor; loops that register need a
//! static positive trip count; at most [`MAX_DEFERRED_CONDITIONS`] registrations in total.

use pld_ir::{Block, Diagnostic, Expr, ExprKind, ForKind, SignalRole, StmtKind, Values};

/// The runtime's per-task completion budget.
pub const MAX_DEFERRED_CONDITIONS: u64 = 64;

const READ_OP: &str = crate::ops::TENSOR_READ;

struct Summary {
    count: u64,
    safe_after: bool,
}

/// Validates a waiter body; `Ok(count)` is the static number of registrations.
pub fn validate_waiter_body(body: &Block, values: &Values) -> Result<u64, Diagnostic> {
    let s = block(body, values)?;
    if s.count > MAX_DEFERRED_CONDITIONS {
        let span = body.stmts.first().map_or(pld_ir::Span::DUMMY, |s| s.span);
        return Err(Diagnostic::error(
            span,
            format!(
                "a deferred waiter registers at most {MAX_DEFERRED_CONDITIONS} completion conditions, but this body registers {}",
                if s.count > MAX_DEFERRED_CONDITIONS { format!("more than {MAX_DEFERRED_CONDITIONS}") } else { s.count.to_string() }
            ),
        ));
    }
    Ok(s.count)
}

fn scalar_expr(e: &Expr, values: &Values, allow_read: bool) -> Result<bool, Diagnostic> {
    let mut reads = false;
    let mut err = None;
    e.walk(&mut |x| match &x.kind {
        ExprKind::Call(c) => {
            if allow_read && c.callee.name() == READ_OP {
                reads = true;
            } else if err.is_none() {
                err = Some(
                    Diagnostic::error(
                        x.span.or(e.span),
                        format!(
                            "a deferred waiter is registration-only; unexpected operation {} in its body",
                            c.callee.name()
                        ),
                    )
                    .about_call(c),
                );
            }
        }
        ExprKind::Var(v) if values.ty(*v).as_tensor_like().is_some() && !allow_read && err.is_none() => {
            err =
                Some(Diagnostic::error(x.span.or(e.span), "a deferred waiter may only compute with scalars"));
        }
        _ => {}
    });
    match err {
        Some(d) => Err(d),
        None => Ok(reads),
    }
}

fn block(b: &Block, values: &Values) -> Result<Summary, Diagnostic> {
    let mut total = Summary { count: 0, safe_after: true };
    for s in &b.stmts {
        let one = stmt(s, values)?;
        if total.count > 0 && !one.safe_after {
            return Err(Diagnostic::error(
                s.span,
                "a deferred waiter may not read tensors after its first registration (only scalar bookkeeping, control flow and more registrations)",
            ));
        }
        total.count = total.count.saturating_add(one.count).min(MAX_DEFERRED_CONDITIONS + 1);
        total.safe_after &= one.safe_after;
    }
    Ok(total)
}

fn stmt(s: &pld_ir::Stmt, values: &Values) -> Result<Summary, Diagnostic> {
    match &s.kind {
        StmtKind::Eval(e) => match e.as_call() {
            Some(c) if c.signal_role() == SignalRole::DeferredWait => {
                for a in &c.args[1..] {
                    scalar_expr(a, values, false)?;
                }
                Ok(Summary { count: 1, safe_after: true })
            }
            _ => Err(Diagnostic::error(
                s.span,
                "a deferred waiter is registration-only; unexpected operation in its body",
            )),
        },
        StmtKind::Assign { targets, value } => {
            if value.as_call().is_some_and(|c| c.signal_role() == SignalRole::DeferredWait) {
                return Err(Diagnostic::error(
                    s.span,
                    "pld.system.defer_wait must be a standalone statement",
                ));
            }
            if targets.iter().any(|t| values.ty(*t).as_tensor_like().is_some()) {
                return Err(Diagnostic::error(s.span, "a deferred waiter may not define tensors"));
            }
            let reads = scalar_expr(value, values, true)?;
            Ok(Summary { count: 0, safe_after: !reads })
        }
        StmtKind::Return(v) if v.is_empty() => Ok(Summary { count: 0, safe_after: true }),
        StmtKind::Return(_) => Err(Diagnostic::error(s.span, "a deferred waiter returns nothing")),
        StmtKind::Yield(v) => {
            for e in v {
                scalar_expr(e, values, false)?;
            }
            Ok(Summary { count: 0, safe_after: true })
        }
        StmtKind::For { start, stop, step, body, kind, iter_args, .. } => {
            if !matches!(kind, ForKind::Sequential | ForKind::Unroll) {
                return Err(Diagnostic::error(
                    s.span,
                    "a deferred waiter loop must be sequential or unrolled",
                ));
            }
            for e in [start, stop, step] {
                scalar_expr(e, values, false)?;
            }
            for a in iter_args {
                if values.ty(a.value).as_tensor_like().is_some() {
                    return Err(Diagnostic::error(
                        s.span,
                        "a deferred waiter may not carry tensors across iterations",
                    ));
                }
            }
            let inner = block(body, values)?;
            if inner.count == 0 {
                return Ok(Summary { count: 0, safe_after: inner.safe_after });
            }
            let trips =
                match (start.as_int(), stop.as_int(), step.as_int()) {
                    (Some(a), Some(b), Some(c)) if c > 0 && b > a => ((b - a) + c - 1) / c,
                    _ => return Err(Diagnostic::error(
                        s.span,
                        "a deferred waiter loop that registers conditions needs a static positive trip count",
                    )),
                };
            if trips > 1 && !inner.safe_after {
                return Err(Diagnostic::error(
                    s.span,
                    "a deferred waiter may not read tensors after its first registration",
                ));
            }
            let count = inner.count.saturating_mul(trips as u64).min(MAX_DEFERRED_CONDITIONS + 1);
            Ok(Summary { count, safe_after: inner.safe_after })
        }
        StmtKind::If { cond, then_body, else_body, .. } => {
            scalar_expr(cond, values, false)?;
            let a = block(then_body, values)?;
            let b = block(else_body, values)?;
            Ok(Summary { count: a.count.max(b.count), safe_after: a.safe_after && b.safe_after })
        }
        _ => Err(Diagnostic::error(
            s.span,
            "a deferred waiter body may not contain this statement (while loops and scopes are not allowed)",
        )),
    }
}
