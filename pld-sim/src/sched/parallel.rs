//! The parallel schedule: worker threads (one per available core, at most one per rank) taking
//! ranks from one shared ready queue; each rank carries its own [`World::fork`] handle and
//! recorder, so any worker can run any rank and only the queue is shared scheduler state. A
//! worker takes the ranks of its own block first (the crew splits the ranks into consecutive
//! blocks) and another's once it has waited [`STEAL_AFTER`]. How
//! many workers take ranks is decided window by window by the [`Governor`] from the steps per
//! second each crew ran: one worker (the calling thread, the others asleep) when a second one
//! does not pay — ranks that block every few microseconds (a barrier per tile), or a machine
//! whose other cores are busy — and every worker when it does. The governed schedule's first
//! window ([`FIRST_WINDOW`], 1 ms) is det's own loop on the calling thread
//! (`Sched::first_window`), so a run shorter than it never starts a worker, and the others
//! start when the team is first tried, right after it.
//! [`SimConfig::parallel_workers`] fixes the worker count instead (tests, benchmarks).
//!
//! Guarantees: a rank is run by at most one worker at a time, for a slice that ends when it
//! blocks (no runnable core), finishes, has run [`SLICE_QUANTA`] quanta, or — after a quantum —
//! when a notify since the slice began may have released a blocked rank while a worker of the
//! crew has nothing to run (else a barrier's last notifier ran its next step alone while the
//! other worker idled); a blocked rank is put back in the queue by the first slice that ends,
//! or the first idle worker that looks, after any notify since it was found blocked, so no
//! wake-up is lost and none waits for the notifier's slice to end;
//! workers touch the shared queue only between slices (once to take a rank, once to hand it
//! back), never per statement; a worker with nothing to take spins briefly, then sleeps until
//! a rank is queued; a worker outside the crew finishes its slice and sleeps until the crew
//! grows or the run ends. A fault on any worker stops every worker after its current slice, and
//! the first fault is the run's (a budget fault names every rank's running cores). The run is
//! reported deadlocked exactly when no rank is queued or running and some rank is unfinished
//! (every unfinished rank blocked after the latest notify), with the same report, rank-divergence
//! `help:` included, as the deterministic schedule gives. Handles and recorders are joined
//! back in rank order when all workers end. Which crew runs never changes what a slice does:
//! outputs, traffic and reports are those of any other interleaving.

use super::governor::{Crew, Governor, FIRST_WINDOW, WINDOW};
use super::*;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// How long a worker that finds no queued rank spins (busy, then yielding) before it sleeps
/// on the condition variable: a sleeping vCPU of this kind of VM takes hundreds of
/// microseconds to wake, longer than a peer's slice usually takes to queue a rank.
const SPIN_FOR: std::time::Duration = std::time::Duration::from_millis(1);

/// Of that, the first part spins without giving the core away.
const SPIN_BUSY_FOR: std::time::Duration = std::time::Duration::from_micros(100);

/// How long a queued rank waits for the worker whose block it is in ([`home`]) before another
/// worker of the crew may take it: ranks stay on one core while both workers are busy (a rank's
/// registers and its ring neighbour's window stay in that core's cache), and a rank whose worker
/// is held up (another rank's long slice, a core the machine took away) still runs soon.
const STEAL_AFTER: std::time::Duration = std::time::Duration::from_micros(60);

/// Quanta a rank runs in one slice before it goes back to the end of the queue (a rank that
/// blocks or finishes ends its slice earlier). Long enough that taking and handing back a rank
/// costs little next to the slice; short enough that a rank polling a flag without a wait
/// cannot keep the ranks it waits for off the cores for long.
pub const SLICE_QUANTA: usize = 16;

/// One rank of a parallel run: its scheduler state, its world handle and its recorder.
struct Slot<'p> {
    rl: RankLocal<'p>,
    w: World,
    rec: Recorder,
}

/// How a slice ended.
enum SliceEnd {
    /// The rank can still run (its slice ran out).
    Ready,
    /// No core of the rank can run until some notify.
    Blocked,
    /// The rank has no work left.
    Finished,
}

