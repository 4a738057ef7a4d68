//! Rank dependence: which values of a program differ between ranks, and under which
//! rank-dependent control flow each call runs — a small forward dataflow over the structured
//! IR, in the manner of PARCOACH's analysis of MPI programs.
//!
//! Guarantees: a value is rank-dependent ([`Dep::rank`]) when it is the result of an op whose
//! record says it yields the rank ([`RankRole::RankIndex`], `pld.rank`), or is computed from
//! one — through assignments, arithmetic, op and function calls (a function's result is
//! rank-dependent when what it returns is), loop-carried values, `if` results and values
//! defined under rank-dependent control. A function's parameter is rank-dependent when some
//! call passes it a rank-dependent argument, and, for a host dispatch `k(..., device=d)`, an
//! argument that depends on a host `for` variable `d` also depends on (`x[r]` or `r` itself
//! handed to the kernel run on device `r`). In host code the device-loop variable itself is
//! not the rank: the host runs once and dispatches to every device, so host control flow is
//! never rank-dependent through it. A statement runs under divergence ([`Divergence`]) when
//! an enclosing `if` or `while` condition or a `for` trip count is rank-dependent, or when it
//! follows a `return` some ranks take and others do not. The analysis is a fixpoint: sound for
//! the IR's structured control flow (there is no `break` / `continue`); values stored into
//! memory by one call and read back by another are not followed (only call results are).

use pld_ir::{
    Block, Call, Callee, Expr, ExprKind, Function, FunctionKind, Program, RankRole, Span, StmtKind,
};
use pld_ir::{IterArg, ScopeKind, Stmt, ValueId};
use std::collections::{BTreeSet, HashMap};

/// Where the rank entered a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The `pld.rank` call, the call whose result carries the rank, or the argument of a
    /// host dispatch that passed a per-device value (`r` of `device=r`) in.
    pub span: Span,
    /// Whether it is such an argument (the rank was passed in).
    pub passed: bool,
}

/// What a value depends on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dep {
    /// Where the rank entered it, when it differs between ranks.
    pub rank: Option<Origin>,
    /// The host `for` variables it depends on (host functions only): a dispatch's argument
    /// that shares one with the dispatch's `device=` differs from device to device.
    pub loops: BTreeSet<ValueId>,
}

impl Dep {
    /// Adds `o` to `self`; whether `self` grew.
    fn join(&mut self, o: &Dep) -> bool {
        let before = (self.rank.is_some(), self.loops.len());
        self.rank = self.rank.or(o.rank);
        self.loops.extend(o.loops.iter().copied());
        before != (self.rank.is_some(), self.loops.len())
    }

    fn with(mut self, o: &Dep) -> Dep {
        self.join(o);
        self
    }
}

/// Which rank-dependent construct makes a statement run on some ranks only, or a different
/// number of times on different ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DivergenceKind {
    /// An `if` whose condition is rank-dependent.
    Branch,
    /// A `for` whose trip count (start, stop or step) is rank-dependent.
    TripCount,
    /// A `while` whose condition is rank-dependent.
    LoopCondition,
}

/// Why a statement runs under rank-dependent control flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// The construct.
    pub kind: DivergenceKind,
    /// The rank-dependent condition or loop bound.
    pub cond: Span,
    /// Where the rank entered the condition.
    pub origin: Origin,
    /// The `return` some ranks take under `cond`, when the statement follows it.
    pub early_return: Option<Span>,
}

/// The control a statement runs under: what the enclosing conditions depend on, and the
/// outermost rank-dependent one.
#[derive(Clone, Debug, Default)]
pub struct Ctl {
    /// The enclosing conditions' and trip counts' dependences.
    pub dep: Dep,
    /// The outermost rank-dependent construct, if any.
    pub why: Option<Divergence>,
}

