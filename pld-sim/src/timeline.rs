//! Modeled time: every simulated step gets a modeled start and end on the core it ran on.
//!
//! Guarantees: a core's clock advances only by the [`CostModel`] charge of the steps it runs,
//! and a wait ends at the first modeled time from its first poll at which the cell's value,
//! with its notifies applied in landing order, satisfies the predicate ([`crate::cellhist`]),
//! so the modeled times depend on what the program did, never on the host machine or on how
//! the simulator interleaved ranks — identical under `det` and every `random:SEED` schedule
//! when the protocol fixes the order and no task waits for a free core (under `parallel` a
//! wait may see a notify's value before its time stamp, and then starts from its own clock;
//! D-timeline-2). Tasks run on the real core numbers
//! `0..cores_per_rank` of their rank (the free core that became free first), so trace lanes
//! follow `--cores`. Sim-level parking costs nothing: only a satisfied wait is charged a poll.
//!
//! The trace recorder ([`Recorder`]) is one per scheduler thread; the cell history it
//! shares ([`Shared`]) sits behind one mutex.

pub use crate::aggregate::{LaneId, Slice};
use crate::cost::{BusFactor, CostModel, StepWork};
use crate::world::Park;
pub use crate::world::{CellOp, Meter, TouchRec};
use pld_ir::Span;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A cell's key: (domain, owner, byte offset).
pub type CellKey = (usize, usize, u64);

/// A remote write no read has consumed yet: byte range and flow id.
type PendingWrite = (u64, u64, u64);

/// What the recorders of one run share: cell histories, unconsumed remote writes, flow ids.
#[derive(Debug, Default)]
pub struct Shared {
    cells: rustc_hash::FxHashMap<CellKey, crate::cellhist::History>,
    writes: HashMap<(usize, usize), Vec<PendingWrite>>,
    next_flow: u64,
}

/// Whether flow id `id` links a remote write to its read (else a notify to its wait).
pub fn is_write_flow(id: u64) -> bool {
    id % 2 == 1
}

/// The lane of a rank's chip orchestrator.
pub const ORCH_LANE: usize = 100_000;

/// One modeled collective call on one rank.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CollectiveRun {
    /// Op name.
    pub name: String,
    /// Global rank.
    pub rank: usize,
    /// Its occurrence on that rank (0, 1, …) among collectives of this name.
    pub seq: usize,
    /// Modeled start and end (ps).
    pub start: u64,
    /// End.
    pub end: u64,
    /// nccl-tests size of the call (bytes).
    pub bytes: u64,
    /// Bus-bandwidth factor.
    pub factor: Option<BusFactor>,
    /// What the call is: type, count, reduction, root, algorithm.
    pub info: CallInfo,
}

/// A collective call as nccl-tests' result table describes it (the same on every rank).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CallInfo {
    /// Element type of the sized buffer (`None` when unknown, e.g. rows decoded from MPI).
    pub dtype: Option<pld_ir::DataType>,
    /// Elements of the sized buffer (`bytes / dtype size`).
    pub count: u64,
    /// The reduction (`sum`, `max`, …) of a reducing collective.
    pub redop: Option<String>,
    /// The root rank of a rooted collective.
    pub root: Option<i64>,
    /// The algorithm that ran (`mesh`, `ring`).
    pub algorithm: Option<String>,
}

/// A thread's recorder of slices, flows and collective calls.
pub struct Recorder {
    /// The model.
    pub cost: CostModel,
    /// Record slices.
    pub trace: bool,
    /// Keep every slice (no aggregation).
    pub keep_all: bool,
    shared: Arc<Mutex<Shared>>,
    /// Recorded slices.
    pub slices: crate::aggregate::Slices,
    /// Collective calls.
    pub collectives: Vec<CollectiveRun>,
    /// Ranks' modeled end times recorded by the parallel schedule's workers.
    pub rank_end: Vec<(usize, u64)>,
}

impl Recorder {
    /// A recorder sharing `shared`.
    pub fn new(cost: CostModel, trace: bool, keep_all: bool, shared: Arc<Mutex<Shared>>) -> Recorder {
        Recorder {
            cost,
            trace,
            keep_all,
            shared,
            slices: crate::aggregate::Slices::new(keep_all),
            collectives: Vec::new(),
            rank_end: Vec::new(),
        }
    }

    /// The cell histories this recorder shares.
    pub fn shared(&self) -> Arc<Mutex<Shared>> {
        Arc::clone(&self.shared)
    }

