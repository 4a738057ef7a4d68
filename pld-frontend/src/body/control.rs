//! Control flow and scopes: `for` / `while` loops (explicit `init_values` + `pl.yield_`,
//! or plain syntax carried implicitly), `if` with results, `pl.while_`, `pl.split_aiv`,
//! `with pl.at / pl.spmd / pld.comm_domain`.
//!
//! Guarantees: loop and if bodies are scopes (a child of `body`, so they share its frame
//! bookkeeping); results are defined only from yields the statement really has, or from the
//! implicitly carried names; every malformed form is a diagnostic at its node.

use super::{as_call_to, call_path, FnCx, Frame, FrameKind};
use crate::util::{dotted, span_of};
use pld_ir::{
    Attr, Block, DataType, Diagnostic, Expr, ExprKind, ForKind, IterArg, ScopeKind, Span, Stmt, StmtKind,
    Type, ValueId,
};
use rustpython_parser::ast;

/// A name the source spells, with its span.
type Named = (String, Span);

impl FnCx<'_, '_> {
    pub(super) fn for_stmt(&mut self, f: &ast::StmtFor, span: Span, out: &mut Vec<Stmt>) {
        if !f.orelse.is_empty() {
            self.error(Diagnostic::error(span, "`for ... else` is not supported"));
        }
        let iter_span = span_of(self.file(), f.iter.as_ref());
        let Some((path, call)) = call_path(&f.iter) else {
            self.error(
                Diagnostic::error(iter_span, "unsupported loop iterator")
                    .with_note("iterate over pl.range(...), pl.parallel(...), pl.unroll(...), pl.while_(...) or pl.split_aiv(...)"),
            );
            return;
        };
        let kind = match path.as_str() {
            "pl.range" | "range" => ForKind::Sequential,
            "pl.parallel" => ForKind::Parallel,
            "pl.unroll" => ForKind::Unroll,
            "pl.while_" => return self.while_for(f, call, span, out),
            "pl.split_aiv" => return self.split_aiv(f, call, span, out),
            _ => {
                self.error(
                    Diagnostic::error(iter_span, format!("unsupported loop iterator `{path}`"))
                        .with_note("iterate over pl.range(...), pl.parallel(...), pl.unroll(...), pl.while_(...) or pl.split_aiv(...)"),
                );
                return;
            }
        };
        // Bounds and init values are evaluated outside the loop.
        let (bounds, mut ok) = self.exprs_all(&call.args);
        let mut inits: Vec<Expr> = Vec::new();
        let mut has_inits = false;
        for kw in &call.keywords {
            match kw.arg.as_deref() {
                Some("init_values") => {
                    has_inits = true;
                    ok &= self.init_values(&kw.value, &mut inits);
                }
                other => {
                    self.error(
                        Diagnostic::error(
                            span_of(self.file(), kw),
                            format!("unknown keyword argument `{}` for {path}", other.unwrap_or("**")),
                        )
                        .with_code(pld_ir::codes::UNKNOWN_KWARG)
                        .with_help("the only keyword argument is `init_values`"),
                    );
                    ok = false;
                }
            }
        }
        if call.args.is_empty() || call.args.len() > 3 {
            self.error(Diagnostic::error(
                iter_span,
                format!(
                    "{path} takes 1 to 3 positional arguments (stop | start, stop[, step]), but got {}",
                    call.args.len()
                ),
            ));
            ok = false;
        }
        // Target: `i` or `i, (a, b)`.
        let file = self.file();
        let Some((var_name, var_span, carried)) = self.loop_target(f) else { return };
        if carried.is_empty() && has_inits {
            self.error(
                Diagnostic::error(
                    span_of(file, f.target.as_ref()),
                    "loop target must be a tuple when init_values is given",
                )
                .with_note("write `for i, (acc,) in pl.range(n, init_values=(x,)):`"),
            );
            ok = false;
        } else if !carried.is_empty() && carried.len() != inits.len() && ok {
            self.error(Diagnostic::error(
                span_of(file, f.target.as_ref()),
                format!(
                    "init_values has {} value(s) but the loop target names {}",
                    inits.len(),
                    carried.len()
                ),
            ));
            ok = false;
        }
        if !ok {
            return;
        }
        let (start, stop, step) = match bounds.len() {
            1 => (Expr::int(0).at(bounds[0].span), bounds[0].clone(), Expr::int(1).at(bounds[0].span)),
            2 => (bounds[0].clone(), bounds[1].clone(), Expr::int(1).at(bounds[1].span)),
            _ => (bounds[0].clone(), bounds[1].clone(), bounds[2].clone()),
        };
        // Plain syntax: outer values reassigned in the body become loop-carried.
        let implicit =
            if has_inits { Vec::new() } else { self.implicit_carry(&f.body, &[var_name.as_str()]) };
        self.push_frame(FrameKind::For, span);
        let var = self.define(&var_name, Type::Scalar(DataType::INDEX), var_span);
        let mut iter_args = Vec::new();
        for ((n, s), init) in carried.iter().zip(inits) {
            let ty = init.ty(&self.values);
            let v = self.define(n, ty, *s);
            iter_args.push(IterArg { value: v, init });
        }
        iter_args.extend(self.implicit_iter_args(&implicit));
        let mut body = self.block(&f.body);
        let results = if implicit.is_empty() {
            let frame = self.pop_frame();
            self.loop_results(&frame, &iter_args, span)
        } else {
            self.finish_implicit(&implicit, &iter_args, &mut body, span)
        };
        out.push(Stmt::new(StmtKind::For { var, start, stop, step, iter_args, body, results, kind }, span));
    }