/// A slice's work, the governor's measure: its steps plus the bytes it moved over this many.
/// Steps alone are no longer one unit of work: an interpreted statement moves at most a tile,
/// a builtin protocol step up to its grain (D-sim-37) — hundreds of KiB, ~100× the time —
/// so a crew probed in a collective would be judged against windows of cheap statements. At
/// 4 KiB a byte-moving step and an interpreted statement weigh about what they cost.
const WORK_BYTES: u64 = 4096;

/// Where a handle's work count stood (steps, bytes moved), to measure what was done since.
#[derive(Clone, Copy)]
struct WorkMark(u64, u64);

impl WorkMark {
    fn of(w: &World) -> WorkMark {
        WorkMark(w.stats().steps, w.moved_total())
    }

    /// The work `w` did since this mark (see [`WORK_BYTES`]).
    fn since(self, w: &World) -> u64 {
        w.stats().steps - self.0 + (w.moved_total() - self.1) / WORK_BYTES
    }
}

/// Who decides how many workers take ranks.
enum Staffing {
    /// A fixed number ([`SimConfig::parallel_workers`]).
    Fixed,
    /// The governor, from the rate of each crew's windows.
    Governed {
        gov: Governor,
        /// When the current window began.
        since: Instant,
        /// Work of the slices that ended in the current window (see [`WORK_BYTES`]).
        work: u64,
    },
}

/// The scheduler state the workers share (under one mutex).
struct Board {
    /// Ranks that may run, in the order they were queued.
    ready: VecDeque<usize>,
    /// Ranks that blocked, each with the notify epoch it was found blocked at (queued again
    /// once the epoch moves on: [`Board::release`]).
    blocked: Vec<(usize, u64)>,
    /// Ranks a worker is running now.
    running: usize,
    /// When each rank was last queued (one entry per rank of the run).
    queued_at: Vec<Instant>,
    /// Ranks with no work left.
    done: usize,
    /// Workers that take ranks now: the first `crew` (the others sleep on `Shared::bench`).
    crew: usize,
    /// Set when the run ends early: a fault, or a deadlock.
    stop: bool,
    /// Every unfinished rank blocked with nothing running or queued.
    deadlocked: bool,
    /// The first fault.
    fault: Option<Fault>,
    staffing: Staffing,
}

impl Board {
    /// Queues again every blocked rank that a notify since it was found blocked may have
    /// released (found blocked before the notify epoch reached `epoch`); returns whether any was.
    fn release(&mut self, epoch: u64) -> bool {
        let Board { ready, blocked, queued_at, .. } = self;
        let queued = ready.len();
        let now = Instant::now();
        blocked.retain(|&(r, at)| {
            at == epoch || {
                queued_at[r] = now;
                ready.push_back(r);
                false
            }
        });
        ready.len() > queued
    }

    /// Counts the `work` of a slice that just ended (see [`WORK_BYTES`]); at the end of a
    /// governed window, lets the governor pick the next window's crew (`workers` in a team).
    /// Returns whether the crew grew.
    fn count(&mut self, work: u64, workers: usize) -> bool {
        let Staffing::Governed { gov, since, work: window } = &mut self.staffing else { return false };
        *window += work;
        let spent = since.elapsed();
        if spent < WINDOW {
            return false;
        }
        let crew = match gov.window_ended(*window, spent.as_secs_f64(), core_free) {
            Crew::Solo => 1,
            Crew::Team => workers,
        };
        (*since, *window) = (Instant::now(), 0);
        let grew = crew > self.crew;
        self.crew = crew;
        grew
    }
}

/// A value on cache lines of its own: it starts on a 128-byte boundary and nothing else shares
/// its lines (two 64-byte lines: the pair an adjacent-line prefetcher fetches together).
#[repr(align(128))]
struct Lined<T>(T);

