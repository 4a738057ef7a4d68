//! The scheduler: host pass, per-rank dispatch queues, chip task graphs, cores, parking,
//! deadlock detection and the end-of-run checks.
//!
//! Guarantees: the host orchestrator runs once, before any device work (it only allocates and
//! enqueues); each rank executes its dispatches one at a time in host program order; inside a
//! dispatch, kernels launched by the chip orchestrator become tasks ordered by overlapping
//! tensor arguments (read/write by parameter direction or op effects) and run on at most
//! `cores_per_rank` cores; a core parks on a failed wait and is resumed when its predicate
//! holds. The deterministic schedule is a round robin over runnable units in a fixed order
//! (same input → same interleaving → same bytes); `Random(seed)` picks with a seeded
//! xorshift generator. The run always ends: completion, a fault, a deadlock report when nothing
//! can run but something waits, or a budget report.

use crate::interp::{Env, Job, Req, StepOut, Thread};
use crate::micro::MicroRun;
use crate::report::{Fault, ParkedCore, ReportKind};
use crate::sem::{Level, OpCx, Park};
use crate::value::{Mem, TRef, Val};
use crate::world::World;
use crate::{Schedule, SimConfig};
use pld_ir::{Direction, FunctionKind, Program, Span};
use std::collections::{BTreeSet, HashMap, VecDeque};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TState {
    Waiting,
    Running,
    Deferred,
    Done,
}

struct Task<'p> {
    job: Option<Job<'p>>,
    name: String,
    deps: Vec<usize>,
    state: TState,
    reads: Vec<TRef>,
    writes: Vec<TRef>,
    conds: Vec<(Park, Span)>,
}

#[derive(Default)]
struct RankRt<'p> {
    queue: VecDeque<Job<'p>>,
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
}

/// One trace event: (name, rank, unit, start step).
pub struct TraceEvent {
    /// Op or kernel name.
    pub name: String,
    /// Global rank.
    pub rank: usize,
    /// Unit (core) id.
    pub unit: usize,
    /// Step at which it ran.
    pub ts: u64,
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
            let mut t = t.clone();
            if let Mem::Window { domain, alloc } = t.mem {
                let d = world.domains[domain].drank(rank).ok_or_else(|| {
                    Fault::new(
                        ReportKind::OutOfBounds,
                        Span::DUMMY,
                        format!(
                            "window buffer '{}' is passed to rank {rank}, which is not in its comm domain",
                            world.allocs[alloc].name
                        ),
                    )
                })?;
                t.owner = d;
            }
            Val::Tensor(t)
        }
        Val::Tuple(items) => {
            Val::Tuple(items.iter().map(|x| bind(x, world, rank)).collect::<Result<_, _>>()?)
        }
        other => other.clone(),
    })
}

fn tensors_of(v: &Val, out: &mut Vec<TRef>) {
    match v {
        Val::Tensor(t) => out.push(t.clone()),
        Val::Tuple(items) => items.iter().for_each(|x| tensors_of(x, out)),
        _ => {}
    }
}

/// The scheduler state of one run.
pub struct Sched<'p, 'c> {
    program: &'p Program,
    cfg: &'c SimConfig,
    syms: HashMap<String, i64>,
    ranks: Vec<RankRt<'p>>,
    units: Vec<Option<Unit<'p>>>,
    rng: Rng,
    rr: usize,
    /// Trace events, when tracing.
    pub trace: Vec<TraceEvent>,
}

impl<'p, 'c> Sched<'p, 'c> {
    /// A scheduler for `program` under `cfg`.
    pub fn new(program: &'p Program, cfg: &'c SimConfig, syms: HashMap<String, i64>) -> Sched<'p, 'c> {
        let seed = match cfg.schedule {
            Schedule::Random(s) => s ^ 0x9E37_79B9_7F4A_7C15,
            _ => 1,
        };
        Sched {
            program,
            cfg,
            syms,
            ranks: (0..cfg.nranks).map(|_| RankRt::default()).collect(),
            units: Vec::new(),
            rng: Rng(seed.max(1)),
            rr: 0,
            trace: Vec::new(),
        }
    }

