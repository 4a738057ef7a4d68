//! Calls: program-function calls (host callbacks, nested calls, dispatches and task launches)
//! and op calls through their simulator semantics, with the task dependencies they carry.
//!
//! Guarantees: arguments are evaluated left to right before anything runs; a dispatch names a
//! rank of the world (or is a comm-less one, placed round robin) or is a report; an op without
//! simulator semantics is a report, never a panic.

use super::*;

/// Whether a dispatched job passes window-bound tensors (which pin it to their rank).
pub(super) fn job_uses_windows(job: &Job<'_>) -> bool {
    let (Job::Func { args, .. } | Job::Collective { args, .. }) = job;
    let mut window = false;
    args.iter().for_each(|a| a.for_each_tensor(&mut |t| window |= matches!(t.mem, Mem::Window { .. })));
    window
}

/// One call statement being executed: the call, its evaluated arguments, its source location
/// and the values its result is assigned to.
struct CallSite<'p> {
    call: &'p Call,
    args: Vec<Val>,
    span: Span,
    targets: &'p [ValueId],
    /// The arguments moved out of the environment (index, value), put back if the call
    /// parks (it runs again).
    moved: Vec<(usize, ValueId)>,
}

/// A dispatch to a device outside the world.
fn dispatch_out_of_range(name: &str, device: i64, nranks: usize, span: Span) -> Fault {
    Fault::new(
        crate::report::ReportKind::PeerOutOfRange,
        span,
        format!("dispatch of '{name}' to device {device}, but the world has {nranks} ranks"),
    )
}

impl<'p> Thread<'p> {
    pub(super) fn exec_call(
        &mut self,
        call: &'p Call,
        span: Span,
        targets: &'p [ValueId],
        ecx: &mut Ecx<'_, 'p>,
        env: &Env<'_, 'p>,
    ) -> Result<StepOut, Fault> {
        let act = self.acts.last_mut().ok_or_else(|| Fault::runtime(span, "no frame"))?;
        // An argument read here for the last time is moved out of the environment rather
        // than copied, so the callee holds the only reference (a nested call's parameter, an
        // op that may reuse its storage); `moved` lists them (argument index, value).
        let (block, pos) = act.next();
        // An op's semantics, as the function's analysis recorded them for this statement.
        let kind = match &call.callee {
            Callee::Op(def) => act.live.op_sem(block, pos, def),
            Callee::Func(_) => None,
        };
        let mut moved = Vec::new();
        let mut args = std::mem::take(&mut self.spare_args);
        // A no-op's arguments are not evaluated; what it read last goes with the statement's
        // dead values, as after any statement.
        if !matches!(kind, Some(SemKind::Noop)) {
            args.reserve(call.args.len());
            for (k, e) in call.args.iter().enumerate() {
                match e.kind {
                    ExprKind::Var(v) if act.live.last(block, pos).contains(&v) => {
                        args.push(take(&mut act.env, v).map_or_else(|| eval_pure(act, e, env, ecx), Ok)?);
                        moved.push((k, v));
                    }
                    _ => args.push(eval_pure(act, e, env, ecx)?),
                }
            }
        }
        let site = CallSite { call, args, span, targets, moved };
        match &call.callee {
            Callee::Func(name) => self.call_func(site, name, ecx, env),
            Callee::Op(def) => self.call_op(site, def, kind, ecx, env),
        }
    }

    /// Assigns the call's value to its targets and steps past the call.
    fn bind_result(&mut self, targets: &[ValueId], v: Val, span: Span) -> Result<(), Fault> {
        let act = self.acts.last_mut().ok_or_else(|| Fault::runtime(span, "no frame"))?;
        assign_targets(&mut act.env, targets, v, span)?;
        self.advance();
        Ok(())
    }

