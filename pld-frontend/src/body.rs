//! Function bodies: statements, scopes and the SSA rules.
//!
//! Guarantees:
//! - a reassignment defines a new value (the reference's default, non-strict mode); with
//!   strict SSA a second assignment in one scope is a diagnostic;
//! - `for` / `while` / `if` bodies are scopes: a value defined inside is not visible after
//!   the statement unless it is carried out with `pl.yield_` (loop `init_values`, or an `if`
//!   whose branches both yield); using it anyway is a diagnostic naming the statement, and
//!   so is using a name whose *value* was replaced inside such a body (except tensors, which
//!   alias: a store into a tensor inside a loop is visible through the outer name);
//! - `with pl.at(...)`, `with pl.spmd(...)`, `for _ in pl.split_aiv(...)` are transparent;
//! - a failed statement reports once and poisons the names it would define, so later uses
//!   do not cascade.

use crate::annot;
use crate::module::UnitCx;
use crate::util::{dotted, span_of};
use pld_ir::{
    Attr, Block, DataType, Diagnostic, Expr, ExprKind, FileId, ForKind, Function, FunctionKind, IterArg,
    Param, ScopeKind, Span, Stmt, StmtKind, Type, ValueId, Values,
};
use rustpython_parser::ast;
use std::collections::HashMap;

/// Deepest nesting of loop / if bodies the frontend lowers.
const MAX_NESTING: usize = 64;

/// What a name is bound to in a scope.
#[derive(Clone, Copy, Debug)]
pub enum Binding {
    /// A value.
    Value(ValueId, Span),
    /// The definition failed (already reported).
    Poison,
}

/// Which statement opened a scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// The function body.
    Function,
    /// A `for` loop body.
    For,
    /// A `while` loop body.
    While,
    /// An `if` branch.
    If,
}

impl FrameKind {
    fn describe(self) -> &'static str {
        match self {
            FrameKind::Function => "function",
            FrameKind::For => "for loop",
            FrameKind::While => "while loop",
            FrameKind::If => "if statement",
        }
    }
}

/// One lexical scope.
pub struct Frame {
    /// Names defined here.
    pub names: HashMap<String, Binding>,
    /// Kind.
    pub kind: FrameKind,
    /// Names on the left of this body's `pl.yield_`, with the yielded types.
    pub yielded: Option<Yielded>,
    /// Span of the statement that opened it.
    pub span: Span,
}

/// The names receiving a body's `pl.yield_`, and the yielded types.
pub type Yielded = (Vec<(String, Span)>, Vec<Type>);

/// A name whose inner definition went out of scope.
#[derive(Clone, Debug)]
struct Gone {
    def: Span,
    frame: FrameKind,
    opened: Span,
}

/// Lowering state of one function.
pub struct FnCx<'u, 'a> {
    /// The unit.
    pub unit: &'u mut UnitCx<'a>,
    /// The function's value arena.
    pub values: Values,
    /// The function's kind.
    pub kind: FunctionKind,
    /// Scopes, innermost last.
    pub frames: Vec<Frame>,
    gone: HashMap<String, Gone>,
    /// Types of the first `return`.
    returns: Option<Vec<Type>>,
    strict: bool,
    /// The LHS name of the assignment being lowered (names `alloc_window_buffer`).
    pub pending_name: Option<String>,
    /// Current expression nesting depth (bounded, so hostile input cannot exhaust the stack).
    pub depth: usize,
    /// Whether the current top-level expression already reported excessive depth.
    pub too_deep: bool,
    /// Current statement-block nesting depth.
    block_depth: usize,
}

impl<'u, 'a> FnCx<'u, 'a> {
    /// The file.
    pub fn file(&self) -> FileId {
        self.unit.file
    }

    /// Reports a diagnostic.
    pub fn error(&mut self, d: Diagnostic) {
        self.unit.diags.push(d);
    }

