//! Finishes one emitted function: its hidden parameters and address plan, its text from the
//! typed sections, and the typed kernel the verifier reads.
//!
//! Guarantees: the hidden deferred-wait parameter, and the SPMD block index and count, are
//! appended only when the body used them;
//! hoisted constants come first, then the prologue, then the body, all printed by
//! [`crate::pto::print`]; a tile allocation holds its address slot, and the printer renders
//! the slot's `addr = ...` operand from the address plan (none when the plan does not fit), so
//! no text is patched after it was written; the verifier gets the very lines, signature and
//! plan the text was printed from.

use super::{FnCx, FnOut};
use crate::mlir::MTy;
use crate::pto::{print, KernelKind, PtoType};
use crate::verify::{Kernel, TilePlan};
use pld_ir::{Diagnostic, FunctionKind};

impl FnCx<'_> {
    pub(super) fn finish(mut self, mut sig: Vec<(String, PtoType)>) -> Result<FnOut, Diagnostic> {
        if self.uses_deferred {
            sig.push((super::DEFERRED_ARGS_PARAM.into(), PtoType::Ptr("i64")));
        }
        if super::uses_block_ids(self.func) {
            sig.extend(super::BLOCK_ID_PARAMS.iter().map(|p| (p.to_string(), PtoType::Scalar(MTy::Int(32)))));
        }
        // Tile addresses were assigned at allocation time; none are printed when a buffer's
        // high-water mark exceeds its capacity, which the verifier reports (level3-addresses).
        let (addrs, fits, high) = self.address_plan();
        let aliases = self.tiles.slots.iter().map(|s| s.alias).collect();
        let freed_at = self.tiles.slots.iter().map(|s| s.freed_at).collect();
        let plan = TilePlan { addrs: fits.then(|| addrs.clone()), aliases, freed_at, high };
        let addr_operands = self.address_operands(&addrs, fits);
        let kind = match self.func.kind {
            FunctionKind::Aic => KernelKind::Cube,
            _ => KernelKind::Vector,
        };
        let mut lines = std::mem::take(&mut self.consts.lines);
        lines.append(&mut self.code.prologue);
        lines.append(&mut self.code.body);
        let text = print::function(&self.func.name, &sig, kind, &lines, &addr_operands);
        let kernel = Kernel {
            name: self.func.name.clone(),
            span: self.func.span,
            target: self.opts.target,
            params: sig,
            lines,
            plan,
        };
        Ok(FnOut { text, uses_deferred: self.uses_deferred, kernel })
    }
}