    /// Runs the host function (or, for a device entry, dispatches it to every rank), then
    /// the device side to completion.
    pub fn run(
        &mut self,
        world: &mut World,
        entry: &'p pld_ir::Function,
        args: Vec<Val>,
    ) -> Result<(), Fault> {
        let env = Env { syms: &self.syms, program: self.program };
        if entry.kind == FunctionKind::Host {
            let mut host = Thread::new(entry, args, usize::MAX, Level::Host)?;
            let mut reqs = Vec::new();
            let mut steps = 0u64;
            while !host.done() {
                host.step(world, &env, &mut reqs)?;
                steps += 1;
                if steps > self.cfg.max_steps {
                    return Err(Fault::new(
                        ReportKind::Budget,
                        Span::DUMMY,
                        format!("host orchestrator '{}' ran {steps} steps", entry.name),
                    ));
                }
            }
            for r in reqs {
                match r {
                    Req::Dispatch { rank, job } => self.ranks[rank].queue.push_back(job),
                    Req::Launch { .. } => {}
                }
            }
        } else {
            for r in 0..self.cfg.nranks {
                self.ranks[r].queue.push_back(Job::Func { func: entry, args: args.clone() });
            }
        }
        if self.cfg.zero_windows {
            world.allocs.iter_mut().for_each(|a| a.zeroed = true);
        }
        world.finalize()?;
        self.device_loop(world)?;
        end_checks(world)
    }

