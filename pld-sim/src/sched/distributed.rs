//! The distributed schedule: one process of a run whose ranks are processes (the MPI engine).
//!
//! Guarantees: only the work of the process's own rank runs here, its units in round robin
//! as in the deterministic schedule; when nothing of it can run it polls its cells and reports
//! to the backend's watchdog ([`crate::world::Watchdog`]) until a unit can run again, every
//! rank has finished, or the watchdog finds the run globally quiescent — then the result is a
//! deadlock report of this rank's waits. The deadline, interrupt and step budget still apply.

use super::*;
use crate::world::{Poll, RankState, WindowBackend};

impl<'p, 'c> Sched<'p, 'c> {
    pub(super) fn distributed_loop(&mut self, world: &mut World, b: &dyn WindowBackend) -> Result<(), Fault> {
        let (syms, lives) = self.env_parts();
        let env = Env { syms: &syms, program: self.program, lives: &lives };
        let me = b.rank();
        let cfg = self.cfg;
        let mut idle_polls = 0u32;
        loop {
            let rank = &mut self.ranks[me];
            for _ in 0..4 {
                if !rank.advance(world, cfg, &lives)? {
                    break;
                }
            }
            let runnable: Vec<usize> = rank.runnable().collect();
            if runnable.is_empty() {
                let state = if rank.idle() { RankState::Done } else { RankState::Blocked };
                match b.poll(state, world.stats().steps) {
                    Poll::Go => {}
                    Poll::Finished => return Ok(()),
                    Poll::Deadlock => {
                        let mut parked = rank.parked(world);
                        // Who wrote a cell is known where the writer ran: every process tells.
                        let mine = world.cells_written_by(me).join("\n");
                        let all = b.all_gather(mine.as_bytes());
                        for p in &mut parked {
                            for (r, names) in all.iter().enumerate() {
                                if String::from_utf8_lossy(names).lines().any(|n| n == p.cell) {
                                    p.writers.push(r);
                                }
                            }
                            p.writers.sort_unstable();
                            p.writers.dedup();
                        }
                        let live: Vec<usize> = if rank.idle() { Vec::new() } else { vec![me] };
                        return Err(deadlock_fault(parked, &live, cfg.nranks, cfg));
                    }
                }
                idle_polls = idle_polls.wrapping_add(1);
                crate::budget::poll(cfg, "waiting for other ranks")?;
                // Polling backs off from spinning to short sleeps while the wait lasts.
                if idle_polls > 64 {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                } else {
                    std::thread::yield_now();
                }
                continue;
            }
            idle_polls = 0;
            self.rr = self.rr.wrapping_add(1);
            let i = runnable[self.rr % runnable.len()];
            if let Err(f) = self.ranks[me].quantum(i, world, &env, cfg, QUANTUM_OPS, &mut self.rec) {
                return Err(self.ranks[me].describe_budget(f, world, cfg));
            }
        }
    }
}