    /// Lowers function `index` of the unit.
    pub fn lower_function(unit: &'u mut UnitCx<'a>, index: usize, def: &ast::StmtFunctionDef) -> Function {
        let sig = unit.sigs[index].clone();
        let strict = unit.opts.strict_ssa || sig.strict_ssa;
        let mut cx = FnCx {
            unit,
            values: Values::default(),
            kind: sig.kind,
            frames: vec![Frame {
                names: HashMap::new(),
                kind: FrameKind::Function,
                yielded: None,
                span: sig.span,
            }],
            gone: HashMap::new(),
            returns: None,
            strict,
            pending_name: None,
            depth: 0,
            too_deep: false,
            block_depth: 0,
        };
        let mut params = Vec::new();
        for (name, ty, dir, span) in &sig.params {
            let v = cx.values.add(name.clone(), ty.clone(), *span);
            cx.frames[0].names.insert(name.clone(), Binding::Value(v, *span));
            params.push(Param { value: v, dir: *dir });
        }
        // A host callback's body is Python executed by the runtime, not DSL.
        let body = if sig.external { Block::new() } else { cx.block(&def.body) };
        let mut f = Function::new(sig.name.clone(), sig.kind);
        f.attrs = sig.attrs.clone();
        f.params = params;
        f.ret = sig.ret.clone().or(cx.returns.take()).unwrap_or_default();
        f.values = cx.values;
        f.body = body;
        f.span = sig.span;
        f
    }

    /// The kind of the function being lowered.
    pub fn func_kind(&self) -> FunctionKind {
        self.kind
    }

    // ----- names -----------------------------------------------------------------------

    /// Looks a local name up; `Ok(None)` when it is not a local.
    pub fn lookup(&mut self, name: &str, span: Span) -> Result<Option<ValueId>, ()> {
        for f in self.frames.iter().rev() {
            match f.names.get(name) {
                Some(Binding::Value(v, _)) => {
                    if let Some(g) = self.gone.get(name).cloned() {
                        // The name was replaced inside a closed body; the outer value is stale.
                        if !self.aliases(*v, name) {
                            self.error(stale_use(name, span, &g));
                            return Err(());
                        }
                    }
                    return Ok(Some(*v));
                }
                Some(Binding::Poison) => return Err(()),
                None => {}
            }
        }
        if let Some(g) = self.gone.get(name).cloned() {
            self.error(
                Diagnostic::error(
                    span,
                    format!(
                        "`{name}` is defined inside the {} and used outside it without pl.yield_",
                        g.frame.describe()
                    ),
                )
                .with_label(g.def, "defined here")
                .with_label(g.opened, "inside this statement")
                .with_note(carry_note(g.frame)),
            );
            return Err(());
        }
        Ok(None)
    }

    /// Whether the stale outer value of `name` still denotes the same memory (tensors alias).
    fn aliases(&self, outer: ValueId, _name: &str) -> bool {
        matches!(self.values.ty(outer), Type::Tensor(_) | Type::DistTensor(_))
    }

    /// Defines `name` in the innermost scope.
    pub fn define(&mut self, name: &str, ty: Type, span: Span) -> ValueId {
        if self.strict {
            if let Some(Binding::Value(_, prev)) = self.frames.last().and_then(|f| f.names.get(name)).copied()
            {
                self.error(
                    Diagnostic::error(span, format!("variable `{name}` is already defined in this scope"))
                        .with_label(prev, "first defined here")
                        .with_note("strict SSA: use a different name for each assignment"),
                );
            }
        }
        let v = self.values.add(name, ty, span);
        self.gone.remove(name);
        if let Some(f) = self.frames.last_mut() {
            f.names.insert(name.to_string(), Binding::Value(v, span));
        }
        v
    }

    fn poison(&mut self, name: &str) {
        self.gone.remove(name);
        if let Some(f) = self.frames.last_mut() {
            f.names.insert(name.to_string(), Binding::Poison);
        }
    }

    fn push_frame(&mut self, kind: FrameKind, span: Span) {
        self.frames.push(Frame { names: HashMap::new(), kind, yielded: None, span });
    }

    fn pop_frame(&mut self) -> Frame {
        let f = self.frames.pop().unwrap_or(Frame {
            names: HashMap::new(),
            kind: FrameKind::Function,
            yielded: None,
            span: Span::DUMMY,
        });
        for (name, b) in &f.names {
            if let Binding::Value(_, def) = b {
                self.gone.insert(name.clone(), Gone { def: *def, frame: f.kind, opened: f.span });
            }
        }
        f
    }

