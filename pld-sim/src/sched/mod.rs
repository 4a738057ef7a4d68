//! The scheduler: host pass, per-rank dispatch queues, chip task graphs, cores, parking,
//! deadlock detection and the end-of-run checks.
//!
//! Guarantees: the host orchestrator runs once, before any device work (it only allocates and
//! enqueues) — except that a host callback (`callback.rs`) first runs the work queued so far
//! to the end on every rank, then the callback, then the host goes on; each rank executes its dispatches one at a time in host program order; inside a
//! dispatch, kernels launched by the chip orchestrator become tasks ordered by overlapping
//! tensor arguments (read/write by parameter direction or op effects) and run on at most
//! `cores_per_rank` cores; a core parks on a failed wait and is resumed when its predicate
//! holds. The deterministic schedule is a round robin over runnable units in a fixed order
//! (same input → same interleaving → same bytes), each turn running the unit until it parks,
//! ends or has executed [`QUANTUM_OPS`] ops; `Random(seed)` picks the unit and the turn length
//! with a seeded xorshift generator. Dispatch queues are run-length encoded (a host loop that
//! repeats a sequence of up to `MAX_PERIOD` dispatches holds it once with a count). The run always ends: completion, a fault, a deadlock report when nothing
//! can run but something waits, or a budget report.

use crate::drive::Tid;
use crate::interp::{Env, Job, Lives, Req, StepOut, Thread};
use crate::micro::MicroRun;
use crate::report::{Fault, ParkedCore, ReportKind};
use crate::sem::{Level, OpCx, Park};
use crate::timeline::{Lane, RankTime, Recorder};
use crate::value::{Mem, TRef, Val};
use crate::world::World;
use crate::{Schedule, SimConfig};
use pld_ir::{Direction, FunctionKind, Program, Span};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

mod deadlock;
mod distributed;
mod driven;
mod governor;
mod parallel;
mod queue;

pub(crate) use deadlock::deadlock_fault;
use parallel::FirstWindow;
use queue::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TState {
    Waiting,
    Running,
    Deferred,
    Done,
}

struct Task<'p> {
    job: Option<Job<'p>>,
    group: Option<String>,
    pending: usize,
    name: String,
    deps: Vec<usize>,
    state: TState,
    reads: Vec<TRef>,
    writes: Vec<TRef>,
    conds: Vec<(Park, Span)>,
}

#[derive(Default)]
struct RankRt<'p> {
    queue: JobQueue<'p>,
    busy: bool,
    orch: Option<usize>,
    orch_done: bool,
    tasks: Vec<Task<'p>>,
    running: usize,
}

struct Unit<'p> {
    thread: Thread<'p>,
    rank: usize,
    task: Option<usize>,
    /// Its core and modeled clock.
    lane: Lane,
    /// Its id for a driven run ([`crate::explore`]).
    tid: Tid,
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

/// Binds rank-agnostic window views to `rank`'s window.
pub fn bind(v: &Val, world: &World, rank: usize) -> Result<Val, Fault> {
    Ok(match v {
        Val::Tensor(t) => {
            let mut t = TRef::clone(t);
            if let Mem::Window { domain, alloc } = t.mem {
                let d = world.domain(domain).drank(rank).ok_or_else(|| {
                    Fault::new(
                        ReportKind::OutOfBounds,
                        Span::DUMMY,
                        format!(
                            "window buffer '{}' is passed to rank {rank}, which is not in its comm domain",
                            world.buffer(alloc).name
                        ),
                    )
                })?;
                t.owner = d;
            }
            Val::tensor(t)
        }
        Val::Tuple(items) => {
            Val::Tuple(items.iter().map(|x| bind(x, world, rank)).collect::<Result<_, _>>()?)
        }
        other => other.clone(),
    })
}

fn tensors_of(v: &Val, out: &mut Vec<TRef>) {
    v.for_each_tensor(&mut |t| out.push(t.clone()));
}

/// One rank's dispatch queue, current task graph and cores.
struct RankLocal<'p> {
    r: usize,
    rt: RankRt<'p>,
    units: Vec<Option<Unit<'p>>>,
    rr: usize,
    /// Modeled time of its cores and tasks.
    tl: RankTime,
    /// Dispatches started so far (the current one's number, from 1).
    dispatch: u32,
}

