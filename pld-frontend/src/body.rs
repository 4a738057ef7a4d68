//! Function bodies: statements, scopes and the SSA rules.
//!
//! Guarantees:
//! - a reassignment defines a new value (the reference's default, non-strict mode); with
//!   strict SSA a second assignment in one scope is a diagnostic;
//! - `for` / `while` / `if` bodies are scopes: a value defined inside is not visible after
//!   the statement unless it is carried out — explicitly with `pl.yield_` (loop
//!   `init_values`, or an `if` whose branches both yield), or implicitly for plain syntax
//!   (an outer scalar or tile reassigned in the body; a name assigned in both branches);
//!   using it anyway is a diagnostic naming the statement, and so is using a name whose
//!   value was replaced inside an explicitly carried loop (tensors excepted: a store into a
//!   tensor is visible through the outer name);
//! - `with pl.at(...)`, `with pl.spmd(...)`, `for _ in pl.split_aiv(...)` are transparent;
//! - a failed statement reports once and poisons the names it would define, so later uses
//!   do not cascade.

mod control;

use crate::annot;
use crate::module::UnitCx;
use crate::util::{dotted, span_of};
use control::assigned_names;
use pld_ir::{
    Block, Diagnostic, Expr, ExprKind, FileId, Function, FunctionKind, Param, Span, Stmt, StmtKind, Type,
    ValueId, Values,
};
use rustpython_parser::ast;
use std::collections::{HashMap, HashSet};

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
    /// The LHS name of the assignment being lowered (fills an op attribute declared
    /// [`pld_ir::AttrDef::from_assignment`], e.g. a window buffer's name).
    pub pending_name: Option<String>,
    /// Current expression nesting depth (bounded, so hostile input cannot exhaust the stack).
    pub depth: usize,
    /// Whether the current top-level expression already reported excessive depth.
    pub too_deep: bool,
    /// Current statement-block nesting depth.
    block_depth: usize,
    /// Values that alias a read-only (`In`) tensor parameter: the parameter itself, views of
    /// it and names bound to those (see [`crate::callcheck`]).
    pub read_only: HashSet<ValueId>,
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
            read_only: HashSet::new(),
        };
        let mut params = Vec::new();
        for (name, ty, dir, span) in &sig.params {
            let v = cx.values.add(name.clone(), ty.clone(), *span);
            cx.frames[0].names.insert(name.clone(), Binding::Value(v, *span));
            params.push(Param { value: v, dir: *dir });
            if crate::callcheck::guards_writes(ty, *dir) {
                cx.read_only.insert(v);
            }
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
                        if !self.aliases(*v) {
                            self.error(escaped_use(name, span, &g, ("reassigned", "after")));
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
            self.error(escaped_use(name, span, &g, ("defined", "outside")));
            return Err(());
        }
        Ok(None)
    }

    /// Whether the stale outer value of `name` still denotes the same memory (tensors alias).
    fn aliases(&self, outer: ValueId) -> bool {
        matches!(self.values.ty(outer), Type::Tensor(_) | Type::DistTensor(_))
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
                        let ty = self.const_target_type(&a.value).unwrap_or_else(|| e.ty(&self.values));
                        let v = self.define(n.id.as_str(), ty, span_of(self.file(), target));
                        if crate::callcheck::aliases_read_only(&e, &self.read_only) {
                            self.read_only.insert(v);
                        }
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

    /// `t[a:b, i] = v` on a tensor: `t = tensor.assemble(t, v, offsets)`; on a `pl.Array`,
    /// [`Self::array_update`].
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
            Type::Array(_) => return self.array_update(n.id.as_str(), base, sub, value, span, out),
            Type::Tensor(t) => t.rank(),
            Type::DistTensor(d) => d.tensor.rank(),
            other => {
                self.error(
                    Diagnostic::error(
                        span,
                        format!(
                            "assignment to a subscript needs a tensor or a pl.Array, got {}",
                            other.kind_name()
                        ),
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
        let def = span_of(file, sub.value.as_ref());
        self.rebind_op(n.id.as_str(), "tensor.assemble", vec![base, v, offsets], span, def, out);
    }

    /// `name = op(args)`, rebinding `name` (SSA) at `def`; a deduction error is reported.
    fn rebind_op(
        &mut self,
        name: &str,
        op: &str,
        args: Vec<Expr>,
        span: Span,
        def: Span,
        out: &mut Vec<Stmt>,
    ) {
        let Ok(e) = self.build_op(op, args, Vec::new(), span) else { return };
        let ty = e.ty(&self.values);
        let t = self.define(name, ty, def);
        out.push(Stmt::new(StmtKind::Assign { targets: vec![t], value: e }, span));
    }

    /// `arr[i] = v` on an on-core array: `arr = array.update_element(arr, i, v)` (SSA rebinding,
    /// so loops and ifs carry `arr` like any reassigned scalar).
    fn array_update(
        &mut self,
        name: &str,
        base: Expr,
        sub: &ast::ExprSubscript,
        value: &ast::Expr,
        span: Span,
        out: &mut Vec<Stmt>,
    ) {
        let file = self.file();
        let (Ok(index), Ok(v)) = (self.array_index(sub.slice.as_ref()), self.expr(value)) else { return };
        let def = span_of(file, sub.value.as_ref());
        self.rebind_op(name, "array.update_element", vec![base, index, v], span, def, out);
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
        let mut ty = self.const_target_type(value).unwrap_or_else(|| e.ty(&self.values));
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
        let (vals, ok) = self.exprs_all(&call.args);
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
}

/// A use of `name` past the frame `g` it was bound in (`how` = ("defined", "outside") or
/// ("reassigned", "after")): it needed `pl.yield_`.
fn escaped_use(name: &str, span: Span, g: &Gone, how: (&str, &str)) -> Diagnostic {
    let (bound, where_) = how;
    Diagnostic::error(
        span,
        format!(
            "`{name}` is {bound} inside the {} and used {where_} it without pl.yield_",
            g.frame.describe()
        ),
    )
    .with_label(g.def, format!("{bound} here"))
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
