//! What a call's result *is*: the one rule the simulator and every emitter read.
//!
//! A call returns no fresh memory: its result is the tensor the callee returns, and a callee
//! returns what it was given — an op returns the operand it wrote (`pl.store(t, offs, out)`,
//! [`crate::Call::written_result_operand`]), a program function returns the parameter its
//! `return` resolves to (through copies, writing ops, loop carries, and calls of further
//! functions: `return self.kernel(a, b, out)` is `out`), and a host callback (whose body is
//! Python) returns its `Out`/`InOut` parameters in order.
//!
//! Guarantees: [`Program::call_result_arg`] names the argument of a call its `k`-th result
//! aliases, or `None` when the result is not one of the arguments (a fresh value, a scalar,
//! a callee that returns different parameters on different paths); the resolution is finite
//! (calls nest at most [`MAX_DEPTH`] deep, so a recursive program ends in `None`).

use crate::expr::{Call, Callee, Expr, ExprKind};
use crate::func::{Direction, Function, FunctionKind, Program};
use crate::stmt::StmtKind;
use crate::value::{ValueId, Values};
use std::collections::HashMap;

/// How deep calls are followed before the resolution gives up.
pub const MAX_DEPTH: usize = 32;

/// Whether `f` is a host callback (`level=HOST, role=SubWorker`), whose body is Python.
pub fn is_host_callback(f: &Function) -> bool {
    f.kind == FunctionKind::Opaque && f.attr("role").and_then(|a| a.as_str()) == Some("SubWorker")
}

impl Program {
    /// The argument (index into `call.args`) that the `k`-th result of `call` is; `values`
    /// is the arena of the function making the call.
    pub fn call_result_arg(&self, call: &Call, values: &Values, k: usize) -> Option<usize> {
        self.result_arg(call, values, k, 0)
    }

    /// How many values a call of `f` yields: its declared results, else (no annotation) the
    /// values of its last `return`.
    pub fn result_count(f: &Function) -> usize {
        match f.body.stmts.last().map(|s| &s.kind) {
            _ if !f.ret.is_empty() => f.ret.len(),
            Some(StmtKind::Return(vals)) => vals.len(),
            _ => 0,
        }
    }

    /// The parameter (index) that the `k`-th value `f` returns is.
    pub fn returned_param(&self, f: &Function, k: usize) -> Option<usize> {
        self.returned(f, k, 0)
    }

    /// The parameter (index) of `f` that value `v` of `f`'s body is: the parameter itself, or
    /// a value bound to it through copies, call results (per [`Program::call_result_arg`])
    /// and loop carries initialised from it.
    pub fn param_alias(&self, f: &Function, v: ValueId) -> Option<usize> {
        self.alias(f, v, 0)
    }

    /// The parameter (index) of `f` that expression `e` of `f`'s body is (a value, or a call
    /// whose result is one of its arguments: `return self.kernel(a, out)` is `out`).
    pub fn expr_param(&self, f: &Function, e: &Expr) -> Option<usize> {
        self.expr_alias(f, e, 0)
    }

    fn result_arg(&self, call: &Call, values: &Values, k: usize, depth: usize) -> Option<usize> {
        match &call.callee {
            Callee::Op(_) => (k == 0).then(|| call.written_result_operand(values)).flatten(),
            Callee::Func(name) => {
                let callee = self.function(name)?;
                self.returned(callee, k, depth + 1)
            }
        }
    }

    fn returned(&self, f: &Function, k: usize, depth: usize) -> Option<usize> {
        if depth > MAX_DEPTH || k >= Program::result_count(f) {
            return None;
        }
        if is_host_callback(f) {
            return f
                .params
                .iter()
                .enumerate()
                .filter(|(_, p)| p.dir != Direction::In)
                .nth(k)
                .map(|(i, _)| i);
        }
        let mut found: Option<Option<usize>> = None;
        f.body.walk(&mut |s| {
            let StmtKind::Return(vals) = &s.kind else { return };
            let this = match vals.as_slice() {
                // `return self.kernel(...)` of a multi-result callee: its k-th result.
                [e] if f.ret.len() > 1 => e.as_call().and_then(|c| {
                    let i = self.result_arg(c, &f.values, k, depth)?;
                    self.expr_alias(f, c.args.get(i)?, depth)
                }),
                _ => vals.get(k).and_then(|e| self.expr_alias(f, e, depth)),
            };
            found = match found {
                None => Some(this),
                Some(prev) if prev == this => Some(prev),
                Some(_) => Some(None),
            };
        });
        found.flatten()
    }

    fn expr_alias(&self, f: &Function, e: &Expr, depth: usize) -> Option<usize> {
        match &e.kind {
            ExprKind::Var(v) => self.alias(f, *v, depth),
            ExprKind::Call(c) => {
                let i = self.result_arg(c, &f.values, 0, depth)?;
                self.expr_alias(f, c.args.get(i)?, depth + 1)
            }
            _ => None,
        }
    }

    fn alias(&self, f: &Function, v: ValueId, depth: usize) -> Option<usize> {
        let mut origin: HashMap<ValueId, usize> =
            f.params.iter().enumerate().map(|(i, p)| (p.value, i)).collect();
        if let Some(&i) = origin.get(&v) {
            return Some(i);
        }
        let of =
            |e: &Expr, origin: &HashMap<ValueId, usize>| e.as_var().and_then(|x| origin.get(&x).copied());
        f.body.walk(&mut |s| match &s.kind {
            StmtKind::Assign { targets, value } => {
                for (k, t) in targets.iter().enumerate() {
                    let src = match value.as_call() {
                        Some(c) => self.result_arg(c, &f.values, k, depth).and_then(|i| c.args.get(i)),
                        None if targets.len() == 1 => Some(value),
                        None => None,
                    };
                    if let Some(i) = src.and_then(|e| of(e, &origin)) {
                        origin.insert(*t, i);
                    }
                }
            }
            StmtKind::For { iter_args, .. } | StmtKind::While { iter_args, .. } => {
                for a in iter_args {
                    if let Some(i) = of(&a.init, &origin) {
                        origin.insert(a.value, i);
                    }
                }
            }
            _ => {}
        });
        origin.get(&v).copied()
    }
}