/// The synchronisation of the workers: the notify epoch (bumped by every notify through
/// [`World::set_wake`]), the board, its condition variables and what a spinning worker polls
/// without the lock.
struct Shared<'a> {
    epoch: &'a AtomicU64,
    /// On lines of its own: the atomics below are polled by spinning workers while the lock
    /// holder writes the board (beside them, 2-worker 16 MiB allreduces ran 5-9% slower).
    board: Lined<Mutex<Board>>,
    /// Workers of the crew wait here for a queued rank.
    cv: Condvar,
    /// Workers outside the crew wait here for the crew to grow.
    bench: Condvar,
    /// `board.ready.len()`, readable without the lock.
    queued: AtomicUsize,
    /// `board.stop`, readable without the lock.
    stopped: AtomicBool,
    /// Workers asleep on `cv`.
    sleepers: AtomicUsize,
    /// Per worker, the queued ranks of its own block ([`pick`]), readable without the lock.
    own_queued: Vec<AtomicUsize>,
    /// `board.blocked.len()`, readable without the lock.
    blocked: AtomicUsize,
    /// Workers of the crew looking for a rank (spinning or asleep on `cv`).
    idle: AtomicUsize,
    /// Worker threads in all (the crew of a team).
    workers: usize,
}

impl Shared<'_> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Board> {
        self.board.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Publishes the board's queue length and stop flag, and wakes sleepers when a rank is
    /// queued or the run ended (called with the lock held).
    fn publish(&self, b: &Board) {
        self.queued.store(b.ready.len(), Ordering::SeqCst);
        for (k, q) in self.own_queued.iter().enumerate() {
            q.store(b.ready.iter().filter(|&&r| home(b, r) == k).count(), Ordering::SeqCst);
        }
        self.blocked.store(b.blocked.len(), Ordering::SeqCst);
        self.stopped.store(b.stop, Ordering::SeqCst);
        if (b.stop || !b.ready.is_empty() || b.running == 0) && self.sleepers.load(Ordering::SeqCst) > 0 {
            self.cv.notify_all();
        }
        if b.stop {
            self.bench.notify_all();
        }
    }
}

/// How the parallel schedule's first window, run as det runs, ended.
pub(super) enum FirstWindow {
    /// Every rank became idle: the device work is done.
    Finished,
    /// The window ran out after `work` units (steps plus bytes moved over [`WORK_BYTES`]) in
    /// `secs` seconds: the governor's first solo window.
    Ran {
        /// Work done.
        work: u64,
        /// Wall time it took.
        secs: f64,
    },
}

impl<'p, 'c> Sched<'p, 'c> {
    /// The governed schedule's first window ([`FIRST_WINDOW`]), run as det runs (`Sched::turns`).
    pub(super) fn first_window(&mut self, world: &mut World) -> Result<FirstWindow, Fault> {
        let (start, mark) = (Instant::now(), WorkMark::of(world));
        if self.turns(world, Some(start + FIRST_WINDOW))? {
            return Ok(FirstWindow::Finished);
        }
        Ok(FirstWindow::Ran { work: mark.since(world), secs: start.elapsed().as_secs_f64() })
    }

