//! Signal-cell histories in modeled time: when does a wait's predicate first hold?
//!
//! Guarantees: a cell's value at modeled time `t` is its value before its first recorded
//! notify with every recorded notify that landed by `t` applied in landing order (AtomicAdd
//! adds, Set replaces), so it does not depend on the order in which the simulator happened to
//! execute the notifies. A wait that starts polling at `t0` is released at `t0` when the value
//! then satisfies its predicate, else at the landing of the first later notify after which it
//! does; its flow comes from the notify that last made the predicate true. When no point in
//! the recorded history satisfies the predicate (older notifies were folded away, or the cell
//! was written outside notifies), the release falls back to the simulator's own order: the
//! earliest notify after which the recorded values held for good.

use crate::world::Park;

/// Longest history kept per cell (older notifies fold into the base value).
pub const HISTORY: usize = 64;

/// One notify of a cell.
#[derive(Clone, Copy, Debug)]
struct Stamp {
    land: u64,
    seq: u64,
    set: bool,
    /// The added amount (AtomicAdd) or the value written (Set).
    value: i32,
    /// The cell's value right after it, in the simulator's order.
    after: i32,
    /// The cell's value right after it in landing order: the base with every entry up to this
    /// one (in `entries`' order) applied.
    landed: i32,
    flow: u64,
}

impl Stamp {
    fn apply(&self, v: i32) -> i32 {
        if self.set {
            self.value
        } else {
            v.wrapping_add(self.value)
        }
    }
}

/// A cell's recent notifies.
#[derive(Clone, Debug)]
pub struct History {
    base: i32,
    /// Sorted by `(land, seq)`: landing order, ties in the simulator's order. Notifies mostly
    /// land in the order they run, so a new one is nearly always appended, and a wait reads
    /// the value at its start time without sorting anything.
    entries: std::collections::VecDeque<Stamp>,
    seq: u64,
}

impl History {
    /// The history of a cell whose value before its first recorded notify is `base`.
    pub fn new(base: i32) -> History {
        // Empty: most cells see a few notifies (room for 16 up front cost a ring allreduce on 8
        // ranks a third more peak memory for 1% of its instructions).
        History { base, entries: std::collections::VecDeque::new(), seq: 0 }
    }

    /// Records a notify landing at `land` that left `after` in the cell (`set`: a Set of
    /// `value`, else an AtomicAdd of `value`).
    pub fn record(&mut self, land: u64, set: bool, value: i32, after: i32, flow: u64) {
        if self.entries.len() >= HISTORY {
            // Fold the earliest-landing notify into the base.
            if let Some(e) = self.entries.pop_front() {
                self.base = e.landed;
            }
        }
        // After every entry landing no later (their seq is lower: ties keep execution order).
        let at = match self.entries.back() {
            Some(last) if last.land > land => self.entries.partition_point(|e| e.land <= land),
            _ => self.entries.len(),
        };
        let stamp = Stamp { land, seq: self.seq, set, value, after, landed: 0, flow };
        // Nearly always the latest landing: `VecDeque::insert` costs ~10x `push_back` there.
        if at == self.entries.len() {
            self.entries.push_back(stamp);
        } else {
            self.entries.insert(at, stamp);
        }
        self.seq += 1;
        let mut v = if at == 0 { self.base } else { self.entries[at - 1].landed };
        for e in self.entries.range_mut(at..) {
            v = e.apply(v);
            e.landed = v;
        }
    }

    /// When a wait with predicate `p` that starts polling at `t0` is released, and the flow
    /// of the notify that released it (`None`: the cell held before any notify).
    pub fn release(&self, p: &Park, t0: u64) -> (u64, Option<u64>) {
        let e = &self.entries;
        // Entries landed by `t0`; the value then is the last one's (or the base).
        let k = e.partition_point(|s| s.land <= t0);
        let now = if k == 0 { self.base } else { e[k - 1].landed };
        if p.holds(now) {
            if k == 0 {
                return (t0, None);
            }
            // The notify that made the predicate true: the first of the run of landed entries
            // after which it held up to `t0` (one keeping it true does not count).
            let mut j = k - 1;
            while j > 0 && p.holds(e[j - 1].landed) {
                j -= 1;
            }
            return (t0, Some(e[j].flow));
        }
        if let Some(s) = e.range(k..).find(|s| p.holds(s.landed)) {
            return (s.land, Some(s.flow));
        }
        // Fallback: the simulator's order — the earliest notify (by seq) after the last one
        // that left the predicate false.
        let last_false = e.iter().filter(|s| !p.holds(s.after)).map(|s| s.seq).max();
        let next = e.iter().filter(|s| last_false.is_none_or(|m| s.seq > m)).min_by_key(|s| s.seq);
        match next {
            Some(s) => (t0.max(s.land), Some(s.flow)),
            None => (t0, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::Resolved;

    fn ge(expected: i32) -> Park {
        Park { cell: Resolved { domain: 0, owner: 0, offset: 0 }, ge: true, unsigned: false, expected }
    }

    #[test]
    fn the_release_follows_landing_order_not_execution_order() {
        // Two credits land at 30 and 10; a Ge 2 wait from 0 is released at 30 by the first.
        let mut h = History::new(0);
        h.record(30, false, 1, 1, 7);
        h.record(10, false, 1, 2, 8);
        assert_eq!(h.release(&ge(2), 0), (30, Some(7)));
        assert_eq!(h.release(&ge(1), 0), (10, Some(8)));
        // Polling after both landed: released at once, by the one that made it true.
        assert_eq!(h.release(&ge(2), 50), (50, Some(7)));
        // The same notifies recorded in the other order give the same answers.
        let mut g = History::new(0);
        g.record(10, false, 1, 1, 8);
        g.record(30, false, 1, 2, 7);
        assert_eq!(g.release(&ge(2), 0), (30, Some(7)));
        assert_eq!(g.release(&ge(1), 0), (10, Some(8)));
    }

    #[test]
    fn a_credit_epilogue_before_the_next_round_is_respected() {
        // Round 1: +1 at 10; the owner subtracts it at 20; round 2: +1 at 40.
        let mut h = History::new(0);
        h.record(40, false, 1, 1, 3);
        h.record(10, false, 1, 2, 1);
        h.record(20, false, -1, 1, 2);
        assert_eq!(h.release(&ge(1), 25), (40, Some(3)));
        assert_eq!(h.release(&ge(1), 5), (10, Some(1)));
    }

    #[test]
    fn a_cell_that_already_holds_needs_no_notify() {
        let h = History::new(3);
        assert_eq!(h.release(&ge(1), 9), (9, None));
    }
}
