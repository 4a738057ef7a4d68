//! The driven device loop: a [`Driver`](crate::drive::Driver) picks the thread of every
//! step ([`crate::explore`]: `pld verify --exhaustive`, `pld run --schedule replay:PATH`).
//!
//! Guarantees: each step runs the picked thread up to and including its next op that touches
//! shared state (ops and statements before it touch nothing shared), or until it parks or
//! ends, then every rank advances (deferred
//! completions the step satisfied, tasks it made ready, cores it woke), and the driver gets
//! every shared-state event of that step and of those transitions, and whether the thread
//! parked. Deadlocks, faults and the end of the work are the ordinary loop's.

use super::*;
use crate::drive::{DriverCell, Ev, EvKind, Space, Stop};

impl<'p> Sched<'p, '_> {
    pub(super) fn driven_loop(&mut self, world: &mut World, driver: &DriverCell) -> Result<(), Fault> {
        let (syms, lives) = self.env_parts();
        let env = Env { syms: &syms, program: self.program, lives: &lives };
        let mut runnable: Vec<(usize, usize)> = Vec::new();
        let mut tids: Vec<Tid> = Vec::new();
        let mut last: Option<(Tid, bool)> = None;
        // Every step looks up every live unit: a cheap hash (a thread id is a few small ints).
        let mut seen: rustc_hash::FxHashSet<Tid> = rustc_hash::FxHashSet::default();
        world.log_deps(true);
        let result = loop {
            let more = self.advance_all(world, &mut runnable);
            let mut evs = world.take_deps();
            // Threads that exist now and did not before were created by the last step.
            for u in self.ranks.iter().flat_map(|rl| rl.units.iter().flatten()) {
                if seen.insert(u.tid) {
                    if let Some((t, _)) = last {
                        let space = crate::drive::Space::Thread(u.tid);
                        evs.push(crate::drive::Ev {
                            by: t.rank,
                            space,
                            lo: 0,
                            hi: 1,
                            kind: crate::drive::EvKind::Write,
                        });
                    }
                }
            }
            if let Some((tid, parked)) = last.take() {
                lock(driver).ran(tid, evs, parked);
            }
            match more {
                Ok(true) => {}
                Ok(false) => break Ok(()),
                Err(f) => break Err(f),
            }
            runnable.sort_by_key(|&(r, i)| self.tid_of(r, i));
            tids.clear();
            tids.extend(runnable.iter().map(|&(r, i)| self.tid_of(r, i)));
            let pick = lock(driver).pick(&tids);
            let k = match pick {
                Ok(t) => tids.iter().position(|&x| x == t),
                Err(Stop::Explored) => {
                    break Err(Fault::new(
                        ReportKind::Interrupted,
                        Span::DUMMY,
                        "the explorer stopped this run",
                    ))
                }
                Err(Stop::Mismatch(m)) => break Err(Fault::runtime(Span::DUMMY, m)),
            };
            let Some(k) = k else {
                break Err(Fault::runtime(Span::DUMMY, "the driver picked a thread that is not runnable"));
            };
            let (r, i) = runnable[k];
            if let Err(f) = self.local_run(r, i, world, &env) {
                // The faulting step is a step too: the search reverses its races like any other.
                let mut evs = world.take_deps();
                evs.push(Ev { by: tids[k].rank, space: Space::Halt, lo: 0, hi: 1, kind: EvKind::Write });
                lock(driver).ran(tids[k], evs, false);
                break Err(self.ranks.iter().fold(f, |f, rl| rl.describe_budget(f, world, self.cfg)));
            }
            let parked = self.ranks[r].units[i].as_ref().is_some_and(|u| u.thread.parked.is_some());
            last = Some((tids[k], parked));
        };
        world.log_deps(false);
        result
    }

    /// Runs unit `i` of rank `r` one visible op at a time until an op touches shared state,
    /// or the unit parks or ends: ops that touch nothing shared commute with every other
    /// thread's, so they are merged into the next step that does (docs/DECISIONS.md
    /// D-explore-2). Tasks it launches meanwhile start after the step (their start is
    /// delayed past ops that nothing else can observe).
    fn local_run(&mut self, r: usize, i: usize, world: &mut World, env: &Env<'_, 'p>) -> Result<(), Fault> {
        loop {
            self.ranks[r].quantum(i, world, env, self.cfg, 1, &mut self.rec)?;
            let alive = self.ranks[r].units[i].as_ref().is_some_and(|u| u.thread.parked.is_none());
            if !alive || world.has_deps() {
                return Ok(());
            }
        }
    }

    fn tid_of(&self, r: usize, i: usize) -> Tid {
        self.ranks[r].units[i]
            .as_ref()
            .map_or(Tid { rank: r as u32, dispatch: 0, task: None, lane: 0 }, |u| u.tid)
    }
}

fn lock(d: &DriverCell) -> std::sync::MutexGuard<'_, dyn crate::drive::Driver + 'static> {
    d.0.lock().unwrap_or_else(|e| e.into_inner())
}
