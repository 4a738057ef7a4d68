//! Expressions: literals, value references, symbolic dims, arithmetic, tuples and calls.
//!
//! Expressions are small owned trees. Equality and hashing ignore spans, so two types whose
//! dims were written in different places still compare equal. A [`Call`] stores its result
//! type, computed once when the call is built (by the op's deducer, or from the callee's
//! signature); the verifier re-derives it.

use crate::dtype::DataType;
use crate::registry::{self, OpDef};
use crate::span::Span;
use crate::types::Type;
use crate::value::ValueId;
use std::fmt;
use std::hash::{Hash, Hasher};

/// An expression with its source span.
#[derive(Clone, Debug)]
pub struct Expr {
    /// What the expression is.
    pub kind: ExprKind,
    /// Where it was written.
    pub span: Span,
}

/// The expression forms.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ExprKind {
    /// Integer literal (typed `INDEX` as a scalar).
    Int(i64),
    /// Float literal (typed `FP32`), stored as bits so it can be hashed.
    Float(FloatBits),
    /// Boolean literal.
    Bool(bool),
    /// String literal (e.g. `mode="ring"` in attributes).
    Str(String),
    /// A dtype object (`pl.FP32`).
    DType(DataType),
    /// A reference to a value of the enclosing function.
    Var(ValueId),
    /// A named symbolic dimension (`pl.dynamic("NR")`).
    Sym(String),
    /// Binary arithmetic or comparison.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// Unary operation.
    Unary(UnOp, Box<Expr>),
    /// A tuple / list literal (offsets, shapes).
    Tuple(Vec<Expr>),
    /// A call to an op or a function.
    Call(Box<Call>),
}

/// An `f64` stored by bits so expressions can derive `Eq` and `Hash`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FloatBits(pub u64);

impl FloatBits {
    /// Wraps a float.
    pub fn new(v: f64) -> FloatBits {
        FloatBits(v.to_bits())
    }
    /// The float value.
    pub fn get(self) -> f64 {
        f64::from_bits(self.0)
    }
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    FloorDiv,
    Div,
    Mod,
    Min,
    Max,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    /// Python spelling of the operator (`min`/`max` are printed as calls).
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::FloorDiv => "//",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Min => "min",
            BinOp::Max => "max",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "and",
            BinOp::Or => "or",
        }
    }

    /// Whether the result is a boolean.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::And | BinOp::Or
        )
    }

    /// A comparison of two numbers, or `And`/`Or` of their truth (non-zero is true), for
    /// integers and floats alike; `None` for an arithmetic op.
    pub fn compare<T: PartialOrd + Default>(self, a: T, b: T) -> Option<bool> {
        let zero = T::default();
        Some(match self {
            BinOp::Eq => a == b,
            BinOp::Ne => a != b,
            BinOp::Lt => a < b,
            BinOp::Le => a <= b,
            BinOp::Gt => a > b,
            BinOp::Ge => a >= b,
            BinOp::And => a != zero && b != zero,
            BinOp::Or => a != zero || b != zero,
            _ => return None,
        })
    }

    /// Folds two integers (a comparison to 0 or 1); `None` on division by zero or overflow.
    pub fn fold_int(self, a: i64, b: i64) -> Option<i64> {
        match self {
            BinOp::Add => a.checked_add(b),
            BinOp::Sub => a.checked_sub(b),
            BinOp::Mul => a.checked_mul(b),
            BinOp::FloorDiv => py_floor_div(a, b),
            BinOp::Mod => a.checked_sub(b.checked_mul(py_floor_div(a, b)?)?),
            BinOp::Min => Some(a.min(b)),
            BinOp::Max => Some(a.max(b)),
            BinOp::Div => None,
            _ => self.compare(a, b).map(i64::from),
        }
    }
}

/// Python floor division; `None` on division by zero or overflow.
fn py_floor_div(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    Some(if a % b != 0 && ((a < 0) != (b < 0)) { q - 1 } else { q })
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// Arithmetic negation.
    Neg,
    /// Logical not.
    Not,
}

