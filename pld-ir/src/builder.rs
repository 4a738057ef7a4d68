//! Building IR: the API downstream toolchains, the frontend and the lowerings share.
//!
//! A [`Builder`] appends statements to a stack of open blocks over one function's value
//! arena. Op calls are deduced as they are built, so a builder never produces an ill-typed
//! call: a rule violation comes back as a [`Diagnostic`]. [`FunctionBuilder`] wraps a
//! [`Function`] under construction.

use crate::diag::Diagnostic;
use crate::expr::{Attr, Call, Callee, Expr, ExprKind};
use crate::func::{Direction, Function, FunctionKind, Param};
use crate::registry::{self, DeduceEnv, Target};
use crate::span::Span;
use crate::stmt::{Block, ForKind, IterArg, ScopeKind, Stmt, StmtKind};
use crate::types::Type;
use crate::value::{ValueId, Values};

/// Appends statements to the innermost open block of one function.
pub struct Builder<'a> {
    /// The function's value arena.
    pub values: &'a mut Values,
    /// The enclosing function's kind.
    pub func_kind: FunctionKind,
    /// The compilation target.
    pub target: Target,
    /// Span stamped on nodes built without one.
    pub span: Span,
    /// Functions a lowering asks to add to the program (e.g. synthesized builtin kernels).
    pub new_functions: Vec<Function>,
    /// What the calling pass (or codegen's builtin renderer) tells a lowering about the call's
    /// surroundings; all unset unless the caller sets them.
    pub context: LowerContext,
    blocks: Vec<Vec<Stmt>>,
}

/// Where a call being lowered sits, as the lowering's caller knows it: a typed record, so a
/// lowering and its callers agree on each fact by a field, not by a string key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LowerContext {
    /// The enclosing function's name (a synthesized function is named after it).
    pub function: Option<String>,
    /// How many `for`/`while` loops enclose the call.
    pub loop_depth: i64,
    /// The rank list of the innermost enclosing comm domain holding every window operand
    /// (empty = all ranks); `None` outside any comm domain.
    pub devices: Option<Vec<i64>>,
    /// Codegen's request to a builtin-kernel lowering: build this kernel for PTO emission.
    pub kernel_request: Option<KernelRequest>,
}

/// A request for the kernel of one builtin variant, built for PTO emission only (symbolic
/// dynamic extents, one SPMD kernel reading the block symbols) into
/// [`Builder::new_functions`], leaving the caller's body untouched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelRequest {
    /// The kernel's name.
    pub name: String,
}

impl<'a> Builder<'a> {
    /// A builder over `values`, with one open block.
    pub fn new(values: &'a mut Values, func_kind: FunctionKind) -> Builder<'a> {
        Builder {
            values,
            func_kind,
            target: Target::default(),
            span: Span::DUMMY,
            new_functions: Vec::new(),
            context: LowerContext::default(),
            blocks: vec![Vec::new()],
        }
    }

    /// The deduction environment of this builder.
    pub fn env(&self) -> DeduceEnv<'_> {
        DeduceEnv { values: self.values, target: self.target, func_kind: Some(self.func_kind) }
    }

    /// A new value of type `ty`.
    pub fn value(&mut self, name: impl Into<String>, ty: Type) -> ValueId {
        self.values.add(name, ty, self.span)
    }

    /// Type of an expression in this function.
    pub fn type_of(&self, e: &Expr) -> Type {
        e.ty(self.values)
    }

    /// An op call expression, deduced now.
    pub fn op(&self, name: &str, args: Vec<Expr>, attrs: Vec<(&str, Attr)>) -> Result<Expr, Diagnostic> {
        let attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        Expr::op_call(name, args, attrs, self.span, &self.env())
    }

    /// A call of function `callee` whose result type is `ret`.
    pub fn func_call(&self, callee: &str, args: Vec<Expr>, device: Option<Expr>, ret: Type) -> Expr {
        let call = Call { device, ..Call::new(Callee::Func(callee.to_string()), args, Vec::new(), ret) };
        Expr::new(ExprKind::Call(Box::new(call)), self.span)
    }

    /// Appends a statement.
    pub fn push(&mut self, kind: StmtKind) {
        let span = self.span;
        self.push_stmt(Stmt::new(kind, span));
    }