    /// A recorder for another thread of the same run.
    pub fn fork(&self) -> Recorder {
        Recorder::new(self.cost.clone(), self.trace, self.keep_all, Arc::clone(&self.shared))
    }

    /// Merges a forked recorder's records.
    pub fn join(&mut self, other: Recorder) {
        self.slices.extend(other.slices);
        self.collectives.extend(other.collectives);
        self.rank_end.extend(other.rank_end);
    }

    /// [`Recorder::step`] for a step that needs neither the world nor the shared histories
    /// (it parked, or it touched no signal cell and nothing is traced: the common step of a
    /// data op): charged here, the meter reset. Returns false, with nothing done, for any other.
    pub fn step_plain(&mut self, lane: &mut Lane, meter: &mut Meter, parked: bool) -> bool {
        if parked {
            meter.reset();
            return true;
        }
        if self.trace || !meter.cells.is_empty() {
            return false;
        }
        let mut work = meter.work;
        work.op = true;
        lane.clock = lane.clock.saturating_add(self.cost.step_ps(&work));
        meter.reset();
        true
    }

    /// Charges one step of a thread on `lane`: `parked` when it blocked in the simulator
    /// (free), else its work; `op` is the step's op (name, span) when the step ran an op
    /// (`None`: scalar statements), `kernel` the lane's kernel.
    pub fn step(
        &mut self,
        lane: &mut Lane,
        meter: &mut Meter,
        parked: bool,
        op: Option<&(&'static str, Span)>,
        kernel: &str,
        world: &crate::world::World,
    ) {
        if self.step_plain(lane, meter, parked) {
            return;
        }
        let mut work = meter.work;
        work.op = true;
        let start = lane.clock;
        let mut release = start;
        let mut flows_in = Vec::new();
        let mut flows_out = Vec::new();
        let mut cell_name = None;
        // The shared histories are locked only by steps that touch a cell (or, tracing, a
        // window): the parallel schedule's threads would otherwise meet at this lock per step.
        let need = !meter.cells.is_empty() || (self.trace && !meter.touches.is_empty());
        // Not needed only while tracing a step that touched nothing: an empty stand-in then
        // (built only then: a default `Shared` seeds a hasher).
        let mut idle;
        let mut guard;
        let shared: &mut Shared = if need {
            guard = self.shared.lock().unwrap_or_else(|e| e.into_inner());
            &mut guard
        } else {
            idle = Shared::default();
            &mut idle
        };
        for c in &meter.cells {
            if let CellOp::Waited(p) = c {
                let key = (p.cell.domain, p.cell.owner, p.cell.offset);
                if let Some(hist) = shared.cells.get(&key) {
                    let (at, flow) = hist.release(p, start);
                    release = release.max(at);
                    if self.trace {
                        flows_in.extend(flow);
                    }
                }
                if self.trace {
                    cell_name = Some(world.cell_name(p.cell));
                }
            }
        }
        let dur = self.cost.step_ps(&work);
        let end = release.saturating_add(dur);
        let mut peer = None;
        if self.trace {
            for t in &meter.touches {
                if t.remote {
                    peer = world.domains().get(t.win.0).and_then(|d| d.members.get(t.win.1)).copied();
                }
                if t.write && t.remote {
                    // Write flows have odd ids, notify flows even ones (see [`is_write_flow`]).
                    let id = shared.next_flow * 2 + 1;
                    shared.next_flow += 1;
                    shared.writes.entry(t.win).or_default().push((t.lo, t.hi, id));
                    flows_out.push(id);
                } else if !t.write {
                    if let Some(list) = shared.writes.get_mut(&t.win) {
                        list.retain(|&(lo, hi, id)| {
                            let hit = lo < t.hi && t.lo < hi;
                            if hit {
                                flows_in.push(id);
                            }
                            !hit
                        });
                    }
                }
            }
        }
        for c in &meter.cells {
            if let CellOp::Notify { cell, set, value, old, new, remote } = c {
                let key = (cell.domain, cell.owner, cell.offset);
                let flow = shared.next_flow * 2;
                shared.next_flow += 1;
                let land = end.saturating_add(if *remote { self.cost.landing_ps() } else { 0 });
                let hist = shared.cells.entry(key).or_insert_with(|| crate::cellhist::History::new(*old));
                hist.record(land, *set, *value, *new, flow);
                if self.trace {
                    flows_out.push(flow);
                    cell_name = Some(world.cell_name(*cell));
                    if *remote {
                        peer =
                            world.domains().get(cell.domain).and_then(|d| d.members.get(cell.owner)).copied();
                    }
                }
            }
        }
        lane.clock = end;
        if self.trace {
            let (name, span) = op.map_or((work_name(&work), Span::DUMMY), |&(n, s)| (n, s));
            let at = (lane.rank, lane.core);
            if release > start {
                let blocked = Slice {
                    at,
                    name: "wait (blocked)".into(),
                    ts: start,
                    dur: release - start,
                    kernel: kernel.to_string(),
                    bytes: 0,
                    remote: 0,
                    inflight_area: 0.0,
                    peer: None,
                    cell: cell_name.clone(),
                    span,
                    ops: 1,
                    flows_out: Vec::new(),
                    flows_in: std::mem::take(&mut flows_in),
                };
                self.slices.push(blocked);
            }
            let bytes = work.local_bytes + work.remote_bytes;
            self.slices.push(Slice {
                at,
                name: name.to_string(),
                ts: release,
                dur,
                kernel: kernel.to_string(),
                bytes,
                remote: work.remote_bytes,
                inflight_area: work.remote_bytes as f64 * dur as f64,
                peer,
                cell: cell_name,
                span,
                ops: 1,
                flows_out,
                flows_in,
            });
        }
        meter.reset();
    }
}

/// The name of a step that ran no named op (a protocol's micro step, scalar statements).
fn work_name(w: &StepWork) -> &'static str {
    if w.notifies > 0 {
        "notify"
    } else if w.polls > 0 {
        "wait"
    } else if w.remote_bytes > 0 {
        "remote transfer"
    } else if w.local_bytes > 0 {
        "local transfer"
    } else {
        "scalar statements"
    }
}