/// What a call invokes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Callee {
    /// A registered op.
    Op(&'static OpDef),
    /// A function of the program, by name.
    Func(String),
}

impl Callee {
    /// The op or function name.
    pub fn name(&self) -> &str {
        match self {
            Callee::Op(def) => def.name,
            Callee::Func(name) => name,
        }
    }

    /// The op definition, if this calls an op.
    pub fn op(&self) -> Option<&'static OpDef> {
        match self {
            Callee::Op(def) => Some(def),
            Callee::Func(_) => None,
        }
    }

    /// The op's dense registry id, if this calls a registered op (found by the record's
    /// address: no name is hashed).
    pub fn op_id(&self) -> Option<crate::table::OpId> {
        self.op().and_then(|d| crate::registry::registry().id_of(d))
    }
}

/// A constant keyword attribute.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Attr {
    /// Integer (enum payloads are integers).
    Int(i64),
    /// Boolean.
    Bool(bool),
    /// String.
    Str(String),
    /// Data type.
    DType(DataType),
    /// Float, stored as bits.
    Float(FloatBits),
    /// A list of integers.
    Ints(Vec<i64>),
}

impl Attr {
    /// The integer payload, if any (booleans count as 0/1).
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Attr::Int(v) => Some(*v),
            Attr::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }
    /// The boolean, if any.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Attr::Bool(b) => Some(*b),
            Attr::Int(v) => Some(*v != 0),
            _ => None,
        }
    }
    /// The string, if any.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Attr::Str(s) => Some(s),
            _ => None,
        }
    }
    /// The dtype, if any.
    pub fn as_dtype(&self) -> Option<DataType> {
        match self {
            Attr::DType(d) => Some(*d),
            _ => None,
        }
    }
    /// Name of the attribute's kind, for diagnostics.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Attr::Int(_) => "int",
            Attr::Bool(_) => "bool",
            Attr::Str(_) => "str",
            Attr::DType(_) => "DataType",
            Attr::Float(_) => "float",
            Attr::Ints(_) => "list[int]",
        }
    }
}

/// A call of an op or a function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Call {
    /// What is called.
    pub callee: Callee,
    /// Positional arguments, in IR order.
    pub args: Vec<Expr>,
    /// Keyword attributes, in declaration order.
    pub attrs: Vec<(String, Attr)>,
    /// For a host dispatch: the device (rank) expression (`device=r`).
    pub device: Option<Expr>,
    /// For a task submit (`self.k(..., deps=[t0, t1])`, or an outlined `pl.at(..., deps=...)
    /// as tid`): the task ids this task waits for. A submit's result carries the callee's
    /// returns followed by the new task's id (`Scalar(TASK_ID)`); see [`Call::is_submit`].
    pub deps: Option<Vec<Expr>>,
    /// The result type.
    pub ty: Type,
    /// The op as the user wrote it, when a canonicalizer redirected the call onto another
    /// op (`pld.all_reduce` → `pld.tensor.allreduce`); `None` when the callee is what the
    /// user wrote. Read it through [`Call::written_name`].
    pub spelled: Option<&'static str>,
}

impl Call {
    /// A plain call of `callee` (no device, no task submit).
    pub fn new(callee: Callee, args: Vec<Expr>, attrs: Vec<(String, Attr)>, ty: Type) -> Call {
        Call { callee, args, attrs, device: None, deps: None, ty, spelled: None }
    }

    /// The name of this call as the user wrote it: the ergonomic spelling a canonicalizer
    /// redirected (`pld.all_reduce`), else the callee's name. Every diagnostic about a call
    /// names it this way ([`crate::Diagnostic::about_call`]).
    pub fn written_name(&self) -> &str {
        self.spelled.unwrap_or_else(|| self.callee.name())
    }

