//! Pure expression evaluation and the value environment of an activation.
//!
//! Guarantees: evaluation order is left to right; nested op calls run to completion without
//! blocking; Python scalar semantics (floor division and modulo, int/float promotion); reading
//! an unset value or a mismatched tuple assignment is a report, never a panic.

use super::*;

pub(super) fn bundle(mut vals: Vec<Val>) -> Val {
    match vals.len() {
        0 => Val::Unit,
        1 => vals.pop().unwrap_or(Val::Unit),
        _ => Val::Tuple(vals),
    }
}

pub(super) fn set(env: &mut [Option<Val>], v: ValueId, val: Val) {
    if let Some(slot) = env.get_mut(v.index()) {
        *slot = Some(val);
    }
}

/// Takes value `v` out of the environment (unset afterwards).
pub(super) fn take(env: &mut [Option<Val>], v: ValueId) -> Option<Val> {
    env.get_mut(v.index()).and_then(Option::take)
}

pub(super) fn get(env: &[Option<Val>], v: ValueId, span: Span) -> Result<Val, Fault> {
    env.get(v.index())
        .cloned()
        .flatten()
        .ok_or_else(|| Fault::runtime(span, format!("value {v} is used before it is defined")))
}

pub(super) fn assign_targets(
    env: &mut [Option<Val>],
    targets: &[ValueId],
    v: Val,
    span: Span,
) -> Result<(), Fault> {
    match targets.len() {
        0 => Ok(()),
        1 => {
            set(env, targets[0], v);
            Ok(())
        }
        n => match v {
            Val::Tuple(items) if items.len() == n => {
                for (t, x) in targets.iter().zip(items) {
                    set(env, *t, x);
                }
                Ok(())
            }
            other => Err(Fault::runtime(span, format!("cannot unpack a {} into {n} targets", other.kind()))),
        },
    }
}

/// Evaluates an expression; nested op calls must finish without blocking.
pub(super) fn eval_pure<'p>(
    act: &Act<'p>,
    e: &'p Expr,
    env: &Env<'_, 'p>,
    ecx: &mut Ecx<'_, 'p>,
) -> Result<Val, Fault> {
    Ok(match &e.kind {
        ExprKind::Int(v) => Val::Int(*v),
        ExprKind::Float(f) => Val::Float(f.get()),
        ExprKind::Bool(b) => Val::Bool(*b),
        ExprKind::Str(s) => Val::Str(s.clone()),
        ExprKind::DType(d) => Val::DType(*d),
        ExprKind::Var(v) => get(&act.env, *v, e.span).map_err(|f| {
            let name = act.func.values.name(*v).to_string();
            Fault::runtime(
                f.span,
                format!("value '{name}' is used before it is defined in '{}'", act.func.name),
            )
        })?,
        ExprKind::Sym(s) => Val::Int(
            *env.syms
                .get(s)
                .ok_or_else(|| Fault::runtime(e.span, format!("symbolic dim '{s}' is not bound")))?,
        ),
        ExprKind::Tuple(items) => {
            let mut vals = Vec::with_capacity(items.len());
            for x in items {
                vals.push(eval_pure(act, x, env, ecx)?);
            }
            Val::Tuple(vals)
        }
        ExprKind::Unary(op, a) => {
            let v = eval_pure(act, a, env, ecx)?;
            match (op, v) {
                (UnOp::Neg, Val::Int(i)) => Val::Int(i.wrapping_neg()),
                (UnOp::Neg, Val::Float(f)) => Val::Float(-f),
                (UnOp::Not, v) => {
                    Val::Bool(!v.truthy().ok_or_else(|| Fault::runtime(e.span, "not of a non-scalar"))?)
                }
                (_, v) => return Err(Fault::runtime(e.span, format!("cannot negate a {}", v.kind()))),
            }
        }
        ExprKind::Binary(op, a, b) => {
            binary(*op, eval_pure(act, a, env, ecx)?, eval_pure(act, b, env, ecx)?, e.span)?
        }
        ExprKind::Call(c) => eval_call(act, c, e.span, env, ecx)?,
    })
}