    /// The loop target: `i`, or `i, (a, b, ...)` with the carried names; a diagnostic otherwise.
    fn loop_target(&mut self, f: &ast::StmtFor) -> Option<(String, Span, Vec<Named>)> {
        let file = self.file();
        match f.target.as_ref() {
            ast::Expr::Name(n) => Some((n.id.to_string(), span_of(file, f.target.as_ref()), Vec::new())),
            ast::Expr::Tuple(t) if t.elts.len() == 2 => {
                let (ast::Expr::Name(n), ast::Expr::Tuple(inner)) = (&t.elts[0], &t.elts[1]) else {
                    self.error(Diagnostic::error(
                        span_of(file, f.target.as_ref()),
                        "loop target must be `i` or `i, (a, b, ...)`",
                    ));
                    return None;
                };
                let mut names = Vec::new();
                for el in &inner.elts {
                    match el {
                        ast::Expr::Name(x) => names.push((x.id.to_string(), span_of(file, el))),
                        _ => {
                            self.error(Diagnostic::error(
                                span_of(file, el),
                                "loop-carried names must be plain names",
                            ));
                            return None;
                        }
                    }
                }
                Some((n.id.to_string(), span_of(file, &t.elts[0]), names))
            }
            other => {
                self.error(Diagnostic::error(
                    span_of(file, other),
                    "loop target must be `i` or `i, (a, b, ...)`",
                ));
                None
            }
        }
    }

    /// Outer non-tensor values that `body` reassigns (candidates for implicit carrying).
    pub(super) fn implicit_carry(&self, body: &[ast::Stmt], exclude: &[&str]) -> Vec<(String, ValueId)> {
        if has_explicit_yield(body) {
            return Vec::new();
        }
        let mut names = Vec::new();
        assigned_names(body, &mut names);
        names
            .into_iter()
            .filter(|n| !exclude.contains(&n.as_str()))
            .filter_map(|n| {
                let v = self.peek(&n)?;
                let tensor = matches!(self.values.ty(v), Type::Tensor(_) | Type::DistTensor(_));
                (!tensor).then_some((n, v))
            })
            .collect()
    }

    /// Defines one iter-arg per implicitly carried name, initialised from its outer value.
    pub(super) fn implicit_iter_args(&mut self, implicit: &[(String, ValueId)]) -> Vec<IterArg> {
        implicit
            .iter()
            .map(|(n, outer)| {
                let ty = self.values.ty(*outer).clone();
                let span = self.values.get(*outer).map_or(Span::DUMMY, |d| d.span);
                let v = self.define(n, ty, span);
                IterArg { value: v, init: Expr::new(ExprKind::Var(*outer), span) }
            })
            .collect()
    }

    /// Ends an implicitly carried loop body: yields the latest values, pops the frame and
    /// defines the results under the carried names.
    pub(super) fn finish_implicit(
        &mut self,
        implicit: &[(String, ValueId)],
        iter_args: &[IterArg],
        body: &mut Block,
        span: Span,
    ) -> Vec<ValueId> {
        let vals: Vec<Expr> = implicit
            .iter()
            .map(|(n, outer)| Expr::new(ExprKind::Var(self.peek(n).unwrap_or(*outer)), span))
            .collect();
        body.stmts.push(Stmt::new(StmtKind::Yield(vals), span));
        self.pop_frame();
        implicit
            .iter()
            .zip(iter_args.iter().rev().take(implicit.len()).rev())
            .map(|((n, _), a)| {
                let ty = self.values.ty(a.value).clone();
                self.define(n, ty, span)
            })
            .collect()
    }