impl Ctl {
    /// The control inside a construct whose condition depends on `c`.
    fn enter(&self, c: &Dep, kind: DivergenceKind, cond: Span) -> Ctl {
        let why = self.why.or(c.rank.map(|origin| Divergence { kind, cond, origin, early_return: None }));
        Ctl { dep: self.dep.clone().with(c), why }
    }

    fn absorb(&mut self, o: &Ctl) {
        self.dep.join(&o.dep);
        self.why = self.why.or(o.why);
    }
}

/// Called for every call the walk meets, with the call's span and its control.
pub type CallVisitor<'v> = dyn FnMut(&Call, Span, &Ctl) + 'v;

/// The program-wide facts: which parameters receive the rank, which results return it.
#[derive(Debug, Default)]
pub struct RankDependence {
    /// Per function, per parameter: where the rank-dependent value some call passes in came
    /// from (the first found).
    params: HashMap<String, Vec<Option<Origin>>>,
    /// Per function: where a rank-dependent value it returns came from.
    returns: HashMap<String, Span>,
}

impl RankDependence {
    /// Runs the analysis over `program` to its fixpoint.
    pub fn of(program: &Program) -> RankDependence {
        let mut rd = RankDependence::default();
        loop {
            let mut found = Found::default();
            for f in &program.functions {
                rd.walk_function(f, &mut found, None);
            }
            if !rd.absorb(found) {
                return rd;
            }
        }
    }

    /// Walks `f` (to its own fixpoint), then once more calling `visit` on every call.
    pub fn visit(&self, f: &Function, visit: &mut CallVisitor<'_>) {
        self.walk_function(f, &mut Found::default(), Some(visit));
    }

    /// Where the rank-dependent value passed into parameter `i` of `f` came from.
    pub fn param(&self, f: &str, i: usize) -> Option<Origin> {
        self.params.get(f).and_then(|p| p.get(i).copied().flatten())
    }

    fn absorb(&mut self, found: Found) -> bool {
        let mut grew = false;
        for (f, i, origin) in found.params {
            let slots = self.params.entry(f).or_default();
            if slots.len() <= i {
                slots.resize(i + 1, None);
            }
            if slots[i].is_none() {
                slots[i] = Some(origin);
                grew = true;
            }
        }
        for (f, span) in found.returns {
            if let std::collections::hash_map::Entry::Vacant(slot) = self.returns.entry(f) {
                slot.insert(span);
                grew = true;
            }
        }
        grew
    }

    fn walk_function(&self, f: &Function, found: &mut Found, visit: Option<&mut CallVisitor<'_>>) {
        let mut w = Walk {
            rd: self,
            host: f.kind == FunctionKind::Host,
            vals: vec![Dep::default(); f.values.len()],
            found: Found::default(),
            grew: false,
            last_yield: Vec::new(),
            visit: None,
        };
        for (i, p) in f.params.iter().enumerate() {
            let rank = self.param(&f.name, i);
            w.set(p.value, &Dep { rank, loops: BTreeSet::new() });
        }
        loop {
            w.grew = false;
            w.found = Found::default();
            w.block(&f.body, &Ctl::default());
            if !w.grew {
                break;
            }
        }
        if let Some(v) = visit {
            w.visit = Some(v);
            w.block(&f.body, &Ctl::default());
        }
        if let Some(origin) = w.found.returned {
            found.returns.push((f.name.clone(), origin));
        }
        found.params.append(&mut w.found.params);
    }
}

/// What one walk found about other functions.
#[derive(Debug, Default)]
struct Found {
    /// (callee, parameter index, where the rank-dependent argument came from).
    params: Vec<(String, usize, Origin)>,
    /// (function, where the rank entered what it returns).
    returns: Vec<(String, Span)>,
    /// Where the rank entered a value this function returns.
    returned: Option<Span>,
}

