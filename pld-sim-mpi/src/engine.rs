//! The MPI engine: one process of `mpirun -n P pld run --engine mpi …`, running global rank
//! `MPI_COMM_WORLD` rank with every comm domain's windows as MPI-3 RMA windows.
//!
//! Guarantees:
//! - Every process interprets the same program with the same inputs: the host orchestrator
//!   runs replicated and deterministically everywhere, so every process carves the same
//!   domains and buffers in the same order and allocates their windows collectively.
//! - Window and signal accesses follow docs/DECISIONS.md D-mpi-2 (put/store → `MPI_Put`, atomic
//!   add → `MPI_Accumulate` `MPI_SUM`, get/load → `MPI_Get`, notify AtomicAdd →
//!   `MPI_Fetch_and_op` `MPI_SUM`, Set → compare-and-swap, wait → polling atomic reads), each
//!   complete at its target before the next.
//! - The run ends in one of three ways, on every process alike: every rank finished (each
//!   other rank sends rank 0 its traffic, counters and — when asked — the output bytes it
//!   wrote, one rank at a time, and rank 0 returns the merged outcome, the others `None`); the watchdog found the run globally quiescent (rank 0 returns the
//!   deadlock report of every rank's waits); or one process faulted (it prints its report and
//!   aborts the job with exit code 3, or 130 for Ctrl-C, which ends every process).

use crate::rma::{self, Elem, Window};
use crate::wire;
use mpi::datatype::PartitionMut;
use mpi::traits::*;
use pld_ir::{DataType, Program};
use pld_sim::world::{Poll, RankState, Watchdog, WindowBackend};
use pld_sim::{Inputs, ReportKind, SimConfig, SimError, SimOutcome};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the watchdog must see every rank blocked or finished, with no step taken
/// anywhere, before it calls the run deadlocked.
pub const QUIET: Duration = Duration::from_millis(300);

/// Polls every blocked rank must have made inside the quiet period (each one an atomic
/// re-read of its cells after every notify counted before the period began; see D-mpi-3).
const QUIET_POLLS: i64 = 3;

/// An initialised MPI environment (finalised when dropped).
pub struct Mpi {
    universe: mpi::environment::Universe,
}

/// Initialises MPI (`MPI_THREAD_SINGLE`); `None` when MPI was initialised already. From here
/// on a large block freed goes back to the system ([`crate::heap`]): a process's peak is what
/// it holds at once, not what it once held.
pub fn init() -> Option<Mpi> {
    crate::heap::return_large_blocks();
    mpi::initialize().map(|universe| Mpi { universe })
}

impl Mpi {
    /// This process's rank in `MPI_COMM_WORLD`.
    pub fn rank(&self) -> usize {
        self.universe.world().rank() as usize
    }

    /// The number of processes.
    pub fn size(&self) -> usize {
        self.universe.world().size() as usize
    }

    /// Collective: every process's `v` at rank 0 (rank order); `None` elsewhere.
    pub fn gather_u64(&self, v: u64) -> Option<Vec<u64>> {
        let all = gather(&self.universe.world(), &v.to_le_bytes())?;
        Some(all.iter().filter_map(|b| Some(u64::from_le_bytes(b.as_slice().try_into().ok()?))).collect())
    }