    /// Whether this call submits a task whose id is its last result.
    pub fn is_submit(&self) -> bool {
        self.deps.is_some()
    }

    /// The attribute named `name`.
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// Integer attribute `name`, falling back to the op's declared default.
    pub fn attr_int(&self, name: &str) -> Option<i64> {
        self.attr(name).and_then(Attr::as_int).or_else(|| {
            self.callee.op().and_then(|d| d.attr_def(name)).and_then(|a| a.default.and_then(|d| d.as_int()))
        })
    }

    /// The attributes in the form `Builder::op` takes them (to re-issue this call as another
    /// op).
    pub fn attr_args(&self) -> Vec<(&str, Attr)> {
        self.attrs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect()
    }

    /// Sets (or replaces) attribute `name`.
    pub fn set_attr(&mut self, name: &str, value: Attr) {
        if let Some(slot) = self.attrs.iter_mut().find(|(k, _)| k == name) {
            slot.1 = value;
        } else {
            self.attrs.push((name.to_string(), value));
        }
    }

    /// The op definition, if this calls an op.
    pub fn op(&self) -> Option<&'static OpDef> {
        self.callee.op()
    }

    /// The argument this call's result *is*, when the op writes an operand and returns it
    /// (`x = pl.store(t, offs, x)`, `w = pld.tensor.allreduce(w, sig)`): the written operand
    /// (per the registry's effects for this call) whose type is the result's, whatever its
    /// position. With several such operands the first is taken; `None` when the callee is a
    /// function, or the op writes no operand of its result's type.
    pub fn written_result_operand(&self, values: &crate::value::Values) -> Option<usize> {
        let def = self.op()?;
        let effects = def.arg_effects(self);
        let written: Vec<usize> = (0..self.args.len())
            .filter(|&i| effects.get(i).is_some_and(|e| e.writes()))
            .filter(|&i| self.args[i].ty(values).as_tensor_like().is_some())
            .collect();
        written.iter().copied().find(|&i| self.args[i].ty(values) == self.ty).or_else(|| {
            // A single written operand of the result's kind (a view type may differ in its
            // layout annotation, not in what it is).
            match written.as_slice() {
                [i] if std::mem::discriminant(&self.args[*i].ty(values))
                    == std::mem::discriminant(&self.ty) =>
                {
                    Some(*i)
                }
                _ => None,
            }
        })
    }
}

