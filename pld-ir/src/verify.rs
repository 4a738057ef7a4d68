//! The structural verifier.
//!
//! Checks, collecting every violation instead of stopping at the first:
//! - function names are unique and every called function exists with a matching arity;
//! - every value id is in range, defined exactly once, and used only where its definition
//!   is visible (earlier in the same block or an enclosing one; loop and if results after
//!   their statement);
//! - a loop with iter-args and an `if` with results end each body in a yield of matching
//!   arity, and yields appear nowhere else;
//! - every op call re-deduces to the type it carries (so passes cannot leave an ill-typed
//!   call behind).

use crate::diag::{Diagnostic, Diagnostics};
use crate::expr::{Callee, Expr, ExprKind};
use crate::func::{Function, Program};
use crate::registry::{self, DeduceEnv, Target};
use crate::stmt::{Block, StmtKind};
use crate::types::Type;
use crate::value::ValueId;
use std::collections::{HashMap, HashSet};

/// Verifies a whole program for the default target.
pub fn verify_program(p: &Program) -> Result<(), Diagnostics> {
    verify_program_for(p, Target::default())
}

/// Verifies a whole program for `target`.
pub fn verify_program_for(p: &Program, target: Target) -> Result<(), Diagnostics> {
    let mut diags = Diagnostics::new();
    let mut seen: HashMap<&str, &Function> = HashMap::new();
    for f in &p.functions {
        if let Some(prev) = seen.insert(f.name.as_str(), f) {
            diags.push(
                Diagnostic::error(f.span, format!("function `{}` is defined twice", f.name))
                    .with_label(prev.span, "first defined here"),
            );
        }
    }
    for f in &p.functions {
        verify_function_in(f, Some(p), target, &mut diags);
    }
    diags.into_result(())
}

/// Verifies one function on its own (calls to other functions are not resolved).
pub fn verify_function(f: &Function) -> Result<(), Diagnostics> {
    let mut diags = Diagnostics::new();
    verify_function_in(f, None, Target::default(), &mut diags);
    diags.into_result(())
}

struct Verifier<'a> {
    f: &'a Function,
    program: Option<&'a Program>,
    target: Target,
    defined: HashSet<ValueId>,
    scopes: Vec<HashSet<ValueId>>,
    diags: &'a mut Diagnostics,
}

fn verify_function_in(f: &Function, program: Option<&Program>, target: Target, diags: &mut Diagnostics) {
    let mut v = Verifier { f, program, target, defined: HashSet::new(), scopes: vec![HashSet::new()], diags };
    for p in &f.params {
        v.define(p.value, f.span);
    }
    v.block(&f.body, None);
}

#[derive(Clone, Copy)]
enum YieldRule {
    /// The block must end in a yield of this arity (and have no other yield).
    Exactly(usize),
}

