//! Structured statements.
//!
//! Control flow is structured (for, while, if, scopes), so a function body is an owned tree
//! of [`Block`]s. Loop-carried values are explicit iter-args updated by a trailing
//! [`StmtKind::Yield`]; an `if` with results is a phi whose branches both end in a yield.

use crate::expr::{Attr, Expr};
use crate::span::Span;
use crate::value::ValueId;

/// A sequence of statements.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Block {
    /// The statements, in order.
    pub stmts: Vec<Stmt>,
}

impl Block {
    /// An empty block.
    pub fn new() -> Block {
        Block::default()
    }

    /// Visits every statement, recursively, pre-order.
    pub fn walk(&self, f: &mut dyn FnMut(&Stmt)) {
        for s in &self.stmts {
            f(s);
            for b in s.blocks() {
                b.walk(f);
            }
        }
    }

    /// Visits every expression of every statement, recursively.
    pub fn walk_exprs(&self, f: &mut dyn FnMut(&Expr)) {
        self.walk(&mut |s| s.for_each_expr(&mut |e| e.walk(f)));
    }

    /// Visits every statement mutably, recursively, pre-order.
    pub fn walk_mut(&mut self, f: &mut dyn FnMut(&mut Stmt)) {
        for s in &mut self.stmts {
            f(s);
            for b in s.blocks_mut() {
                b.walk_mut(f);
            }
        }
    }
}

/// A statement with its span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stmt {
    /// What the statement does.
    pub kind: StmtKind,
    /// Where it was written.
    pub span: Span,
}

/// A loop-carried value: defined at loop entry from `init`, updated by the body's yield.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IterArg {
    /// The value visible inside the body.
    pub value: ValueId,
    /// Its initial value.
    pub init: Expr,
}

/// How a `for` loop is scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ForKind {
    /// `pl.range` / `range`: in order.
    #[default]
    Sequential,
    /// `pl.parallel`.
    Parallel,
    /// `pl.unroll`.
    Unroll,
}

impl ForKind {
    /// DSL spelling of the iterator function.
    pub fn dsl_name(self) -> &'static str {
        match self {
            ForKind::Sequential => "pl.range",
            ForKind::Parallel => "pl.parallel",
            ForKind::Unroll => "pl.unroll",
        }
    }
}

/// The scope kinds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ScopeKind {
    /// `with pl.at(level=..., ..., deps=[t0, ...]) as tid`: an InCore or hierarchy region,
    /// launched as one task. The scope's `args` are its explicit task dependencies (each a
    /// `Scalar(TASK_ID)`), printed as `deps=[...]`; `task` names the task id it binds.
    At {
        /// The task id bound by `as tid`, when the author named one.
        task: Option<ValueId>,
    },
    /// `with pl.manual_scope()`: tasks submitted inside get only their explicit `deps=[...]`
    /// edges (no automatic overlap-based dependencies).
    Manual,
    /// `for aiv_id in pl.split_aiv(2, ...)`: pins comm calls to the vector lane.
    SplitAiv {
        /// The lane index variable, when the author named one.
        lane: Option<ValueId>,
    },
    /// `with pl.spmd(n)`: a synchronised SPMD launch.
    Spmd,
    /// A comm domain created by `MaterializeCommDomainScopes`.
    CommDomain {
        /// Domain name.
        name: String,
        /// Participating devices (empty = all).
        devices: Vec<i64>,
        /// Window buffers carved in this domain.
        windows: Vec<String>,
    },
}

/// The statement forms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StmtKind {
    /// `x = e` or `a, b = e` (tuple unpacking when several targets).
    Assign {
        /// The defined values.
        targets: Vec<ValueId>,
        /// The value.
        value: Expr,
    },
    /// An expression evaluated for its effect.
    Eval(Expr),
    /// `for var in range(start, stop, step)` with loop-carried values.
    For {
        /// The induction variable.
        var: ValueId,
        /// Start bound.
        start: Expr,
        /// Stop bound (exclusive).
        stop: Expr,
        /// Step.
        step: Expr,
        /// Loop-carried values.
        iter_args: Vec<IterArg>,
        /// The body; ends in a yield when there are iter-args.
        body: Block,
        /// Values holding the final iter-arg values after the loop.
        results: Vec<ValueId>,
        /// Scheduling kind.
        kind: ForKind,
    },
    /// `while cond` with loop-carried values.
    While {
        /// Loop-carried values (visible in `cond` and the body).
        iter_args: Vec<IterArg>,
        /// The condition, evaluated before each iteration.
        cond: Expr,
        /// The body; ends in a yield when there are iter-args.
        body: Block,
        /// Final values.
        results: Vec<ValueId>,
    },
    /// `if cond: ... else: ...`, a phi when `results` is not empty.
    If {
        /// The condition.
        cond: Expr,
        /// Then branch.
        then_body: Block,
        /// Else branch (may be empty).
        else_body: Block,
        /// Values merged from the branches' yields.
        results: Vec<ValueId>,
    },
    /// A scope executed once in place.
    Scope {
        /// Which scope.
        kind: ScopeKind,
        /// Its constant keyword arguments (`level`, `core_num`, …).
        attrs: Vec<(String, Attr)>,
        /// Positional expression arguments (e.g. the spmd block count).
        args: Vec<Expr>,
        /// The body.
        body: Block,
    },
    /// `pl.yield_(...)`: the values carried out of a loop iteration or an if branch.
    Yield(Vec<Expr>),
    /// `return ...`.
    Return(Vec<Expr>),
}