impl Expr {
    /// An expression at `span`.
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }
    /// Integer literal with no source.
    pub fn int(v: i64) -> Expr {
        Expr::new(ExprKind::Int(v), Span::DUMMY)
    }
    /// Float literal with no source.
    pub fn float(v: f64) -> Expr {
        Expr::new(ExprKind::Float(FloatBits::new(v)), Span::DUMMY)
    }
    /// Boolean literal with no source.
    pub fn bool(v: bool) -> Expr {
        Expr::new(ExprKind::Bool(v), Span::DUMMY)
    }
    /// Value reference with no source.
    pub fn var(v: ValueId) -> Expr {
        Expr::new(ExprKind::Var(v), Span::DUMMY)
    }
    /// Symbolic dim with no source.
    pub fn sym(name: impl Into<String>) -> Expr {
        Expr::new(ExprKind::Sym(name.into()), Span::DUMMY)
    }
    /// Tuple with no source.
    pub fn tuple(items: Vec<Expr>) -> Expr {
        Expr::new(ExprKind::Tuple(items), Span::DUMMY)
    }
    /// Tuple of integer literals.
    pub fn ints(items: &[i64]) -> Expr {
        Expr::tuple(items.iter().map(|&v| Expr::int(v)).collect())
    }
    /// Binary expression, folded when both sides are integer literals.
    pub fn binary(op: BinOp, a: Expr, b: Expr) -> Expr {
        let span = a.span.to(b.span);
        if let (Some(x), Some(y)) = (a.as_int(), b.as_int()) {
            if let Some(v) = op.fold_int(x, y) {
                return Expr::new(ExprKind::Int(v), span);
            }
        }
        Expr::new(ExprKind::Binary(op, Box::new(a), Box::new(b)), span)
    }
    /// Sets the span.
    pub fn at(mut self, span: Span) -> Expr {
        self.span = span;
        self
    }

    /// The integer value of a literal.
    pub fn as_int(&self) -> Option<i64> {
        match self.kind {
            ExprKind::Int(v) => Some(v),
            _ => None,
        }
    }

    /// The value referenced, if this is a plain variable.
    pub fn as_var(&self) -> Option<ValueId> {
        match self.kind {
            ExprKind::Var(v) => Some(v),
            _ => None,
        }
    }

    /// The items of a tuple.
    pub fn as_tuple(&self) -> Option<&[Expr]> {
        match &self.kind {
            ExprKind::Tuple(items) => Some(items),
            _ => None,
        }
    }

    /// The call, if this is one.
    pub fn as_call(&self) -> Option<&Call> {
        match &self.kind {
            ExprKind::Call(c) => Some(c),
            _ => None,
        }
    }

    /// Mutable access to the call, if this is one.
    pub fn as_call_mut(&mut self) -> Option<&mut Call> {
        match &mut self.kind {
            ExprKind::Call(c) => Some(c),
            _ => None,
        }
    }

    /// Appends the symbols `exprs` mention to `out`, each once, in first-seen order.
    pub fn collect_syms<'a>(exprs: impl IntoIterator<Item = &'a Expr>, out: &mut Vec<String>) {
        for x in exprs {
            x.walk(&mut |e| {
                if let ExprKind::Sym(s) = &e.kind {
                    if !out.contains(s) {
                        out.push(s.clone());
                    }
                }
            });
        }
    }

    /// Visits every sub-expression (pre-order, including `self`).
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match &self.kind {
            ExprKind::Binary(_, a, b) => {
                a.walk(f);
                b.walk(f);
            }
            ExprKind::Unary(_, a) => a.walk(f),
            ExprKind::Tuple(items) => items.iter().for_each(|e| e.walk(f)),
            ExprKind::Call(c) => {
                c.args.iter().for_each(|e| e.walk(f));
                if let Some(d) = &c.device {
                    d.walk(f);
                }
                c.deps.iter().flatten().for_each(|e| e.walk(f));
            }
            _ => {}
        }
    }

    /// Visits every sub-expression mutably (post-order, including `self`).
    pub fn walk_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        match &mut self.kind {
            ExprKind::Binary(_, a, b) => {
                a.walk_mut(f);
                b.walk_mut(f);
            }
            ExprKind::Unary(_, a) => a.walk_mut(f),
            ExprKind::Tuple(items) => items.iter_mut().for_each(|e| e.walk_mut(f)),
            ExprKind::Call(c) => {
                c.args.iter_mut().for_each(|e| e.walk_mut(f));
                if let Some(d) = &mut c.device {
                    d.walk_mut(f);
                }
                c.deps.iter_mut().flatten().for_each(|e| e.walk_mut(f));
            }
            _ => {}
        }
        f(self);
    }

    /// Every value referenced anywhere inside.
    pub fn uses(&self) -> Vec<ValueId> {
        let mut out = Vec::new();
        self.walk(&mut |e| {
            if let ExprKind::Var(v) = e.kind {
                out.push(v);
            }
        });
        out
    }

    /// Builds an op call, running the op's canonicalizer (if one is registered) and then its
    /// deducer; the result type is stored in the call. A deduction error of a redirected call
    /// names the op as the user wrote it, with the op it became in a note
    /// ([`crate::Diagnostic::in_user_words`]).
    pub fn op_call(
        op: &str,
        args: Vec<Expr>,
        attrs: Vec<(String, Attr)>,
        span: Span,
        cx: &registry::DeduceEnv<'_>,
    ) -> Result<Expr, crate::Diagnostic> {
        let reg = registry::registry();
        let mut def = reg.lookup_or_error(op, span)?;
        let written = def.name;
        let (mut args, mut attrs) = (args, attrs);
        if let Some(canon) = reg.canonicalizer(def.name) {
            if let Some(other) = canon(&mut args, &mut attrs, cx) {
                def = reg.lookup_or_error(other, span)?;
                if let Some(canon) = reg.canonicalizer(def.name) {
                    let _ = canon(&mut args, &mut attrs, cx);
                }
            }
        }
        let ty = registry::deduce(def, &args, &attrs, span, cx).map_err(|d| {
            if def.name == written {
                d
            } else {
                d.in_user_words(written, def.name)
            }
        })?;
        let spelled = (def.name != written).then_some(written);
        let call = Call { spelled, ..Call::new(Callee::Op(def), args, attrs, ty) };
        Ok(Expr::new(ExprKind::Call(Box::new(call)), span))
    }
}