    /// A call of a program function: a host callback, a nested call run in this thread, or a
    /// dispatch (host) or task launch (chip) of the callee.
    fn call_func(
        &mut self,
        site: CallSite<'p>,
        name: &str,
        ecx: &mut Ecx<'_, 'p>,
        env: &Env<'_, 'p>,
    ) -> Result<StepOut, Fault> {
        let CallSite { call, args, span, targets, .. } = site;
        let act = self.acts.last_mut().ok_or_else(|| Fault::runtime(span, "no frame"))?;
        let f = env
            .program
            .function(name)
            .ok_or_else(|| Fault::runtime(span, format!("call of unknown function '{name}'")))?;
        let device = call_device(act, call, env, ecx)?;
        super::shapes::check_window_args(call, act.func, f, &args, env.syms, span)?;
        if crate::callback::is_host_callback(f) {
            if self.level != Level::Host {
                return Err(Fault::new(
                    crate::report::ReportKind::HostCallback,
                    span,
                    format!("host callback '{name}' is called on a device; it runs on the host only"),
                )
                .note("call it from the host orchestrator, after the dispatches whose results it needs"));
            }
            if device.is_some() {
                return Err(Fault::new(
                    crate::report::ReportKind::HostCallback,
                    span,
                    format!("host callback '{name}' runs on the host; it takes no device="),
                ));
            }
            let result = crate::callback::call_result(env.program, f, &args, span)?;
            ecx.reqs.push(Req::Callback { func: f, args, span });
            self.bind_result(targets, result, span)?;
            return Ok(StepOut::Visible);
        }
        let nested = match self.level {
            Level::Host => device.is_none() && matches!(f.kind, FunctionKind::Host | FunctionKind::Opaque),
            Level::Chip => !f.kind.is_incore(),
            Level::Core => true,
        };
        if nested {
            self.advance();
            self.push_act(f, args, targets.to_vec(), env.lives)?;
            return Ok(StepOut::Ran);
        }
        let deps = task_deps(act, call, env, ecx)?;
        let mut result = mapped_return(env, f, &args);
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
                if r < 0 || r as usize >= ecx.world.nranks() {
                    return Err(dispatch_out_of_range(name, r, ecx.world.nranks(), span));
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
        self.bind_result(targets, result, span)?;
        Ok(StepOut::Visible)
    }

    /// A call of a registered op: its simulator semantics, or a collective dispatched (host),
    /// launched (chip) or run as a micro program (core).
    fn call_op(
        &mut self,
        site: CallSite<'p>,
        def: &'p pld_ir::OpDef,
        kind: Option<SemKind>,
        ecx: &mut Ecx<'_, 'p>,
        env: &Env<'_, 'p>,
    ) -> Result<StepOut, Fault> {
        let CallSite { call, mut args, span, targets, moved } = site;
        let act = self.acts.last_mut().ok_or_else(|| Fault::runtime(span, "no frame"))?;
        let Some(kind) = kind else {
            return Err(Fault::runtime(span, format!("op '{}' has no simulator semantics", def.name))
                .note("register them in a pld-sim family module with register_semantics!"));
        };
        self.last_op = Some((def.name, span));
        let device = match &call.device {
            Some(d) => Some(eval_pure(act, d, env, ecx)?.as_i64().unwrap_or(-1)),
            None => None,
        };
        let mut cx = OpCx {
            world: ecx.world,
            call,
            span,
            level: self.level,
            rank: self.rank,
            domain: self.domain,
            who: &self.name,
            group: self.group.as_deref(),
        };
        let flow = match kind {
            SemKind::Op(f) => f(&mut cx, &args)?,
            SemKind::Owning(f) => f(&mut cx, &mut args)?,
            SemKind::Noop => Flow::Val(Val::Unit),
            SemKind::Collective { f, result_arg } => {
                let result = args.get(result_arg).cloned().unwrap_or(Val::Unit);
                match self.level {
                    Level::Host => {
                        let ranks: Vec<usize> = match device {
                            Some(r) if r >= 0 && (r as usize) < cx.world.nranks() => vec![r as usize],
                            Some(r) => {
                                return Err(dispatch_out_of_range(def.name, r, cx.world.nranks(), span))
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
        if let Flow::Park(_) = flow {
            // The call runs again once the wait can pass: its arguments go back.
            if let Some(act) = self.acts.last_mut() {
                for (k, v) in moved {
                    if let Some(a) = args.get_mut(k) {
                        set(&mut act.env, v, std::mem::replace(a, Val::Unit));
                    }
                }
            }
        }
        // The arguments are done with: their vector serves the next call.
        args.clear();
        self.spare_args = args;
        match flow {
            Flow::Val(v) => {
                self.bind_result(targets, v, span)?;
                Ok(StepOut::Visible)
            }
            Flow::Park(p) => {
                self.parked = Some((p, span));
                self.last_wait.clone_from(&self.parked);
                Ok(StepOut::Parked)
            }
            Flow::Micro(prog, v) => {
                self.bind_result(targets, v, span)?;
                if !prog.is_empty() {
                    self.micro = Some(MicroRun::new(prog, span));
                }
                Ok(StepOut::Visible)
            }
            Flow::Defer(p) => {
                self.bind_result(targets, Val::Unit, span)?;
                self.defers.push(p);
                Ok(StepOut::Visible)
            }
        }
    }
}

/// Ranks a host-level collective runs on: the members of the domain of its first window operand.
pub(super) fn collective_ranks(world: &World, args: &[Val]) -> Vec<usize> {
    for a in args {
        if let Val::Tensor(t) = a {
            if let Mem::Window { domain, .. } = t.mem {
                return world.domain(domain).members.clone();
            }
        }
    }
    (0..world.nranks()).collect()
}

/// The value a launched function's call evaluates to: for each result, the argument it is
/// (`pld_ir::results`: the parameter the callee returns, through writing ops and further calls).
pub(super) fn mapped_return(env: &Env<'_, '_>, f: &Function, args: &[Val]) -> Val {
    let mapped: Vec<Val> = env
        .lives
        .returned(env.program, f)
        .iter()
        .map(|p| p.and_then(|i| args.get(i).cloned()).unwrap_or(Val::Unit))
        .collect();
    bundle(mapped)
}

/// What expression evaluation needs to run nested (non-blocking) op calls.
pub(super) struct Ecx<'w, 'p> {
    pub(super) world: &'w mut World,
    pub(super) reqs: &'w mut Vec<Req<'p>>,
    pub(super) level: Level,
    pub(super) rank: usize,
    pub(super) domain: usize,
    pub(super) who: &'w str,
    /// Tasks launched so far in this dispatch (the next task's id).
    pub(super) launched: usize,
    /// Inside `pl.manual_scope()`.
    pub(super) manual: bool,
    /// Comm-less host dispatches made so far.
    pub(super) commless: usize,
}

impl<'p> Ecx<'_, 'p> {
    /// The rank of the next comm-less host dispatch (no `device=`): round-robin over the
    /// chips in submit order, as the reference runner places it.
    pub(super) fn commless_rank(&mut self) -> usize {
        self.commless += 1;
        (self.commless - 1) % self.world.nranks()
    }

    /// Launches `job` as a task of this rank's graph; returns its task id.
    pub(super) fn launch(&mut self, job: Job<'p>, deps: Vec<usize>) -> usize {
        let id = self.launched;
        self.launched += 1;
        self.reqs.push(Req::Launch { job, deps, manual: self.manual });
        id
    }
}

/// The value of a dispatch's `device=` (`None` without one).
pub(super) fn call_device<'p>(
    act: &Act<'p>,
    call: &'p Call,
    env: &Env<'_, 'p>,
    ecx: &mut Ecx<'_, 'p>,
) -> Result<Option<i64>, Fault> {
    match &call.device {
        Some(d) => Ok(Some(
            eval_pure(act, d, env, ecx)?
                .as_i64()
                .ok_or_else(|| Fault::runtime(d.span, "device= is not an integer"))?,
        )),
        None => Ok(None),
    }
}

/// The task ids of a submit's `deps=[...]` (`None` for a plain call); each must name a task
/// launched earlier in this dispatch.
pub(super) fn task_deps<'p>(
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
pub(super) fn with_task_id(f: &Function, result: Val, id: usize) -> Val {
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