    /// Appends a statement with its own span.
    pub fn push_stmt(&mut self, stmt: Stmt) {
        if let Some(b) = self.blocks.last_mut() {
            b.push(stmt);
        }
    }

    /// `name = value`; returns the new value.
    pub fn assign(&mut self, name: impl Into<String>, value: Expr) -> ValueId {
        let ty = self.type_of(&value);
        let v = self.value(name, ty);
        self.push(StmtKind::Assign { targets: vec![v], value });
        v
    }

    /// `name = op(args, attrs)`.
    pub fn assign_op(
        &mut self,
        name: impl Into<String>,
        op: &str,
        args: Vec<Expr>,
        attrs: Vec<(&str, Attr)>,
    ) -> Result<ValueId, Diagnostic> {
        let e = self.op(op, args, attrs)?;
        Ok(self.assign(name, e))
    }

    /// Evaluates an expression for its effect.
    pub fn eval(&mut self, e: Expr) {
        self.push(StmtKind::Eval(e));
    }

    /// Evaluates `op(args, attrs)` for its effect.
    pub fn eval_op(&mut self, op: &str, args: Vec<Expr>, attrs: Vec<(&str, Attr)>) -> Result<(), Diagnostic> {
        let e = self.op(op, args, attrs)?;
        self.eval(e);
        Ok(())
    }

    /// Opens a nested block.
    pub fn open(&mut self) {
        self.blocks.push(Vec::new());
    }

    /// Closes the innermost nested block and returns it.
    pub fn close(&mut self) -> Block {
        let stmts = if self.blocks.len() > 1 { self.blocks.pop().unwrap_or_default() } else { Vec::new() };
        Block { stmts }
    }

    /// Builds a nested block with `body` (closed again even when `body` fails): the block and
    /// what `body` returned.
    fn nested<T>(
        &mut self,
        body: impl FnOnce(&mut Self) -> Result<T, Diagnostic>,
    ) -> Result<(Block, T), Diagnostic> {
        self.open();
        let r = body(self);
        let block = self.close();
        Ok((block, r?))
    }

    /// `for var in range(start, stop, step)` with iter-args `(name, init)`; `body` receives the
    /// induction variable and the iter-arg values and returns the values to yield (one per
    /// iter-arg). Returns the loop's result values.
    pub fn for_range<F>(
        &mut self,
        var_name: &str,
        (start, stop, step): (Expr, Expr, Expr),
        inits: Vec<(&str, Expr)>,
        body: F,
    ) -> Result<Vec<ValueId>, Diagnostic>
    where
        F: FnOnce(&mut Self, ValueId, &[ValueId]) -> Result<Vec<Expr>, Diagnostic>,
    {
        let var = self.value(var_name, Type::Scalar(crate::DataType::INDEX));
        let mut iter_args = Vec::new();
        let mut carried = Vec::new();
        for (name, init) in inits {
            let ty = self.type_of(&init);
            let v = self.value(name, ty);
            carried.push(v);
            iter_args.push(IterArg { value: v, init });
        }
        let (mut block, yields) = self.nested(|b| body(b, var, &carried))?;
        if !carried.is_empty() || !yields.is_empty() {
            block.stmts.push(Stmt::new(StmtKind::Yield(yields), self.span));
        }
        let results: Vec<ValueId> = carried
            .iter()
            .map(|&c| {
                let name = self.values.name(c).to_string();
                let ty = self.values.ty(c).clone();
                self.value(name, ty)
            })
            .collect();
        self.push(StmtKind::For {
            var,
            start,
            stop,
            step,
            iter_args,
            body: block,
            results: results.clone(),
            kind: ForKind::Sequential,
        });
        Ok(results)
    }

    /// `if cond:` with no results.
    pub fn if_then<F>(&mut self, cond: Expr, then: F) -> Result<(), Diagnostic>
    where
        F: FnOnce(&mut Self) -> Result<(), Diagnostic>,
    {
        let (then_body, ()) = self.nested(then)?;
        self.push(StmtKind::If { cond, then_body, else_body: Block::new(), results: Vec::new() });
        Ok(())
    }