/// A running thread's place in modeled time.
#[derive(Clone, Debug)]
pub struct Lane {
    /// Global rank.
    pub rank: usize,
    /// Core number (or [`ORCH_LANE`]).
    pub core: usize,
    /// Its clock (ps).
    pub clock: u64,
    /// The collective call this lane runs, if any (its end is filled when the lane ends).
    pub collective: Option<CollectiveRun>,
}

/// A rank's modeled-time bookkeeping: its cores, its task graph's ready and end times.
#[derive(Clone, Debug, Default)]
pub struct RankTime {
    /// When each core becomes free (ps) and whether a simulated thread holds it.
    cores: Vec<(u64, bool)>,
    /// Ready time of each task of the current dispatch.
    ready: Vec<u64>,
    /// End time of each task of the current dispatch.
    end: Vec<u64>,
    /// When the current dispatch started.
    start: u64,
    /// Latest modeled time of anything on this rank (ps).
    pub frontier: u64,
    /// Launch time of tasks added next (the orchestrator's clock, or the dispatch start).
    pub launch_at: u64,
    /// Collectives of each name started so far.
    seq: HashMap<String, usize>,
    /// The run's cell histories (for deferred completions).
    pub cells: Option<Arc<Mutex<Shared>>>,
}

impl RankTime {
    /// A new dispatch starts after everything before it on this rank.
    pub fn new_dispatch(&mut self, cores: usize) {
        self.cores.resize(cores, (0, false));
        self.start = self.frontier;
        for c in &mut self.cores {
            c.0 = c.0.max(self.start);
        }
        self.ready.clear();
        self.end.clear();
        self.launch_at = self.start;
    }

    /// The chip orchestrator's lane.
    pub fn orch_lane(&self, rank: usize) -> Lane {
        Lane { rank, core: ORCH_LANE, clock: self.start, collective: None }
    }

    /// A task was added, ready at the current launch time.
    pub fn task_added(&mut self) {
        self.ready.push(self.launch_at);
        self.end.push(0);
    }

    /// A thread of task `task` (dependencies `deps`) starts: the free core that became free
    /// first takes it, at the latest of its ready time, its dependencies' ends and that core.
    pub fn start(&mut self, rank: usize, task: usize, deps: &[usize]) -> Lane {
        let ready = deps
            .iter()
            .filter_map(|&d| self.end.get(d))
            .fold(self.ready.get(task).copied().unwrap_or(self.start), |a, &b| a.max(b));
        let core = (0..self.cores.len())
            .filter(|&k| !self.cores[k].1)
            .min_by_key(|&k| (self.cores[k].0, k))
            .unwrap_or(0);
        if let Some(c) = self.cores.get_mut(core) {
            c.1 = true;
        }
        let at = self.cores.get(core).map_or(ready, |c| c.0.max(ready));
        Lane { rank, core, clock: at, collective: None }
    }

