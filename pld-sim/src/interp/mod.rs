//! The resumable interpreter shared by the host orchestrator, chip orchestrators and cores.
//!
//! A [`Thread`] executes one function's structured body through an explicit frame stack
//! (blocks with a program counter, loop and if frames), so it can stop after any statement and
//! resume later: a `wait` whose predicate fails leaves the program counter on the wait, the
//! thread parks, and the scheduler resumes it when the awaited cell changes. Protocol ops run
//! as micro programs ahead of the frames. Guarantees: one statement per step, deterministic
//! evaluation order (arguments left to right), every failure a [`Fault`] with the span of the
//! statement or op that caused it — never a panic.

use crate::micro::{MicroRun, MicroStep};
use crate::report::Fault;
use crate::sem::{self, CollFn, Flow, Level, OpCx, Park, SemKind};
use crate::value::{Mem, Val};
use crate::world::World;
use pld_ir::{
    BinOp, Call, Callee, Expr, ExprKind, Function, FunctionKind, IterArg, Program, Span, Stmt, StmtKind,
    UnOp, ValueId,
};
use std::collections::HashMap;
use std::sync::Arc;

mod call;
mod eval;
mod live;
mod shapes;

pub use live::Lives;

use call::*;
use eval::*;

/// Work a rank can be given.
#[derive(Clone)]
pub enum Job<'p> {
    /// Run a function (chip orchestration or kernel) with bound arguments.
    Func {
        /// The function.
        func: &'p Function,
        /// Arguments.
        args: Vec<Val>,
    },
    /// Run a protocol op's micro program.
    Collective {
        /// Builder.
        f: CollFn,
        /// The call.
        call: &'p Call,
        /// Arguments.
        args: Vec<Val>,
        /// Span.
        span: Span,
    },
}

impl Job<'_> {
    /// Name for reports.
    pub fn name(&self) -> String {
        match self {
            Job::Func { func, .. } => func.name.clone(),
            Job::Collective { call, .. } => call.callee.name().to_string(),
        }
    }
}

/// Requests a thread makes of the scheduler.
pub enum Req<'p> {
    /// Host → rank queue.
    Dispatch {
        /// Global rank.
        rank: usize,
        /// Work.
        job: Job<'p>,
    },
    /// Chip orchestrator → task graph of its rank. Tasks are numbered in launch order within
    /// the dispatch (the number is the task id a submit returns).
    Launch {
        /// Work.
        job: Job<'p>,
        /// Explicit dependencies (`deps=[...]`): ids of tasks launched earlier.
        deps: Vec<usize>,
        /// Launched inside `pl.manual_scope()`: only the explicit edges order it.
        manual: bool,
    },
    /// Host → a host callback (`role=pl.Role.SubWorker`), run after every earlier dispatch.
    Callback {
        /// The callback.
        func: &'p Function,
        /// Its arguments.
        args: Vec<Val>,
        /// The call site.
        span: Span,
    },
}

enum Frame<'p> {
    /// A block being run: its statements, the next one's index, its id in the function's
    /// [`live::Live`] and the last position whose dead values were dropped.
    Block {
        stmts: &'p [Stmt],
        pc: usize,
        block: u32,
        dropped: usize,
    },
    For {
        stmt: &'p Stmt,
        cur: i64,
        stop: i64,
        step: i64,
    },
    While {
        stmt: &'p Stmt,
    },
    If,
    /// A scope's end: restores the comm domain and leaves a manual scope.
    Domain {
        prev: usize,
        pushed: bool,
        manual: bool,
    },
}

struct Act<'p> {
    func: &'p Function,
    env: Vec<Option<Val>>,
    frames: Vec<Frame<'p>>,
    ret_targets: Vec<ValueId>,
    /// Where each value of `func` is read for the last time (shared through [`Lives`]).
    live: Arc<live::Live>,
}

impl<'p> Act<'p> {
    /// Drops the values dead on reaching position `pos` of block `block`.
    fn drop_at(&mut self, block: u32, pos: usize) {
        for v in self.live.at(block, pos) {
            if let Some(slot) = self.env.get_mut(v.index()) {
                *slot = None;
            }
        }
    }