    /// Runs the device work on [`parallel_workers`] threads sharing one ready queue of ranks
    /// (see the module documentation), then joins every rank's handle and recorder back;
    /// `solo` is a window one thread already ran (work, seconds), the governor's first.
    pub(super) fn parallel_loop(&mut self, world: &mut World, solo: Option<(u64, f64)>) -> Result<(), Fault> {
        let n = self.ranks.len();
        let (cfg, program) = (self.cfg, self.program);
        let (syms, lives) = self.env_parts();
        let epoch = std::sync::Arc::new(AtomicU64::new(0));
        world.set_wake(Some(std::sync::Arc::clone(&epoch)));
        let slots: Vec<Mutex<Slot<'p>>> = std::mem::take(&mut self.ranks)
            .into_iter()
            .map(|rl| Mutex::new(Slot { w: world.fork(&[rl.r]), rl, rec: self.rec.fork() }))
            .collect();
        let workers = parallel_workers(n, cfg);
        let (crew, staffing) = match cfg.parallel_workers {
            Some(_) => (workers, Staffing::Fixed),
            None => {
                let mut gov = Governor::default();
                let crew = match solo.map(|(work, secs)| gov.window_ended(work, secs, core_free)) {
                    Some(Crew::Team) => workers,
                    _ => 1,
                };
                (crew, Staffing::Governed { gov, since: Instant::now(), work: 0 })
            }
        };
        let board = Board {
            ready: (0..n).collect(),
            blocked: Vec::new(),
            running: 0,
            queued_at: vec![Instant::now(); n],
            done: 0,
            crew,
            stop: false,
            deadlocked: false,
            fault: None,
            staffing,
        };
        let sync = Shared {
            epoch: &epoch,
            board: Lined(Mutex::new(board)),
            cv: Condvar::new(),
            bench: Condvar::new(),
            queued: AtomicUsize::new(n),
            stopped: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            own_queued: (0..workers).map(|_| AtomicUsize::new(0)).collect(),
            blocked: AtomicUsize::new(0),
            idle: AtomicUsize::new(0),
            workers,
        };
        let env = Env { syms: &syms, program, lives: &lives };
        std::thread::scope(|scope| {
            let (slots, sync, env) = (&slots, &sync, &env);
            let mut start = || {
                for k in 1..workers {
                    scope.spawn(move || worker(k, slots, sync, env, cfg, n, None));
                }
            };
            if crew > 1 {
                start();
                worker(0, slots, sync, env, cfg, n, None);
            } else {
                worker(0, slots, sync, env, cfg, n, Some(&mut start));
            }
        });
        world.set_wake(None);
        let board = sync.board.0.into_inner().unwrap_or_else(|e| e.into_inner());
        let mut ranks = Vec::with_capacity(n);
        for slot in slots {
            let Slot { rl, w, mut rec } = slot.into_inner().unwrap_or_else(|e| e.into_inner());
            world.join(w);
            rec.rank_end.push((rl.r, rl.tl.frontier));
            self.rec.join(rec);
            ranks.push(rl);
        }
        if let Some(f) = board.fault {
            return Err(ranks.iter().fold(f, |f, rl| rl.describe_budget(f, world, cfg)));
        }
        if board.deadlocked {
            let live: Vec<usize> = ranks.iter().filter(|rl| !rl.idle()).map(|rl| rl.r).collect();
            let parked = ranks.iter().flat_map(|rl| rl.parked(world)).collect();
            let f = deadlock_fault(parked, &live, n, cfg);
            return Err(crate::divergence::help(f, program, world.branches()));
        }
        // Each handle held its own steps to the budget; the run as a whole (the first window's
        // steps and every rank's) may not pass it either, as under det.
        crate::budget::check_total(world.stats().steps, cfg, "the parallel run as a whole")
    }
}

/// The cores this process may run on, asked once: the query reads the cgroup's CPU quota and
/// the affinity mask (30–70 µs on a VM), a cost every parallel run would otherwise pay when
/// its first window hands over to the workers.
static CORES: std::sync::LazyLock<usize> =
    std::sync::LazyLock::new(|| std::thread::available_parallelism().map_or(2, |x| x.get()));

/// Whether a core of the machine is idle now: the kernel's count of runnable threads (the
/// fourth field of `/proc/loadavg`, this one included; the fewest of three looks) is below its
/// online cores (the `cpuN` lines of `/proc/stat`, counted once). Machine-wide on both sides,
/// so a process limited to a few cores of a busy host still gets its probe, and the governor's
/// measure decides. Where either cannot be read, a core is taken to be free (the team is
/// probed and measured, as before).
fn core_free() -> bool {
    static ONLINE: std::sync::LazyLock<Option<usize>> = std::sync::LazyLock::new(|| {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let n = stat
            .lines()
            .filter(|l| l.strip_prefix("cpu").is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit())))
            .count();
        (n > 0).then_some(n)
    });
    let Some(online) = *ONLINE else { return true };
    // Up to three looks (~10 µs each), the first that finds a core free ends them (the fewest
    // of the three is below `online` exactly when one of them is): a kernel thread that is
    // runnable for a moment does not make a core busy.
    (0..3).any(|_| {
        std::fs::read_to_string("/proc/loadavg").ok().and_then(|l| runnable(&l)).is_none_or(|r| r < online)
    })
}