    /// A thread of task `task` ended at its lane's clock.
    pub fn finish(&mut self, lane: &Lane, task: Option<usize>) {
        if let Some(c) = self.cores.get_mut(lane.core) {
            *c = (lane.clock, false);
        }
        if let Some(e) = task.and_then(|t| self.end.get_mut(t)) {
            *e = (*e).max(lane.clock);
        }
        self.frontier = self.frontier.max(lane.clock);
    }

    /// Deferred task `task` completes when its conditions `conds` hold in modeled time (no
    /// earlier than its kernel's end).
    pub fn deferred_done<'a>(&mut self, task: usize, conds: impl Iterator<Item = &'a Park>) {
        let (Some(cells), Some(&end)) = (&self.cells, self.end.get(task)) else { return };
        let shared = cells.lock().unwrap_or_else(|e| e.into_inner());
        let mut done = end;
        for p in conds {
            if let Some(h) = shared.cells.get(&(p.cell.domain, p.cell.owner, p.cell.offset)) {
                done = done.max(h.release(p, end).0);
            }
        }
        drop(shared);
        self.end[task] = done;
        self.frontier = self.frontier.max(done);
    }

    /// The occurrence number of the next collective named `name` on this rank.
    pub fn next_seq(&mut self, name: &str) -> usize {
        let s = self.seq.entry(name.to_string()).or_insert(0);
        *s += 1;
        *s - 1
    }
}

/// The modeled-time results of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timing {
    /// Each rank's modeled time (ps): the end of its last operation.
    pub rank_ps: Vec<u64>,
    /// Each collective call (across ranks): name, nccl-tests size, modeled time, busbw.
    pub collectives: Vec<CollectiveTime>,
    /// The parameters used.
    pub model: String,
}

/// One collective call across ranks.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveTime {
    /// Op name.
    pub name: String,
    /// Ranks that took part.
    pub ranks: usize,
    /// nccl-tests size (bytes).
    pub bytes: u64,
    /// Modeled time, first start to last end across ranks (ps).
    pub time_ps: u64,
    /// Algorithm bandwidth `bytes / time` (GB/s).
    pub algbw_gbps: f64,
    /// Bus bandwidth: algbw times the collective's nccl-tests factor (GB/s), when defined.
    pub busbw_gbps: Option<f64>,
    /// Type, count, reduction, root and algorithm (from the first rank that knows them).
    pub info: CallInfo,
}

/// Groups per-rank collective runs into calls (same name, same occurrence number).
pub fn collective_times(runs: &[CollectiveRun]) -> Vec<CollectiveTime> {
    let mut calls: Vec<((String, usize), Vec<&CollectiveRun>)> = Vec::new();
    for r in runs {
        let key = (r.name.clone(), r.seq);
        match calls.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(r),
            None => calls.push((key, vec![r])),
        }
    }
    calls.sort_by_key(|(_, v)| (v.iter().map(|r| r.start).min().unwrap_or(0), v[0].name.clone(), v[0].seq));
    calls
        .into_iter()
        .map(|((name, _), v)| {
            let start = v.iter().map(|r| r.start).min().unwrap_or(0);
            let end = v.iter().map(|r| r.end).max().unwrap_or(0);
            let time_ps = end.saturating_sub(start);
            let bytes = v.iter().map(|r| r.bytes).max().unwrap_or(0);
            // bytes per ps * 1000 = GB/s.
            let algbw = if time_ps == 0 { 0.0 } else { bytes as f64 * 1000.0 / time_ps as f64 };
            let ranks = v.len();
            let factor = v[0].factor;
            let info = v.iter().map(|r| &r.info).find(|i| i.dtype.is_some()).unwrap_or(&v[0].info).clone();
            CollectiveTime {
                name,
                ranks,
                bytes,
                time_ps,
                algbw_gbps: algbw,
                busbw_gbps: factor.map(|f| algbw * f.on(ranks)),
                info,
            }
        })
        .collect()
}

/// `12.345 us`-style rendering of picoseconds.
pub fn fmt_ps(ps: u64) -> String {
    let ns = ps as f64 / 1000.0;
    if ns >= 1_000_000.0 {
        format!("{:.3} ms", ns / 1_000_000.0)
    } else if ns >= 1000.0 {
        format!("{:.3} us", ns / 1000.0)
    } else {
        format!("{ns:.1} ns")
    }
}
