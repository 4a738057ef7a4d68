//! The verifier's reading of one kernel's typed instructions: its lines in print order (the
//! lines of a region after the structured op holding them), the constant value behind an SSA
//! name, the static shape of a tensor view, and the diagnostic that points at an instruction.
//!
//! Guarantees: [`Code::lines`] visits every line once, in the order it was emitted (so tile
//! allocations come in slot order); an SSA name has a constant value only when a hoisted
//! integer `arith.constant` defines it.

use super::Kernel;
use crate::mlir::MTy;
use crate::pto::{print, Inst, Line, Literal};
use pld_ir::Diagnostic;
use std::collections::HashMap;

/// One kernel's typed instructions, indexed for the rules.
pub struct Code<'k> {
    /// The kernel.
    pub k: &'k Kernel,
    lines: Vec<&'k Line>,
    ints: HashMap<&'k str, i64>,
    views: HashMap<&'k str, &'k [String]>,
    addr_operands: Vec<Option<String>>,
}

impl<'k> Code<'k> {
    /// Walks `k` once.
    pub fn new(k: &'k Kernel) -> Code<'k> {
        let mut lines = Vec::new();
        walk(&k.lines, &mut lines);
        let mut ints = HashMap::new();
        let mut views = HashMap::new();
        for l in &lines {
            match &l.inst {
                Inst::Const { result, value: Literal::Int(v), .. } => {
                    ints.insert(result.as_str(), *v);
                }
                Inst::MakeTensorView { result, shape, .. } => {
                    views.insert(result.as_str(), shape.as_slice());
                }
                _ => {}
            }
        }
        let addrs = k.plan.addrs.as_deref().unwrap_or_default();
        let addr_operands =
            addrs.iter().map(|a| Some(print::const_name(Literal::Int(*a as i64), MTy::Int(64)))).collect();
        Code { k, lines, ints, views, addr_operands }
    }

    /// Every instruction line, in print order.
    pub fn lines(&self) -> impl Iterator<Item = &'k Line> + '_ {
        self.lines.iter().copied()
    }

    /// The constant value of `ssa` (`None` for a runtime value).
    pub fn int(&self, ssa: &str) -> Option<i64> {
        self.ints.get(ssa).copied()
    }

    /// The static dims of tensor view `view` (`None` for a dynamic dim, or every dim when the
    /// view is not made in this kernel); `rank` dims.
    pub fn view_dims(&self, view: &str, rank: usize) -> Vec<Option<i64>> {
        match self.views.get(view) {
            Some(shape) => shape.iter().map(|d| self.int(d)).collect(),
            None => vec![None; rank],
        }
    }

    /// A violation of `rule`: at the line `at` (naming its instruction, printed in a note), or
    /// kernel-wide.
    pub fn error(&self, at: Option<&Line>, rule: &str, msg: String) -> Diagnostic {
        let k = &self.k.name;
        let Some(line) = at else {
            return Diagnostic::error(self.k.span, format!("kernel '{k}': {msg} [pto verifier: {rule}]"));
        };
        let op = print::op_name(&line.inst);
        let mut text = String::new();
        print::inst(&line.inst, &self.addr_operands, &mut text);
        Diagnostic::error(
            line.span.or(self.k.span),
            format!("kernel '{k}': {op}: {msg} [pto verifier: {rule}]"),
        )
        .with_note(format!("in `{text}`"))
    }
}

fn walk<'k>(lines: &'k [Line], out: &mut Vec<&'k Line>) {
    for l in lines {
        out.push(l);
        match &l.inst {
            Inst::For(f) => walk(&f.body, out),
            Inst::If(i) => {
                walk(&i.then_body, out);
                walk(i.else_body.as_deref().unwrap_or_default(), out);
            }
            Inst::While(w) => {
                walk(&w.before, out);
                walk(&w.after, out);
            }
            _ => {}
        }
    }
}