    // ----- statements ------------------------------------------------------------------

    /// Lowers a statement list.
    pub fn block(&mut self, stmts: &[ast::Stmt]) -> Block {
        if self.block_depth > MAX_NESTING {
            if let Some(first) = stmts.first() {
                let span = span_of(self.file(), first);
                self.error(Diagnostic::error(
                    span,
                    format!("statements nested more than {MAX_NESTING} levels deep"),
                ));
            }
            return Block::new();
        }
        self.block_depth += 1;
        let mut out = Vec::new();
        for s in stmts {
            self.stmt(s, &mut out);
        }
        self.block_depth -= 1;
        Block { stmts: out }
    }

    fn stmt(&mut self, s: &ast::Stmt, out: &mut Vec<Stmt>) {
        let span = span_of(self.file(), s);
        match s {
            ast::Stmt::Pass(_) => {}
            ast::Stmt::Expr(e) => {
                if let ast::Expr::Constant(c) = e.value.as_ref() {
                    if matches!(c.value, ast::Constant::Str(_) | ast::Constant::Ellipsis) {
                        return; // docstring / `...`
                    }
                }
                if let Some(call) = as_call_to(&e.value, "pl.yield_") {
                    self.yield_stmt(call, Vec::new(), span, out);
                    return;
                }
                if let Ok(e) = self.expr(&e.value) {
                    out.push(Stmt::new(StmtKind::Eval(e), span));
                }
            }
            ast::Stmt::Assign(a) => self.assign(a, span, out),
            ast::Stmt::AnnAssign(a) => self.ann_assign(a, span, out),
            ast::Stmt::AugAssign(a) => {
                let ast::Expr::Name(n) = a.target.as_ref() else {
                    self.error(Diagnostic::error(
                        span,
                        "augmented assignment is only supported on plain names",
                    ));
                    return;
                };
                let Some(op) = crate::consts::bin_op(&a.op) else {
                    self.error(Diagnostic::error(span, "unsupported augmented assignment operator"));
                    return;
                };
                let lhs = self.name_expr(n.id.as_str(), span_of(self.file(), a.target.as_ref()));
                let rhs = self.expr(&a.value);
                match (lhs, rhs) {
                    (Ok(l), Ok(r)) => match self.scalar_binary(op, l, r, span) {
                        Ok(e) => {
                            let ty = e.ty(&self.values);
                            let v = self.define(n.id.as_str(), ty, span);
                            out.push(Stmt::new(StmtKind::Assign { targets: vec![v], value: e }, span));
                        }
                        Err(()) => self.poison(n.id.as_str()),
                    },
                    _ => self.poison(n.id.as_str()),
                }
            }
            ast::Stmt::Return(r) => {
                let vals = match r.value.as_deref() {
                    None => Vec::new(),
                    Some(ast::Expr::Tuple(t)) => t.elts.iter().filter_map(|e| self.expr(e).ok()).collect(),
                    Some(e) => self.expr(e).ok().into_iter().collect(),
                };
                if self.returns.is_none() {
                    self.returns = Some(vals.iter().map(|e| e.ty(&self.values)).collect());
                }
                out.push(Stmt::new(StmtKind::Return(vals), span));
            }
            ast::Stmt::For(f) => {
                let before = (out.len(), self.unit.diags.len());
                self.for_stmt(f, span, out);
                self.poison_if_dropped(before, out.len(), &f.body);
            }
            ast::Stmt::While(w) => {
                if !w.orelse.is_empty() {
                    self.error(Diagnostic::error(span, "`while ... else` is not supported"));
                }
                let implicit = self.implicit_carry(&w.body, &[]);
                self.push_frame(FrameKind::While, span);
                let iter_args = self.implicit_iter_args(&implicit);
                let cond = self.expr(&w.test);
                let mut body = self.block(&w.body);
                let results = if implicit.is_empty() {
                    self.pop_frame();
                    Vec::new()
                } else {
                    self.finish_implicit(&implicit, &iter_args, &mut body, span)
                };
                let Ok(cond) = cond else { return };
                out.push(Stmt::new(StmtKind::While { iter_args, cond, body, results }, span));
            }
            ast::Stmt::If(i) => {
                let before = (out.len(), self.unit.diags.len());
                self.if_stmt(i, span, out);
                self.poison_if_dropped(before, out.len(), &i.body);
                self.poison_if_dropped(before, out.len(), &i.orelse);
            }
            ast::Stmt::With(w) => {
                let before = (out.len(), self.unit.diags.len());
                self.with_stmt(w, span, out);
                self.poison_if_dropped(before, out.len(), &w.body);
            }
            ast::Stmt::Break(_) | ast::Stmt::Continue(_) => {
                self.error(Diagnostic::error(span, "`break` / `continue` are not supported in DSL functions"))
            }
            ast::Stmt::FunctionDef(_) | ast::Stmt::ClassDef(_) => self.error(Diagnostic::error(
                span,
                "nested function or class definitions are not supported inside a DSL function",
            )),
            _ => self.error(Diagnostic::error(span, "unsupported statement in a DSL function")),
        }
    }

