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
    BinOp, Call, Callee, Expr, ExprKind, Function, FunctionKind, Program, Span, Stmt, StmtKind, UnOp, ValueId,
};
use std::collections::HashMap;

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
    Block {
        stmts: &'p [Stmt],
        pc: usize,
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
}

/// One interpreter thread.
pub struct Thread<'p> {
    /// Global rank (`usize::MAX` on the host).
    pub rank: usize,
    /// Level.
    pub level: Level,
    /// Name for reports.
    pub name: String,
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
    pub last_op: Option<(String, Span)>,
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
}

/// Whether a dispatched job passes window-bound tensors (which pin it to their rank).
fn job_uses_windows(job: &Job<'_>) -> bool {
    let (Job::Func { args, .. } | Job::Collective { args, .. }) = job;
    let mut window = false;
    args.iter().for_each(|a| a.for_each_tensor(&mut |t| window |= matches!(t.mem, Mem::Window { .. })));
    window
}

fn env_size(f: &Function) -> usize {
    f.values.len()
}

impl<'p> Thread<'p> {
    /// A thread running `func` with `args` bound to its parameters.
    pub fn new(func: &'p Function, args: Vec<Val>, rank: usize, level: Level) -> Result<Thread<'p>, Fault> {
        let mut t = Thread {
            rank,
            level,
            name: func.name.clone(),
            acts: Vec::new(),
            micro: None,
            parked: None,
            defers: Vec::new(),
            domain: 0,
            result: None,
            last_op: None,
            last_wait: None,
            group: func.attr("group").and_then(|a| a.as_str()).map(str::to_string),
            launched: 0,
            manual: 0,
            commless: 0,
        };
        t.push_act(func, args, Vec::new())?;
        Ok(t)
    }

    /// A thread that only runs a micro program.
    pub fn micro(name: String, run: MicroRun, rank: usize) -> Thread<'p> {
        Thread {
            rank,
            level: Level::Core,
            name,
            acts: Vec::new(),
            micro: Some(run),
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
        }
    }