impl<'p> RankLocal<'p> {
    fn new(r: usize) -> RankLocal<'p> {
        RankLocal { r, rt: RankRt::default(), units: Vec::new(), rr: 0, tl: RankTime::default(), dispatch: 0 }
    }

    /// The id of lane `lane` of `task` (the orchestrator: `None`) of the current dispatch.
    fn tid(&self, task: Option<usize>, lane: usize) -> Tid {
        let (rank, dispatch) = (self.r as u32, self.dispatch);
        Tid { rank, dispatch, task: task.map(|t| t as u32), lane: lane as u32 }
    }

    fn idle(&self) -> bool {
        !self.rt.busy && self.rt.queue.is_empty()
    }

    fn add_task(&mut self, job: Job<'p>, explicit: Vec<usize>, manual: bool) {
        let (mut reads, mut writes) = (Vec::new(), Vec::new());
        match &job {
            Job::Func { func, args } => {
                for (p, a) in func.params.iter().zip(args) {
                    let mut ts = Vec::new();
                    tensors_of(a, &mut ts);
                    match p.dir {
                        Direction::In => reads.extend(ts),
                        _ => writes.extend(ts),
                    }
                }
            }
            Job::Collective { call, args, .. } => {
                let effects = call.op().map(|d| d.arg_effects(call)).unwrap_or_default();
                for (i, a) in args.iter().enumerate() {
                    let mut ts = Vec::new();
                    tensors_of(a, &mut ts);
                    if effects.get(i).is_some_and(|e| e.writes()) || effects.is_empty() {
                        writes.extend(ts);
                    } else {
                        reads.extend(ts);
                    }
                }
            }
        }
        let rt = &mut self.rt;
        // The lanes of one mixed kernel (`k_aic` then `k_aiv`, same `group`) are one task on
        // hardware: they run together, so the second lane does not wait for the first.
        let group = match &job {
            Job::Func { func, .. } => func.attr("group").and_then(|a| a.as_str()).map(str::to_string),
            Job::Collective { .. } => None,
        };
        let sibling =
            group.as_ref().and(rt.tasks.len().checked_sub(1)).filter(|&last| rt.tasks[last].group == group);
        // Explicit `deps=[...]` edges, plus (outside a manual scope) an edge to every earlier
        // task whose tensors overlap this one's with a write on either side.
        let deps = match sibling {
            Some(last) => rt.tasks[last].deps.clone(),
            None if manual => explicit,
            None => {
                let mut deps = explicit;
                deps.extend(
                    rt.tasks
                        .iter()
                        .enumerate()
                        .filter(|(_, t)| {
                            writes.iter().any(|w| t.reads.iter().chain(&t.writes).any(|x| x.may_overlap(w)))
                                || reads.iter().any(|r| t.writes.iter().any(|x| x.may_overlap(r)))
                        })
                        .map(|(i, _)| i),
                );
                deps.sort_unstable();
                deps.dedup();
                deps
            }
        };
        self.tl.task_added();
        rt.tasks.push(Task {
            group,
            name: job.name(),
            job: Some(job),
            deps,
            state: TState::Waiting,
            reads,
            writes,
            conds: Vec::new(),
            pending: 0,
        });
    }

    /// Starts the next dispatch and ready tasks, retires satisfied deferred tasks, ends dispatches.
    /// Returns whether anything changed (a call that changes nothing would change nothing
    /// again until another rank or unit acts).
    fn advance(&mut self, world: &mut World, cfg: &SimConfig, lives: &Lives) -> Result<bool, Fault> {
        let r = self.r;
        let mut changed = false;
        if !self.rt.busy {
            if let Some(job) = self.rt.queue.pop_front() {
                changed = true;
                let job = match job {
                    Job::Func { func, args } => Job::Func {
                        func,
                        args: args.iter().map(|a| bind(a, world, r)).collect::<Result<_, _>>()?,
                    },
                    Job::Collective { f, call, args, span } => Job::Collective {
                        f,
                        call,
                        args: args.iter().map(|a| bind(a, world, r)).collect::<Result<_, _>>()?,
                        span,
                    },
                };
                self.rt.busy = true;
                self.dispatch += 1;
                self.rt.tasks.clear();
                self.tl.new_dispatch(cfg.cores_per_rank);
                self.rt.orch = None;
                self.rt.orch_done = true;
                match job {
                    Job::Func { func, args } if !func.kind.is_incore() => {
                        let t = Thread::new(func, args, r, Level::Chip, lives)?;
                        let lane = self.tl.orch_lane(r);
                        let tid = self.tid(None, 0);
                        self.units.push(Some(Unit { thread: t, rank: r, task: None, lane, tid }));
                        self.rt.orch = Some(self.units.len() - 1);
                        self.rt.orch_done = false;
                    }
                    job => self.add_task(job, Vec::new(), false),
                }
            }
        }
        for (k, t) in self.rt.tasks.iter_mut().enumerate().filter(|(_, t)| t.state == TState::Deferred) {
            if t.conds.iter().all(|(p, _)| p.holds(world.cell_value(p.cell))) {
                for (p, span) in &t.conds {
                    world.acquire_wait(r, p, *span, &t.name)?;
                }
                self.tl.deferred_done(k, t.conds.iter().map(|(p, _)| p));
                t.state = TState::Done;
                changed = true;
            }
        }
        let deferred = self.rt.tasks.iter().filter(|t| t.state == TState::Deferred).count();
        if deferred > 64 {
            return Err(Fault::new(
                ReportKind::Deferred,
                Span::DUMMY,
                format!("rank {r} has {deferred} concurrently deferred tasks; the scheduler allows 64 (error 102)"),
            ));
        }
        for i in 0..self.rt.tasks.len() {
            if self.rt.running >= cfg.cores_per_rank {
                break;
            }
            let t = &self.rt.tasks[i];
            if t.state != TState::Waiting || !t.deps.iter().all(|&d| self.rt.tasks[d].state == TState::Done) {
                continue;
            }
            let Some(job) = self.rt.tasks[i].job.take() else { continue };
            changed = true;
            let mut threads = Vec::new();
            let mut collective = None;
            match job {
                Job::Func { func, args } => {
                    // A `dual_aiv_dispatch` kernel runs on both vector sub-lanes (opt-in).
                    let dual = cfg.dual_aiv
                        && func.attr("dual_aiv_dispatch").and_then(|a| a.as_bool()) == Some(true);
                    if dual {
                        for k in 0..2 {
                            let mut t = Thread::new(func, args.clone(), r, Level::Core, lives)?;
                            t.group.get_or_insert_with(|| func.name.clone());
                            t.name = format!("{}#sub{k}", func.name).into();
                            threads.push(t);
                        }
                    } else {
                        threads.push(Thread::new(func, args, r, Level::Core, lives)?);
                    }
                }
                Job::Collective { f, call, args, span } => {
                    let name = call.callee.name().to_string();
                    let mut cx = OpCx {
                        world,
                        call,
                        span,
                        level: Level::Core,
                        rank: r,
                        domain: 0,
                        who: &name,
                        group: None,
                    };
                    let prog = f(&mut cx, &args)?;
                    collective = Some(crate::trace::collective_of(call, &args));
                    threads.push(Thread::micro(name, MicroRun::new(prog, span), r));
                }
            }
            self.rt.tasks[i].state = TState::Running;
            self.rt.tasks[i].pending = threads.len();
            self.rt.running += threads.len();
            for (k, thread) in threads.into_iter().enumerate() {
                let tid = self.tid(Some(i), k);
                let deps = &self.rt.tasks[i].deps;
                let mut lane = self.tl.start(r, i, deps);
                if let Some(run) = collective.clone() {
                    let seq = self.tl.next_seq(&run.name);
                    let start = lane.clock;
                    lane.collective =
                        Some(crate::timeline::CollectiveRun { rank: r, seq, start, end: start, ..run });
                }
                self.units.push(Some(Unit { thread, rank: r, task: Some(i), lane, tid }));
            }
        }
        if self.rt.busy && self.rt.orch_done && self.rt.tasks.iter().all(|t| t.state == TState::Done) {
            self.rt.busy = false;
            self.rt.tasks.clear();
            self.units.retain(Option::is_some);
            changed = true;
        }
        // Wake parked cores whose predicate now holds.
        for u in self.units.iter_mut().flatten() {
            if let Some((p, _)) = &u.thread.parked {
                if p.holds(world.cell_value(p.cell)) {
                    u.thread.parked = None;
                    changed = true;
                }
            }
        }
        Ok(changed)
    }

    fn runnable(&self) -> impl Iterator<Item = usize> + '_ {
        self.units
            .iter()
            .enumerate()
            .filter_map(|(i, u)| u.as_ref().filter(|u| u.thread.parked.is_none()).map(|_| i))
    }

    /// Appends `(rank, unit)` for every runnable unit, in unit order.
    fn push_runnable(&self, r: usize, out: &mut Vec<(usize, usize)>) {
        out.extend(self.runnable().map(|i| (r, i)));
    }

    /// Runs unit `i` until it parks, ends, or has executed `budget` ops (scheduling points;
    /// statements without a cross-rank effect run on, up to 4096 steps in all). With `trace`,
    /// every op executed appends its event (`ts` = the global step after it).
    fn quantum(
        &mut self,
        i: usize,
        world: &mut World,
        env: &Env<'_, 'p>,
        cfg: &SimConfig,
        budget: u32,
        rec: &mut Recorder,
    ) -> Result<(), Fault> {
        let mut reqs = Vec::new();
        let Some(unit) = self.units[i].as_mut() else {
            return Ok(());
        };
        let mut n = 0;
        let mut ops = 0u32;
        // Modeled ready time of each task this quantum launches (charged at its own step).
        let mut launched_at = Vec::new();
        let who = Arc::clone(&unit.thread.name);
        let out = loop {
            world.reset_meter(None);
            let had_micro = unit.thread.micro.is_some();
            let out = unit.thread.step(world, env, &mut reqs, &who);
            // Parking is free in modeled time, and so is the step that only retires a finished
            // micro program (it did its work in earlier steps).
            let retired = had_micro && unit.thread.micro.is_none() && world.meter_mut().is_idle();
            let parked = matches!(out, Ok(StepOut::Parked)) || retired;
            if !rec.step_plain(&mut unit.lane, world.meter_mut(), parked) {
                let mut meter = world.take_meter();
                let op = unit
                    .thread
                    .last_op
                    .as_ref()
                    .filter(|_| matches!(out, Ok(StepOut::Visible | StepOut::Done)));
                rec.step(&mut unit.lane, &mut meter, parked, op, &unit.thread.name, world);
                world.restore_meter(meter);
            }
            for r in &reqs[launched_at.len().min(reqs.len())..] {
                if matches!(r, Req::Launch { .. }) {
                    // A launch costs the orchestrator its launch time; the task is ready after it.
                    unit.lane.clock = unit.lane.clock.saturating_add(rec.cost.launch_ps());
                }
                launched_at.push(unit.lane.clock);
            }
            let steps = world.count_step();
            n += 1;
            crate::budget::check(steps, world.idle_steps(), cfg, &unit.thread.name)?;
            if steps % crate::budget::CHECK_EVERY == 0 {
                crate::budget::publish(cfg, world);
            }
            match out {
                Ok(StepOut::Ran) if n < 4096 => continue,
                Ok(StepOut::Visible) => {
                    ops += 1;
                    if ops < budget && n < 4096 {
                        continue;
                    }
                    break StepOut::Visible;
                }
                other => {
                    // Named only for a fault (the kernel's name is a new string).
                    let site = || crate::report::render::Site {
                        rank: unit.rank,
                        core: (unit.lane.core != crate::timeline::ORCH_LANE).then_some(unit.lane.core),
                        kernel: unit.thread.name.to_string(),
                    };
                    break other.map_err(|f| f.at_site(site()))?;
                }
            }
        };
        for (r, at) in reqs.into_iter().zip(launched_at) {
            if let Req::Launch { job, deps, manual } = r {
                self.tl.launch_at = at;
                self.add_task(job, deps, manual);
            }
        }
        if out == StepOut::Done {
            if let Some(mut u) = self.units[i].take() {
                self.tl.finish(&u.lane, u.task);
                if let Some(mut c) = u.lane.collective.take() {
                    c.end = u.lane.clock;
                    rec.collectives.push(c);
                }
                match u.task {
                    None => self.rt.orch_done = true,
                    Some(t) => {
                        self.rt.running = self.rt.running.saturating_sub(1);
                        if let Some(task) = self.rt.tasks.get_mut(t) {
                            let span = u.thread.last_op.as_ref().map_or(Span::DUMMY, |(_, s)| *s);
                            task.conds.extend(u.thread.defers.iter().map(|p| (p.clone(), span)));
                            task.pending = task.pending.saturating_sub(1);
                            if task.pending > 0 {
                                // Another sub-lane of this task is still running.
                            } else if task.conds.is_empty() {
                                task.state = TState::Done;
                            } else {
                                if task.conds.len() > 64 {
                                    return Err(Fault::new(
                                        ReportKind::Deferred,
                                        Span::DUMMY,
                                        format!(
                                            "task '{}' on rank {} registered {} deferred conditions; at most 64 are allowed (error 102)",
                                            task.name,
                                            self.r,
                                            task.conds.len()
                                        ),
                                    ));
                                }
                                task.state = TState::Deferred;
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A budget or interrupt fault with this rank's running cores described (other faults
    /// unchanged).
    fn describe_budget(&self, f: Fault, world: &World, cfg: &SimConfig) -> Fault {
        if !crate::budget::is_budget(&f) {
            return f;
        }
        let cores: Vec<_> = self
            .units
            .iter()
            .enumerate()
            .filter_map(|(i, u)| u.as_ref().map(|u| (u.rank, i, &u.thread)))
            .collect();
        if cores.is_empty() {
            return f.note(format!("rank {}: no core running", self.r));
        }
        crate::budget::describe_cores(f, cores.into_iter(), world, cfg)
    }

    /// Every wait of this rank that cannot complete now.
    fn parked(&self, world: &World) -> Vec<ParkedCore> {
        let mut out = Vec::new();
        let mut add = |kernel: String, core: Option<usize>, p: &Park, span: Span| {
            let writers = world.cell_writers(p.cell);
            out.push(ParkedCore {
                rank: self.r,
                core,
                kernel,
                span,
                cell: world.cell_name(p.cell),
                predicate: p.describe(),
                value: world.cell_value(p.cell),
                writers,
            });
        };
        for u in self.units.iter().flatten() {
            if let Some((p, span)) = &u.thread.parked {
                let core = (u.lane.core != crate::timeline::ORCH_LANE).then_some(u.lane.core);
                add(u.thread.name.to_string(), core, p, *span);
            }
        }
        for t in self.rt.tasks.iter().filter(|t| t.state == TState::Deferred) {
            for (p, span) in t.conds.iter().filter(|(p, _)| !p.holds(world.cell_value(p.cell))) {
                add(format!("{} (deferred completion)", t.name), None, p, *span);
            }
        }
        out
    }
}

/// Ops a unit runs per scheduling turn before the next unit gets its turn (a unit that parks
/// or ends gives up its turn earlier). Larger turns amortise the scheduler's per-turn work;
/// the interleaving stays a fixed function of the input (deterministic) or of the seed.
pub const QUANTUM_OPS: u32 = 64;

/// The scheduler state of one run.
pub struct Sched<'p, 'c> {
    program: &'p Program,
    cfg: &'c SimConfig,
    syms: HashMap<String, i64>,
    ranks: Vec<RankLocal<'p>>,
    rng: Rng,
    rr: usize,
    /// The PCT schedule's state (`Schedule::Pct`).
    pct: Option<crate::pct::Pct>,
    /// Modeled time and the trace's slices.
    pub rec: Recorder,
    /// The liveness of the functions the run activates, shared by all its threads.
    lives: Arc<Lives>,
}

impl<'p, 'c> Sched<'p, 'c> {
    /// A scheduler for `program` under `cfg`.
    pub fn new(program: &'p Program, cfg: &'c SimConfig, syms: HashMap<String, i64>) -> Sched<'p, 'c> {
        let seed = match cfg.schedule {
            Schedule::Random(s) => s ^ 0x9E37_79B9_7F4A_7C15,
            _ => 1,
        };
        let rec = Recorder::new(cfg.cost.clone(), cfg.trace, cfg.trace_all, Default::default());
        let ranks = fresh_ranks(cfg, &rec);
        let pct = match cfg.schedule {
            Schedule::Pct(s) => Some(crate::pct::Pct::new(s)),
            _ => None,
        };
        Sched { program, cfg, syms, ranks, rng: Rng(seed.max(1)), rr: 0, pct, rec, lives: Arc::default() }
    }

    /// What a loop's [`Env`] borrows, owned so the loop can still borrow `self` mutably: the
    /// bound dims and the run's liveness cache.
    fn env_parts(&self) -> (HashMap<String, i64>, Arc<Lives>) {
        (self.syms.clone(), Arc::clone(&self.lives))
    }

    /// Runs the host function (or, for a device entry, dispatches it to every rank), then
    /// the device side to completion.
    pub fn run(
        &mut self,
        world: &mut World,
        entry: &'p pld_ir::Function,
        args: Vec<Val>,
    ) -> Result<(), Fault> {
        let (syms, lives) = self.env_parts();
        let env = Env { syms: &syms, program: self.program, lives: &lives };
        let mut epochs = Vec::new();
        if entry.kind == FunctionKind::Host {
            let mut host = Thread::new(entry, args, usize::MAX, Level::Host, &lives)?;
            let who = Arc::clone(&host.name);
            let mut reqs = Vec::new();
            let mut steps = 0u64;
            while !host.done() {
                host.step(world, &env, &mut reqs, &who)?;
                // Queued as they come (in order), so a host loop holds no list of its dispatches.
                for r in reqs.drain(..) {
                    match r {
                        Req::Dispatch { rank, job } => self.ranks[rank].rt.queue.push_back(job),
                        // A host callback is a fence: the device work so far runs to the end first.
                        Req::Callback { func, args, span } => {
                            self.device_epoch(world, &mut epochs).map_err(|f| match f.kind {
                                ReportKind::Deadlock(_) => f.note_at(
                                    format!(
                                        "the work issued before host callback '{}' had to finish first (work issued after it had not started)",
                                        func.name
                                    ),
                                    span,
                                ),
                                _ => f,
                            })?;
                            // A distributed run's processes first share their host writes.
                            world.sync_host();
                            let hooks = self.cfg.host_callbacks.as_deref();
                            let warnings = crate::callback::run(world, func, &args, span, hooks)?;
                            world.record_warnings(warnings);
                        }
                        Req::Launch { .. } => {}
                    }
                }
                steps += 1;
                // The host only allocates and enqueues: all its steps count as idle ones.
                if let Err(f) = crate::budget::check(steps, steps, self.cfg, &entry.name) {
                    let cores = std::iter::once((usize::MAX, 0, &host));
                    return Err(crate::budget::describe_cores(f, cores, world, self.cfg));
                }
            }
        } else {
            for r in 0..self.cfg.nranks {
                self.ranks[r].rt.queue.push_back(Job::Func { func: entry, args: args.clone() });
            }
        }
        self.device_epoch(world, &mut epochs)?;
        end_checks(world)
    }

    /// Runs the queued device work to the end (the whole run, or the part before a host
    /// callback). `sizes` holds each domain's window size once materialised: a window buffer
    /// allocated in such a domain after a host callback would re-create its windows, so it is
    /// a fault rather than lost data.
    fn device_epoch(&mut self, world: &mut World, sizes: &mut Vec<u64>) -> Result<(), Fault> {
        for (d, &was) in world.domains().iter().zip(sizes.iter()) {
            if was != d.win_size {
                return Err(Fault::new(
                    ReportKind::HostCallback,
                    Span::DUMMY,
                    "a window buffer was allocated after a host callback in a comm domain already in use",
                )
                .note("allocate every window buffer of a domain before the first host callback"));
            }
        }
        world.check_window_memory()?;
        world.reset_meter(Some(self.cfg.trace));
        if self.cfg.zero_windows {
            world.zero_all_windows();
        }
        if self.cfg.schedule == Schedule::Parallel {
            world.finalize()?;
            // Governed, the first window (1 ms) runs as det runs, on the calling thread: a run
            // that ends within it never pays for the workers' machinery (D-sim-36).
            let governed =
                self.cfg.parallel_workers.is_none() && world.backend().is_none() && self.cfg.driver.is_none();
            let first = if governed { Some(self.first_window(world)?) } else { None };
            // A run that ended within it left every rank idle, as det's loop does.
            if !matches!(first, Some(FirstWindow::Finished)) {
                let solo = match first {
                    Some(FirstWindow::Ran { work, secs }) => Some((work, secs)),
                    _ => None,
                };
                self.parallel_loop(world, solo)?;
                // The workers consumed the (now idle) rank states; a later epoch starts afresh.
                self.ranks = fresh_ranks(self.cfg, &self.rec);
            }
        } else {
            world.finalize()?;
            self.device_loop(world)?;
        }
        sizes.clear();
        sizes.extend(world.domains().iter().map(|d| d.win_size));
        Ok(())
    }

    /// Each rank's modeled time (ps): the end of its last operation (under `parallel`, the
    /// latest end any worker reported for the rank, over every epoch).
    pub fn rank_times(&self) -> Vec<u64> {
        let mut t: Vec<u64> =
            (0..self.cfg.nranks).map(|r| self.ranks.get(r).map_or(0, |rl| rl.tl.frontier)).collect();
        for &(r, f) in &self.rec.rank_end {
            if let Some(x) = t.get_mut(r) {
                *x = (*x).max(f);
            }
        }
        t
    }

    fn device_loop(&mut self, world: &mut World) -> Result<(), Fault> {
        if let Some(b) = world.backend() {
            return self.distributed_loop(world, &*b);
        }
        if let Some(d) = self.cfg.driver.clone() {
            return self.driven_loop(world, &d);
        }
        self.turns(world, None).map(|_| ())
    }

    /// Runs turns of the deterministic, random or PCT schedule until every rank is idle
    /// (`true`) or, with `until`, the first turn that ends past it (`false`).
    pub(super) fn turns(
        &mut self,
        world: &mut World,
        until: Option<std::time::Instant>,
    ) -> Result<bool, Fault> {
        let (syms, lives) = self.env_parts();
        let env = Env { syms: &syms, program: self.program, lives: &lives };
        let mut runnable: Vec<(usize, usize)> = Vec::new();
        loop {
            if !self.advance_all(world, &mut runnable)? {
                return Ok(true);
            }
            if until.is_some_and(|t| std::time::Instant::now() >= t) {
                return Ok(false);
            }
            let (r, i) = match self.cfg.schedule {
                Schedule::Random(_) => runnable[(self.rng.next() % runnable.len() as u64) as usize],
                Schedule::Pct(_) => self.pct.as_mut().map_or(runnable[0], |p| p.pick(&runnable)),
                _ => {
                    self.rr = self.rr.wrapping_add(1);
                    runnable[self.rr % runnable.len()]
                }
            };
            let budget = match self.cfg.schedule {
                // A seeded quantum length keeps random schedules exploring interleavings.
                Schedule::Random(_) => 1 + (self.rng.next() % QUANTUM_OPS as u64) as u32,
                // PCT preempts at any visible op.
                Schedule::Pct(_) => 1,
                _ => QUANTUM_OPS,
            };
            if let Err(f) = self.ranks[r].quantum(i, world, &env, self.cfg, budget, &mut self.rec) {
                return Err(self.ranks.iter().fold(f, |f, rl| rl.describe_budget(f, world, self.cfg)));
            }
        }
    }
}

impl Sched<'_, '_> {
    /// Advances every rank (starts dispatches and ready tasks, retires satisfied deferred
    /// tasks, wakes parked cores) and lists the runnable units in `runnable`; `false` when
    /// every rank is idle (the device work is done), a deadlock fault when nothing can run but
    /// something waits.
    fn advance_all(&mut self, world: &mut World, runnable: &mut Vec<(usize, usize)>) -> Result<bool, Fault> {
        for rank in &mut self.ranks {
            for _ in 0..4 {
                if !rank.advance(world, self.cfg, &self.lives)? {
                    break;
                }
            }
        }
        runnable.clear();
        for (r, rl) in self.ranks.iter().enumerate() {
            rl.push_runnable(r, runnable);
        }
        if runnable.is_empty() {
            let live: Vec<usize> = self.ranks.iter().filter(|r| !r.idle()).map(|r| r.r).collect();
            if live.is_empty() {
                return Ok(false);
            }
            let parked = self.ranks.iter().flat_map(|r| r.parked(world)).collect();
            let f = deadlock_fault(parked, &live, self.ranks.len(), self.cfg);
            return Err(crate::divergence::help(f, self.program, world.branches()));
        }
        Ok(true)
    }
}

/// Every rank's scheduler state, sharing the recorder's cell history.
fn fresh_ranks<'p>(cfg: &SimConfig, rec: &Recorder) -> Vec<RankLocal<'p>> {
    let mut ranks: Vec<RankLocal<'p>> = (0..cfg.nranks).map(RankLocal::new).collect();
    for rl in &mut ranks {
        rl.tl.cells = Some(rec.shared());
    }
    ranks
}

/// End-of-run checks: every cell of every self-clearing signal is back at zero
/// ([`World::leak_check`]) and no other signal cell holds credits nobody waited for
/// ([`World::leftover_check`]).
fn end_checks(world: &mut World) -> Result<(), Fault> {
    world.generation_check()?;
    world.leak_check()?;
    world.leftover_check()
}
