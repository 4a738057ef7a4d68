//! The SSA names of one emitted function ([`Names`]) and the sections its instructions go to
//! ([`Code`]): the hoisted constants, the view prologue, the body and the open regions.
//!
//! Guarantees: every name is handed out once (a readable hint that is taken falls back to a
//! fresh numeric temporary); a constant is hoisted once per value and type; an instruction is
//! appended to the innermost open region of the current section, at the current depth.

use crate::mlir::MTy;
use crate::pto::{print, Inst, Line};
use pld_ir::Span;
use std::collections::{HashMap, HashSet};

/// The SSA names taken in one function.
#[derive(Debug, Default)]
pub(crate) struct Names {
    taken: HashSet<String>,
    next_tmp: usize,
}

impl Names {
    /// Takes `name`; false when it was already taken.
    pub(crate) fn reserve(&mut self, name: &str) -> bool {
        self.taken.insert(name.to_string())
    }

    /// A fresh numeric temporary (`%N`).
    pub(crate) fn tmp(&mut self) -> String {
        loop {
            let n = print::ssa(self.next_tmp);
            self.next_tmp += 1;
            if self.reserve(&n) {
                return n;
            }
        }
    }

    /// `%<fragment>` when free, else a fresh numeric temporary.
    pub(crate) fn named(&mut self, fragment: &str) -> String {
        let n = print::ssa(fragment);
        if self.reserve(&n) {
            n
        } else {
            self.tmp()
        }
    }
}

/// The hoisted constants of one function.
#[derive(Debug, Default)]
pub(crate) struct Consts {
    /// The `arith.constant` lines, in first-use order.
    pub(crate) lines: Vec<Line>,
    /// The SSA name of each `(literal, type)`.
    pub(crate) by_value: HashMap<(String, MTy), String>,
}

/// Where a function's instructions go.
#[derive(Debug)]
pub(crate) struct Code {
    /// The view prologue.
    pub(crate) prologue: Vec<Line>,
    /// The body.
    pub(crate) body: Vec<Line>,
    /// The enclosing sections' lines while a nested region is collected.
    pub(crate) regions: Vec<Vec<Line>>,
    /// Whether instructions go to the prologue.
    pub(crate) in_prologue: bool,
    /// The nesting depth of the next instruction.
    pub(crate) indent: usize,
}

impl Default for Code {
    fn default() -> Self {
        Code { prologue: Vec::new(), body: Vec::new(), regions: Vec::new(), in_prologue: true, indent: 1 }
    }
}

impl Code {
    /// The lines instructions are appended to.
    fn section(&mut self) -> &mut Vec<Line> {
        if self.in_prologue {
            &mut self.prologue
        } else {
            &mut self.body
        }
    }

    /// Appends `inst`, produced by the statement at `span`, at the current depth.
    pub(crate) fn push(&mut self, inst: Inst, span: Span) {
        let line = Line { indent: self.indent, inst, span };
        self.section().push(line);
    }

    /// Starts collecting the lines of a nested region.
    pub(crate) fn open_region(&mut self) {
        let outer = std::mem::take(self.section());
        self.regions.push(outer);
    }

    /// Ends the innermost region: returns its lines and appends to the enclosing one again.
    pub(crate) fn close_region(&mut self) -> Vec<Line> {
        let outer = self.regions.pop().unwrap_or_default();
        std::mem::replace(self.section(), outer)
    }
}