    fn push_act(
        &mut self,
        func: &'p Function,
        args: Vec<Val>,
        ret_targets: Vec<ValueId>,
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
                    if ps != t.shape
                        && ps.iter().product::<i64>() == t.numel()
                        && t.strides == crate::value::TRef::packed_strides(&t.shape)
                    {
                        t.strides = crate::value::TRef::packed_strides(&ps);
                        t.shape = ps;
                    }
                }
            }
            if let Some(slot) = env.get_mut(p.value.index()) {
                *slot = Some(a);
            }
        }
        self.acts.push(Act {
            func,
            env,
            frames: vec![Frame::Block { stmts: &func.body.stmts, pc: 0 }],
            ret_targets,
        });
        Ok(())
    }

    /// Whether the thread has finished.
    pub fn done(&self) -> bool {
        self.result.is_some()
    }

    /// Executes one statement (or one micro instruction).
    pub fn step(
        &mut self,
        world: &mut World,
        env: &Env<'_, 'p>,
        reqs: &mut Vec<Req<'p>>,
    ) -> Result<StepOut, Fault>
    where
        'p: 'p,
    {
        if self.result.is_some() {
            return Ok(StepOut::Done);
        }
        if let Some(m) = &mut self.micro {
            return match m.step(world, self.rank, &self.name)? {
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
            who: self.name.clone(),
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
                Frame::Block { stmts, pc } if *pc < stmts.len() => break,
                Frame::Block { .. } => {
                    act.frames.pop();
                    match act.frames.last_mut() {
                        Some(Frame::For { stmt, cur, stop, step }) => {
                            let StmtKind::For { var, body, iter_args, results, .. } = &stmt.kind else {
                                break;
                            };
                            *cur += *step;
                            let again = if *step > 0 { *cur < *stop } else { *cur > *stop };
                            if again {
                                let c = *cur;
                                set(&mut act.env, *var, Val::Int(c));
                                act.frames.push(Frame::Block { stmts: &body.stmts, pc: 0 });
                                if body.stmts.is_empty() {
                                    // An iteration with nothing to run is still a step, so the
                                    // step budget bounds an empty loop (D-sim budget).
                                    return Ok(StepOut::Ran);
                                }
                            } else {
                                for (ia, r) in iter_args.iter().zip(results) {
                                    let v = get(&act.env, ia.value, stmt.span)?;
                                    set(&mut act.env, *r, v);
                                }
                                act.frames.pop();
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
                                act.frames.push(Frame::Block { stmts: &body.stmts, pc: 0 });
                                if body.stmts.is_empty() {
                                    return Ok(StepOut::Ran);
                                }
                            } else {
                                for (ia, r) in iter_args.iter().zip(results) {
                                    let v = get(&act.env, ia.value, stmt.span)?;
                                    set(&mut act.env, *r, v);
                                }
                                act.frames.pop();
                            }
                        }
                        Some(Frame::If) => {
                            act.frames.pop();
                        }
                        Some(Frame::Domain { prev, pushed, manual }) => {
                            self.domain = *prev;
                            self.manual -= usize::from(*manual);
                            if *pushed {
                                ecx.world.scope_stack.pop();
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
        let Some(Frame::Block { stmts, pc }) = act.frames.last() else {
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
            return (self.name.clone(), m.span);
        }
        let Some(act) = self.acts.last() else {
            return (self.name.clone(), Span::DUMMY);
        };
        let span = act.frames.iter().rev().find_map(|f| match f {
            Frame::Block { stmts, pc } => stmts.get(*pc).or(stmts.last()).map(|s| s.span),
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
                for ia in iter_args {
                    let v = eval_pure(act, &ia.init, env, ecx)?;
                    set(&mut act.env, ia.value, v);
                }
                let enter = if s > 0 { a < b } else { a > b };
                if enter {
                    set(&mut act.env, *var, Val::Int(a));
                    act.frames.push(Frame::For { stmt, cur: a, stop: b, step: s });
                    act.frames.push(Frame::Block { stmts: &body.stmts, pc: 0 });
                } else {
                    for (ia, r) in iter_args.iter().zip(results) {
                        let v = get(&act.env, ia.value, span)?;
                        set(&mut act.env, *r, v);
                    }
                }
                Ok(StepOut::Ran)
            }
            StmtKind::While { iter_args, cond, body, results } => {
                self.advance();
                let act = self.acts.last_mut().ok_or_else(|| Fault::runtime(span, "no frame"))?;
                for ia in iter_args {
                    let v = eval_pure(act, &ia.init, env, ecx)?;
                    set(&mut act.env, ia.value, v);
                }
                let c = eval_pure(act, cond, env, ecx)?;
                if c.truthy().ok_or_else(|| Fault::runtime(cond.span, "while condition is not a scalar"))? {
                    act.frames.push(Frame::While { stmt });
                    act.frames.push(Frame::Block { stmts: &body.stmts, pc: 0 });
                } else {
                    for (ia, r) in iter_args.iter().zip(results) {
                        let v = get(&act.env, ia.value, span)?;
                        set(&mut act.env, *r, v);
                    }
                }
                Ok(StepOut::Ran)
            }
            StmtKind::If { cond, then_body, else_body, .. } => {
                self.advance();
                let act = self.acts.last_mut().ok_or_else(|| Fault::runtime(span, "no frame"))?;
                let c = eval_pure(act, cond, env, ecx)?;
                let b =
                    c.truthy().ok_or_else(|| Fault::runtime(cond.span, "if condition is not a scalar"))?;
                act.frames.push(Frame::If);
                act.frames
                    .push(Frame::Block { stmts: if b { &then_body.stmts } else { &else_body.stmts }, pc: 0 });
                Ok(StepOut::Ran)
            }
            StmtKind::Scope { kind, body, args, .. } => {
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
                        (0..ecx.world.nranks).collect()
                    } else {
                        devices.iter().map(|&d| d as usize).collect()
                    };
                    if let Some(&bad) = members.iter().find(|&&m| m >= ecx.world.nranks) {
                        return Err(Fault::runtime(
                            span,
                            format!(
                                "comm domain names device {bad} but the world has {} ranks",
                                ecx.world.nranks
                            ),
                        ));
                    }
                    let existing = if ecx.world.reuse.is_some() {
                        ecx.world.domains.iter().position(|d| d.members == members)
                    } else {
                        ecx.world.domains.iter().position(|d| d.members == members && d.allocs.is_empty())
                    };
                    self.domain = existing.unwrap_or_else(|| ecx.world.add_domain(members));
                    ecx.domain = self.domain;
                    ecx.world.scope_stack.push((self.domain, windows.clone()));
                    pushed = true;
                }
                let manual = matches!(kind, pld_ir::ScopeKind::Manual);
                self.manual += usize::from(manual);
                let act = self.acts.last_mut().ok_or_else(|| Fault::runtime(span, "no frame"))?;
                act.frames.push(Frame::Domain { prev, pushed, manual });
                act.frames.push(Frame::Block { stmts: &body.stmts, pc: 0 });
                Ok(StepOut::Ran)
            }
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

    #[allow(clippy::too_many_arguments)]
    fn exec_call(
        &mut self,
        call: &'p Call,
        span: Span,
        targets: &'p [ValueId],
        ecx: &mut Ecx<'_, 'p>,
        env: &Env<'_, 'p>,
    ) -> Result<StepOut, Fault> {
        let act = self.acts.last_mut().ok_or_else(|| Fault::runtime(span, "no frame"))?;
        let args: Vec<Val> =
            call.args.iter().map(|e| eval_pure(act, e, env, ecx)).collect::<Result<_, _>>()?;
        match &call.callee {
            Callee::Func(name) => {
                let f = env
                    .program
                    .function(name)
                    .ok_or_else(|| Fault::runtime(span, format!("call of unknown function '{name}'")))?;
                let device = match &call.device {
                    Some(d) => Some(
                        eval_pure(act, d, env, ecx)?
                            .as_i64()
                            .ok_or_else(|| Fault::runtime(d.span, "device= is not an integer"))?,
                    ),
                    None => None,
                };
                if crate::callback::is_host_callback(f) {
                    if self.level != Level::Host {
                        return Err(Fault::new(
                            crate::report::ReportKind::HostCallback,
                            span,
                            format!("host callback '{name}' is called on a device; it runs on the host only"),
                        )
                        .note(
                            "call it from the host orchestrator, after the dispatches whose results it needs",
                        ));
                    }
                    if device.is_some() {
                        return Err(Fault::new(
                            crate::report::ReportKind::HostCallback,
                            span,
                            format!("host callback '{name}' runs on the host; it takes no device="),
                        ));
                    }
                    let result = crate::callback::call_result(f, &args, span)?;
                    ecx.reqs.push(Req::Callback { func: f, args, span });
                    let act = self.acts.last_mut().ok_or_else(|| Fault::runtime(span, "no frame"))?;
                    assign_targets(&mut act.env, targets, result, span)?;
                    self.advance();
                    return Ok(StepOut::Visible);
                }
                let nested = match self.level {
                    Level::Host => {
                        device.is_none() && matches!(f.kind, FunctionKind::Host | FunctionKind::Opaque)
                    }
                    Level::Chip => !f.kind.is_incore(),
                    Level::Core => true,
                };
                if nested {
                    self.advance();
                    self.push_act(f, args, targets.to_vec())?;
                    return Ok(StepOut::Ran);
                }
                let deps = task_deps(act, call, env, ecx)?;
                let mut result = mapped_return(f, &args);
                let job = Job::Func { func: f, args };
                match self.level {
                    Level::Host => {
                        let r = match device {
                            Some(r) => r,
                            // A comm-less dispatch: placed round-robin over the chips in
                            // submit order, as the reference runner places it.
                            None if !job_uses_windows(&job) => ecx.commless_rank() as i64,
                            None => {
                                return Err(Fault::runtime(
                                    span,
                                    format!("host call of '{name}' passes window tensors, so it needs device=r to pick a rank"),
                                ))
                            }
                        };
                        if r < 0 || r as usize >= ecx.world.nranks {
                            return Err(Fault::new(
                                crate::report::ReportKind::PeerOutOfRange,
                                span,
                                format!(
                                    "dispatch of '{name}' to device {r}, but the world has {} ranks",
                                    ecx.world.nranks
                                ),
                            ));
                        }
                        ecx.reqs.push(Req::Dispatch { rank: r as usize, job });
                    }
                    _ => {
                        let id = ecx.launch(job, deps.unwrap_or_default());
                        if call.is_submit() {
                            result = with_task_id(f, result, id);
                        }
                    }
                }
                let act = self.acts.last_mut().ok_or_else(|| Fault::runtime(span, "no frame"))?;
                assign_targets(&mut act.env, targets, result, span)?;
                self.advance();
                Ok(StepOut::Visible)
            }
            Callee::Op(def) => {
                let Some(kind) = sem::of(def) else {
                    return Err(Fault::runtime(
                        span,
                        format!("op '{}' has no simulator semantics", def.name),
                    )
                    .note("register them in a pld-sim family module with register_semantics!"));
                };
                self.last_op = Some((def.name.to_string(), span));
                let device = match &call.device {
                    Some(d) => Some(eval_pure(act, d, env, ecx)?.as_i64().unwrap_or(-1)),
                    None => None,
                };
                let name = self.name.clone();
                let group = self.group.clone();
                let mut cx = OpCx {
                    world: ecx.world,
                    call,
                    span,
                    level: self.level,
                    rank: self.rank,
                    domain: self.domain,
                    who: &name,
                    group: group.as_deref(),
                };
                let flow = match kind {
                    SemKind::Op(f) => f(&mut cx, &args)?,
                    SemKind::Collective { f, result_arg } => {
                        let result = args.get(result_arg).cloned().unwrap_or(Val::Unit);
                        match self.level {
                            Level::Host => {
                                let ranks: Vec<usize> = match device {
                                    Some(r) if r >= 0 && (r as usize) < cx.world.nranks => vec![r as usize],
                                    Some(r) => {
                                        return Err(Fault::new(
                                            crate::report::ReportKind::PeerOutOfRange,
                                            span,
                                            format!(
                                                "dispatch of '{}' to device {r}, but the world has {} ranks",
                                                def.name, cx.world.nranks
                                            ),
                                        ))
                                    }
                                    None => collective_ranks(cx.world, &args),
                                };
                                for r in ranks {
                                    ecx.reqs.push(Req::Dispatch {
                                        rank: r,
                                        job: Job::Collective { f, call, args: args.clone(), span },
                                    });
                                }
                                Flow::Val(result)
                            }
                            Level::Chip => {
                                ecx.launch(Job::Collective { f, call, args: args.clone(), span }, Vec::new());
                                Flow::Val(result)
                            }
                            Level::Core => Flow::Micro(f(&mut cx, &args)?, result),
                        }
                    }
                };
                let act = self.acts.last_mut().ok_or_else(|| Fault::runtime(span, "no frame"))?;
                match flow {
                    Flow::Val(v) => {
                        assign_targets(&mut act.env, targets, v, span)?;
                        self.advance();
                        Ok(StepOut::Visible)
                    }
                    Flow::Park(p) => {
                        self.parked = Some((p, span));
                        self.last_wait.clone_from(&self.parked);
                        Ok(StepOut::Parked)
                    }
                    Flow::Micro(prog, v) => {
                        assign_targets(&mut act.env, targets, v, span)?;
                        self.advance();
                        if !prog.is_empty() {
                            self.micro = Some(MicroRun::new(prog, span));
                        }
                        Ok(StepOut::Visible)
                    }
                    Flow::Defer(p) => {
                        assign_targets(&mut act.env, targets, Val::Unit, span)?;
                        self.advance();
                        self.defers.push(p);
                        Ok(StepOut::Visible)
                    }
                }
            }
        }
    }
}

/// Ranks a host-level collective runs on: the members of the domain of its first window operand.
fn collective_ranks(world: &World, args: &[Val]) -> Vec<usize> {
    for a in args {
        if let Val::Tensor(t) = a {
            if let Mem::Window { domain, .. } = t.mem {
                return world.domains[domain].members.clone();
            }
        }
    }
    (0..world.nranks).collect()
}

fn if_results(act: &Act<'_>, _span: Span) -> Vec<ValueId> {
    // The If frame sits under its block; the statement that pushed it is the one before the
    // enclosing block's pc.
    let n = act.frames.len();
    for i in (0..n).rev() {
        if let Frame::If = act.frames[i] {
            if i > 0 {
                if let Frame::Block { stmts, pc } = &act.frames[i - 1] {
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

/// The value a launched function's call evaluates to: its returned parameters mapped to the
/// arguments (kernels return the tensors they write, also as rebound by a writing op).
fn mapped_return(f: &Function, args: &[Val]) -> Val {
    let Some(Stmt { kind: StmtKind::Return(vals), .. }) = f.body.stmts.last() else {
        return Val::Unit;
    };
    let mapped: Vec<Val> = vals
        .iter()
        .map(|e| {
            e.as_var()
                .and_then(|v| f.params.iter().position(|p| p.value == v).or_else(|| f.param_of(v)))
                .and_then(|i| args.get(i).cloned())
                .unwrap_or(Val::Unit)
        })
        .collect();
    bundle(mapped)
}

fn bundle(mut vals: Vec<Val>) -> Val {
    match vals.len() {
        0 => Val::Unit,
        1 => vals.pop().unwrap_or(Val::Unit),
        _ => Val::Tuple(vals),
    }
}

fn set(env: &mut [Option<Val>], v: ValueId, val: Val) {
    if let Some(slot) = env.get_mut(v.index()) {
        *slot = Some(val);
    }
}

fn get(env: &[Option<Val>], v: ValueId, span: Span) -> Result<Val, Fault> {
    env.get(v.index())
        .cloned()
        .flatten()
        .ok_or_else(|| Fault::runtime(span, format!("value {v} is used before it is defined")))
}

fn assign_targets(env: &mut [Option<Val>], targets: &[ValueId], v: Val, span: Span) -> Result<(), Fault> {
    match targets.len() {
        0 => Ok(()),
        1 => {
            set(env, targets[0], v);
            Ok(())
        }
        n => match v {
            Val::Tuple(items) if items.len() == n => {
                for (t, x) in targets.iter().zip(items) {
                    set(env, *t, x);
                }
                Ok(())
            }
            other => Err(Fault::runtime(span, format!("cannot unpack a {} into {n} targets", other.kind()))),
        },
    }
}

/// What expression evaluation needs to run nested (non-blocking) op calls.
struct Ecx<'w, 'p> {
    world: &'w mut World,
    reqs: &'w mut Vec<Req<'p>>,
    level: Level,
    rank: usize,
    domain: usize,
    who: String,
    /// Tasks launched so far in this dispatch (the next task's id).
    launched: usize,
    /// Inside `pl.manual_scope()`.
    manual: bool,
    /// Comm-less host dispatches made so far.
    commless: usize,
}

impl<'p> Ecx<'_, 'p> {
    /// The rank of the next comm-less host dispatch (no `device=`): round-robin over the
    /// chips in submit order, as the reference runner places it.
    fn commless_rank(&mut self) -> usize {
        self.commless += 1;
        (self.commless - 1) % self.world.nranks
    }

    /// Launches `job` as a task of this rank's graph; returns its task id.
    fn launch(&mut self, job: Job<'p>, deps: Vec<usize>) -> usize {
        let id = self.launched;
        self.launched += 1;
        self.reqs.push(Req::Launch { job, deps, manual: self.manual });
        id
    }
}

/// The task ids of a submit's `deps=[...]` (`None` for a plain call); each must name a task
/// launched earlier in this dispatch.
fn task_deps<'p>(
    act: &Act<'p>,
    call: &'p Call,
    env: &Env<'_, 'p>,
    ecx: &mut Ecx<'_, 'p>,
) -> Result<Option<Vec<usize>>, Fault> {
    let Some(deps) = &call.deps else { return Ok(None) };
    if ecx.level != Level::Chip {
        return Err(Fault::runtime(
            deps.first().map_or(Span::DUMMY, |d| d.span),
            format!(
                "deps=[...] orders tasks of a chip orchestration; '{}' is not launched as a task here",
                call.callee.name()
            ),
        ));
    }
    let mut ids = Vec::with_capacity(deps.len());
    for d in deps {
        match eval_pure(act, d, env, ecx)?.as_i64() {
            Some(id) if id >= 0 && (id as usize) < ecx.launched => ids.push(id as usize),
            id => {
                let what = id.map_or_else(|| "the dependency".to_string(), |i| format!("task id {i}"));
                return Err(Fault::runtime(
                    d.span,
                    format!("{what} is not the id of a task launched earlier in this dispatch"),
                ));
            }
        }
    }
    Ok(Some(ids))
}

/// A submit's value: the callee's returns followed by the new task's id.
fn with_task_id(f: &Function, result: Val, id: usize) -> Val {
    let id = Val::Int(id as i64);
    match (f.ret.len(), result) {
        (0, _) => id,
        (1, v) => Val::Tuple(vec![v, id]),
        (_, Val::Tuple(mut items)) => {
            items.push(id);
            Val::Tuple(items)
        }
        (_, v) => Val::Tuple(vec![v, id]),
    }
}

/// Evaluates an expression; nested op calls must finish without blocking.
fn eval_pure<'p>(act: &Act<'p>, e: &'p Expr, env: &Env<'_, 'p>, ecx: &mut Ecx<'_, 'p>) -> Result<Val, Fault> {
    Ok(match &e.kind {
        ExprKind::Int(v) => Val::Int(*v),
        ExprKind::Float(f) => Val::Float(f.get()),
        ExprKind::Bool(b) => Val::Bool(*b),
        ExprKind::Str(s) => Val::Str(s.clone()),
        ExprKind::DType(d) => Val::DType(*d),
        ExprKind::Var(v) => get(&act.env, *v, e.span).map_err(|f| {
            let name = act.func.values.name(*v).to_string();
            Fault::runtime(
                f.span,
                format!("value '{name}' is used before it is defined in '{}'", act.func.name),
            )
        })?,
        ExprKind::Sym(s) => Val::Int(
            *env.syms
                .get(s)
                .ok_or_else(|| Fault::runtime(e.span, format!("symbolic dim '{s}' is not bound")))?,
        ),
        ExprKind::Tuple(items) => {
            Val::Tuple(items.iter().map(|x| eval_pure(act, x, env, ecx)).collect::<Result<_, _>>()?)
        }
        ExprKind::Unary(op, a) => {
            let v = eval_pure(act, a, env, ecx)?;
            match (op, v) {
                (UnOp::Neg, Val::Int(i)) => Val::Int(i.wrapping_neg()),
                (UnOp::Neg, Val::Float(f)) => Val::Float(-f),
                (UnOp::Not, v) => {
                    Val::Bool(!v.truthy().ok_or_else(|| Fault::runtime(e.span, "not of a non-scalar"))?)
                }
                (_, v) => return Err(Fault::runtime(e.span, format!("cannot negate a {}", v.kind()))),
            }
        }
        ExprKind::Binary(op, a, b) => {
            binary(*op, eval_pure(act, a, env, ecx)?, eval_pure(act, b, env, ecx)?, e.span)?
        }
        ExprKind::Call(c) => {
            let args: Vec<Val> =
                c.args.iter().map(|x| eval_pure(act, x, env, ecx)).collect::<Result<_, _>>()?;
            let nested_err = || {
                Fault::runtime(e.span, format!("'{}' cannot be nested inside an expression in the simulator; bind it to a value first", c.callee.name()))
            };
            let def = match &c.callee {
                Callee::Op(def) => def,
                Callee::Func(name) => {
                    // Launches and dispatches do not block, so they may sit inside an expression
                    // (`return kernel(x)`); their value is the returned parameters.
                    let f = env.program.function(name).ok_or_else(|| {
                        Fault::runtime(e.span, format!("call of unknown function '{name}'"))
                    })?;
                    let device = match &c.device {
                        Some(d) => Some(
                            eval_pure(act, d, env, ecx)?
                                .as_i64()
                                .ok_or_else(|| Fault::runtime(d.span, "device= is not an integer"))?,
                        ),
                        None => None,
                    };
                    let deps = task_deps(act, c, env, ecx)?;
                    let mut result = mapped_return(f, &args);
                    match (ecx.level, device) {
                        (Level::Chip, None) if f.kind.is_incore() => {
                            let id = ecx.launch(Job::Func { func: f, args }, deps.unwrap_or_default());
                            if c.is_submit() {
                                result = with_task_id(f, result, id);
                            }
                        }
                        (Level::Host, Some(r)) if r >= 0 && (r as usize) < ecx.world.nranks => ecx
                            .reqs
                            .push(Req::Dispatch { rank: r as usize, job: Job::Func { func: f, args } }),
                        (Level::Host, None) if f.kind == FunctionKind::ChipOrch && !c.is_submit() => {
                            let job = Job::Func { func: f, args };
                            if job_uses_windows(&job) {
                                return Err(nested_err());
                            }
                            let rank = ecx.commless_rank();
                            ecx.reqs.push(Req::Dispatch { rank, job });
                        }
                        _ => return Err(nested_err()),
                    }
                    return Ok(result);
                }
            };
            let Some(SemKind::Op(f)) = sem::of(def) else {
                return Err(match sem::of(def) {
                    None => Fault::runtime(e.span, format!("op '{}' has no simulator semantics", def.name)),
                    Some(_) => nested_err(),
                });
            };
            let who = ecx.who.clone();
            let mut cx = OpCx {
                world: ecx.world,
                call: c,
                span: e.span,
                level: ecx.level,
                rank: ecx.rank,
                domain: ecx.domain,
                who: &who,
                group: None,
            };
            match f(&mut cx, &args)? {
                Flow::Val(v) => v,
                _ => return Err(nested_err()),
            }
        }
    })
}

fn binary(op: BinOp, a: Val, b: Val, span: Span) -> Result<Val, Fault> {
    if let (BinOp::Div, Val::Int(x), Val::Int(y)) = (op, &a, &b) {
        // Python true division of integers gives a float.
        return Ok(Val::Float(*x as f64 / *y as f64));
    }
    if let (Val::Int(_) | Val::Bool(_), Val::Int(_) | Val::Bool(_)) = (&a, &b) {
        let (x, y) = (a.as_i64().unwrap_or(0), b.as_i64().unwrap_or(0));
        let v = op.fold_int(x, y).ok_or_else(|| {
            Fault::runtime(
                span,
                format!("integer {} of {x} and {y} failed (division by zero or overflow)", op.symbol()),
            )
        })?;
        return Ok(if op.is_comparison() { Val::Bool(v != 0) } else { Val::Int(v) });
    }
    let (Some(x), Some(y)) = (a.as_f64(), b.as_f64()) else {
        return Err(Fault::runtime(
            span,
            format!("operator {} on {} and {}", op.symbol(), a.kind(), b.kind()),
        ));
    };
    Ok(match op {
        BinOp::Add => Val::Float(x + y),
        BinOp::Sub => Val::Float(x - y),
        BinOp::Mul => Val::Float(x * y),
        BinOp::Div => Val::Float(x / y),
        BinOp::FloorDiv => Val::Float((x / y).floor()),
        BinOp::Mod => Val::Float(x - y * (x / y).floor()),
        BinOp::Min => Val::Float(x.min(y)),
        BinOp::Max => Val::Float(x.max(y)),
        BinOp::Eq => Val::Bool(x == y),
        BinOp::Ne => Val::Bool(x != y),
        BinOp::Lt => Val::Bool(x < y),
        BinOp::Le => Val::Bool(x <= y),
        BinOp::Gt => Val::Bool(x > y),
        BinOp::Ge => Val::Bool(x >= y),
        BinOp::And => Val::Bool(x != 0.0 && y != 0.0),
        BinOp::Or => Val::Bool(x != 0.0 || y != 0.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(op: BinOp, x: Val, y: Val) -> Val {
        binary(op, x, y, Span::DUMMY).expect("binary")
    }

    #[test]
    fn python_scalar_semantics() {
        assert!(matches!(b(BinOp::Div, Val::Int(7), Val::Int(2)), Val::Float(f) if f == 3.5));
        assert!(matches!(b(BinOp::FloorDiv, Val::Int(-7), Val::Int(2)), Val::Int(-4)));
        assert!(matches!(b(BinOp::Mod, Val::Int(-1), Val::Int(4)), Val::Int(3)));
        assert!(matches!(b(BinOp::Lt, Val::Int(1), Val::Int(2)), Val::Bool(true)));
        assert!(matches!(b(BinOp::Add, Val::Int(1), Val::Float(0.5)), Val::Float(f) if f == 1.5));
        assert!(matches!(b(BinOp::Min, Val::Int(3), Val::Int(2)), Val::Int(2)));
        assert!(binary(BinOp::FloorDiv, Val::Int(1), Val::Int(0), Span::DUMMY).is_err());
        assert!(binary(BinOp::Add, Val::Str("a".into()), Val::Int(0), Span::DUMMY).is_err());
    }
}
