//! `InsertCommFence`: the PTOAS data-before-signal markers in device kernels.
//!
//! Afterwards, in every InCore/AIC/AIV function (orchestration is untouched):
//! - a local publishing write — a registered op writing a window-bound (DistributedTensor)
//!   variable, e.g. `tile.store` into a window, `tensor.write` of a window, a pull into a
//!   window — is followed by `system.cacheinvalid(target, shape, zeros)` then `system.fence()`;
//! - a remote write (put, remote_store) is followed by `system.fence()`;
//! - a call of a program function (opaque to this pass) is followed by the whole-GM
//!   `system.cacheinvalid()` then `system.fence()`;
//! - a blocking `pld.system.wait` is followed by the whole-GM `system.cacheinvalid()`.
//!
//! `notify` is deliberately not classified. Existing markers are not duplicated, so the
//! pass is idempotent.

use crate::ops::{CACHE_INVALID, FENCE, PULLS, REMOTE_WRITES, WAIT};
use crate::pass::{Pass, PassCx};
use crate::util::call_stmt;
use pld_ir::{Block, Builder, Callee, Diagnostics, Expr, Function, Program, Stmt, StmtKind, ValueId};

/// See the module docs.
pub struct InsertCommFence;

impl Pass for InsertCommFence {
    fn name(&self) -> &'static str {
        "InsertCommFence"
    }
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        cx.report_changes();
        crate::util::per_function(
            program,
            cx,
            |f| f.kind.is_incore(),
            |f, diags| {
                let mut body = std::mem::take(&mut f.body);
                let mut inserted = false;
                fence_block(&mut body, f, &mut inserted, diags);
                f.body = body;
                inserted
            },
        )
        .into_result(())
    }
}

enum Class {
    LocalWrite(ValueId),
    RemoteWrite,
    Opaque,
    Wait,
    Other,
}

fn classify(s: &Stmt, f: &Function) -> Class {
    let Some((call, _)) = call_stmt(s) else { return Class::Other };
    let def = match &call.callee {
        Callee::Func(_) => return Class::Opaque,
        Callee::Op(d) => *d,
    };
    if def.name == WAIT {
        return Class::Wait;
    }
    if REMOTE_WRITES.contains(&def.name) {
        return Class::RemoteWrite;
    }
    let is_dist_var =
        |e: &Expr| e.as_var().filter(|v| matches!(f.values.ty(*v), pld_ir::Type::DistTensor(_)));
    if PULLS.contains(&def.name) {
        return call.args.first().and_then(is_dist_var).map_or(Class::Other, Class::LocalWrite);
    }
    if def.no_duplicate {
        return Class::Other;
    }
    for (a, eff) in call.args.iter().zip(def.arg_effects(call)) {
        if eff.writes() {
            if let Some(v) = is_dist_var(a) {
                return Class::LocalWrite(v);
            }
        }
    }
    Class::Other
}

fn is_marker(s: Option<&Stmt>, name: &str, target: Option<ValueId>) -> bool {
    let Some((c, _)) = s.and_then(call_stmt) else { return false };
    c.callee.name() == name
        && match target {
            Some(v) => c.args.first().and_then(Expr::as_var) == Some(v),
            None => c.args.is_empty(),
        }
}

/// Inserts the markers into `block` (recursively); sets `inserted` when it adds any.
fn fence_block(block: &mut Block, f: &mut Function, inserted: &mut bool, diags: &mut Diagnostics) {
    let mut old = std::mem::take(&mut block.stmts);
    let mut out: Vec<Stmt> = Vec::with_capacity(old.len());
    let mut i = 0;
    while i < old.len() {
        // Statement `i` is moved out (the look-ahead reads `i + 1` and `i + 2`, still in
        // place); the placeholder left behind allocates nothing and is never read.
        let placeholder = Stmt::new(StmtKind::Return(Vec::new()), old[i].span);
        let mut s = std::mem::replace(&mut old[i], placeholder);
        for b in s.blocks_mut() {
            fence_block(b, f, inserted, diags);
        }
        let class = classify(&s, f);
        let span = s.span;
        out.push(s);
        let next = old.get(i + 1);
        let next2 = old.get(i + 2);
        let mut b = Builder::new(&mut f.values, f.kind);
        b.span = span;
        let r: Result<(), pld_ir::Diagnostic> = (|| {
            match class {
                Class::LocalWrite(v) => {
                    if !(is_marker(next, CACHE_INVALID, Some(v)) && is_marker(next2, FENCE, None)) {
                        let shape = b.values.ty(v).shape().map(|s| s.to_vec()).unwrap_or_default();
                        let zeros = Expr::tuple(shape.iter().map(|_| Expr::int(0)).collect());
                        b.eval_op(CACHE_INVALID, vec![Expr::var(v), Expr::tuple(shape), zeros], vec![])?;
                        b.eval_op(FENCE, vec![], vec![])?;
                    }
                }
                Class::RemoteWrite => {
                    if !is_marker(next, FENCE, None) {
                        b.eval_op(FENCE, vec![], vec![])?;
                    }
                }
                Class::Opaque => {
                    if !(is_marker(next, CACHE_INVALID, None) && is_marker(next2, FENCE, None)) {
                        b.eval_op(CACHE_INVALID, vec![], vec![])?;
                        b.eval_op(FENCE, vec![], vec![])?;
                    }
                }
                Class::Wait => {
                    if !is_marker(next, CACHE_INVALID, None) {
                        b.eval_op(CACHE_INVALID, vec![], vec![])?;
                    }
                }
                Class::Other => {}
            }
            Ok(())
        })();
        let (stmts, _) = b.finish();
        if let Err(d) = r {
            diags.push(d);
        }
        *inserted |= !stmts.is_empty();
        out.extend(stmts);
        i += 1;
    }
    block.stmts = out;
}
