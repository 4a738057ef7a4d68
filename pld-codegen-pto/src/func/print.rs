//! Assembles the text of one emitted function from the context's sections.
//!
//! Guarantees: the hidden deferred-wait parameter is appended only when the body used it;
//! hoisted constants come first, then the prologue, then the body with tile addresses filled
//! in; the verifier facts travel with the text.

use super::addrs::substitute_addrs;
use super::{FnCx, FnOut};
use crate::verify::KernelFacts;
use pld_ir::{Diagnostic, FunctionKind};

impl FnCx<'_> {
    pub(super) fn finish(mut self, mut sig: Vec<String>) -> Result<FnOut, Diagnostic> {
        if self.uses_deferred {
            sig.push("%__pypto_deferred_raw_args: !pto.ptr<i64>".into());
        }
        // Tile addresses were assigned at allocation time; none are printed when a buffer's
        // high-water mark exceeds its capacity, which the verifier reports (level3-addresses).
        let (addrs, fits, high) = self.address_plan();
        let facts = KernelFacts {
            kernel: self.func.name.clone(),
            span: self.func.span,
            target: self.opts.target,
            facts: std::mem::take(&mut self.facts),
            addrs: fits.then(|| addrs.clone()),
            high,
        };
        let addr_text = self.address_operands(&addrs, fits);
        let kind = match self.func.kind {
            FunctionKind::Aic => " attributes {pto.kernel_kind = #pto.kernel_kind<cube>}",
            _ => " attributes {pto.kernel_kind = #pto.kernel_kind<vector>}",
        };
        let mut out = format!("  func.func @{}({}){kind} {{\n", self.func.name, sig.join(", "));
        for l in self.consts.iter().chain(&self.prologue) {
            out.push_str(l);
            out.push('\n');
        }
        for l in &self.body {
            out.push_str(&substitute_addrs(l, &addr_text));
            out.push('\n');
        }
        out.push_str("  return\n  }\n");
        Ok(FnOut { text: out, uses_deferred: self.uses_deferred, facts })
    }
}