/// One function's walk.
struct Walk<'a, 'v> {
    rd: &'a RankDependence,
    host: bool,
    vals: Vec<Dep>,
    found: Found,
    grew: bool,
    /// The dependences of the values the last block's trailing yield carried.
    last_yield: Vec<Dep>,
    visit: Option<&'a mut CallVisitor<'v>>,
}

impl Walk<'_, '_> {
    fn set(&mut self, v: ValueId, d: &Dep) {
        if let Some(slot) = self.vals.get_mut(v.index()) {
            self.grew |= slot.join(d);
        }
    }

    fn get(&self, v: ValueId) -> Dep {
        self.vals.get(v.index()).cloned().unwrap_or_default()
    }

    fn eval(&mut self, e: &Expr, ctl: &Ctl) -> Dep {
        match &e.kind {
            ExprKind::Var(v) => self.get(*v),
            ExprKind::Binary(_, a, b) => self.eval(a, ctl).with(&self.eval(b, ctl)),
            ExprKind::Unary(_, a) => self.eval(a, ctl),
            ExprKind::Tuple(items) => {
                items.iter().fold(Dep::default(), |acc, x| acc.with(&self.eval(x, ctl)))
            }
            ExprKind::Call(c) => self.call(c, e.span, ctl),
            _ => Dep::default(),
        }
    }

    fn call(&mut self, c: &Call, span: Span, ctl: &Ctl) -> Dep {
        let args: Vec<Dep> = c.args.iter().map(|a| self.eval(a, ctl)).collect();
        let device = c.device.as_ref().map(|d| self.eval(d, ctl));
        for d in c.deps.iter().flatten() {
            self.eval(d, ctl);
        }
        if let Some(v) = self.visit.as_mut() {
            v(c, span, ctl);
        }
        let mut dep = args.iter().fold(Dep::default(), |acc, a| acc.with(a));
        match &c.callee {
            Callee::Op(def) if def.rank_role == RankRole::RankIndex => {
                dep.rank = dep.rank.or(Some(Origin { span, passed: false }))
            }
            Callee::Op(_) => {}
            Callee::Func(name) => {
                if self.rd.returns.contains_key(name) {
                    dep.rank = dep.rank.or(Some(Origin { span, passed: false }));
                }
                for (i, a) in args.iter().enumerate() {
                    // A value that varies with the dispatch's device is passed in here; a
                    // rank-dependent one keeps where the rank entered it.
                    let per_device = device.as_ref().is_some_and(|d| !a.loops.is_disjoint(&d.loops));
                    let passed = per_device.then(|| Origin { span: c.args[i].span.or(span), passed: true });
                    if let Some(origin) = a.rank.or(passed) {
                        if self.rd.param(name, i).is_none() {
                            self.found.params.push((name.clone(), i, origin));
                        }
                    }
                }
            }
        }
        dep
    }

    fn block(&mut self, b: &Block, ctl: &Ctl) -> Ctl {
        let mut cur = ctl.clone();
        let mut escape = Ctl::default();
        self.last_yield.clear();
        for s in &b.stmts {
            let e = self.stmt(s, &cur);
            cur.absorb(&e);
            escape.absorb(&e);
        }
        escape
    }