/// The runnable-thread count of a `/proc/loadavg` line (`0.50 0.40 0.30 2/345 6789`: 2).
fn runnable(loadavg: &str) -> Option<usize> {
    loadavg.split_whitespace().nth(3)?.split('/').next()?.parse().ok()
}

/// Worker threads of the parallel schedule for `n` ranks: [`SimConfig::parallel_workers`] when
/// set, else one per available core; at most one per rank.
fn parallel_workers(n: usize, cfg: &SimConfig) -> usize {
    cfg.parallel_workers.unwrap_or(*CORES).clamp(1, n.max(1))
}

/// The body of worker `k`: take a queued rank, run one slice of it, hand it back; until every
/// rank finished, a fault, or a deadlock. The first worker holds `start` (which starts the
/// others) until the crew first grows past it.
fn worker<'p>(
    k: usize,
    slots: &[Mutex<Slot<'p>>],
    sync: &Shared<'_>,
    env: &Env<'_, 'p>,
    cfg: &SimConfig,
    n: usize,
    mut start: Option<&mut dyn FnMut()>,
) {
    while let Some(r) = take(k, sync, n) {
        // The epoch before the slice looks at any cell: a notify after it queues the rank again.
        let e = sync.epoch.load(Ordering::SeqCst);
        let (end, own, work) = {
            let mut slot = slots[r].lock().unwrap_or_else(|e| e.into_inner());
            let Slot { rl, w, rec } = &mut *slot;
            let (notifies, mark) = (w.notifies_of(r), WorkMark::of(w));
            // A notify since the slice began may have released a blocked rank that an idle
            // worker could run now: the slice hands its rank back after the current quantum.
            let hand_over = || {
                sync.epoch.load(Ordering::SeqCst) != e
                    && sync.blocked.load(Ordering::SeqCst) > 0
                    && sync.idle.load(Ordering::SeqCst) > 0
            };
            let end = slice(rl, w, rec, env, cfg, &hand_over);
            (end, w.notifies_of(r) - notifies, mark.since(w))
        };
        let mut b = sync.lock();
        b.running -= 1;
        let epoch = sync.epoch.load(Ordering::SeqCst);
        let notifies = epoch.wrapping_sub(e);
        match end {
            Err(f) => {
                b.fault.get_or_insert(f);
                b.stop = true;
            }
            Ok(SliceEnd::Finished) => b.done += 1,
            // The rank's last look at its waits followed its own notifies, but another rank's
            // notify during the slice may have come after that look.
            Ok(SliceEnd::Blocked) if notifies == own => b.blocked.push((r, epoch)),
            Ok(SliceEnd::Blocked | SliceEnd::Ready) => {
                b.queued_at[r] = Instant::now();
                b.ready.push_back(r);
            }
        }
        // A notify since a rank was found blocked may have satisfied its wait: queue it again
        // to look.
        b.release(epoch);
        let grew = b.count(work, sync.workers);
        sync.publish(&b);
        drop(b);
        if grew {
            match start.take() {
                Some(start) => start(),
                None => sync.bench.notify_all(),
            }
        }
    }
}