    /// After a compound statement failed to lower (reported, nothing emitted), poisons the
    /// names its body would have defined so later uses do not cascade into more errors.
    fn poison_if_dropped(
        &mut self,
        (out_before, diags_before): (usize, usize),
        out_after: usize,
        body: &[ast::Stmt],
    ) {
        if out_after != out_before || self.unit.diags.len() == diags_before {
            return;
        }
        let mut names = Vec::new();
        assigned_names(body, &mut names);
        for n in names {
            if self.peek(&n).is_none() {
                self.poison(&n);
            }
        }
    }

    fn assign(&mut self, a: &ast::StmtAssign, span: Span, out: &mut Vec<Stmt>) {
        let [target] = a.targets.as_slice() else {
            self.error(Diagnostic::error(span, "chained assignment (`a = b = ...`) is not supported"));
            return;
        };
        match target {
            ast::Expr::Name(n) => {
                if let Some(call) = as_call_to(&a.value, "pl.yield_") {
                    let names = vec![(n.id.to_string(), span_of(self.file(), target))];
                    self.yield_stmt(call, names, span, out);
                    return;
                }
                self.pending_name = Some(n.id.to_string());
                let e = self.expr(&a.value);
                self.pending_name = None;
                match e {
                    Ok(e) => {
                        let ty = e.ty(&self.values);
                        let v = self.define(n.id.as_str(), ty, span_of(self.file(), target));
                        out.push(Stmt::new(StmtKind::Assign { targets: vec![v], value: e }, span));
                    }
                    Err(()) => self.poison(n.id.as_str()),
                }
            }
            ast::Expr::Tuple(t) => {
                let mut names = Vec::new();
                for el in &t.elts {
                    match el {
                        ast::Expr::Name(n) => names.push((n.id.to_string(), span_of(self.file(), el))),
                        other => {
                            self.error(Diagnostic::error(
                                span_of(self.file(), other),
                                "tuple assignment targets must be plain names",
                            ));
                            return;
                        }
                    }
                }
                if let Some(call) = as_call_to(&a.value, "pl.yield_") {
                    self.yield_stmt(call, names, span, out);
                    return;
                }
                let e = match self.expr(&a.value) {
                    Ok(e) => e,
                    Err(()) => {
                        names.iter().for_each(|(n, _)| self.poison(n));
                        return;
                    }
                };
                let ty = e.ty(&self.values);
                let items = match ty {
                    Type::Tuple(items) if items.len() == names.len() => items,
                    other => {
                        self.error(Diagnostic::error(
                            span,
                            format!("cannot unpack a value of type {other} into {} names", names.len()),
                        ));
                        names.iter().for_each(|(n, _)| self.poison(n));
                        return;
                    }
                };
                let targets = names.iter().zip(items).map(|((n, s), t)| self.define(n, t, *s)).collect();
                out.push(Stmt::new(StmtKind::Assign { targets, value: e }, span));
            }
            ast::Expr::Subscript(sub) => self.subscript_assign(sub, &a.value, span, out),
            _ => self.error(Diagnostic::error(span, "unsupported assignment target")),
        }
    }

