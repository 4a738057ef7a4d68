//! `DeadCodeElimination`: removes assignments nobody reads whose value has no effect.
//!
//! Afterwards: every remaining `x = e` either defines a value that is used, or evaluates a
//! call to a function or to an op that writes an argument or exists for its side effect.
//! Whether an op is pure is the registry's answer (`arg_effects`, side-effect-only result).

use crate::pass::{Pass, PassCx};
use pld_ir::{Block, Expr, ExprKind, Program, StmtKind};

/// See the module docs.
pub struct DeadCodeElimination;

impl Pass for DeadCodeElimination {
    crate::pass_info!("DeadCodeElimination");
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), pld_ir::Diagnostics> {
        cx.report_changes();
        crate::util::per_function(program, cx, |_| true, |f, _| dce_block(&mut f.body)).into_result(())
    }
}

/// Whether evaluating `e` has no effect besides producing its value.
pub fn is_pure(e: &Expr) -> bool {
    let mut pure = true;
    e.walk(&mut |x| {
        if let Some(c) = x.as_call() {
            match c.op() {
                None => pure = false,
                Some(d) => {
                    if d.is_side_effect_only(c) || d.arg_effects(c).iter().any(|e| e.writes()) {
                        pure = false;
                    }
                }
            }
        }
    });
    pure
}

/// Removes dead pure assignments from `body` (and nested blocks) until nothing changes.
///
/// Use counts are taken once; a sweep visits statements last to first (nested blocks before
/// the statement holding them), so an assignment is judged after every later reader has been
/// judged, and removing one releases the uses of its operands. Sweeps repeat until one
/// removes nothing, so the result is the same fixed point as recomputing the used values
/// after every removal round (a definition that is dead stays dead), for any statement order.
/// Returns whether it removed anything.
pub fn dce_block(body: &mut Block) -> bool {
    // Use counts by value index (ids are dense per function).
    let mut uses: Vec<usize> = Vec::new();
    body.walk_exprs(&mut |e| {
        if let ExprKind::Var(v) = e.kind {
            let i = v.index();
            if i >= uses.len() {
                uses.resize(i + 1, 0);
            }
            uses[i] += 1;
        }
    });
    let mut removed = false;
    while sweep(body, &mut uses) {
        removed = true;
    }
    removed
}

/// One backward sweep over `block`; whether it removed anything.
fn sweep(block: &mut Block, uses: &mut [usize]) -> bool {
    let mut removed = false;
    let mut keep = vec![true; block.stmts.len()];
    for (i, s) in block.stmts.iter_mut().enumerate().rev() {
        for b in s.blocks_mut().into_iter().rev() {
            removed |= sweep(b, uses);
        }
        if let StmtKind::Assign { targets, value } = &s.kind {
            if targets.iter().all(|t| uses.get(t.index()).is_none_or(|&n| n == 0)) && is_pure(value) {
                value.walk(&mut |x| {
                    if let ExprKind::Var(v) = x.kind {
                        if let Some(n) = uses.get_mut(v.index()) {
                            *n = n.saturating_sub(1);
                        }
                    }
                });
                keep[i] = false;
                removed = true;
            }
        }
    }
    if keep.contains(&false) {
        let mut kept = keep.into_iter();
        block.stmts.retain(|_| kept.next().unwrap_or(true));
    }
    removed
}
