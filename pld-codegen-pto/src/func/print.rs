//! Assembles the text of one emitted function from the context's sections.
//!
//! Guarantees: the hidden deferred-wait parameter, and the SPMD block index and count, are
//! appended only when the body used them;
//! hoisted constants come first, then the prologue, then the body; a tile allocation is a
//! typed line ([`BodyLine::AllocTile`]) holding its address slot, and the printer renders the
//! slot's `addr = ...` operand from the address plan (none when the plan does not fit), so no
//! text is patched after it was written; the verifier facts travel with the text.

use super::{FnCx, FnOut};
use crate::verify::KernelFacts;
use pld_ir::{Diagnostic, FunctionKind};

/// One line of a function's prologue or body.
#[derive(Clone, Debug)]
pub(super) enum BodyLine {
    /// A line of PTO text, already indented.
    Text(String),
    /// `<result> = pto.alloc_tile [addr = <slot's address>] <operands>: <ty>`.
    AllocTile {
        /// Nesting depth (two spaces each).
        indent: usize,
        /// The SSA name of the tile.
        result: String,
        /// The allocation's slot in the address plan.
        slot: usize,
        /// The `valid_row = ... valid_col = ...` operands, each followed by a space.
        operands: String,
        /// The `!pto.tile_buf` type.
        ty: String,
    },
}

impl BodyLine {
    /// Appends the line and its newline to `out`; `addr_operands` holds each slot's
    /// `addr = ...` operand text (followed by a space), or an empty text.
    fn print(&self, addr_operands: &[String], out: &mut String) {
        match self {
            BodyLine::Text(t) => out.push_str(t),
            BodyLine::AllocTile { indent, result, slot, operands, ty } => {
                let addr = addr_operands.get(*slot).map_or("", String::as_str);
                let pad = "  ".repeat(*indent);
                out.push_str(&format!("{pad}{result} = pto.alloc_tile {addr}{operands}: {ty}"));
            }
        }
        out.push('\n');
    }
}

impl FnCx<'_> {
    pub(super) fn finish(mut self, mut sig: Vec<String>) -> Result<FnOut, Diagnostic> {
        if self.uses_deferred {
            sig.push("%__pypto_deferred_raw_args: !pto.ptr<i64>".into());
        }
        if super::uses_block_ids(self.func) {
            sig.extend(super::BLOCK_ID_PARAMS.iter().map(|p| format!("{p}: i32")));
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
        let addr_operands = self.address_operands(&addrs, fits);
        let kind = match self.func.kind {
            FunctionKind::Aic => " attributes {pto.kernel_kind = #pto.kernel_kind<cube>}",
            _ => " attributes {pto.kernel_kind = #pto.kernel_kind<vector>}",
        };
        let mut out = format!("  func.func @{}({}){kind} {{\n", self.func.name, sig.join(", "));
        for l in &self.consts {
            out.push_str(l);
            out.push('\n');
        }
        for l in self.prologue.iter().chain(&self.body) {
            l.print(&addr_operands, &mut out);
        }
        out.push_str("  return\n  }\n");
        Ok(FnOut { text: out, uses_deferred: self.uses_deferred, facts })
    }
}