    /// `t[a:b, i] = v` on a tensor: `t = tensor.assemble(t, v, offsets)`.
    fn subscript_assign(
        &mut self,
        sub: &ast::ExprSubscript,
        value: &ast::Expr,
        span: Span,
        out: &mut Vec<Stmt>,
    ) {
        let file = self.file();
        let ast::Expr::Name(n) = sub.value.as_ref() else {
            self.error(Diagnostic::error(
                span,
                "assignment to a subscript needs a plain tensor name on the left",
            ));
            return;
        };
        let Ok(base) = self.name_expr(n.id.as_str(), span_of(file, sub.value.as_ref())) else { return };
        let rank = match base.ty(&self.values) {
            Type::Tensor(t) => t.rank(),
            Type::DistTensor(d) => d.tensor.rank(),
            other => {
                self.error(
                    Diagnostic::error(
                        span,
                        format!("assignment to a subscript needs a tensor, got {}", other.kind_name()),
                    )
                    .with_note("write tiles with pl.store(...)"),
                );
                return;
            }
        };
        let idx: Vec<&ast::Expr> = match sub.slice.as_ref() {
            ast::Expr::Tuple(t) => t.elts.iter().collect(),
            other => vec![other],
        };
        if idx.len() > rank {
            self.error(Diagnostic::error(
                span,
                format!("subscript has {} indices but the tensor has rank {rank}", idx.len()),
            ));
            return;
        }
        let mut offsets = Vec::new();
        for d in 0..rank {
            let off = match idx.get(d) {
                None => Ok(Expr::int(0).at(span)),
                Some(ast::Expr::Slice(sl)) => match &sl.lower {
                    Some(l) => self.expr(l),
                    None => Ok(Expr::int(0).at(span)),
                },
                Some(e) => self.expr(e),
            };
            let Ok(off) = off else { return };
            offsets.push(off);
        }
        let Ok(v) = self.expr(value) else { return };
        let offsets = Expr::new(ExprKind::Tuple(offsets), span_of(file, sub.slice.as_ref()));
        let env = pld_ir::DeduceEnv {
            values: &self.values,
            target: self.unit.opts.target,
            func_kind: Some(self.kind),
        };
        match Expr::op_call("tensor.assemble", vec![base, v, offsets], Vec::new(), span, &env) {
            Ok(e) => {
                let ty = e.ty(&self.values);
                let t = self.define(n.id.as_str(), ty, span_of(file, sub.value.as_ref()));
                out.push(Stmt::new(StmtKind::Assign { targets: vec![t], value: e }, span));
            }
            Err(d) => self.error(d),
        }
    }

