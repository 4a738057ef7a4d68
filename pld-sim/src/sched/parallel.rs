//! The parallel schedule: one worker thread per available core, each running a fixed group
//! of ranks in turns on its own [`World::fork`] handle.
//!
//! Guarantees: a fault on any worker ends every worker, and the first one is the run's; a
//! notify wakes sleeping workers; the run is reported deadlocked only when every unfinished
//! rank blocked after the latest notify; handles and recorders are joined back when all end.

use super::*;

/// How long a worker whose ranks are all blocked spins (busy, then yielding) before it sleeps
/// on the condition variable: a sleeping vCPU of this kind of VM takes hundreds of
/// microseconds to wake, longer than a peer usually needs to notify.
const SPIN_FOR: std::time::Duration = std::time::Duration::from_millis(2);

/// Of that, the first part spins without giving the core away.
const SPIN_BUSY_FOR: std::time::Duration = std::time::Duration::from_micros(200);

/// The synchronisation of the parallel schedule's workers: the notify epoch, the fault flag
/// (also recorded in `shared`), the shared state and its condition variable.
#[derive(Clone, Copy)]
struct ParSync<'a> {
    /// Bumped by every notify (through [`World::set_wake`]), so a spinning worker sees it at once.
    epoch: &'a std::sync::atomic::AtomicU64,
    /// Workers asleep on `cv` (a notifying worker takes the lock only when this is non-zero).
    sleepers: &'a std::sync::atomic::AtomicUsize,
    failed: &'a std::sync::atomic::AtomicBool,
    shared: &'a std::sync::Mutex<ParShared>,
    cv: &'a std::sync::Condvar,
}

/// What the rank threads of the parallel schedule share (under one mutex).
struct ParShared {
    blocked: usize,
    done: usize,
    fault: Option<Fault>,
    parked: Vec<Vec<ParkedCore>>,
    live: Vec<bool>,
    waiting: Vec<Option<u64>>,
}