impl Verifier<'_> {
    fn name(&self, v: ValueId) -> String {
        match self.f.values.get(v) {
            Some(d) => format!("`{}` ({v})", d.name),
            None => format!("{v}"),
        }
    }

    fn define(&mut self, v: ValueId, span: crate::Span) {
        if self.f.values.get(v).is_none() {
            self.diags
                .push(Diagnostic::error(span, format!("value {v} is out of range in `{}`", self.f.name)));
            return;
        }
        if !self.defined.insert(v) {
            let def_span = self.f.values.get(v).map_or(span, |d| d.span);
            self.diags.push(Diagnostic::error(
                span.or(def_span),
                format!("value {} is defined twice in `{}`", self.name(v), self.f.name),
            ));
        }
        if let Some(s) = self.scopes.last_mut() {
            s.insert(v);
        }
    }

    fn visible(&self, v: ValueId) -> bool {
        self.scopes.iter().any(|s| s.contains(&v))
    }

    fn expr(&mut self, e: &Expr) {
        let mut uses = Vec::new();
        let mut calls = Vec::new();
        e.walk(&mut |x| match &x.kind {
            ExprKind::Var(v) => uses.push((*v, x.span)),
            ExprKind::Call(_) => calls.push(x.clone()),
            _ => {}
        });
        for (v, span) in uses {
            if self.f.values.get(v).is_none() {
                self.diags
                    .push(Diagnostic::error(span, format!("value {v} is out of range in `{}`", self.f.name)));
            } else if !self.visible(v) {
                let msg = if self.defined.contains(&v) {
                    format!("value {} is used outside the scope that defines it (yield it out)", self.name(v))
                } else {
                    format!("value {} is used before its definition", self.name(v))
                };
                self.diags.push(Diagnostic::error(span.or(self.f.span), msg));
            }
        }
        for c in calls {
            self.call(&c);
        }
    }

    fn call(&mut self, e: &Expr) {
        let Some(call) = e.as_call() else { return };
        match &call.callee {
            Callee::Op(def) => {
                let env =
                    DeduceEnv { values: &self.f.values, target: self.target, func_kind: Some(self.f.kind) };
                match registry::deduce(def, &call.args, &call.attrs, e.span, &env) {
                    Ok(ty) if ty != call.ty => self.diags.push(Diagnostic::error(
                        e.span,
                        format!("call of {} carries type {} but deduces to {}", def.name, call.ty, ty),
                    )),
                    Ok(_) => {}
                    Err(d) => self.diags.push(d),
                }
            }
            Callee::Func(name) => {
                let Some(p) = self.program else { return };
                match p.function(name) {
                    None => self
                        .diags
                        .push(Diagnostic::error(e.span, format!("call of undefined function `{name}`"))),
                    Some(callee) if callee.params.len() < call.args.len() => {
                        self.diags.push(Diagnostic::error(
                            e.span,
                            format!(
                                "`{name}` takes {} argument(s), but {} were given",
                                callee.params.len(),
                                call.args.len()
                            ),
                        ));
                    }
                    Some(_) => {}
                }
            }
        }
    }

    fn block(&mut self, b: &Block, rule: Option<YieldRule>) {
        let n = b.stmts.len();
        for (i, s) in b.stmts.iter().enumerate() {
            let last = i + 1 == n;
            match &s.kind {
                StmtKind::Assign { targets, value } => {
                    self.expr(value);
                    if targets.len() > 1 {
                        match value.ty(&self.f.values) {
                            Type::Tuple(items) if items.len() == targets.len() => {}
                            Type::Tuple(items) => self.diags.push(Diagnostic::error(
                                s.span,
                                format!(
                                    "cannot unpack {} values into {} targets",
                                    items.len(),
                                    targets.len()
                                ),
                            )),
                            other => self.diags.push(Diagnostic::error(
                                s.span,
                                format!(
                                    "cannot unpack a value of type {} into {} targets",
                                    other,
                                    targets.len()
                                ),
                            )),
                        }
                    }
                    for t in targets {
                        self.define(*t, s.span);
                    }
                }
                StmtKind::Eval(e) => self.expr(e),
                StmtKind::Return(vals) => vals.iter().for_each(|e| self.expr(e)),
                StmtKind::Yield(vals) => {
                    vals.iter().for_each(|e| self.expr(e));
                    match rule {
                        Some(YieldRule::Exactly(k)) if last => {
                            if vals.len() != k {
                                self.diags.push(Diagnostic::error(
                                    s.span,
                                    format!("yield carries {} value(s), but {k} are expected", vals.len()),
                                ));
                            }
                        }
                        Some(_) => self
                            .diags
                            .push(Diagnostic::error(s.span, "yield must be the last statement of its block")),
                        None => self
                            .diags
                            .push(Diagnostic::error(s.span, "yield outside a loop or if with results")),
                    }
                }
                StmtKind::For { var, start, stop, step, iter_args, body, results, .. } => {
                    for e in [start, stop, step] {
                        self.expr(e);
                    }
                    iter_args.iter().for_each(|a| self.expr(&a.init));
                    if results.len() != iter_args.len() {
                        self.diags.push(Diagnostic::error(
                            s.span,
                            format!(
                                "loop has {} iter-arg(s) but {} result(s)",
                                iter_args.len(),
                                results.len()
                            ),
                        ));
                    }
                    self.scopes.push(HashSet::new());
                    self.define(*var, s.span);
                    for a in iter_args {
                        self.define(a.value, s.span);
                    }
                    self.loop_body(body, iter_args.len(), s.span);
                    self.scopes.pop();
                    for r in results {
                        self.define(*r, s.span);
                    }
                }
                StmtKind::While { iter_args, cond, body, results } => {
                    iter_args.iter().for_each(|a| self.expr(&a.init));
                    self.scopes.push(HashSet::new());
                    for a in iter_args {
                        self.define(a.value, s.span);
                    }
                    self.expr(cond);
                    self.loop_body(body, iter_args.len(), s.span);
                    self.scopes.pop();
                    if results.len() != iter_args.len() {
                        self.diags.push(Diagnostic::error(
                            s.span,
                            format!(
                                "loop has {} iter-arg(s) but {} result(s)",
                                iter_args.len(),
                                results.len()
                            ),
                        ));
                    }
                    for r in results {
                        self.define(*r, s.span);
                    }
                }
                StmtKind::If { cond, then_body, else_body, results } => {
                    self.expr(cond);
                    for body in [then_body, else_body] {
                        if !results.is_empty() && !ends_in_yield(body) {
                            self.diags.push(Diagnostic::error(
                                s.span,
                                format!(
                                    "if with {} result(s) needs a yield at the end of both branches",
                                    results.len()
                                ),
                            ));
                        }
                        self.scopes.push(HashSet::new());
                        let rule = (!results.is_empty()).then_some(YieldRule::Exactly(results.len()));
                        self.block(body, rule);
                        self.scopes.pop();
                    }
                    for r in results {
                        self.define(*r, s.span);
                    }
                }
                StmtKind::Scope { args, body, .. } => {
                    args.iter().for_each(|e| self.expr(e));
                    for d in s.defs() {
                        self.define(d, s.span);
                    }
                    // Scopes are transparent: definitions inside stay visible after them.
                    self.block(body, rule.filter(|_| false));
                }
            }
        }
    }

    fn loop_body(&mut self, body: &Block, carried: usize, span: crate::Span) {
        if carried > 0 && !ends_in_yield(body) {
            self.diags.push(Diagnostic::error(
                span,
                format!("loop with {carried} iter-arg(s) must end its body with a yield"),
            ));
        }
        let rule = (carried > 0 || ends_in_yield(body)).then_some(YieldRule::Exactly(carried));
        self.block(body, rule);
    }
}

fn ends_in_yield(b: &Block) -> bool {
    matches!(b.stmts.last().map(|s| &s.kind), Some(StmtKind::Yield(_)))
}