/// [`eval_pure`] of a call nested in an expression: kept out of `eval_pure`, whose other nodes
/// (an integer, a variable, an index product) are most of what a kernel loop evaluates and
/// would otherwise all pay this arm's stack frame.
#[inline(never)]
fn eval_call<'p>(
    act: &Act<'p>,
    c: &'p pld_ir::Call,
    span: Span,
    env: &Env<'_, 'p>,
    ecx: &mut Ecx<'_, 'p>,
) -> Result<Val, Fault> {
    let mut args: Vec<Val> = c.args.iter().map(|x| eval_pure(act, x, env, ecx)).collect::<Result<_, _>>()?;
    let nested_err = || {
        Fault::runtime(
            span,
            format!(
                "'{}' cannot be nested inside an expression in the simulator; bind it to a value first",
                c.callee.name()
            ),
        )
    };
    let def = match &c.callee {
        Callee::Op(def) => def,
        Callee::Func(name) => {
            // Launches and dispatches do not block, so they may sit inside an expression
            // (`return kernel(x)`); their value is the returned parameters.
            let f = env
                .program
                .function(name)
                .ok_or_else(|| Fault::runtime(span, format!("call of unknown function '{name}'")))?;
            let device = call_device(act, c, env, ecx)?;
            let deps = task_deps(act, c, env, ecx)?;
            let mut result = mapped_return(env, f, &args);
            match (ecx.level, device) {
                (Level::Chip, None) if f.kind.is_incore() => {
                    let id = ecx.launch(Job::Func { func: f, args }, deps.unwrap_or_default());
                    if c.is_submit() {
                        result = with_task_id(f, result, id);
                    }
                }
                (Level::Host, Some(r)) if r >= 0 && (r as usize) < ecx.world.nranks() => {
                    ecx.reqs.push(Req::Dispatch { rank: r as usize, job: Job::Func { func: f, args } })
                }
                (Level::Host, None) if f.kind == FunctionKind::ChipOrch && !c.is_submit() => {
                    let job = Job::Func { func: f, args };
                    if job_uses_windows(&job) {
                        return Err(nested_err());
                    }
                    let rank = ecx.commless_rank();
                    ecx.reqs.push(Req::Dispatch { rank, job });
                }
                _ => return Err(nested_err()),
            }
            return Ok(result);
        }
    };
    let kind = match sem::of(def) {
        Some(k @ (SemKind::Op(_) | SemKind::Owning(_) | SemKind::Noop)) => k,
        None => return Err(Fault::runtime(span, format!("op '{}' has no simulator semantics", def.name))),
        Some(_) => return Err(nested_err()),
    };
    let mut cx = OpCx {
        world: ecx.world,
        call: c,
        span,
        level: ecx.level,
        rank: ecx.rank,
        domain: ecx.domain,
        who: ecx.who,
        group: None,
    };
    let flow = match kind {
        SemKind::Owning(f) => f(&mut cx, &mut args)?,
        SemKind::Op(f) => f(&mut cx, &args)?,
        SemKind::Noop => Flow::Val(Val::Unit),
        SemKind::Collective { .. } => return Err(nested_err()),
    };
    match flow {
        Flow::Val(v) => Ok(v),
        _ => Err(nested_err()),
    }
}

pub(super) fn binary(op: BinOp, a: Val, b: Val, span: Span) -> Result<Val, Fault> {
    if let (BinOp::Div, Val::Int(x), Val::Int(y)) = (op, &a, &b) {
        // Python true division of integers gives a float.
        return Ok(Val::Float(*x as f64 / *y as f64));
    }
    if let (Val::Int(_) | Val::Bool(_), Val::Int(_) | Val::Bool(_)) = (&a, &b) {
        let (x, y) = (a.as_i64().unwrap_or(0), b.as_i64().unwrap_or(0));
        let v = op.fold_int(x, y).ok_or_else(|| {
            Fault::runtime(
                span,
                format!("integer {} of {x} and {y} failed (division by zero or overflow)", op.symbol()),
            )
        })?;
        return Ok(if op.is_comparison() { Val::Bool(v != 0) } else { Val::Int(v) });
    }
    let (Some(x), Some(y)) = (a.as_f64(), b.as_f64()) else {
        return Err(Fault::runtime(
            span,
            format!("operator {} on {} and {}", op.symbol(), a.kind(), b.kind()),
        ));
    };
    Ok(Val::Float(match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => x / y,
        BinOp::FloorDiv => (x / y).floor(),
        BinOp::Mod => x - y * (x / y).floor(),
        BinOp::Min => x.min(y),
        BinOp::Max => x.max(y),
        _ => return Ok(Val::Bool(op.compare(x, y).unwrap_or_default())),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(op: BinOp, x: Val, y: Val) -> Val {
        binary(op, x, y, Span::DUMMY).expect("binary")
    }

    #[test]
    fn python_scalar_semantics() {
        assert!(matches!(b(BinOp::Div, Val::Int(7), Val::Int(2)), Val::Float(f) if f == 3.5));
        assert!(matches!(b(BinOp::FloorDiv, Val::Int(-7), Val::Int(2)), Val::Int(-4)));
        assert!(matches!(b(BinOp::Mod, Val::Int(-1), Val::Int(4)), Val::Int(3)));
        assert!(matches!(b(BinOp::Lt, Val::Int(1), Val::Int(2)), Val::Bool(true)));
        assert!(matches!(b(BinOp::Add, Val::Int(1), Val::Float(0.5)), Val::Float(f) if f == 1.5));
        assert!(matches!(b(BinOp::Min, Val::Int(3), Val::Int(2)), Val::Int(2)));
        assert!(binary(BinOp::FloorDiv, Val::Int(1), Val::Int(0), Span::DUMMY).is_err());
        assert!(binary(BinOp::Add, Val::Str("a".into()), Val::Int(0), Span::DUMMY).is_err());
    }
}
