//! `DeadCodeElimination`: removes assignments nobody reads whose value has no effect.
//!
//! Afterwards: every remaining `x = e` either defines a value that is used, or evaluates a
//! call to a function or to an op that writes an argument or exists for its side effect.
//! Whether an op is pure is the registry's answer (`arg_effects`, side-effect-only result).

use crate::pass::{Pass, PassCx};
use crate::util::used_values;
use pld_ir::{Block, Expr, Program, StmtKind};

/// See the module docs.
pub struct DeadCodeElimination;

impl Pass for DeadCodeElimination {
    fn name(&self) -> &'static str {
        "DeadCodeElimination"
    }
    fn run(&self, program: &mut Program, _cx: &mut PassCx) -> Result<(), pld_ir::Diagnostics> {
        for f in &mut program.functions {
            dce_block(&mut f.body);
        }
        Ok(())
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
pub fn dce_block(body: &mut Block) {
    loop {
        let used = used_values(body);
        let mut removed = false;
        remove_dead(body, &used, &mut removed);
        if !removed {
            break;
        }
    }
}

fn remove_dead(block: &mut Block, used: &std::collections::HashSet<pld_ir::ValueId>, removed: &mut bool) {
    block.stmts.retain(|s| match &s.kind {
        StmtKind::Assign { targets, value }
            if targets.iter().all(|t| !used.contains(t)) && is_pure(value) =>
        {
            *removed = true;
            false
        }
        _ => true,
    });
    for s in &mut block.stmts {
        for b in s.blocks_mut() {
            remove_dead(b, used, removed);
        }
    }
}