    fn add_task(&mut self, world: &World, rank: usize, job: Job<'p>) {
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
        let _ = world;
        let rt = &mut self.ranks[rank];
        let deps = rt
            .tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| {
                writes.iter().any(|w| t.reads.iter().chain(&t.writes).any(|x| x.may_overlap(w)))
                    || reads.iter().any(|r| t.writes.iter().any(|x| x.may_overlap(r)))
            })
            .map(|(i, _)| i)
            .collect();
        rt.tasks.push(Task {
            name: job.name(),
            job: Some(job),
            deps,
            state: TState::Waiting,
            reads,
            writes,
            conds: Vec::new(),
        });
    }

    fn new_unit(&mut self, u: Unit<'p>) -> usize {
        self.units.push(Some(u));
        self.units.len() - 1
    }

    /// Starts dispatches and ready tasks, retires satisfied deferred tasks, ends dispatches.
    fn advance_ranks(&mut self, world: &mut World) -> Result<(), Fault> {
        for r in 0..self.ranks.len() {
            if !self.ranks[r].busy {
                let Some(job) = self.ranks[r].queue.pop_front() else { continue };
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
                let rt = &mut self.ranks[r];
                rt.busy = true;
                rt.tasks.clear();
                rt.orch = None;
                rt.orch_done = true;
                match job {
                    Job::Func { func, args } if !func.kind.is_incore() => {
                        let t = Thread::new(func, args, r, Level::Chip)?;
                        let id = self.new_unit(Unit { thread: t, rank: r, task: None });
                        self.ranks[r].orch = Some(id);
                        self.ranks[r].orch_done = false;
                    }
                    job => self.add_task(world, r, job),
                }
            }
            // Deferred tasks whose conditions hold complete now.
            for t in self.ranks[r].tasks.iter_mut().filter(|t| t.state == TState::Deferred) {
                if t.conds.iter().all(|(p, _)| p.holds(world.cell_value(p.cell))) {
                    for (p, _) in &t.conds {
                        world.acquire_from(r, (p.cell.domain, p.cell.owner, p.cell.offset));
                    }
                    t.state = TState::Done;
                }
            }
            let deferred = self.ranks[r].tasks.iter().filter(|t| t.state == TState::Deferred).count();
            if deferred > 64 {
                return Err(Fault::new(ReportKind::Deferred, Span::DUMMY, format!("rank {r} has {deferred} concurrently deferred tasks; the scheduler allows 64 (error 102)")));
            }
            // Start ready tasks.
            let n = self.ranks[r].tasks.len();
            for i in 0..n {
                let rt = &self.ranks[r];
                if rt.running >= self.cfg.cores_per_rank {
                    break;
                }
                let t = &rt.tasks[i];
                if t.state != TState::Waiting || !t.deps.iter().all(|&d| rt.tasks[d].state == TState::Done) {
                    continue;
                }
                let Some(job) = self.ranks[r].tasks[i].job.take() else { continue };
                let thread = match job {
                    Job::Func { func, args } => Thread::new(func, args, r, Level::Core)?,
                    Job::Collective { f, call, args, span } => {
                        let name = call.callee.name().to_string();
                        let mut cx =
                            OpCx { world, call, span, level: Level::Core, rank: r, domain: 0, who: &name };
                        let prog = f(&mut cx, &args)?;
                        Thread::micro(name, MicroRun::new(prog, span), r)
                    }
                };
                self.ranks[r].tasks[i].state = TState::Running;
                self.ranks[r].running += 1;
                self.new_unit(Unit { thread, rank: r, task: Some(i) });
            }
            let rt = &mut self.ranks[r];
            if rt.busy && rt.orch_done && rt.tasks.iter().all(|t| t.state == TState::Done) {
                rt.busy = false;
                rt.tasks.clear();
            }
        }
        Ok(())
    }

    fn device_loop(&mut self, world: &mut World) -> Result<(), Fault> {
        let program = self.program;
        let syms = self.syms.clone();
        let env = Env { syms: &syms, program };
        loop {
            // Settle: start everything that can start.
            for _ in 0..4 {
                self.advance_ranks(world)?;
            }
            for u in self.units.iter_mut().flatten() {
                if let Some((p, _)) = &u.thread.parked {
                    if p.holds(world.cell_value(p.cell)) {
                        u.thread.parked = None;
                    }
                }
            }
            let runnable: Vec<usize> = self
                .units
                .iter()
                .enumerate()
                .filter_map(|(i, u)| u.as_ref().filter(|u| u.thread.parked.is_none()).map(|_| i))
                .collect();
            if runnable.is_empty() {
                if self.ranks.iter().all(|r| !r.busy && r.queue.is_empty()) {
                    return Ok(());
                }
                return Err(self.deadlock(world));
            }
            let pick = match self.cfg.schedule {
                Schedule::Random(_) => runnable[(self.rng.next() % runnable.len() as u64) as usize],
                _ => {
                    self.rr = self.rr.wrapping_add(1);
                    runnable[self.rr % runnable.len()]
                }
            };
            let mut reqs = Vec::new();
            let Some(unit) = self.units[pick].as_mut() else { continue };
            let mut out;
            let mut n = 0;
            loop {
                out = unit.thread.step(world, &env, &mut reqs);
                world.stats.steps += 1;
                n += 1;
                if world.stats.steps > self.cfg.max_steps {
                    return Err(Fault::new(
                        ReportKind::Budget,
                        Span::DUMMY,
                        format!(
                            "the run took more than {} steps (a livelock or a runaway loop?)",
                            self.cfg.max_steps
                        ),
                    )
                    .note(format!("last running: rank {} '{}'", unit.rank, unit.thread.name)));
                }
                match &out {
                    Ok(StepOut::Ran) if n < 4096 => continue,
                    _ => break,
                }
            }
            let out = out?;
            if self.cfg.trace && out == StepOut::Visible {
                let name =
                    unit.thread.last_op.as_ref().map_or_else(|| unit.thread.name.clone(), |(n, _)| n.clone());
                self.trace.push(TraceEvent { name, rank: unit.rank, unit: pick, ts: world.stats.steps });
            }
            let rank = unit.rank;
            for r in reqs {
                if let Req::Launch { job } = r {
                    self.add_task(world, rank, job);
                }
            }
            if out == StepOut::Done {
                let Some(u) = self.units[pick].take() else { continue };
                match u.task {
                    None => self.ranks[rank].orch_done = true,
                    Some(t) => {
                        let rt = &mut self.ranks[rank];
                        rt.running = rt.running.saturating_sub(1);
                        if let Some(task) = rt.tasks.get_mut(t) {
                            if u.thread.defers.is_empty() {
                                task.state = TState::Done;
                            } else {
                                if u.thread.defers.len() > 64 {
                                    return Err(Fault::new(
                                        ReportKind::Deferred,
                                        Span::DUMMY,
                                        format!("task '{}' on rank {rank} registered {} deferred conditions; at most 64 are allowed (error 102)", task.name, u.thread.defers.len()),
                                    ));
                                }
                                let span = u.thread.last_op.as_ref().map_or(Span::DUMMY, |(_, s)| *s);
                                task.conds = u.thread.defers.iter().map(|p| (p.clone(), span)).collect();
                                task.state = TState::Deferred;
                            }
                        }
                    }
                }
            }
        }
    }

    fn deadlock(&self, world: &World) -> Fault {
        let live: BTreeSet<usize> = (0..self.ranks.len())
            .filter(|&r| self.ranks[r].busy || !self.ranks[r].queue.is_empty())
            .collect();
        let mut parked = Vec::new();
        let mut add = |rank: usize, kernel: &str, p: &Park, span: Span| {
            let meta = world.cells.get(&(p.cell.domain, p.cell.owner, p.cell.offset));
            parked.push(ParkedCore {
                rank,
                kernel: kernel.to_string(),
                span,
                cell: world.cell_name(p.cell),
                predicate: p.describe(),
                value: world.cell_value(p.cell),
                writers: meta.map(|m| m.writers.iter().copied().collect()).unwrap_or_default(),
                could_notify: live.iter().copied().collect(),
            });
        };
        for u in self.units.iter().flatten() {
            if let Some((p, span)) = &u.thread.parked {
                add(u.rank, &u.thread.name, p, *span);
            }
        }
        for (r, rt) in self.ranks.iter().enumerate() {
            for t in rt.tasks.iter().filter(|t| t.state == TState::Deferred) {
                for (p, span) in t.conds.iter().filter(|(p, _)| !p.holds(world.cell_value(p.cell))) {
                    add(r, &format!("{} (deferred completion)", t.name), p, *span);
                }
            }
        }
        let src = self.cfg.sources.as_ref();
        let mut f = Fault::new(
            ReportKind::Deadlock(parked.clone()),
            parked.first().map_or(Span::DUMMY, |p| p.span),
            format!("no core can run; {} wait(s) can never be satisfied", parked.len()),
        );
        for p in &parked {
            f = f.note(format!(
                "rank {} kernel '{}' at {} waits on {} {} (current value {}); written so far by ranks {:?}; ranks still running that could notify: {:?}",
                p.rank,
                p.kernel,
                crate::report::span_text(p.span, src),
                p.cell,
                p.predicate,
                p.value,
                p.writers,
                p.could_notify
            ));
        }
        let finished: Vec<usize> = (0..self.ranks.len()).filter(|r| !live.contains(r)).collect();
        if !finished.is_empty() {
            f = f.note(format!("ranks that already finished all their work: {finished:?}"));
        }
        f
    }
}

