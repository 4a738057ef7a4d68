//! PCT schedules (probabilistic concurrency testing with priority change points): the
//! `Schedule::Pct(seed)` interleaving policy of the single-threaded scheduler.
//!
//! Guarantees: every core gets a distinct random priority when first seen; each scheduling
//! turn runs the highest-priority runnable core for one visible op; at `DEPTH - 1` change
//! points (turn numbers drawn uniformly from a horizon that the seed also picks, 64 to 4096
//! turns) the core that runs drops below every other priority. The same seed gives the same
//! schedule (docs/DECISIONS.md D-sim-24). Bugs of depth ≤ `DEPTH` (orderings that need up to
//! `DEPTH - 1` preemptions at the right points) are hit with probability ≥ 1/(n·k^(d-1)) per
//! seed, far more often than by a random walk.

use std::collections::HashMap;

/// Bug depth the change points target (d = 3: two change points).
pub const DEPTH: usize = 3;

/// The state of one PCT schedule.
pub struct Pct {
    rng: u64,
    /// Priority of each core seen so far, keyed by (rank, unit slot) (a slot a rank renumbers
    /// when a dispatch ends keeps its priority for the core that takes it: still seeded).
    prio: HashMap<(usize, usize), u64>,
    /// Turn numbers at which the running core's priority drops, ascending.
    change: Vec<u64>,
    turn: u64,
}

impl Pct {
    /// The schedule of `seed`.
    pub fn new(seed: u64) -> Pct {
        let mut p =
            Pct { rng: seed ^ 0xD1B5_4A32_D192_ED03 | 1, prio: HashMap::new(), change: Vec::new(), turn: 0 };
        let horizon = 64u64 << (p.next() % 7);
        let mut change: Vec<u64> = (1..DEPTH).map(|_| 1 + p.next() % horizon).collect();
        change.sort_unstable();
        p.change = change;
        p
    }

    fn next(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// The core to run this turn among `runnable` (non-empty), as (rank, unit slot).
    pub fn pick(&mut self, runnable: &[(usize, usize)]) -> (usize, usize) {
        self.turn += 1;
        for &k in runnable {
            if !self.prio.contains_key(&k) {
                // Initial priorities lie above every change-point priority (< DEPTH).
                let p = DEPTH as u64 + (self.next() >> 8);
                self.prio.insert(k, p);
            }
        }
        let best =
            *runnable.iter().max_by_key(|k| (self.prio[k], std::cmp::Reverse(**k))).unwrap_or(&runnable[0]);
        if let Some(j) = self.change.iter().position(|&c| c == self.turn) {
            self.prio.insert(best, j as u64);
        }
        best
    }
}