    /// Drops the values dead after the head of the loop at `pos` of `block`.
    fn drop_after_head(&mut self, block: u32, pos: usize) {
        for v in self.live.head(block, pos) {
            if let Some(slot) = self.env.get_mut(v.index()) {
                *slot = None;
            }
        }
    }

    /// Enters block `block` (`stmts`), dropping the values dead on entering it.
    fn push_block(&mut self, stmts: &'p [Stmt], block: u32) {
        self.frames.push(Frame::Block { stmts, pc: 0, block, dropped: 0 });
        self.drop_at(block, 0);
    }

    /// The block on top and the position of the statement it last started (the one being
    /// executed, once `advance` has moved past it).
    fn started(&self) -> (u32, usize) {
        let (block, pc) = self.next();
        (block, pc.saturating_sub(1))
    }

    /// The block on top and the position of its next statement.
    fn next(&self) -> (u32, usize) {
        match self.frames.last() {
            Some(Frame::Block { pc, block, .. }) => (*block, *pc),
            _ => (u32::MAX, 0),
        }
    }
}

/// Outcome of one step.
#[derive(Debug, PartialEq, Eq)]
pub enum StepOut {
    /// Ran a statement with no cross-rank effect.
    Ran,
    /// Ran an op (a scheduling point).
    Visible,
    /// Blocked.
    Parked,
    /// Finished.
    Done,
}

/// Shared read-only inputs of a step.
pub struct Env<'s, 'p> {
    /// Bound symbolic dims.
    pub syms: &'s HashMap<String, i64>,
    /// The program.
    pub program: &'p Program,
    /// The liveness of the program's functions, shared by the run's threads.
    pub lives: &'s Lives,
}

/// One interpreter thread.
pub struct Thread<'p> {
    /// Global rank (`usize::MAX` on the host).
    pub rank: usize,
    /// Level.
    pub level: Level,
    /// Name for reports (shared with each step's evaluation context without a copy).
    pub name: Arc<str>,
    acts: Vec<Act<'p>>,
    /// The running micro program.
    pub micro: Option<MicroRun>,
    /// Where the thread is parked, with the span of the wait.
    pub parked: Option<(Park, Span)>,
    /// Deferred completion conditions registered by this kernel.
    pub defers: Vec<Park>,
    /// Current comm domain (host).
    pub domain: usize,
    /// Return values once finished.
    pub result: Option<Vec<Val>>,
    /// Span of the last op executed (trace and reports).
    pub last_op: Option<(&'static str, Span)>,
    /// The last wait this thread parked on (budget and interrupt reports).
    pub last_wait: Option<(Park, Span)>,
    /// The mixed-kernel group this lane belongs to (`group` attribute of `k_aic`/`k_aiv`).
    pub group: Option<String>,
    /// Tasks this (chip orchestration) thread has launched; the next one's id.
    launched: usize,
    /// Depth of the `pl.manual_scope()` regions it is in.
    manual: usize,
    /// Comm-less dispatches (no `device=`) this host thread has made.
    commless: usize,
    /// The argument vector of the last op call, emptied, for the next one's arguments.
    spare_args: Vec<Val>,
}

fn env_size(f: &Function) -> usize {
    f.values.len()
}