    /// Defines the results of a loop from its body's `names = pl.yield_(...)`.
    /// Lowers an `init_values=` value (a tuple, a list or one expression) onto `inits`;
    /// `false` when an element did not lower (its error is recorded).
    fn init_values(&mut self, value: &ast::Expr, inits: &mut Vec<Expr>) -> bool {
        let elts: Vec<&ast::Expr> = match value {
            ast::Expr::Tuple(t) => t.elts.iter().collect(),
            ast::Expr::List(l) => l.elts.iter().collect(),
            other => vec![other],
        };
        let (lowered, ok) = self.exprs_all(elts);
        inits.extend(lowered);
        ok
    }

    fn loop_results(&mut self, frame: &Frame, iter_args: &[IterArg], span: Span) -> Vec<ValueId> {
        if iter_args.is_empty() {
            if frame.yielded.is_some() {
                self.error(
                    Diagnostic::error(span, "pl.yield_ in a loop without init_values")
                        .with_note("carry values with `for i, (acc,) in pl.range(n, init_values=(x,)):`"),
                );
            }
            return Vec::new();
        }
        match &frame.yielded {
            Some((names, _)) if names.len() == iter_args.len() => names
                .iter()
                .zip(iter_args)
                .map(|((n, s), a)| {
                    let ty = self.values.ty(a.value).clone();
                    self.define(n, ty, *s)
                })
                .collect(),
            Some((names, _)) if !names.is_empty() => {
                self.error(Diagnostic::error(
                    span,
                    format!(
                        "the loop carries {} value(s) but its pl.yield_ names {}",
                        iter_args.len(),
                        names.len()
                    ),
                ));
                names.iter().for_each(|(n, _)| self.poison(n));
                Vec::new()
            }
            _ => {
                self.error(
                    Diagnostic::error(span, "a loop with init_values must end in `names = pl.yield_(...)`")
                        .with_note("the names on the left of pl.yield_ are the loop's results"),
                );
                Vec::new()
            }
        }
    }