impl PartialEq for Expr {
    fn eq(&self, other: &Expr) -> bool {
        self.kind == other.kind
    }
}
impl Eq for Expr {}
impl Hash for Expr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.kind.hash(state);
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::printer::expr_to_string_plain(self))
    }
}

impl Expr {
    /// The type of this expression inside a function whose values are `values`.
    ///
    /// Integer literals are `INDEX` scalars, floats `FP32`, booleans `BOOL`; arithmetic takes
    /// the dtype of its first non-literal operand; comparisons are `BOOL`; calls carry their
    /// own type.
    pub fn ty(&self, values: &crate::value::Values) -> Type {
        match &self.kind {
            ExprKind::Int(_) | ExprKind::Sym(_) => Type::Scalar(DataType::INDEX),
            ExprKind::Float(_) => Type::Scalar(DataType::FP32),
            ExprKind::Bool(_) => Type::Scalar(DataType::BOOL),
            ExprKind::Str(_) | ExprKind::DType(_) => Type::Unknown,
            ExprKind::Var(v) => values.ty(*v).clone(),
            ExprKind::Binary(op, a, b) => {
                if op.is_comparison() {
                    return Type::Scalar(DataType::BOOL);
                }
                let (ta, tb) = (a.ty(values), b.ty(values));
                let pick = |t: &Type, e: &Expr| match e.kind {
                    ExprKind::Int(_) | ExprKind::Sym(_) => None,
                    _ => t.as_scalar(),
                };
                let dt = if ta.as_scalar().is_some_and(DataType::is_float)
                    || tb.as_scalar().is_some_and(DataType::is_float)
                {
                    ta.as_scalar().filter(|d| d.is_float()).or(tb.as_scalar()).unwrap_or(DataType::FP32)
                } else {
                    pick(&ta, a).or_else(|| pick(&tb, b)).unwrap_or(DataType::INDEX)
                };
                Type::Scalar(dt)
            }
            ExprKind::Unary(UnOp::Not, _) => Type::Scalar(DataType::BOOL),
            ExprKind::Unary(UnOp::Neg, a) => a.ty(values),
            ExprKind::Tuple(items) => Type::Tuple(items.iter().map(|e| e.ty(values)).collect()),
            ExprKind::Call(c) => c.ty.clone(),
        }
    }
}

impl Expr {
    /// Evaluates an integer expression of literals, named symbols and arithmetic, looking
    /// symbols up in `sym`; `None` when something is unbound, not integer, or overflows.
    pub fn eval_int(&self, sym: &dyn Fn(&str) -> Option<i64>) -> Option<i64> {
        match &self.kind {
            ExprKind::Int(v) => Some(*v),
            ExprKind::Sym(s) => sym(s),
            ExprKind::Binary(op, a, b) => op.fold_int(a.eval_int(sym)?, b.eval_int(sym)?),
            ExprKind::Unary(UnOp::Neg, a) => a.eval_int(sym)?.checked_neg(),
            _ => None,
        }
    }
}