impl<'p, 'c> Sched<'p, 'c> {
    /// One OS thread per rank, each on its own [`World::fork`] handle (windows and host
    /// buffers shared, each behind its own lock; clocks and counters per rank, merged at the
    /// end); a notify bumps an epoch and wakes blocked ranks; when every unfinished rank is
    /// blocked at the same epoch the run has deadlocked.
    pub(super) fn parallel_loop(&mut self, world: &mut World) -> Result<(), Fault> {
        use std::sync::atomic::{AtomicBool, AtomicU64};
        use std::sync::{Condvar, Mutex};
        let n = self.ranks.len();
        let cfg = self.cfg;
        let program = self.program;
        let syms = self.syms.clone();
        let epoch = std::sync::Arc::new(AtomicU64::new(0));
        world.set_wake(Some(std::sync::Arc::clone(&epoch)));
        let failed = AtomicBool::new(false);
        let sleepers = std::sync::atomic::AtomicUsize::new(0);
        let shared = Mutex::new(ParShared {
            blocked: 0,
            done: 0,
            fault: None,
            parked: vec![Vec::new(); n],
            live: vec![true; n],
            waiting: vec![None; n],
        });
        let cv = Condvar::new();
        // One worker thread per available core (at most one per rank); worker k runs ranks
        // k, k + W, … in turns, so a blocked rank hands its core to a sibling instead of to
        // the OS scheduler.
        let nworkers = parallel_workers(n);
        let mut groups: Vec<Vec<RankLocal<'p>>> = (0..nworkers).map(|_| Vec::new()).collect();
        for (k, rl) in std::mem::take(&mut self.ranks).into_iter().enumerate() {
            groups[k % nworkers].push(rl);
        }
        let rec = &self.rec;
        let done: Vec<(Recorder, World, Vec<usize>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = groups
                .into_iter()
                .map(|mut group| {
                    let (epoch, sleepers, failed, shared, cv, syms) =
                        (&*epoch, &sleepers, &failed, &shared, &cv, &syms);
                    // Each worker has its own handle: windows and host buffers are shared
                    // behind per-window locks, so ranks on different workers run in parallel.
                    let mut w = world.fork();
                    let ids: Vec<usize> = group.iter().map(|rl| rl.r).collect();
                    let mut rec = rec.fork();
                    scope.spawn(move || {
                        let sync = ParSync { epoch, sleepers, failed, shared, cv };
                        worker(&mut group, &mut w, &sync, syms, program, cfg, n, &mut rec);
                        rec.rank_end.extend(group.iter().map(|rl| (rl.r, rl.tl.frontier)));
                        (rec, w, ids)
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        world.set_wake(None);
        for (rec, w, ids) in done {
            world.join(w, &ids);
            self.rec.join(rec);
        }
        match shared.into_inner().unwrap_or_else(|e| e.into_inner()).fault {
            Some(f) => Err(f),
            None => Ok(()),
        }
    }
}

/// Worker threads of the parallel schedule for `n` ranks: one per available core, at most one
/// per rank.
fn parallel_workers(n: usize) -> usize {
    std::thread::available_parallelism().map_or(2, |x| x.get()).clamp(1, n.max(1))
}

/// The body of one worker thread of the parallel schedule (a group of ranks, each running
/// in turn), recording into `rec`.
#[allow(clippy::too_many_arguments)]
fn worker<'p>(
    group: &mut [RankLocal<'p>],
    w: &mut World,
    sync: &ParSync<'_>,
    syms: &HashMap<String, i64>,
    program: &'p Program,
    cfg: &SimConfig,
    n: usize,
    rec: &mut Recorder,
) {
    use std::sync::atomic::Ordering;
    let ParSync { epoch, sleepers, failed, shared, cv } = *sync;
    let env = Env { syms, program };
    let fail = |f: Fault| {
        let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
        s.fault.get_or_insert(f);
        failed.store(true, Ordering::SeqCst);
        drop(s);
        cv.notify_all();
    };
    let mut finished = vec![false; group.len()];
    // A budget fault raised by another worker gets this worker's cores too.
    let describe = |group: &[RankLocal<'p>], w: &World| {
        let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = s.fault.take() {
            s.fault = Some(group.iter().fold(f, |f, rl| rl.describe_budget(f, w, cfg)));
        }
    };
    loop {
        // A fault anywhere ends every worker (checked without taking the shared lock).
        if failed.load(Ordering::Relaxed) {
            describe(group, w);
            return;
        }
        let e = epoch.load(Ordering::SeqCst);
        let mut progressed = false;
        for (k, rl) in group.iter_mut().enumerate() {
            if finished[k] {
                continue;
            }
            for _ in 0..4 {
                match rl.advance(w, cfg) {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(f) => {
                        fail(f);
                        return;
                    }
                }
            }
            let runnable = rl.runnable().count();
            if runnable == 0 {
                if rl.idle() {
                    finished[k] = true;
                    let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
                    s.done += 1;
                    s.live[rl.r] = false;
                    s.parked[rl.r].clear();
                    drop(s);
                    cv.notify_all();
                }
                continue;
            }
            progressed = true;
            rl.rr = rl.rr.wrapping_add(1);
            let Some(i) = rl.runnable().nth(rl.rr % runnable) else { continue };
            match rl.quantum(i, w, &env, cfg, QUANTUM_OPS, rec) {
                Ok(q) => {
                    // The notifies bumped the epoch already (spinning workers see that); a
                    // sleeper counts itself and re-checks the epoch under the lock before it
                    // waits, so with no sleeper counted nobody needs a wake-up.
                    if q.notified && sleepers.load(Ordering::SeqCst) > 0 {
                        let _s = shared.lock().unwrap_or_else(|e| e.into_inner());
                        cv.notify_all();
                    }
                }
                Err(f) => {
                    // This worker sees only its own ranks' cores.
                    fail(group.iter().fold(f, |f, rl| rl.describe_budget(f, w, cfg)));
                    return;
                }
            }
        }
        if finished.iter().all(|&f| f) {
            return;
        }
        if progressed {
            continue;
        }
        // Every unfinished rank of this worker is blocked. A peer usually notifies within
        // microseconds (a condvar round trip costs more), so first spin on the epoch — busy
        // (the other worker is usually mid-turn on the other core), then yielding — without
        // the shared lock: registering as blocked takes it and describes every parked rank for
        // a deadlock report, which a protocol with a barrier per tile would otherwise pay at
        // every tile.
        spin_while_blocked(epoch, failed, e);
        if epoch.load(Ordering::SeqCst) != e {
            continue;
        }
        // Still blocked: park them all at epoch `e`, then sleep until a notify (every check
        // runs again under the lock before each wait; a rank that finished meanwhile notified
        // nobody).
        let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
        let mine: Vec<usize> = (0..group.len()).filter(|&k| !finished[k]).collect();
        for &k in &mine {
            let r = group[k].r;
            s.parked[r] = group[k].parked(w);
            s.waiting[r] = Some(e);
        }
        s.blocked += mine.len();
        loop {
            if s.fault.is_some() {
                drop(s);
                describe(group, w);
                return;
            }
            if epoch.load(Ordering::SeqCst) != e {
                break;
            }
            // Deadlock only when every unfinished rank blocked after the latest notify (a
            // stale waiter is about to wake and retry).
            let cur = epoch.load(Ordering::SeqCst);
            if s.blocked + s.done == n && s.waiting.iter().all(|x| x.is_none_or(|w| w == cur)) {
                let live: Vec<usize> = (0..n).filter(|&k| s.live[k]).collect();
                let parked: Vec<ParkedCore> = s.parked.iter().flatten().cloned().collect();
                s.fault = Some(deadlock_fault(parked, &live, n, cfg));
                failed.store(true, Ordering::SeqCst);
                drop(s);
                cv.notify_all();
                return;
            }
            sleepers.fetch_add(1, Ordering::SeqCst);
            if epoch.load(Ordering::SeqCst) == e {
                s = cv.wait(s).unwrap_or_else(|e| e.into_inner());
            }
            sleepers.fetch_sub(1, Ordering::SeqCst);
        }
        s.blocked -= mine.len();
        for &k in &mine {
            let r = group[k].r;
            s.waiting[r] = None;
            s.parked[r].clear();
        }
    }
}

/// Spins (busy for [`SPIN_BUSY_FOR`], then yielding, [`SPIN_FOR`] in all) while the notify
/// epoch is still `e` and no worker failed.
fn spin_while_blocked(epoch: &std::sync::atomic::AtomicU64, failed: &std::sync::atomic::AtomicBool, e: u64) {
    use std::sync::atomic::Ordering;
    let start = std::time::Instant::now();
    while epoch.load(Ordering::SeqCst) == e && !failed.load(Ordering::Relaxed) {
        let spent = start.elapsed();
        if spent >= SPIN_FOR {
            break;
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