    fn ann_assign(&mut self, a: &ast::StmtAnnAssign, span: Span, out: &mut Vec<Stmt>) {
        let ast::Expr::Name(n) = a.target.as_ref() else {
            self.error(Diagnostic::error(span, "annotated assignment targets must be plain names"));
            return;
        };
        let Some(value) = &a.value else {
            self.error(Diagnostic::error(span, format!("annotated declaration of `{}` needs a value", n.id)));
            self.poison(n.id.as_str());
            return;
        };
        let file = self.file();
        let annotated = {
            let mut dim = |e: &ast::Expr| -> Result<Expr, Diagnostic> {
                self.expr(e).map_err(|()| Diagnostic::error(Span::DUMMY, String::new()))
            };
            annot::parse_type(file, &a.annotation, &mut dim)
        };
        let annotated = match annotated {
            Ok(t) => Some(t),
            Err(d) => {
                if !d.message.is_empty() {
                    self.error(d);
                }
                None
            }
        };
        self.pending_name = Some(n.id.to_string());
        let e = self.expr(value);
        self.pending_name = None;
        let Ok(e) = e else {
            self.poison(n.id.as_str());
            return;
        };
        let mut ty = e.ty(&self.values);
        // A window view whose annotation binds it to its buffer (printed after
        // MaterializeCommDomainScopes) keeps the binding.
        if let (Some(Type::DistTensor(a)), Type::DistTensor(d)) = (&annotated, &ty) {
            if a.window.is_some() && d.window.is_none() && a.tensor == d.tensor {
                ty = Type::DistTensor(a.clone());
            }
        }
        if let Some(Type::Scalar(d)) = annotated {
            // A literal takes the annotated scalar type (`x: pl.Scalar[pl.INT32] = 0`).
            if matches!(e.kind, ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_)) {
                ty = Type::Scalar(d);
            }
        }
        let v = self.define(n.id.as_str(), ty, span_of(file, a.target.as_ref()));
        out.push(Stmt::new(StmtKind::Assign { targets: vec![v], value: e }, span));
    }

    fn yield_stmt(
        &mut self,
        call: &ast::ExprCall,
        names: Vec<(String, Span)>,
        span: Span,
        out: &mut Vec<Stmt>,
    ) {
        if !call.keywords.is_empty() {
            self.error(Diagnostic::error(span, "pl.yield_ takes positional values only"));
            return;
        }
        let mut vals = Vec::new();
        let mut ok = true;
        for a in &call.args {
            match self.expr(a) {
                Ok(e) => vals.push(e),
                Err(()) => ok = false,
            }
        }
        let frame_kind = self.frames.last().map_or(FrameKind::Function, |f| f.kind);
        if frame_kind == FrameKind::Function {
            self.error(Diagnostic::error(span, "pl.yield_ outside a loop or if body"));
            return;
        }
        if !names.is_empty() && names.len() != call.args.len() {
            self.error(Diagnostic::error(
                span,
                format!(
                    "pl.yield_ yields {} value(s) but {} name(s) receive them",
                    call.args.len(),
                    names.len()
                ),
            ));
            return;
        }
        if !ok {
            names.iter().for_each(|(n, _)| self.poison(n));
        }
        let types = vals.iter().map(|e| e.ty(&self.values)).collect();
        if let Some(f) = self.frames.last_mut() {
            if f.yielded.is_none() {
                f.yielded = Some((names, types));
            }
        }
        if ok {
            out.push(Stmt::new(StmtKind::Yield(vals), span));
        }
    }

    fn for_stmt(&mut self, f: &ast::StmtFor, span: Span, out: &mut Vec<Stmt>) {
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
        let mut bounds = Vec::new();
        let mut ok = true;
        for a in &call.args {
            match self.expr(a) {
                Ok(e) => bounds.push(e),
                Err(()) => ok = false,
            }
        }
        let mut inits: Vec<Expr> = Vec::new();
        let mut has_inits = false;
        for kw in &call.keywords {
            match kw.arg.as_deref() {
                Some("init_values") => {
                    has_inits = true;
                    let elts: Vec<&ast::Expr> = match &kw.value {
                        ast::Expr::Tuple(t) => t.elts.iter().collect(),
                        ast::Expr::List(l) => l.elts.iter().collect(),
                        other => vec![other],
                    };
                    for e in elts {
                        match self.expr(e) {
                            Ok(x) => inits.push(x),
                            Err(()) => ok = false,
                        }
                    }
                }
                other => {
                    self.error(Diagnostic::error(
                        span_of(self.file(), kw),
                        format!("unknown keyword argument `{}` for {path}", other.unwrap_or("**")),
                    ));
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
        let (var_name, var_span, carried) = match f.target.as_ref() {
            ast::Expr::Name(n) => (n.id.to_string(), span_of(file, f.target.as_ref()), Vec::new()),
            ast::Expr::Tuple(t) if t.elts.len() == 2 => {
                let (ast::Expr::Name(n), ast::Expr::Tuple(inner)) = (&t.elts[0], &t.elts[1]) else {
                    self.error(Diagnostic::error(
                        span_of(file, f.target.as_ref()),
                        "loop target must be `i` or `i, (a, b, ...)`",
                    ));
                    return;
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
                            return;
                        }
                    }
                }
                (n.id.to_string(), span_of(file, &t.elts[0]), names)
            }
            other => {
                self.error(Diagnostic::error(
                    span_of(file, other),
                    "loop target must be `i` or `i, (a, b, ...)`",
                ));
                return;
            }
        };
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

    /// Outer non-tensor values that `body` reassigns (candidates for implicit carrying).
    fn implicit_carry(&self, body: &[ast::Stmt], exclude: &[&str]) -> Vec<(String, ValueId)> {
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
    fn implicit_iter_args(&mut self, implicit: &[(String, ValueId)]) -> Vec<IterArg> {
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
    fn finish_implicit(
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

    /// The value `name` is bound to, without reporting anything.
    fn peek(&self, name: &str) -> Option<ValueId> {
        for f in self.frames.iter().rev() {
            match f.names.get(name) {
                Some(Binding::Value(v, _)) => return Some(*v),
                Some(Binding::Poison) => return None,
                None => {}
            }
        }
        None
    }

    /// The value `name` is bound to in the innermost frame only.
    fn peek_local(&self, name: &str) -> Option<ValueId> {
        match self.frames.last()?.names.get(name)? {
            Binding::Value(v, _) => Some(*v),
            Binding::Poison => None,
        }
    }

    /// Defines the results of a loop from its body's `names = pl.yield_(...)`.
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
            let elts: Vec<&ast::Expr> = match &kw.value {
                ast::Expr::Tuple(t) => t.elts.iter().collect(),
                ast::Expr::List(l) => l.elts.iter().collect(),
                other => vec![other],
            };
            for e in elts {
                match self.expr(e) {
                    Ok(x) => inits.push(x),
                    Err(()) => ok = false,
                }
            }
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

    fn with_stmt(&mut self, w: &ast::StmtWith, span: Span, out: &mut Vec<Stmt>) {
        let file = self.file();
        let [item] = w.items.as_slice() else {
            self.error(Diagnostic::error(span, "a DSL `with` statement takes exactly one scope"));
            return;
        };
        if let Some(v) = &item.optional_vars {
            self.error(Diagnostic::error(
                span_of(file, v.as_ref()),
                "`with ... as name` is not supported for DSL scopes",
            ));
            return;
        }
        let Some((path, call)) = call_path(&item.context_expr) else {
            self.error(Diagnostic::error(span_of(file, &item.context_expr), "unsupported `with` scope"));
            return;
        };
        let kind = match path.as_str() {
            "pl.at" => ScopeKind::At,
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
                    .with_note("supported scopes: pl.at(...), pl.spmd(n), pld.comm_domain(...)"),
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

    fn if_stmt(&mut self, i: &ast::StmtIf, span: Span, out: &mut Vec<Stmt>) {
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

fn stale_use(name: &str, span: Span, g: &Gone) -> Diagnostic {
    Diagnostic::error(
        span,
        format!(
            "`{name}` is reassigned inside the {} and used after it without pl.yield_",
            g.frame.describe()
        ),
    )
    .with_label(g.def, "reassigned here")
    .with_label(g.opened, "inside this statement")
    .with_note(carry_note(g.frame))
}

fn carry_note(kind: FrameKind) -> &'static str {
    match kind {
        FrameKind::If => "yield it from both branches: `x = pl.yield_(value)`",
        _ => "carry it through the loop: `for i, (x,) in pl.range(n, init_values=(x0,)):` ... `x_out = pl.yield_(x_next)`",
    }
}

/// The call, if `e` is a call of `path`.
pub fn as_call_to<'e>(e: &'e ast::Expr, path: &str) -> Option<&'e ast::ExprCall> {
    match e {
        ast::Expr::Call(c) if dotted(&c.func).as_deref() == Some(path) => Some(c),
        _ => None,
    }
}

/// `(dotted callee, call)` of a call expression.
pub fn call_path(e: &ast::Expr) -> Option<(String, &ast::ExprCall)> {
    match e {
        ast::Expr::Call(c) => dotted(&c.func).map(|p| (p, c)),
        _ => None,
    }
}

/// Names assigned anywhere in `stmts` (nested bodies included, loop variables excluded),
/// in order of first assignment.
fn assigned_names(stmts: &[ast::Stmt], out: &mut Vec<String>) {
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
            ast::Stmt::Assign(a) => a.targets.iter().for_each(|t| add(t, out)),
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