    /// Runs `entry` as this process's rank (`cfg.nranks` must be [`Mpi::size`]); see the
    /// module guarantees for what each process returns. Rank 0's outcome holds the output
    /// bytes every rank wrote only with `outputs` (to write or check them); without it, only
    /// rank 0's own.
    pub fn run(
        &self,
        program: &Program,
        entry: &str,
        inputs: &Inputs,
        cfg: &SimConfig,
        outputs: bool,
    ) -> Result<Option<SimOutcome>, SimError> {
        let (me, n) = (self.rank(), self.size());
        let backend = Arc::new(Backend::new(me, n));
        let result = pld_sim::run_distributed(program, entry, inputs, cfg, backend.clone());
        let world = self.universe.world();
        let out = match result {
            Ok((outcome, mine)) => Ok(collect(&world, me, n, outcome, &mine, outputs)),
            Err(SimError::Fault(report)) => match &report.kind {
                ReportKind::Deadlock(parked) if backend.quiescent() => {
                    match gather(&world, &encoded(&wire::Message::Parked(parked.clone()))) {
                        None => Ok(None),
                        Some(all) => {
                            let mut waits = Vec::new();
                            for (r, b) in all.iter().enumerate() {
                                match wire::decode(b) {
                                    Ok(wire::Message::Parked(p)) => waits.extend(p),
                                    Ok(wire::Message::Share(_)) => {
                                        internal(r, "a share instead of its waits")
                                    }
                                    Err(e) => internal(r, &e.to_string()),
                                }
                            }
                            Err(SimError::Fault(pld_sim::deadlock_report(waits, cfg)))
                        }
                    }
                }
                _ => fail(me, &report),
            },
            // Refused before any device work, identically on every process.
            Err(e @ SimError::Invalid(_)) => {
                if me == 0 {
                    Err(e)
                } else {
                    Ok(None)
                }
            }
        };
        // Windows are freed together (collective) before MPI is finalised.
        world.barrier();
        drop(backend);
        out
    }
}

/// The end of a run every rank finished: each other rank sends rank 0 its share (then drops
/// it), and rank 0 merges them one at a time in rank order; the merged outcome on rank 0,
/// `None` elsewhere.
fn collect(
    world: &mpi::topology::SimpleCommunicator,
    me: usize,
    n: usize,
    outcome: SimOutcome,
    mine: &pld_sim::RankShare,
    outputs: bool,
) -> Option<SimOutcome> {
    let share = wire::share_of(me, &outcome, mine, outputs);
    let root = world.process_at_rank(0);
    if me != 0 {
        drop(outcome);
        let bytes = encoded(&wire::Message::Share(share));
        root.send(&bytes[..]);
        return None;
    }
    let mut m = wire::Merger::new(outcome, n);
    m.add(share);
    for r in 1..n {
        let (bytes, _) = world.process_at_rank(r as i32).receive_vec::<u8>();
        match wire::decode(&bytes) {
            Ok(wire::Message::Share(s)) => m.add(s),
            Ok(wire::Message::Parked(_)) => internal(r, "parked waits instead of its share"),
            Err(e) => internal(r, &e.to_string()),
        }
    }
    Some(m.finish())
}

/// `m` on the wire; a message that cannot be encoded is an engine bug (abort, exit 3).
fn encoded(m: &wire::Message) -> Vec<u8> {
    wire::encode(m)
        .unwrap_or_else(|e| rma::abort(3, &format!("error: internal: cannot encode a message: {e}")))
}

/// Rank 0 got a message from rank `r` it cannot use: an engine bug (abort, exit 3).
fn internal(r: usize, what: &str) -> ! {
    rma::abort(3, &format!("error: internal: the message of rank {r} at the end of the run: {what}"))
}

/// A fault on this process: the rank that hit it (or rank 0, for one every process hits)
/// prints it and aborts the job with exit code 3 (130 for Ctrl-C, as in-process); the others
/// give that rank time to do so first.
fn fail(me: usize, report: &pld_sim::Report) -> ! {
    let code = if report.kind == ReportKind::Interrupted { 130 } else { 3 };
    let site = report.json["rank"].as_u64().and_then(|r| usize::try_from(r).ok());
    if site == Some(me) || (site.is_none() && me == 0) {
        rma::abort(code, report.text.trim_end());
    }
    std::thread::sleep(Duration::from_secs(5));
    rma::abort(code, report.text.trim_end())
}

/// Gathers every process's bytes at rank 0 (in rank order); `None` elsewhere.
fn gather(world: &mpi::topology::SimpleCommunicator, data: &[u8]) -> Option<Vec<Vec<u8>>> {
    let root = world.process_at_rank(0);
    let count = data.len() as i32;
    if world.rank() != 0 {
        root.gather_into(&count);
        root.gather_varcount_into(data);
        return None;
    }
    let mut counts = vec![0i32; world.size() as usize];
    root.gather_into_root(&count, &mut counts[..]);
    let displs = offsets(&counts);
    let mut buf = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
    {
        let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
        root.gather_varcount_into_root(data, &mut part);
    }
    Some(split(&buf, &counts))
}

