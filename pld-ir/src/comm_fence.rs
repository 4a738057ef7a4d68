//! The data-before-signal markers (PTOAS comm fences) of a device kernel, one algorithm for
//! the `InsertCommFence` pass and for the builtin kernels codegen synthesizes.
//!
//! Afterwards, in the function's body:
//! - a local publishing write — a registered op writing a window-bound (DistributedTensor)
//!   variable, e.g. `tile.store` into a window, `tensor.write` of a window, a pull into a
//!   window — is followed by `system.cacheinvalid(target, shape, zeros)` then `system.fence()`;
//! - a remote write (any op writing a `Side::Peer` operand: put, remote_store) is followed by
//!   `system.fence()`;
//! - a call of a program function (opaque here) is followed by the whole-GM
//!   `system.cacheinvalid()` then `system.fence()`;
//! - a blocking wait (`SignalRole::BlockingWait`) is followed by the whole-GM
//!   `system.cacheinvalid()`.
//!
//! A notify (`SignalRole::Notify`) is deliberately not classified. The classification is
//! [`comm_class`], read from the op records; existing markers are not duplicated, so
//! inserting twice changes nothing.

use crate::builder::Builder;
use crate::effects::{comm_class, CommClass};
use crate::expr::{Callee, Expr};
use crate::func::Function;
use crate::stmt::{Block, Stmt, StmtKind};
use crate::value::ValueId;
use crate::{Diagnostics, Type};

/// `system.fence`: orders earlier GM writes before later ones (a notify).
pub const FENCE: &str = "system.fence";
/// `system.cacheinvalid`: writes back / invalidates a GM region (or all of GM).
pub const CACHE_INVALID: &str = "system.cacheinvalid";

/// Inserts the markers into `f`'s body; returns whether it added any. Diagnostics come from
/// building the marker calls (they do not fail on a well-formed function).
pub fn insert_comm_fences(f: &mut Function, diags: &mut Diagnostics) -> bool {
    let mut body = std::mem::take(&mut f.body);
    let mut inserted = false;
    fence_block(&mut body, f, &mut inserted, diags);
    f.body = body;
    inserted
}

/// The markers a statement needs after it.
enum Markers {
    /// Region invalidate of the window variable, then a fence (a local publishing write).
    RegionAndFence(ValueId),
    /// A fence (a remote write).
    Fence,
    /// Whole-GM invalidate, then a fence (an opaque call of a program function).
    GmAndFence,
    /// Whole-GM invalidate (a blocking wait).
    Gm,
    /// Nothing.
    None,
}

fn classify(s: &Stmt, f: &Function) -> Markers {
    let Some(call) = s.call() else { return Markers::None };
    let def = match &call.callee {
        Callee::Func(_) => return Markers::GmAndFence,
        Callee::Op(d) => *d,
    };
    let window_var = |i: usize| {
        call.args.get(i).and_then(Expr::as_var).filter(|v| matches!(f.values.ty(*v), Type::DistTensor(_)))
    };
    match comm_class(def, call, |i| window_var(i).is_some()) {
        CommClass::LocalWindowWrite(i) => window_var(i).map_or(Markers::None, Markers::RegionAndFence),
        CommClass::RemoteWrite => Markers::Fence,
        CommClass::Wait => Markers::Gm,
        CommClass::Other => Markers::None,
    }
}

fn is_marker(s: Option<&Stmt>, name: &str, target: Option<ValueId>) -> bool {
    let Some(c) = s.and_then(Stmt::call) else { return false };
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
        let r: Result<(), crate::Diagnostic> = (|| {
            match class {
                Markers::GmAndFence => {
                    if !(is_marker(next, CACHE_INVALID, None) && is_marker(next2, FENCE, None)) {
                        b.eval_op(CACHE_INVALID, vec![], vec![])?;
                        b.eval_op(FENCE, vec![], vec![])?;
                    }
                }
                Markers::RegionAndFence(v) => {
                    if !(is_marker(next, CACHE_INVALID, Some(v)) && is_marker(next2, FENCE, None)) {
                        let shape = b.values.ty(v).shape().map(|s| s.to_vec()).unwrap_or_default();
                        let zeros = Expr::tuple(shape.iter().map(|_| Expr::int(0)).collect());
                        b.eval_op(CACHE_INVALID, vec![Expr::var(v), Expr::tuple(shape), zeros], vec![])?;
                        b.eval_op(FENCE, vec![], vec![])?;
                    }
                }
                Markers::Fence => {
                    if !is_marker(next, FENCE, None) {
                        b.eval_op(FENCE, vec![], vec![])?;
                    }
                }
                Markers::Gm => {
                    if !is_marker(next, CACHE_INVALID, None) {
                        b.eval_op(CACHE_INVALID, vec![], vec![])?;
                    }
                }
                Markers::None => {}
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
