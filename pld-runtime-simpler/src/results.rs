//! What a host orchestrator returns (`return y`), as the runtime sees it: results come back
//! only through `Out` parameters (`runtime_artifacts.md` §2, `num_return_types`; §10 R2).
//!
//! Guarantees: every returned value is traced (through plain rebinds and through a chip
//! call's results, which are the arguments they alias, `pld_ir::results`) to either one of the
//! host's own `Out`/`InOut` parameters, or a host tensor the host creates (`pl.create_tensor`),
//! which the directory turns into an extra trailing `Out` parameter of the same name so the
//! caller's tensor receives it; anything else (an input, a slice, a scalar) is a diagnostic
//! with the `return`'s position. `num_return_types` is the number of returned values.

use crate::unsupported;
use pld_ir::vocab::TENSOR_CREATE as CREATE;
use pld_ir::{Diagnostic, Direction, Expr, ExprKind, Function, Program, Stmt, StmtKind, TensorType, ValueId};

/// One returned value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostResult {
    /// The `tensors["…"]` key that holds it (a parameter name).
    pub name: String,
    /// For a tensor the host creates: its type (it becomes an extra `Out` parameter).
    pub created: Option<TensorType>,
}

/// The host's results, in `return` order.
pub fn host_results(program: &Program, host: &Function) -> Result<Vec<HostResult>, Diagnostic> {
    let mut out = Vec::new();
    for s in &host.body.stmts {
        let StmtKind::Return(vals) = &s.kind else { continue };
        for e in vals {
            let r = trace(program, host, e, 0).ok_or_else(|| {
                unsupported(
                    e.span.or(s.span),
                    "a host result that is neither one of its Out/InOut parameters nor a tensor it creates (the runtime returns results only through Out parameters)",
                )
            })?;
            if !out.contains(&r) {
                out.push(r);
            }
        }
    }
    Ok(out)
}

fn assignment(stmts: &[Stmt], v: ValueId) -> Option<(&[ValueId], &Expr)> {
    for s in stmts {
        if let StmtKind::Assign { targets, value } = &s.kind {
            if targets.contains(&v) {
                return Some((targets.as_slice(), value));
            }
        }
        for b in s.blocks() {
            if let Some(found) = assignment(&b.stmts, v) {
                return Some(found);
            }
        }
    }
    None
}

fn trace(program: &Program, host: &Function, e: &Expr, depth: usize) -> Option<HostResult> {
    let v = e.as_var()?;
    if depth > 64 {
        return None;
    }
    if let Some(p) = host.params.iter().find(|p| p.value == v) {
        return (p.dir != Direction::In && host.values.ty(v).as_tensor().is_some())
            .then(|| HostResult { name: host.values.name(v).to_string(), created: None });
    }
    let (targets, value) = assignment(&host.body.stmts, v)?;
    match &value.kind {
        ExprKind::Var(_) => trace(program, host, value, depth + 1),
        ExprKind::Call(c) if c.callee.name() == CREATE => Some(HostResult {
            name: host.values.name(v).to_string(),
            created: Some(host.values.ty(v).as_tensor()?.clone()),
        }),
        // A call's result is the argument it aliases (`pld_ir::results`).
        ExprKind::Call(c) => {
            let k = targets.iter().position(|t| *t == v)?;
            let arg = c.args.get(program.call_result_arg(c, &host.values, k)?)?;
            trace(program, host, arg, depth + 1)
        }
        _ => None,
    }
}