/// Where each of `counts` starts in their concatenation.
fn offsets(counts: &[i32]) -> Vec<i32> {
    counts
        .iter()
        .scan(0i32, |at, &c| {
            let d = *at;
            *at += c;
            Some(d)
        })
        .collect()
}

/// `buf` cut into pieces of `counts` bytes.
fn split(buf: &[u8], counts: &[i32]) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(counts.len());
    let mut at = 0usize;
    for &c in counts {
        out.push(buf[at..at + c as usize].to_vec());
        at += c as usize;
    }
    out
}

/// The control cells (`i64`, on rank 0): the verdict, then per rank its state, steps, polls.
const CTRL: usize = 0;
const GO: i64 = 0;
const FINISHED: i64 = 1;
const DEADLOCK: i64 = 2;
const RUNNING: i64 = 0;
const BLOCKED: i64 = 1;
const DONE: i64 = 2;

fn cell(rank: usize, k: usize) -> usize {
    (1 + 3 * rank + k) * 8
}

/// The RMA windows of one process and its watchdog state.
struct Backend {
    rank: usize,
    nprocs: usize,
    /// Per comm domain: its members (global ranks) and window.
    wins: Mutex<Vec<(Vec<usize>, Window)>>,
    control: Window,
    watch: Mutex<Watch>,
}

/// What this process published in its control cells, and rank 0's quiescence snapshot.
#[derive(Default)]
struct Watch {
    published: [i64; 3],
    snapshot: Option<(Instant, i64, Vec<i64>)>,
    verdict: i64,
}

impl Backend {
    fn new(rank: usize, nprocs: usize) -> Backend {
        let control = Window::allocate((1 + 3 * nprocs) * 8, &|b| b.fill(0));
        Backend { rank, nprocs, wins: Mutex::new(Vec::new()), control, watch: Mutex::new(Watch::default()) }
    }

    /// Whether the watchdog called the run deadlocked.
    fn quiescent(&self) -> bool {
        self.watch.lock().map(|w| w.verdict == DEADLOCK).unwrap_or(false)
    }

    /// Runs `f` on domain `domain`'s window and the global rank of its member `owner`.
    fn with<R>(&self, domain: usize, owner: usize, f: impl FnOnce(&Window, usize) -> R) -> R {
        let wins = self.wins.lock().unwrap_or_else(|e| e.into_inner());
        match wins.get(domain).and_then(|(m, w)| Some((w, *m.get(owner)?))) {
            Some((w, target)) => f(w, target),
            None => rma::abort(3, &format!("error: internal: no window for domain {domain} rank {owner}")),
        }
    }

    /// Publishes this rank's control cells (steps, then state, then polls: a reader that
    /// sees the new poll count sees the rest).
    fn publish(&self, w: &mut Watch, state: i64, steps: i64) {
        let new = [state, steps, w.published[2] + 1];
        for k in [1, 0, 2] {
            if new[k] != w.published[k] {
                self.control.fetch_add_i64(0, cell(self.rank, k), new[k] - w.published[k]);
            }
        }
        w.published = new;
    }

    /// Rank 0's watchdog: the verdict from every rank's control cells.
    fn judge(&self, w: &mut Watch) -> i64 {
        let read = |r: usize, k: usize| self.control.fetch_add_i64(0, cell(r, k), 0);
        let mut polls = Vec::with_capacity(self.nprocs);
        let mut states = Vec::with_capacity(self.nprocs);
        let mut steps = 0i64;
        for r in 0..self.nprocs {
            polls.push(read(r, 2));
            states.push(read(r, 0));
            steps = steps.wrapping_add(read(r, 1));
        }
        if states.iter().all(|&s| s == DONE) {
            return FINISHED;
        }
        if states.contains(&RUNNING) {
            w.snapshot = None;
            return GO;
        }
        match &w.snapshot {
            Some((t, s, p)) if *s == steps => {
                let polled = (0..self.nprocs).all(|r| states[r] == DONE || polls[r] >= p[r] + QUIET_POLLS);
                if polled && t.elapsed() >= QUIET {
                    return DEADLOCK;
                }
            }
            _ => w.snapshot = Some((Instant::now(), steps, polls)),
        }
        GO
    }
}