impl Stmt {
    /// A statement at `span`.
    pub fn new(kind: StmtKind, span: Span) -> Stmt {
        Stmt { kind, span }
    }

    /// Nested blocks, in order.
    pub fn blocks(&self) -> Vec<&Block> {
        match &self.kind {
            StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::Scope { body, .. } => {
                vec![body]
            }
            StmtKind::If { then_body, else_body, .. } => vec![then_body, else_body],
            _ => Vec::new(),
        }
    }

    /// Nested blocks, mutably.
    pub fn blocks_mut(&mut self) -> Vec<&mut Block> {
        match &mut self.kind {
            StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::Scope { body, .. } => {
                vec![body]
            }
            StmtKind::If { then_body, else_body, .. } => vec![then_body, else_body],
            _ => Vec::new(),
        }
    }

    /// The statement's own expressions (not those of nested blocks).
    pub fn for_each_expr(&self, f: &mut dyn FnMut(&Expr)) {
        match &self.kind {
            StmtKind::Assign { value, .. } | StmtKind::Eval(value) => f(value),
            StmtKind::For { start, stop, step, iter_args, .. } => {
                f(start);
                f(stop);
                f(step);
                iter_args.iter().for_each(|a| f(&a.init));
            }
            StmtKind::While { iter_args, cond, .. } => {
                iter_args.iter().for_each(|a| f(&a.init));
                f(cond);
            }
            StmtKind::If { cond, .. } => f(cond),
            StmtKind::Scope { args, .. } => args.iter().for_each(f),
            StmtKind::Yield(vals) | StmtKind::Return(vals) => vals.iter().for_each(f),
        }
    }

    /// The statement's own expressions, mutably.
    pub fn for_each_expr_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        match &mut self.kind {
            StmtKind::Assign { value, .. } | StmtKind::Eval(value) => f(value),
            StmtKind::For { start, stop, step, iter_args, .. } => {
                f(start);
                f(stop);
                f(step);
                iter_args.iter_mut().for_each(|a| f(&mut a.init));
            }
            StmtKind::While { iter_args, cond, .. } => {
                iter_args.iter_mut().for_each(|a| f(&mut a.init));
                f(cond);
            }
            StmtKind::If { cond, .. } => f(cond),
            StmtKind::Scope { args, .. } => args.iter_mut().for_each(f),
            StmtKind::Yield(vals) | StmtKind::Return(vals) => vals.iter_mut().for_each(f),
        }
    }

    /// Values this statement itself defines (targets, loop vars, iter-args, results).
    pub fn defs(&self) -> Vec<ValueId> {
        match &self.kind {
            StmtKind::Assign { targets, .. } => targets.clone(),
            StmtKind::For { var, iter_args, results, .. } => {
                let mut v = vec![*var];
                v.extend(iter_args.iter().map(|a| a.value));
                v.extend(results);
                v
            }
            StmtKind::While { iter_args, results, .. } => {
                iter_args.iter().map(|a| a.value).chain(results.iter().copied()).collect()
            }
            StmtKind::If { results, .. } => results.clone(),
            StmtKind::Scope { kind: ScopeKind::SplitAiv { lane: Some(l) }, .. }
            | StmtKind::Scope { kind: ScopeKind::At { task: Some(l) }, .. } => vec![*l],
            _ => Vec::new(),
        }
    }

    /// The call this statement evaluates or assigns from, if it is a plain call statement.
    pub fn call(&self) -> Option<&crate::expr::Call> {
        match &self.kind {
            StmtKind::Assign { value, .. } | StmtKind::Eval(value) => value.as_call(),
            _ => None,
        }
    }
}