    fn while_for(&mut self, f: &ast::StmtFor, call: &ast::ExprCall, span: Span, out: &mut Vec<Stmt>) {
        let file = self.file();
        let mut inits = Vec::new();
        let mut ok = true;
        for kw in &call.keywords {
            if kw.arg.as_deref() != Some("init_values") {
                self.error(Diagnostic::error(span_of(file, kw), "pl.while_ takes only init_values=(...)"));
                return;
            }
            ok &= self.init_values(&kw.value, &mut inits);
        }
        let names: Vec<(String, Span)> = match f.target.as_ref() {
            ast::Expr::Tuple(t) => t
                .elts
                .iter()
                .filter_map(|e| match e {
                    ast::Expr::Name(n) => Some((n.id.to_string(), span_of(file, e))),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        if names.is_empty() || names.len() != inits.len() {
            self.error(Diagnostic::error(
                span_of(file, f.target.as_ref()),
                "pl.while_ loops are written `for (a, b) in pl.while_(init_values=(x, y)):` with one name per init value",
            ));
            return;
        }
        let Some((first, rest)) = f.body.split_first() else { return };
        let cond_call = match first {
            ast::Stmt::Expr(e) => as_call_to(&e.value, "pl.cond"),
            _ => None,
        };
        let Some(cond_call) = cond_call.filter(|c| c.args.len() == 1) else {
            self.error(Diagnostic::error(
                span_of(file, first),
                "a pl.while_ body must start with `pl.cond(condition)`",
            ));
            return;
        };
        if !ok {
            return;
        }
        self.push_frame(FrameKind::While, span);
        let mut iter_args = Vec::new();
        for ((n, s), init) in names.iter().zip(inits) {
            let ty = init.ty(&self.values);
            let v = self.define(n, ty, *s);
            iter_args.push(IterArg { value: v, init });
        }
        let cond = self.expr(&cond_call.args[0]);
        let body = self.block(rest);
        let frame = self.pop_frame();
        let results = self.loop_results(&frame, &iter_args, span);
        if let Ok(cond) = cond {
            out.push(Stmt::new(StmtKind::While { iter_args, cond, body, results }, span));
        }
    }

    fn split_aiv(&mut self, f: &ast::StmtFor, call: &ast::ExprCall, span: Span, out: &mut Vec<Stmt>) {
        let file = self.file();
        let args: Vec<Expr> = call.args.iter().filter_map(|a| self.expr(a).ok()).collect();
        if args.len() != call.args.len() {
            return;
        }
        let attrs = self.scope_attrs(&call.keywords);
        let lane = match f.target.as_ref() {
            ast::Expr::Name(n) if n.id.as_str() == "_" => None,
            ast::Expr::Name(n) => Some(self.define(
                n.id.as_str(),
                Type::Scalar(DataType::INDEX),
                span_of(file, f.target.as_ref()),
            )),
            other => {
                self.error(Diagnostic::error(
                    span_of(file, other),
                    "pl.split_aiv binds one lane name, e.g. `for lane in pl.split_aiv(2):`",
                ));
                return;
            }
        };
        let body = self.block(&f.body);
        out.push(Stmt::new(StmtKind::Scope { kind: ScopeKind::SplitAiv { lane }, attrs, args, body }, span));
    }

    pub(super) fn with_stmt(&mut self, w: &ast::StmtWith, span: Span, out: &mut Vec<Stmt>) {
        let file = self.file();
        let [item] = w.items.as_slice() else {
            self.error(Diagnostic::error(span, "a DSL `with` statement takes exactly one scope"));
            return;
        };
        let Some((path, call)) = call_path(&item.context_expr) else {
            self.error(Diagnostic::error(span_of(file, &item.context_expr), "unsupported `with` scope"));
            return;
        };
        if path == "pl.at" {
            self.task_scope(w, call, span, out);
            return;
        }
        if let Some(v) = &item.optional_vars {
            self.error(
                Diagnostic::error(
                    span_of(file, v.as_ref()),
                    format!("`with {path}(...) as name` binds nothing: only pl.at(...) binds a task id"),
                )
                .with_note("write `with pl.at(level=pl.Level.CORE_GROUP) as tid:`"),
            );
            return;
        }
        if let Some(kw) = call.keywords.iter().find(|k| k.arg.as_deref() == Some("deps")) {
            self.error(
                Diagnostic::error(
                    span_of(file, kw),
                    format!("deps=[...] orders task launches; `{path}` is not launched as a task here"),
                )
                .with_note("put the dependent work in `with pl.at(level=pl.Level.CORE_GROUP, deps=[...]):`"),
            );
            return;
        }
        let kind = match path.as_str() {
            "pl.manual_scope" => ScopeKind::Manual,
            "pl.spmd" => ScopeKind::Spmd,
            "pld.comm_domain" => match self.comm_domain(call) {
                Some(k) => k,
                None => return,
            },
            _ => {
                self.error(
                    Diagnostic::error(
                        span_of(file, &item.context_expr),
                        format!("unsupported `with` scope `{path}`"),
                    )
                    .with_note(
                        "supported scopes: pl.at(...), pl.manual_scope(), pl.spmd(n), pld.comm_domain(...)",
                    ),
                );
                return;
            }
        };
        let (args, attrs) = if matches!(kind, ScopeKind::CommDomain { .. }) {
            (Vec::new(), Vec::new())
        } else {
            let args: Vec<Expr> = call.args.iter().filter_map(|a| self.expr(a).ok()).collect();
            if args.len() != call.args.len() {
                return;
            }
            (args, self.scope_attrs(&call.keywords))
        };
        let body = self.block(&w.body);
        out.push(Stmt::new(StmtKind::Scope { kind, attrs, args, body }, span));
    }

    /// `with pl.at(level=..., deps=[t0, ...]) as tid:` — one task; `deps` are task ids bound by
    /// earlier scopes, `tid` names this task's id for later ones.
    fn task_scope(&mut self, w: &ast::StmtWith, call: &ast::ExprCall, span: Span, out: &mut Vec<Stmt>) {
        let file = self.file();
        if let Some(a) = call.args.first() {
            self.error(
                Diagnostic::error(span_of(file, a), "pl.at takes keyword arguments only")
                    .with_note("e.g. `pl.at(level=pl.Level.CORE_GROUP, deps=[tid])`"),
            );
            return;
        }
        let (deps_kw, kws): (Vec<&ast::Keyword>, Vec<&ast::Keyword>) =
            call.keywords.iter().partition(|k| k.arg.as_deref() == Some("deps"));
        let mut deps = Vec::new();
        for kw in deps_kw {
            match self.task_deps(&kw.value) {
                Ok(d) => deps.extend(d),
                Err(()) => return,
            }
        }
        let kws: Vec<ast::Keyword> = kws.into_iter().cloned().collect();
        let attrs = self.scope_attrs(&kws);
        let body = self.block(&w.body);
        let task = match w.items[0].optional_vars.as_deref() {
            None => None,
            Some(ast::Expr::Name(n)) => {
                Some(self.define(n.id.as_str(), Type::Scalar(DataType::TASK_ID), span_of(file, n)))
            }
            Some(other) => {
                self.error(Diagnostic::error(
                    span_of(file, other),
                    "`with pl.at(...) as name` binds one task id name",
                ));
                return;
            }
        };
        out.push(Stmt::new(StmtKind::Scope { kind: ScopeKind::At { task }, attrs, args: deps, body }, span));
    }

    fn comm_domain(&mut self, call: &ast::ExprCall) -> Option<ScopeKind> {
        let file = self.file();
        let mut name = None;
        let mut devices = Vec::new();
        let mut windows = Vec::new();
        for kw in &call.keywords {
            let v = self.expr(&kw.value).ok()?;
            match (kw.arg.as_deref(), &v.kind) {
                (Some("name"), ExprKind::Str(s)) => name = Some(s.clone()),
                (Some("devices"), ExprKind::Tuple(items)) => {
                    devices = items.iter().filter_map(Expr::as_int).collect()
                }
                (Some("windows"), ExprKind::Tuple(items)) => {
                    windows = items
                        .iter()
                        .filter_map(|i| match &i.kind {
                            ExprKind::Str(s) => Some(s.clone()),
                            _ => None,
                        })
                        .collect()
                }
                _ => {
                    self.error(Diagnostic::error(
                        span_of(file, kw),
                        "pld.comm_domain takes name=\"..\", devices=[ints], windows=[names]",
                    ));
                    return None;
                }
            }
        }
        let Some(name) = name else {
            self.error(Diagnostic::error(span_of(file, call), "pld.comm_domain needs name=\"...\""));
            return None;
        };
        Some(ScopeKind::CommDomain { name, devices, windows })
    }

    /// Constant keyword arguments of a scope (`level=pl.Level.CORE_GROUP`, `core_num=4`).
    fn scope_attrs(&mut self, kws: &[ast::Keyword]) -> Vec<(String, Attr)> {
        let file = self.file();
        let mut attrs = Vec::new();
        for kw in kws {
            let Some(k) = kw.arg.as_deref() else {
                self.error(Diagnostic::error(span_of(file, kw), "`**kwargs` is not supported"));
                continue;
            };
            if let Some(member) = dotted(&kw.value).as_deref().and_then(crate::expr::enum_like_member) {
                attrs.push((k.to_string(), Attr::Str(member.to_string())));
                continue;
            }
            match self.expr(&kw.value).ok().and_then(|e| crate::expr::const_attr(&e)) {
                Some(a) => attrs.push((k.to_string(), a)),
                None => self.error(Diagnostic::error(
                    span_of(file, &kw.value),
                    format!("scope keyword `{k}` must be a compile-time constant"),
                )),
            }
        }
        attrs
    }

    pub(super) fn if_stmt(&mut self, i: &ast::StmtIf, span: Span, out: &mut Vec<Stmt>) {
        let Ok(cond) = self.expr(&i.test) else { return };
        // Plain syntax: names assigned in a branch that are visible after the if (bound
        // before it, or assigned in both branches) become the if's results.
        let plain = !has_explicit_yield(&i.body) && !has_explicit_yield(&i.orelse);
        let mut candidates = Vec::new();
        if plain {
            assigned_names(&i.body, &mut candidates);
            assigned_names(&i.orelse, &mut candidates);
        }
        let saved_gone = self.gone.clone();
        self.push_frame(FrameKind::If, span);
        let mut then_body = self.block(&i.body);
        let then_vals: Vec<Option<ValueId>> = candidates.iter().map(|n| self.peek_local(n)).collect();
        let then_frame = self.pop_frame();
        // The else branch does not see what the then branch defined.
        let then_gone = std::mem::replace(&mut self.gone, saved_gone);
        self.push_frame(FrameKind::If, span);
        let mut else_body = self.block(&i.orelse);
        let else_vals: Vec<Option<ValueId>> = candidates.iter().map(|n| self.peek_local(n)).collect();
        let else_frame = self.pop_frame();
        for (k, g) in then_gone {
            self.gone.entry(k).or_insert(g);
        }
        let mut merged = Vec::new();
        for ((n, t), e) in candidates.iter().zip(then_vals).zip(else_vals) {
            let outer =
                self.peek(n).filter(|v| !matches!(self.values.ty(*v), Type::Tensor(_) | Type::DistTensor(_)));
            let (t, e) = match (t, e, outer) {
                (Some(t), Some(e), _) => (t, e),
                (Some(t), None, Some(o)) => (t, o),
                (None, Some(e), Some(o)) => (o, e),
                _ => continue,
            };
            merged.push((n.clone(), t, e));
        }
        let mut results = Vec::new();
        if !merged.is_empty() {
            let var = |v: ValueId| Expr::new(ExprKind::Var(v), span);
            then_body.stmts.push(Stmt::new(StmtKind::Yield(merged.iter().map(|m| var(m.1)).collect()), span));
            else_body.stmts.push(Stmt::new(StmtKind::Yield(merged.iter().map(|m| var(m.2)).collect()), span));
            for (n, t, _) in &merged {
                let ty = self.values.ty(*t).clone();
                results.push(self.define(n, ty, span));
            }
            out.push(Stmt::new(StmtKind::If { cond, then_body, else_body, results }, span));
            return;
        }
        match (&then_frame.yielded, &else_frame.yielded) {
            (None, None) => {}
            (Some((names, types)), Some((enames, _))) => {
                let names = if names.is_empty() { enames } else { names };
                if names.len() != types.len() || (!enames.is_empty() && enames.len() != names.len()) {
                    self.error(Diagnostic::error(
                        span,
                        "both branches of an if must yield the same number of values",
                    ));
                } else if names.is_empty() {
                    self.error(Diagnostic::error(
                        span,
                        "an if whose branches yield must name its results: `x = pl.yield_(...)`",
                    ));
                } else {
                    for ((n, s), t) in names.iter().zip(types) {
                        results.push(self.define(n, t.clone(), *s));
                    }
                }
            }
            _ => {
                self.error(
                    Diagnostic::error(span, "only one branch of this if ends in pl.yield_")
                        .with_note("an if with results needs `x = pl.yield_(...)` in both branches"),
                );
                for (n, _) in then_frame.yielded.iter().chain(&else_frame.yielded).flat_map(|(n, _)| n.iter())
                {
                    self.poison(n);
                }
            }
        }
        out.push(Stmt::new(StmtKind::If { cond, then_body, else_body, results }, span));
    }
}

/// Names assigned anywhere in `stmts` (nested bodies included, loop variables excluded),
/// in order of first assignment.
pub(super) fn assigned_names(stmts: &[ast::Stmt], out: &mut Vec<String>) {
    let add = |e: &ast::Expr, out: &mut Vec<String>| {
        let mut push = |n: &str| {
            if !out.iter().any(|x| x == n) {
                out.push(n.to_string());
            }
        };
        match e {
            ast::Expr::Name(n) => push(n.id.as_str()),
            ast::Expr::Tuple(t) => t.elts.iter().for_each(|x| {
                if let ast::Expr::Name(n) = x {
                    push(n.id.as_str());
                }
            }),
            _ => {}
        }
    };
    for s in stmts {
        match s {
            ast::Stmt::Assign(a) => a.targets.iter().for_each(|t| match t {
                // `arr[i] = v` rebinds `arr` (array.update_element); tensors are filtered out
                // by the callers, which carry them in place.
                ast::Expr::Subscript(sub) => add(&sub.value, out),
                t => add(t, out),
            }),
            ast::Stmt::AnnAssign(a) => add(&a.target, out),
            ast::Stmt::AugAssign(a) => add(&a.target, out),
            ast::Stmt::For(f) => assigned_names(&f.body, out),
            ast::Stmt::While(w) => assigned_names(&w.body, out),
            ast::Stmt::If(i) => {
                assigned_names(&i.body, out);
                assigned_names(&i.orelse, out);
            }
            ast::Stmt::With(w) => assigned_names(&w.body, out),
            _ => {}
        }
    }
}

/// Whether a body (not its nested loops) uses `pl.yield_` itself: then it is explicit SSA.
fn has_explicit_yield(stmts: &[ast::Stmt]) -> bool {
    stmts.iter().any(|s| match s {
        ast::Stmt::Expr(e) => as_call_to(&e.value, "pl.yield_").is_some(),
        ast::Stmt::Assign(a) => as_call_to(&a.value, "pl.yield_").is_some(),
        ast::Stmt::With(w) => has_explicit_yield(&w.body),
        _ => false,
    })
}