impl Watchdog for Backend {
    fn poll(&self, state: RankState, steps: u64) -> Poll {
        let mut w = self.watch.lock().unwrap_or_else(|e| e.into_inner());
        let s = match state {
            RankState::Blocked => BLOCKED,
            RankState::Done => DONE,
        };
        self.publish(&mut w, s, steps as i64);
        let mut verdict = self.control.fetch_add_i64(0, CTRL, 0);
        if self.rank == 0 && verdict == GO {
            verdict = self.judge(&mut w);
            if verdict != GO {
                self.control.fetch_add_i64(0, CTRL, verdict);
            }
        }
        w.verdict = verdict;
        match verdict {
            FINISHED => Poll::Finished,
            DEADLOCK => Poll::Deadlock,
            _ => Poll::Go,
        }
    }
}

fn elem_of(dt: DataType) -> Option<Elem> {
    Some(match dt {
        DataType::FP32 => Elem::F32,
        DataType::INT8 => Elem::I8,
        DataType::INT16 => Elem::I16,
        DataType::INT32 => Elem::I32,
        DataType::INT64 | DataType::INDEX => Elem::I64,
        _ => return None,
    })
}

impl WindowBackend for Backend {
    fn rank(&self) -> usize {
        self.rank
    }

    fn create(
        &self,
        domain: usize,
        members: &[usize],
        size: u64,
        fill: &dyn Fn(&mut [u8]),
    ) -> Result<(), String> {
        let mut wins = self.wins.lock().unwrap_or_else(|e| e.into_inner());
        if wins.len() != domain {
            return Err(format!("domain {domain} created out of order (after {})", wins.len()));
        }
        let size = usize::try_from(size).map_err(|_| format!("window of {size} bytes"))?;
        let mine = if members.contains(&self.rank) { size } else { 0 };
        wins.push((members.to_vec(), Window::allocate(mine, fill)));
        Ok(())
    }

    fn get(&self, domain: usize, owner: usize, offset: u64, out: &mut [u8]) {
        self.with(domain, owner, |w, t| w.get(t, offset as usize, out));
    }

    fn put(&self, domain: usize, owner: usize, offset: u64, src: &[u8]) {
        self.with(domain, owner, |w, t| w.put(t, offset as usize, src));
    }

    fn accumulate(&self, domain: usize, owner: usize, offset: u64, src: &[u8], dt: DataType) -> bool {
        let Some(e) = elem_of(dt) else { return false };
        self.with(domain, owner, |w, t| w.accumulate(t, offset as usize, src, e));
        true
    }

    fn fetch_add(&self, domain: usize, owner: usize, offset: u64, v: i32) -> i32 {
        self.with(domain, owner, |w, t| w.fetch_add_i32(t, offset as usize, v))
    }

    fn swap(&self, domain: usize, owner: usize, offset: u64, v: i32) -> i32 {
        self.with(domain, owner, |w, t| w.swap_i32(t, offset as usize, v))
    }

    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let world = mpi::topology::SimpleCommunicator::world();
        let count = mine.len() as i32;
        let mut counts = vec![0i32; self.nprocs];
        world.all_gather_into(&count, &mut counts[..]);
        let displs = offsets(&counts);
        let mut buf = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
        {
            let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
            world.all_gather_varcount_into(mine, &mut part);
        }
        split(&buf, &counts)
    }

    fn next_epoch(&self) {
        let world = mpi::topology::SimpleCommunicator::world();
        let mut w = self.watch.lock().unwrap_or_else(|e| e.into_inner());
        let steps = w.published[1];
        self.publish(&mut w, RUNNING, steps);
        // Every rank counts as running before rank 0 clears the verdict, and the verdict is
        // clear before any rank polls again.
        world.barrier();
        if self.rank == 0 {
            let v = self.control.fetch_add_i64(0, CTRL, 0);
            self.control.fetch_add_i64(0, CTRL, -v);
        }
        w.snapshot = None;
        w.verdict = GO;
        world.barrier();
    }
}
