//! The structural verifier.
//!
//! Checks, collecting every violation instead of stopping at the first:
//! - function names are unique and every called function exists with a matching arity;
//! - every value id is in range, defined exactly once, and used only where its definition
//!   is visible (earlier in the same block or an enclosing one; loop and if results after
//!   their statement);
//! - a loop with iter-args and an `if` with results end each body in a yield of matching
//!   arity, and yields appear nowhere else;
//! - no parameter or return type is (or contains) an on-core `pl.Array` (ArrayNotEscaped);
//! - every op call re-deduces to the type it carries (so passes cannot leave an ill-typed
//!   call behind).

use crate::diag::{Diagnostic, Diagnostics};
use crate::dtype::DataType;
use crate::expr::{Call, Callee, Expr, ExprKind};
use crate::func::{Function, Program};
use crate::registry::{self, DeduceEnv, Target};
use crate::stmt::{Block, StmtKind};
use crate::types::Type;
use crate::value::ValueId;
use rayon::prelude::*;
use std::collections::HashMap;

/// Verifies a whole program for the default target.
pub fn verify_program(p: &Program) -> Result<(), Diagnostics> {
    verify_program_for(p, Target::default())
}

/// Verifies a whole program for `target`.
pub fn verify_program_for(p: &Program, target: Target) -> Result<(), Diagnostics> {
    verify_functions_for(p, target, &|_| true)
}

/// Verifies, for `target`, the program-level rules (unique function names) and the functions
/// for which `select` holds, resolving their calls against every function of `p`.
///
/// A function's verdict depends only on itself and on the names and parameter counts of
/// the functions it calls, so after a change that kept every function's name and did not
/// lower any parameter count, verifying the changed and added functions is as strong as
/// verifying the whole program (what the pass manager relies on).
pub fn verify_functions_for(
    p: &Program,
    target: Target,
    select: &dyn Fn(&Function) -> bool,
) -> Result<(), Diagnostics> {
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
    // Functions by name, first definition first (as `Program::function` finds them), built
    // once so resolving a call does not scan the function list.
    let mut by_name: HashMap<&str, &Function> = HashMap::with_capacity(p.functions.len());
    for f in &p.functions {
        by_name.entry(f.name.as_str()).or_insert(f);
    }
    // Functions are verified independently (on rayon's pool: a large program has thousands),
    // and their diagnostics kept in program order.
    let selected: Vec<&Function> = p.functions.iter().filter(|f| select(f)).collect();
    let each: Vec<Diagnostics> = selected
        .par_iter()
        .map(|f| {
            let mut d = Diagnostics::new();
            verify_function_in(f, Some(&by_name), target, &mut d);
            d
        })
        .collect();
    for d in each {
        diags.extend(d);
    }
    diags.into_result(())
}

/// Verifies one function on its own (calls to other functions are not resolved).
pub fn verify_function(f: &Function) -> Result<(), Diagnostics> {
    let mut diags = Diagnostics::new();
    verify_function_in(f, None, Target::default(), &mut diags);
    diags.into_result(())
}

/// Functions of the program by name (first definition wins).
type FunctionsByName<'a> = HashMap<&'a str, &'a Function>;

struct Verifier<'a> {
    f: &'a Function,
    functions: Option<&'a FunctionsByName<'a>>,
    target: Target,
    /// Per value id: defined somewhere already (values are dense indices into `f.values`).
    defined: Vec<bool>,
    /// Per value id: defined in a scope that is still open (so visible here).
    visible: Vec<bool>,
    /// Per open scope, the values it made visible (hidden again when it closes).
    scopes: Vec<Vec<ValueId>>,
    /// Scratch buffers of [`Verifier::expr`], reused across expressions.
    uses: Vec<(ValueId, crate::Span)>,
    calls: Vec<&'a Expr>,
    diags: &'a mut Diagnostics,
}

fn verify_function_in<'a>(
    f: &'a Function,
    functions: Option<&'a FunctionsByName<'a>>,
    target: Target,
    diags: &'a mut Diagnostics,
) {
    let n = f.values.len();
    let mut v = Verifier {
        f,
        functions,
        target,
        defined: vec![false; n],
        visible: vec![false; n],
        scopes: vec![Vec::new()],
        uses: Vec::new(),
        calls: Vec::new(),
        diags,
    };
    for p in &f.params {
        v.define(p.value, f.span);
    }
    array_not_escaped(f, v.diags);
    v.block(&f.body, None);
}

/// ArrayNotEscaped: an on-core array lives on one function's scalar stack, so no parameter
/// or result of a function may be (or contain) one.
fn array_not_escaped(f: &Function, diags: &mut Diagnostics) {
    const NOTE: &str = "a pl.Array lives on the on-core scalar stack of the function that creates it; \
                        create it inside the function and copy its contents into a tensor to pass them on";
    for (i, p) in f.params.iter().enumerate() {
        let Some(d) = f.values.get(p.value) else { continue };
        if d.ty.contains_array() {
            diags.push(
                Diagnostic::error(
                    d.span.or(f.span),
                    format!(
                        "function `{}` parameter #{i} (`{}`) has type {}: an array cannot cross a function boundary",
                        f.name, d.name, d.ty
                    ),
                )
                .with_note(NOTE),
            );
        }
    }
    for (i, t) in f.ret.iter().enumerate() {
        if t.contains_array() {
            diags.push(
                Diagnostic::error(
                    f.span,
                    format!(
                        "function `{}` return type #{i} is {t}: an array cannot cross a function boundary",
                        f.name
                    ),
                )
                .with_note(NOTE),
            );
        }
    }
}