/// Takes the next queued rank for worker `k` (`None`: the run ended). With nothing queued and
/// nothing running, every rank finished or the run deadlocked. A worker outside the crew
/// sleeps until the crew grows to include it or the run ends.
fn take(k: usize, sync: &Shared<'_>, n: usize) -> Option<usize> {
    let mut b = sync.lock();
    loop {
        if b.stop {
            return None;
        }
        if k >= b.crew {
            b = sync.bench.wait(b).unwrap_or_else(|e| e.into_inner());
            continue;
        }
        // A notify since a rank was found blocked (made by a slice still running: a barrier's
        // last notifier goes on to its next step) may have released it: queue it now.
        let epoch = sync.epoch.load(Ordering::SeqCst);
        let released = b.release(epoch);
        if let Some(r) = pick(&b, k).and_then(|at| b.ready.remove(at)) {
            b.running += 1;
            sync.publish(&b);
            return Some(r);
        }
        if b.running == 0 {
            // Nothing queued or running, and every blocked rank was found blocked after the
            // latest notify.
            b.deadlocked = b.done < n;
            b.stop = true;
            sync.publish(&b);
            return None;
        }
        if released {
            // Queued for other workers: they see it without the lock.
            sync.publish(&b);
        }
        let steal_at = b.ready.iter().map(|&r| b.queued_at[r] + STEAL_AFTER).min();
        drop(b);
        sync.idle.fetch_add(1, Ordering::SeqCst);
        spin_for_work(sync, k, epoch, steal_at);
        b = sync.lock();
        if b.release(sync.epoch.load(Ordering::SeqCst)) {
            sync.publish(&b);
        }
        if b.stop || !b.ready.is_empty() || b.running == 0 || k >= b.crew {
            sync.idle.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        sync.sleepers.fetch_add(1, Ordering::SeqCst);
        b = sync.cv.wait(b).unwrap_or_else(|e| e.into_inner());
        sync.sleepers.fetch_sub(1, Ordering::SeqCst);
        sync.idle.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Which queued rank worker `k` takes: one of its own block of ranks first, another that
/// waited [`STEAL_AFTER`], or the first when one worker runs or none is running.
fn pick(b: &Board, k: usize) -> Option<usize> {
    if b.crew <= 1 || b.running == 0 {
        return (!b.ready.is_empty()).then_some(0);
    }
    if let Some(at) = b.ready.iter().position(|&r| home(b, r) == k) {
        return Some(at);
    }
    let now = Instant::now();
    b.ready.iter().position(|&r| now.duration_since(b.queued_at[r]) >= STEAL_AFTER)
}

/// The worker whose block rank `r` is in: the crew's workers split the ranks into consecutive
/// blocks (neighbours in a ring share a worker's cache).
fn home(b: &Board, r: usize) -> usize {
    r * b.crew.max(1) / b.queued_at.len().max(1)
}

/// Spins (busy for [`SPIN_BUSY_FOR`], then yielding; [`SPIN_FOR`] in all) until a rank is
/// queued that worker `k` may take (`steal_at`: when the first queued rank of another worker's
/// block may be taken; `None`: none is queued), a notify moved the epoch past `epoch` while a
/// rank is blocked, or the run stopped.
fn spin_for_work(sync: &Shared<'_>, k: usize, epoch: u64, steal_at: Option<Instant>) {
    let start = std::time::Instant::now();
    let released = || sync.blocked.load(Ordering::SeqCst) > 0 && sync.epoch.load(Ordering::SeqCst) != epoch;
    let nothing = || match steal_at {
        None => sync.queued.load(Ordering::SeqCst) == 0,
        Some(at) => {
            sync.own_queued.get(k).is_none_or(|q| q.load(Ordering::SeqCst) == 0) && Instant::now() < at
        }
    };
    while nothing() && !sync.stopped.load(Ordering::SeqCst) && !released() {
        let spent = start.elapsed();
        if spent >= SPIN_FOR {
            return;
        }
        if spent < SPIN_BUSY_FOR {
            for _ in 0..64 {
                std::hint::spin_loop();
            }
        } else {
            std::thread::yield_now();
        }
    }
}

/// Runs one slice of rank `rl` (see [`SLICE_QUANTA`]); it ends early, after a quantum, when
/// `hand_over` says an idle worker could run a rank this one's notifies released.
fn slice<'p>(
    rl: &mut RankLocal<'p>,
    w: &mut World,
    rec: &mut Recorder,
    env: &Env<'_, 'p>,
    cfg: &SimConfig,
    hand_over: &dyn Fn() -> bool,
) -> Result<SliceEnd, Fault> {
    for _ in 0..SLICE_QUANTA {
        // Start dispatches and tasks, retire deferred ones, wake cores, until nothing changes
        // (bounded: a rank that keeps changing is runnable, and its turn comes again).
        let mut changing = true;
        for _ in 0..64 {
            changing = rl.advance(w, cfg, env.lives)?;
            if !changing {
                break;
            }
        }
        let runnable = rl.runnable().count();
        if runnable == 0 {
            return Ok(if changing {
                SliceEnd::Ready
            } else if rl.idle() {
                SliceEnd::Finished
            } else {
                SliceEnd::Blocked
            });
        }
        rl.rr = rl.rr.wrapping_add(1);
        let Some(i) = rl.runnable().nth(rl.rr % runnable) else { continue };
        rl.quantum(i, w, env, cfg, QUANTUM_OPS, rec)?;
        if hand_over() {
            break;
        }
    }
    Ok(SliceEnd::Ready)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_runnable_count_is_read_from_a_loadavg_line() {
        assert_eq!(super::runnable("0.52 0.58 0.59 2/345 6789\n"), Some(2));
        assert_eq!(super::runnable("1.00 2.00 3.00 17/1024 1"), Some(17));
        assert_eq!(super::runnable("0.1 0.2 0.3"), None);
        assert_eq!(super::runnable("0.1 0.2 0.3 x/5 9"), None);
    }

    /// A board of `n` ranks, `ready` queued (an hour from now: however slowly the test runs,
    /// none has waited), one running, a crew of two.
    fn board(n: usize, ready: std::collections::VecDeque<usize>) -> super::Board {
        let later = std::time::Instant::now() + std::time::Duration::from_secs(3600);
        super::Board {
            ready,
            blocked: Vec::new(),
            running: 1,
            queued_at: vec![later; n],
            done: 0,
            crew: 2,
            stop: false,
            deadlocked: false,
            fault: None,
            staffing: super::Staffing::Fixed,
        }
    }

    #[test]
    fn a_worker_takes_its_own_block_first_and_another_s_rank_only_once_it_waited() {
        // Four ranks, two workers: ranks 0 and 1 are worker 0's, 2 and 3 worker 1's.
        let mut b = board(4, [2, 0, 3].into());
        assert_eq!(super::pick(&b, 0), Some(1), "worker 0 takes rank 0, behind rank 2");
        assert_eq!(super::pick(&b, 1), Some(0));
        b.ready = [2, 3].into();
        assert_eq!(super::pick(&b, 0), None, "ranks 2 and 3 have not waited");
        b.queued_at[3] = std::time::Instant::now() - super::STEAL_AFTER;
        assert_eq!(super::pick(&b, 0), Some(1), "rank 3 waited long enough");
        b.running = 0;
        assert_eq!(super::pick(&b, 0), Some(0), "nothing runs: any rank, first queued first");
        b.running = 1;
        b.crew = 1;
        assert_eq!(super::pick(&b, 0), Some(0), "one worker takes every rank");
        b.ready.clear();
        assert_eq!(super::pick(&b, 0), None);
    }

    #[test]
    fn a_blocked_rank_is_queued_again_once_a_notify_came_after_it_blocked() {
        let mut b = board(5, [4].into());
        b.blocked = vec![(0, 7), (1, 9), (2, 8), (3, 9)];
        // Ranks 1 and 3 were found blocked at epoch 9, the latest: no notify can have released
        // them. Ranks 0 and 2 blocked before notifies 8 and 9: queued behind rank 4, in order.
        assert!(b.release(9));
        assert_eq!(b.ready, [4, 0, 2]);
        assert_eq!(b.blocked, [(1, 9), (3, 9)]);
        assert!(!b.release(9), "nothing new to release at the same epoch");
        assert!(b.release(10));
        assert_eq!(b.ready, [4, 0, 2, 1, 3]);
        assert!(b.blocked.is_empty());
    }
}