/// End-of-run checks: every self-clearing signal cell is back at zero.
fn end_checks(world: &World) -> Result<(), Fault> {
    let leaks: Vec<String> = world
        .cells
        .iter()
        .filter(|(_, m)| m.credit)
        .filter_map(|(&(domain, owner, offset), _)| {
            let r = crate::world::Resolved { domain, owner, offset };
            let v = world.cell_value(r);
            (v != 0).then(|| format!("{} = {v}", world.cell_name(r)))
        })
        .collect();
    if leaks.is_empty() {
        return Ok(());
    }
    let mut f = Fault::new(
        ReportKind::CreditLeak,
        Span::DUMMY,
        format!("{} self-clearing signal cell(s) are non-zero after every rank finished", leaks.len()),
    );
    for l in leaks {
        f = f.note(l);
    }
    Err(f.note("a self-clearing collective must subtract exactly the credits it received"))
}

/// Chrome trace JSON of the events (one process per rank, one thread per core).
pub fn chrome_trace(events: &[TraceEvent]) -> String {
    let mut s = String::from("{\"traceEvents\":[\n");
    for (i, e) in events.iter().enumerate() {
        if i > 0 {
            s.push_str(",\n");
        }
        let name = e.name.replace('\\', "\\\\").replace('"', "\\\"");
        s.push_str(&format!(
            "{{\"name\":\"{name}\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":1}}",
            e.rank, e.unit, e.ts
        ));
    }
    s.push_str("\n]}\n");
    s
}