impl<'p> Thread<'p> {
    /// A thread named `name` with nothing to run yet.
    fn idle(name: String, rank: usize, level: Level) -> Thread<'p> {
        Thread {
            rank,
            level,
            name: name.into(),
            acts: Vec::new(),
            micro: None,
            parked: None,
            defers: Vec::new(),
            domain: 0,
            result: None,
            last_op: None,
            last_wait: None,
            group: None,
            launched: 0,
            manual: 0,
            commless: 0,
            spare_args: Vec::new(),
        }
    }

    /// A thread running `func` with `args` bound to its parameters (its liveness from `lives`).
    pub fn new(
        func: &'p Function,
        args: Vec<Val>,
        rank: usize,
        level: Level,
        lives: &Lives,
    ) -> Result<Thread<'p>, Fault> {
        let mut t = Thread::idle(func.name.clone(), rank, level);
        t.group = func.attr("group").and_then(|a| a.as_str()).map(str::to_string);
        t.push_act(func, args, Vec::new(), lives)?;
        Ok(t)
    }

    /// A thread that only runs a micro program.
    pub fn micro(name: String, run: MicroRun, rank: usize) -> Thread<'p> {
        Thread { micro: Some(run), ..Thread::idle(name, rank, Level::Core) }
    }

    fn push_act(
        &mut self,
        func: &'p Function,
        args: Vec<Val>,
        ret_targets: Vec<ValueId>,
        lives: &Lives,
    ) -> Result<(), Fault> {
        if args.len() != func.params.len() {
            return Err(Fault::runtime(
                func.span,
                format!(
                    "call of '{}' with {} arguments, but it takes {}",
                    func.name,
                    args.len(),
                    func.params.len()
                ),
            ));
        }
        let mut env = vec![None; env_size(func)];
        for (p, mut a) in func.params.iter().zip(args) {
            // A packed view whose shape differs from a static parameter shape of the same
            // element count takes the parameter's shape (a `[64]` window passed as `[1, 64]`).
            if let (Val::Tensor(t), Some(pt)) = (&mut a, func.values.ty(p.value).as_tensor_like()) {
                if let Some(ps) = pt.static_shape() {
                    if *ps != *t.shape
                        && ps.iter().product::<i64>() == t.numel()
                        && t.strides == crate::value::TRef::packed_strides(&t.shape)
                    {
                        let t = Arc::make_mut(t);
                        t.strides = crate::value::TRef::packed_strides(&ps);
                        t.shape = ps.into();
                    }
                }
            }
            if let Some(slot) = env.get_mut(p.value.index()) {
                *slot = Some(a);
            }
        }
        let mut act = Act { func, env, frames: Vec::new(), ret_targets, live: lives.of(func) };
        act.push_block(&func.body.stmts, 0);
        self.acts.push(act);
        Ok(())
    }

    /// Whether the thread has finished.
    pub fn done(&self) -> bool {
        self.result.is_some()
    }

    /// Executes one statement (or one micro instruction); `who` is the thread's name
    /// ([`Thread::name`]), which the caller holds across its steps (a clone per step was an
    /// atomic increment and decrement each).
    pub fn step(
        &mut self,
        world: &mut World,
        env: &Env<'_, 'p>,
        reqs: &mut Vec<Req<'p>>,
        who: &str,
    ) -> Result<StepOut, Fault>
    where
        'p: 'p,
    {
        if self.result.is_some() {
            return Ok(StepOut::Done);
        }
        if let Some(m) = &mut self.micro {
            return match m.step(world, self.rank, &self.name, self.group.as_deref())? {
                MicroStep::Ran => Ok(StepOut::Visible),
                MicroStep::Park(p) => {
                    self.parked = Some((p, m.span));
                    self.last_wait.clone_from(&self.parked);
                    Ok(StepOut::Parked)
                }
                MicroStep::Done => {
                    self.micro = None;
                    if self.acts.is_empty() {
                        self.result = Some(Vec::new());
                        return Ok(StepOut::Done);
                    }
                    Ok(StepOut::Visible)
                }
            };
        }
        self.parked = None;
        let mut ecx_store = Ecx {
            world,
            reqs,
            level: self.level,
            rank: self.rank,
            domain: self.domain,
            who,
            launched: self.launched,
            manual: self.manual > 0,
            commless: self.commless,
        };
        let ecx = &mut ecx_store;
        let Some(act) = self.acts.last_mut() else {
            self.result.get_or_insert_with(Vec::new);
            return Ok(StepOut::Done);
        };
        // Find the next statement, unwinding finished blocks.
        loop {
            let Some(top) = act.frames.last_mut() else {
                return self.finish_act(Vec::new());
            };
            match top {
                Frame::Block { stmts, pc, block, dropped } if *pc < stmts.len() => {
                    let (b, pc, from) = (*block, *pc, *dropped);
                    *dropped = pc;
                    (from + 1..=pc).for_each(|k| act.drop_at(b, k));
                    break;
                }
                Frame::Block { stmts, block, dropped, .. } => {
                    let (b, end, from) = (*block, stmts.len(), *dropped);
                    (from + 1..=end).for_each(|k| act.drop_at(b, k));
                    act.frames.pop();
                    match act.frames.last_mut() {
                        Some(Frame::For { stmt, cur, stop, step }) => {
                            let stmt = *stmt;
                            let StmtKind::For { var, body, iter_args, results, .. } = &stmt.kind else {
                                break;
                            };
                            *cur += *step;
                            let again = if *step > 0 { *cur < *stop } else { *cur > *stop };
                            if again {
                                let c = *cur;
                                set(&mut act.env, *var, Val::Int(c));
                                act.push_block(&body.stmts, b);
                                if body.stmts.is_empty() {
                                    // An iteration with nothing to run is still a step, so the
                                    // step budget bounds an empty loop (D-sim budget).
                                    return Ok(StepOut::Ran);
                                }
                            } else {
                                exit_loop(act, iter_args, results, stmt.span)?;
                            }
                        }
                        Some(Frame::While { stmt }) => {
                            let stmt = *stmt;
                            let StmtKind::While { cond, body, iter_args, results } = &stmt.kind else {
                                break;
                            };
                            let c = eval_pure(act, cond, env, ecx)?;
                            if c.truthy()
                                .ok_or_else(|| Fault::runtime(cond.span, "while condition is not a scalar"))?
                            {
                                act.push_block(&body.stmts, b);
                                if body.stmts.is_empty() {
                                    return Ok(StepOut::Ran);
                                }
                            } else {
                                exit_loop(act, iter_args, results, stmt.span)?;
                            }
                        }
                        Some(Frame::If) => {
                            act.frames.pop();
                        }
                        Some(Frame::Domain { prev, pushed, manual }) => {
                            self.domain = *prev;
                            self.manual -= usize::from(*manual);
                            if *pushed {
                                ecx.world.exit_scope();
                            }
                            act.frames.pop();
                        }
                        _ => {}
                    }
                }
                _ => {
                    // Loop/if frames always have their block above them.
                    act.frames.pop();
                }
            }
        }
        let Some(Frame::Block { stmts, pc, .. }) = act.frames.last() else {
            return Ok(StepOut::Ran);
        };
        let stmt: &'p Stmt = &stmts[*pc];
        let at = *pc;
        let out = self.exec(stmt, at, ecx, env);
        self.launched = ecx.launched;
        self.commless = ecx.commless;
        out
    }

    /// The function this thread is in and the span of the statement it runs next (or of
    /// its running micro program), for budget and interrupt reports.
    pub fn position(&self) -> (String, Span) {
        if let Some(m) = &self.micro {
            return (self.name.to_string(), m.span);
        }
        let Some(act) = self.acts.last() else {
            return (self.name.to_string(), Span::DUMMY);
        };
        let span = act.frames.iter().rev().find_map(|f| match f {
            Frame::Block { stmts, pc, .. } => stmts.get(*pc).or(stmts.last()).map(|s| s.span),
            Frame::For { stmt, .. } | Frame::While { stmt } => Some(stmt.span),
            _ => None,
        });
        (act.func.name.clone(), span.unwrap_or(act.func.span))
    }

    fn advance(&mut self) {
        if let Some(act) = self.acts.last_mut() {
            if let Some(Frame::Block { pc, .. }) = act.frames.last_mut() {
                *pc += 1;
            }
        }
    }

    fn finish_act(&mut self, vals: Vec<Val>) -> Result<StepOut, Fault> {
        let Some(act) = self.acts.pop() else {
            return Ok(StepOut::Done);
        };
        if let Some(caller) = self.acts.last_mut() {
            assign_targets(&mut caller.env, &act.ret_targets, bundle(vals), act.func.span)?;
            Ok(StepOut::Ran)
        } else {
            self.result = Some(vals);
            Ok(StepOut::Done)
        }
    }

    fn exec(
        &mut self,
        stmt: &'p Stmt,
        _at: usize,
        ecx: &mut Ecx<'_, 'p>,
        env: &Env<'_, 'p>,
    ) -> Result<StepOut, Fault> {
        let span = stmt.span;
        match &stmt.kind {
            StmtKind::Assign { value, .. } | StmtKind::Eval(value) => {
                let targets: &'p [ValueId] = match &stmt.kind {
                    StmtKind::Assign { targets, .. } => targets,
                    _ => &[],
                };
                if let ExprKind::Call(call) = &value.kind {
                    return self.exec_call(call, value.span.or(span), targets, ecx, env);
                }
                let act = self.acts.last_mut().ok_or_else(|| Fault::runtime(span, "no frame"))?;
                let v = eval_pure(act, value, env, ecx)?;
                assign_targets(&mut act.env, targets, v, span)?;
                self.advance();
                Ok(StepOut::Ran)
            }
            StmtKind::For { var, start, stop, step, iter_args, body, results, .. } => {
                self.advance();
                let act = self.acts.last_mut().ok_or_else(|| Fault::runtime(span, "no frame"))?;
                let int = |act: &Act<'p>, e: &'p Expr, ecx: &mut Ecx<'_, 'p>| -> Result<i64, Fault> {
                    eval_pure(act, e, env, ecx)?
                        .as_i64()
                        .ok_or_else(|| Fault::runtime(e.span, "loop bound is not an integer"))
                };
                let (a, b, s) = (int(act, start, ecx)?, int(act, stop, ecx)?, int(act, step, ecx)?);
                if s == 0 {
                    return Err(Fault::runtime(span, "loop step is zero"));
                }
                carry_in(act, iter_args, env, ecx)?;
                let (block, at) = act.started();
                act.drop_after_head(block, at);
                let enter = if s > 0 { a < b } else { a > b };
                if enter {
                    set(&mut act.env, *var, Val::Int(a));
                    act.frames.push(Frame::For { stmt, cur: a, stop: b, step: s });
                    act.push_block(&body.stmts, act.live.nested(block, at, 0));
                } else {
                    carry_out(act, iter_args, results, span)?;
                }
                Ok(StepOut::Ran)
            }
            StmtKind::While { iter_args, cond, body, results } => {
                self.advance();
                let act = self.acts.last_mut().ok_or_else(|| Fault::runtime(span, "no frame"))?;
                carry_in(act, iter_args, env, ecx)?;
                let (block, at) = act.started();
                act.drop_after_head(block, at);
                let c = eval_pure(act, cond, env, ecx)?;
                if c.truthy().ok_or_else(|| Fault::runtime(cond.span, "while condition is not a scalar"))? {
                    act.frames.push(Frame::While { stmt });
                    act.push_block(&body.stmts, act.live.nested(block, at, 0));
                } else {
                    carry_out(act, iter_args, results, span)?;
                }
                Ok(StepOut::Ran)
            }
            StmtKind::If { cond, then_body, else_body, .. } => {
                self.advance();
                let act = self.acts.last_mut().ok_or_else(|| Fault::runtime(span, "no frame"))?;
                let c = eval_pure(act, cond, env, ecx)?;
                let b =
                    c.truthy().ok_or_else(|| Fault::runtime(cond.span, "if condition is not a scalar"))?;
                ecx.world.branches_mut().record(span, ecx.rank, b);
                let (block, at) = act.started();
                act.frames.push(Frame::If);
                let (stmts, k) = if b { (&then_body.stmts, 0) } else { (&else_body.stmts, 1) };
                act.push_block(stmts, act.live.nested(block, at, k));
                Ok(StepOut::Ran)
            }
            StmtKind::Scope { kind, body, args, .. } => self.enter_scope(kind, body, args, span, ecx),
            StmtKind::Yield(vals) => {
                self.advance();
                let act = self.acts.last_mut().ok_or_else(|| Fault::runtime(span, "no frame"))?;
                let vs: Vec<Val> =
                    vals.iter().map(|e| eval_pure(act, e, env, ecx)).collect::<Result<_, _>>()?;
                // The innermost loop/if owning this block receives the values.
                let owner = act
                    .frames
                    .iter()
                    .rev()
                    .find(|f| !matches!(f, Frame::Block { .. } | Frame::Domain { .. }));
                let targets: Vec<ValueId> = match owner {
                    Some(Frame::For { stmt, .. }) | Some(Frame::While { stmt }) => match &stmt.kind {
                        StmtKind::For { iter_args, .. } | StmtKind::While { iter_args, .. } => {
                            iter_args.iter().map(|a| a.value).collect()
                        }
                        _ => Vec::new(),
                    },
                    Some(Frame::If) => if_results(act, span),
                    _ => Vec::new(),
                };
                for (t, v) in targets.iter().zip(vs) {
                    set(&mut act.env, *t, v);
                }
                Ok(StepOut::Ran)
            }
            StmtKind::Return(vals) => {
                let act = self.acts.last_mut().ok_or_else(|| Fault::runtime(span, "no frame"))?;
                let vs: Vec<Val> =
                    vals.iter().map(|e| eval_pure(act, e, env, ecx)).collect::<Result<_, _>>()?;
                self.finish_act(vs)
            }
        }
    }

    /// Enters a scope statement: a `pl.at` region (run inline), a `split_aiv` region (as
    /// vector sub-lane 0), a comm domain (found or carved) or a manual-dependency scope.
    fn enter_scope(
        &mut self,
        kind: &'p pld_ir::ScopeKind,
        body: &'p pld_ir::Block,
        args: &'p [Expr],
        span: Span,
        ecx: &mut Ecx<'_, 'p>,
    ) -> Result<StepOut, Fault> {
        if let pld_ir::ScopeKind::At { task } = kind {
            if task.is_some() || !args.is_empty() {
                return Err(Fault::runtime(
                    span,
                    "this pl.at region has a task id or deps=[...]: it runs as a task only once OutlineIncoreScopes has outlined it",
                )
                .note("run the pass pipeline first (`pld run` does)"));
            }
        }
        self.advance();
        // A split_aiv region runs here as vector sub-lane 0.
        if let pld_ir::ScopeKind::SplitAiv { lane: Some(v) } = kind {
            if let Some(act) = self.acts.last_mut() {
                set(&mut act.env, *v, Val::Int(0));
            }
        }
        let prev = self.domain;
        let mut pushed = false;
        if let pld_ir::ScopeKind::CommDomain { devices, windows, .. } = kind {
            let members: Vec<usize> = if devices.is_empty() {
                (0..ecx.world.nranks()).collect()
            } else {
                devices.iter().map(|&d| d as usize).collect()
            };
            if let Some(&bad) = members.iter().find(|&&m| m >= ecx.world.nranks()) {
                return Err(Fault::runtime(
                    span,
                    format!("comm domain names device {bad} but the world has {} ranks", ecx.world.nranks()),
                ));
            }
            self.domain = ecx.world.open_comm_domain(members);
            ecx.domain = self.domain;
            ecx.world.enter_scope(self.domain, windows.clone());
            pushed = true;
        }
        let manual = matches!(kind, pld_ir::ScopeKind::Manual);
        self.manual += usize::from(manual);
        let act = self.acts.last_mut().ok_or_else(|| Fault::runtime(span, "no frame"))?;
        let (block, at) = act.started();
        act.frames.push(Frame::Domain { prev, pushed, manual });
        act.push_block(&body.stmts, act.live.nested(block, at, 0));
        Ok(StepOut::Ran)
    }
}