    /// `if cond: ... else: ...` producing values: each branch builds its statements and
    /// returns the values to yield (the same number and types in both). Returns the merged
    /// result values, typed like the then-branch yields.
    pub fn if_else<F, G>(
        &mut self,
        cond: Expr,
        names: &[&str],
        then: F,
        otherwise: G,
    ) -> Result<Vec<ValueId>, Diagnostic>
    where
        F: FnOnce(&mut Self) -> Result<Vec<Expr>, Diagnostic>,
        G: FnOnce(&mut Self) -> Result<Vec<Expr>, Diagnostic>,
    {
        let (mut then_body, then_yields) = self.nested(then)?;
        let (mut else_body, else_yields) = self.nested(otherwise)?;
        if then_yields.len() != else_yields.len() || then_yields.len() != names.len() {
            return Err(Diagnostic::error(
                self.span,
                format!(
                    "if branches yield {} and {} value(s) for {} result(s)",
                    then_yields.len(),
                    else_yields.len(),
                    names.len()
                ),
            ));
        }
        let results: Vec<ValueId> = names
            .iter()
            .zip(&then_yields)
            .map(|(n, e)| {
                let ty = self.type_of(e);
                self.value(*n, ty)
            })
            .collect();
        then_body.stmts.push(Stmt::new(StmtKind::Yield(then_yields), self.span));
        else_body.stmts.push(Stmt::new(StmtKind::Yield(else_yields), self.span));
        self.push(StmtKind::If { cond, then_body, else_body, results: results.clone() });
        Ok(results)
    }

    /// A scope around the statements `body` builds.
    pub fn scope<F>(&mut self, kind: ScopeKind, attrs: Vec<(&str, Attr)>, body: F) -> Result<(), Diagnostic>
    where
        F: FnOnce(&mut Self) -> Result<(), Diagnostic>,
    {
        let (block, ()) = self.nested(body)?;
        let attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        self.push(StmtKind::Scope { kind, attrs, args: Vec::new(), body: block });
        Ok(())
    }

    /// `return values`.
    pub fn ret(&mut self, values: Vec<Expr>) {
        self.push(StmtKind::Return(values));
    }

    /// Finishes, returning the outermost block's statements (closing any left open).
    pub fn finish(mut self) -> (Vec<Stmt>, Vec<Function>) {
        while self.blocks.len() > 1 {
            let inner = self.close();
            if let Some(b) = self.blocks.last_mut() {
                b.extend(inner.stmts);
            }
        }
        (self.blocks.pop().unwrap_or_default(), self.new_functions)
    }
}

/// Builds one [`Function`].
pub struct FunctionBuilder {
    func: Function,
    target: Target,
}

impl FunctionBuilder {
    /// Starts a function.
    pub fn new(name: impl Into<String>, kind: FunctionKind) -> FunctionBuilder {
        FunctionBuilder { func: Function::new(name, kind), target: Target::default() }
    }

    /// Sets the compilation target used by deducers.
    pub fn target(mut self, target: Target) -> FunctionBuilder {
        self.target = target;
        self
    }

    /// Adds a parameter.
    pub fn param(&mut self, name: impl Into<String>, ty: Type, dir: Direction) -> ValueId {
        let v = self.func.values.add(name, ty, Span::DUMMY);
        self.func.params.push(Param { value: v, dir });
        v
    }

    /// Adds a return type.
    pub fn returns(&mut self, ty: Type) {
        self.func.ret.push(ty);
    }

    /// Sets a function attribute.
    pub fn attr(&mut self, name: &str, value: Attr) {
        self.func.attrs.push((name.to_string(), value));
    }

    /// Builds the body with `f`, appending to what is there.
    pub fn body<F>(&mut self, f: F) -> Result<(), Diagnostic>
    where
        F: FnOnce(&mut Builder<'_>) -> Result<(), Diagnostic>,
    {
        let kind = self.func.kind;
        let mut b = Builder::new(&mut self.func.values, kind);
        b.target = self.target;
        let r = f(&mut b);
        let (stmts, _) = b.finish();
        self.func.body.stmts.extend(stmts);
        r
    }

    /// The finished function.
    pub fn finish(self) -> Function {
        self.func
    }
}

/// Looks up `name` in the registry and checks it exists (a convenience for builders that
/// want the definition without building a call).
pub fn op_def(name: &str) -> Result<&'static registry::OpDef, Diagnostic> {
    registry::registry().lookup_or_error(name, Span::DUMMY)
}