    /// Walks `s` under `ctl`; returns the control a `return` inside it imposes on what
    /// follows (empty when no rank-dependent return is inside).
    fn stmt(&mut self, s: &Stmt, ctl: &Ctl) -> Ctl {
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                let d = self.eval(value, ctl).with(&ctl.dep);
                targets.iter().for_each(|t| self.set(*t, &d));
                Ctl::default()
            }
            StmtKind::Eval(e) => {
                self.eval(e, ctl);
                Ctl::default()
            }
            StmtKind::Yield(vals) => {
                self.last_yield = vals.iter().map(|v| self.eval(v, ctl)).collect();
                Ctl::default()
            }
            StmtKind::Return(vals) => self.ret(vals, ctl, s.span),
            StmtKind::For { var, start, stop, step, iter_args, body, results, .. } => {
                let mut bounds = Dep::default();
                let mut cond = s.span;
                for x in [start, stop, step] {
                    let d = self.eval(x, ctl);
                    if bounds.rank.is_none() && d.rank.is_some() {
                        cond = x.span.or(s.span);
                    }
                    bounds.join(&d);
                }
                let mut v = bounds.clone().with(&ctl.dep);
                if self.host {
                    v.loops.insert(*var);
                }
                self.set(*var, &v);
                let inner = ctl.enter(&bounds, DivergenceKind::TripCount, cond);
                self.inits(iter_args, ctl);
                self.looped(iter_args, body, results, ctl, &inner, &bounds)
            }
            StmtKind::While { iter_args, cond, body, results } => {
                self.inits(iter_args, ctl);
                let c = self.eval(cond, ctl);
                let inner = ctl.enter(&c, DivergenceKind::LoopCondition, cond.span.or(s.span));
                self.looped(iter_args, body, results, ctl, &inner, &c)
            }
            StmtKind::If { cond, then_body, else_body, results } => {
                let c = self.eval(cond, ctl);
                let inner = ctl.enter(&c, DivergenceKind::Branch, cond.span.or(s.span));
                let mut escape = self.block(then_body, &inner);
                let mut merged = std::mem::take(&mut self.last_yield);
                escape.absorb(&self.block(else_body, &inner));
                for (m, y) in merged.iter_mut().zip(std::mem::take(&mut self.last_yield)) {
                    m.join(&y);
                }
                let base = c.with(&ctl.dep);
                for (i, r) in results.iter().enumerate() {
                    let d = merged.get(i).cloned().unwrap_or_default().with(&base);
                    self.set(*r, &d);
                }
                escape
            }
            StmtKind::Scope { kind, args, body, .. } => {
                args.iter().for_each(|a| {
                    self.eval(a, ctl);
                });
                match kind {
                    ScopeKind::At { task: Some(v) } | ScopeKind::SplitAiv { lane: Some(v) } => {
                        self.set(*v, &ctl.dep.clone())
                    }
                    _ => {}
                }
                self.block(body, ctl)
            }
        }
    }

    fn inits(&mut self, iter_args: &[IterArg], ctl: &Ctl) {
        for a in iter_args {
            let d = self.eval(&a.init, ctl).with(&ctl.dep);
            self.set(a.value, &d);
        }
    }

    /// A loop's body under `inner` (its iter-args already initialised): its yields flow back
    /// into the iter-args, and the results depend on them and on what decides the trip count
    /// (`trip`).
    fn looped(
        &mut self,
        iter_args: &[IterArg],
        body: &Block,
        results: &[ValueId],
        ctl: &Ctl,
        inner: &Ctl,
        trip: &Dep,
    ) -> Ctl {
        let escape = self.block(body, inner);
        let yielded = std::mem::take(&mut self.last_yield);
        for (a, y) in iter_args.iter().zip(&yielded) {
            self.set(a.value, y);
        }
        let base = trip.clone().with(&ctl.dep);
        for (i, r) in results.iter().enumerate() {
            let d = iter_args.get(i).map(|a| self.get(a.value)).unwrap_or_default().with(&base);
            self.set(*r, &d);
        }
        escape
    }

    fn ret(&mut self, vals: &[Expr], ctl: &Ctl, span: Span) -> Ctl {
        let mut d = ctl.dep.clone();
        for v in vals {
            d.join(&self.eval(v, ctl));
        }
        if let Some(origin) = d.rank {
            self.found.returned = self.found.returned.or(Some(origin.span));
        }
        match ctl.why {
            Some(w) => Ctl {
                dep: ctl.dep.clone(),
                why: Some(Divergence { early_return: w.early_return.or(Some(span)), ..w }),
            },
            None => Ctl { dep: ctl.dep.clone(), why: None },
        }
    }
}