/// Enters a loop: each iter-arg takes its initial value.
fn carry_in<'p>(
    act: &mut Act<'p>,
    iter_args: &'p [IterArg],
    env: &Env<'_, 'p>,
    ecx: &mut Ecx<'_, 'p>,
) -> Result<(), Fault> {
    for ia in iter_args {
        let v = eval_pure(act, &ia.init, env, ecx)?;
        set(&mut act.env, ia.value, v);
    }
    Ok(())
}

/// Leaves a loop: each result takes its iter-arg's last value.
fn carry_out(act: &mut Act<'_>, iter_args: &[IterArg], results: &[ValueId], span: Span) -> Result<(), Fault> {
    for (ia, r) in iter_args.iter().zip(results) {
        let v = get(&act.env, ia.value, span)?;
        set(&mut act.env, *r, v);
    }
    Ok(())
}

/// Leaves the loop on top of `act`'s frames ([`carry_out`], then its frame goes).
fn exit_loop(act: &mut Act<'_>, iter_args: &[IterArg], results: &[ValueId], span: Span) -> Result<(), Fault> {
    carry_out(act, iter_args, results, span)?;
    act.frames.pop();
    Ok(())
}

fn if_results(act: &Act<'_>, _span: Span) -> Vec<ValueId> {
    // The If frame sits under its block; the statement that pushed it is the one before the
    // enclosing block's pc.
    let n = act.frames.len();
    for i in (0..n).rev() {
        if let Frame::If = act.frames[i] {
            if i > 0 {
                if let Frame::Block { stmts, pc, .. } = &act.frames[i - 1] {
                    if let Some(Stmt { kind: StmtKind::If { results, .. }, .. }) =
                        pc.checked_sub(1).and_then(|p| stmts.get(p))
                    {
                        return results.clone();
                    }
                }
            }
            break;
        }
    }
    Vec::new()
}