/// Collects, in pre-order (as [`Expr::walk`] visits them), the variable uses and the call
/// expressions of `e`, by reference.
fn collect<'e>(e: &'e Expr, uses: &mut Vec<(ValueId, crate::Span)>, calls: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Var(v) => uses.push((*v, e.span)),
        ExprKind::Binary(_, a, b) => {
            collect(a, uses, calls);
            collect(b, uses, calls);
        }
        ExprKind::Unary(_, a) => collect(a, uses, calls),
        ExprKind::Tuple(items) => items.iter().for_each(|x| collect(x, uses, calls)),
        ExprKind::Call(c) => {
            calls.push(e);
            c.args.iter().for_each(|x| collect(x, uses, calls));
            if let Some(d) = &c.device {
                collect(d, uses, calls);
            }
            c.deps.iter().flatten().for_each(|x| collect(x, uses, calls));
        }
        _ => {}
    }
}

#[derive(Clone, Copy)]
enum YieldRule {
    /// The block must end in a yield of this arity (and have no other yield).
    Exactly(usize),
}

impl<'a> Verifier<'a> {
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
        let i = v.index();
        if std::mem::replace(&mut self.defined[i], true) {
            let def_span = self.f.values.get(v).map_or(span, |d| d.span);
            self.diags.push(Diagnostic::error(
                span.or(def_span),
                format!("value {} is defined twice in `{}`", self.name(v), self.f.name),
            ));
        }
        if !self.visible[i] {
            if let Some(s) = self.scopes.last_mut() {
                self.visible[i] = true;
                s.push(v);
            }
        }
    }

    fn visible(&self, v: ValueId) -> bool {
        self.visible.get(v.index()).copied().unwrap_or(false)
    }

    fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    fn pop_scope(&mut self) {
        for v in self.scopes.pop().unwrap_or_default() {
            self.visible[v.index()] = false;
        }
    }

    fn expr(&mut self, e: &'a Expr) {
        let mut uses = std::mem::take(&mut self.uses);
        let mut calls = std::mem::take(&mut self.calls);
        collect(e, &mut uses, &mut calls);
        for &(v, span) in &uses {
            if self.f.values.get(v).is_none() {
                self.diags
                    .push(Diagnostic::error(span, format!("value {v} is out of range in `{}`", self.f.name)));
            } else if !self.visible(v) {
                let msg = if self.defined[v.index()] {
                    format!("value {} is used outside the scope that defines it (yield it out)", self.name(v))
                } else {
                    format!("value {} is used before its definition", self.name(v))
                };
                self.diags.push(Diagnostic::error(span.or(self.f.span), msg));
            }
        }
        for &c in &calls {
            self.call(c);
        }
        uses.clear();
        calls.clear();
        self.uses = uses;
        self.calls = calls;
    }

    fn call(&mut self, e: &Expr) {
        let Some(call) = e.as_call() else { return };
        if let Some(deps) = &call.deps {
            self.submit(call, deps, e.span);
        }
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
                let Some(functions) = self.functions else { return };
                match functions.get(name.as_str()).copied() {
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

    /// A task submit: a function call whose dependencies are task ids and whose last result
    /// is the new task's id.
    fn submit(&mut self, call: &Call, deps: &[Expr], span: crate::Span) {
        if matches!(call.callee, Callee::Op(_)) {
            self.diags.push(Diagnostic::error(span, "deps=[...] applies to task launches, not to op calls"));
            return;
        }
        for d in deps {
            let ty = d.ty(&self.f.values);
            if ty != Type::Scalar(DataType::TASK_ID) {
                self.diags.push(Diagnostic::error(
                    d.span,
                    format!("a task dependency must be a task id (pl.Scalar[pl.TASK_ID]), got {ty}"),
                ));
            }
        }
        let last = match &call.ty {
            Type::Tuple(items) => items.last(),
            other => Some(other),
        };
        if last != Some(&Type::Scalar(DataType::TASK_ID)) {
            self.diags.push(Diagnostic::error(
                span,
                format!("a task submit must yield its task id last, but its type is {}", call.ty),
            ));
        }
    }

    fn block(&mut self, b: &'a Block, rule: Option<YieldRule>) {
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
                    self.loop_results(iter_args.len(), results.len(), s.span);
                    self.push_scope();
                    self.define(*var, s.span);
                    for a in iter_args {
                        self.define(a.value, s.span);
                    }
                    self.loop_body(body, iter_args.len(), s.span);
                    self.pop_scope();
                    for r in results {
                        self.define(*r, s.span);
                    }
                }
                StmtKind::While { iter_args, cond, body, results } => {
                    iter_args.iter().for_each(|a| self.expr(&a.init));
                    self.push_scope();
                    for a in iter_args {
                        self.define(a.value, s.span);
                    }
                    self.expr(cond);
                    self.loop_body(body, iter_args.len(), s.span);
                    self.pop_scope();
                    self.loop_results(iter_args.len(), results.len(), s.span);
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
                        self.push_scope();
                        let rule = (!results.is_empty()).then_some(YieldRule::Exactly(results.len()));
                        self.block(body, rule);
                        self.pop_scope();
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

    /// A loop defines one result per iter-arg.
    fn loop_results(&mut self, iter_args: usize, results: usize, span: crate::Span) {
        if results != iter_args {
            self.diags.push(Diagnostic::error(
                span,
                format!("loop has {iter_args} iter-arg(s) but {results} result(s)"),
            ));
        }
    }

    fn loop_body(&mut self, body: &'a Block, carried: usize, span: crate::Span) {
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
