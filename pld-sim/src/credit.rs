//! Credit ledgers of signal cells: which notify deposited each credit a cell holds, so that a
//! satisfied wait is ordered after (and judged by) the credits that satisfy it, not by
//! whatever else landed in the cell before the waiter polled.
//!
//! Guarantees:
//! - A cell's credits are kept as runs of tokens in the order of their call (see below), then
//!   of arrival; an AtomicAdd of `+v` appends `v` tokens, a negative AtomicAdd consumes tokens
//!   from the front (the oldest call's first), a Set replaces them all; a wait on a cell driven
//!   by Sets is satisfied by the first Set of the current non-decreasing run whose value
//!   satisfies it (so what a flag wait orders after does not depend on how late it polled).
//! - A wait `Ge t` / `Eq t` (`t ≥ 1`) is satisfied by the `t`-th token: the waiter acquires the
//!   clock the cell had when that token arrived — so a race report does not depend on whether
//!   the waiter polled before or after later credits arrived (a fast peer's next-round notify
//!   no longer orders the waiter after the peer's next-round writes). A wait for `t ≤ 0` is
//!   satisfied by the last consumption (or Set). When the ledger disagrees with the cell (bytes
//!   written by a data op), the whole released clock is acquired, as before.
//! - A *call* of a self-clearing protocol on a signal buffer is counted per rank: a rank's call
//!   index on a buffer is the number of epilogues (runs of negative AtomicAdds into its own
//!   cells) it has started on it. Every token carries its depositor's call index; a wait
//!   satisfied by a token of another call than the waiter's own is a stale credit
//!   (docs/DECISIONS.md D-sim-23). Buffers no rank ever self-clears stay at call 0, so
//!   monotonic counters and flags are never judged. The seed's bounded skew — a slow rank's
//!   next-call credit landing before the fast rank's epilogue — is absorbed by consuming the
//!   oldest call's tokens first.
//! - Within a call, every credit carries its generation (the producer's how-many-th credit
//!   into the cell: a `+v` notify deposits `v` of them) and each waiting kernel counts its
//!   waits per cell: on a self-cleared buffer, a single-producer cell's wait passed by a credit
//!   of a lower generation than its count is a stale credit too (at once when the buffer is
//!   known to self-clear, else at the end of the run). A wait for a higher threshold than its
//!   count (a protocol step covering several barrier generations) is judged alike.

use crate::clock::{CellClock, Snapshot};
use pld_ir::Span;

/// Token runs kept per cell at most; older runs merge (their waiters then acquire the later
/// run's clock: more order, never less soundness of what is reported).
const MAX_RUNS: usize = 64;

/// Who deposited a run of tokens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Origin {
    /// Global rank of the notifier.
    pub rank: u16,
    /// Its call index on the signal buffer when it notified.
    pub call: u32,
    /// Its generation: the how-many-th credit of its call into this cell the first token of
    /// the run was (a notify of `+v` deposits the next `v` generations; 0: not counted — a
    /// Set). [`Ledger::satisfied`] hands out the satisfying token's own generation.
    pub gen: u32,
    /// The notify's source location.
    pub span: Span,
}

/// The last notify of a cell: (global rank, value, location).
pub type LastNotify = (u16, i32, Span);

/// A run of `count` tokens that arrived together.
#[derive(Clone, Debug)]
struct Run {
    count: i64,
    /// The cell's released clock right after the run arrived.
    clock: Snapshot,
    origin: Origin,
}

/// The credit ledger of one cell.
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    /// Oldest first (a deque: consumption and merging take from the front).
    runs: std::collections::VecDeque<Run>,
    /// The sum of the runs' counts (kept, not summed per wait: a counter cell holds up to
    /// [`MAX_RUNS`] runs and is waited on once per barrier generation).
    tokens: i64,
    /// Tokens consumed before they arrived (a negative add ahead of its credits).
    debt: i64,
    /// The cell's clock at the last consumption or Set (what a `t ≤ 0` wait acquires).
    floor: Snapshot,
    /// The last notify of the cell (any kind), for leak reports.
    pub last: Option<LastNotify>,
    /// How many of the tokens in `runs` (from the front) a satisfied wait has reached: the
    /// ones past it are credits no wait ever asked for (see [`Ledger::unawaited`]).
    awaited: i64,
    /// A deferred wait (`defer_wait`) was satisfied on the cell: a counter the program keeps.
    pub deferred: bool,
    /// A data op read the cell: its value is used as data (a tag, a count), not only waited on.
    pub observed: bool,
    /// The `Eq` waits satisfied on the cell (see `World::notify_cell`).
    pub eq_waits: Vec<EqWait>,
    /// The Sets since the cell's value last went down (non-decreasing values), each with the
    /// cell's clock right after it: a wait is satisfied by the first Set that made it true.
    sets: Vec<(i64, Snapshot, Origin)>,
}

/// A satisfied `Eq` wait on an AtomicAdd cell.
#[derive(Clone, Debug)]
pub struct EqWait {
    /// The waiting global rank.
    pub rank: u16,
    /// Its own clock entry right after the wait.
    pub clock: u32,
    /// The value it waited for.
    pub expected: i32,
    /// Where.
    pub span: Span,
    /// The waiting kernel.
    pub who: String,
}

/// What satisfied a wait.
pub enum Satisfied<'a> {
    /// A token: acquire this clock; the token's origin.
    Token(&'a Snapshot, Origin),
    /// The last consumption (or nothing ever consumed): acquire this clock.
    Floor(&'a Snapshot),
    /// The ledger does not explain the cell's value: acquire the whole released clock.
    Unknown,
}

impl Ledger {
    /// Tokens held.
    fn held(&self) -> i64 {
        self.tokens - self.debt
    }

    /// Records a notify: `set` (Set of `value`) or AtomicAdd of `value`, by `origin`; `clock`
    /// is the cell's released clock after the notify.
    pub fn notify(&mut self, set: bool, value: i32, origin: Origin, clock: &CellClock) {
        self.last = Some((origin.rank, value, origin.span));
        let v = i64::from(value);
        if set {
            if self.sets.last().is_some_and(|(w, ..)| v < *w) {
                self.sets.clear();
            }
            if self.sets.len() >= MAX_RUNS {
                // The oldest Set goes: a wait it satisfied acquires a later clock (more order).
                self.sets.remove(0);
            }
            self.sets.push((v, Snapshot::of(clock), origin));
            self.runs.clear();
            self.debt = 0;
            self.awaited = 0;
            self.tokens = v.max(0);
            self.floor = Snapshot::of(clock);
            if v > 0 {
                self.runs.push_back(Run { count: v, clock: Snapshot::of(clock), origin });
            }
            return;
        }
        self.sets.clear();
        if v >= 0 {
            let mut v = v;
            let paid = v.min(self.debt);
            self.debt -= paid;
            v -= paid;
            let mut origin = origin;
            if origin.gen > 0 {
                // The first `paid` tokens paid a debt: the run starts that many generations on.
                origin.gen = origin.gen.saturating_add(paid as u32);
            }
            if v > 0 {
                self.tokens += v;
                // After every run of the same or an earlier call (calls are consumed in order).
                let at = self.runs.iter().rposition(|r| r.origin.call <= origin.call).map_or(0, |i| i + 1);
                let run = Run { count: v, clock: Snapshot::of(clock), origin };
                // Nearly always after every run: `VecDeque::insert` costs ~10x `push_back` there.
                if at == self.runs.len() {
                    self.runs.push_back(run);
                } else {
                    self.runs.insert(at, run);
                }
                if self.runs.len() > MAX_RUNS {
                    if let Some(first) = self.runs.pop_front() {
                        if let Some(next) = self.runs.front_mut() {
                            next.count += first.count;
                        }
                    }
                }
            }
            return;
        }
        let mut need = -v;
        while need > 0 {
            let Some(front) = self.runs.front_mut() else { break };
            let take = front.count.min(need);
            front.count -= take;
            if front.origin.gen > 0 {
                // The run's first tokens went: its first remaining one is `take` generations on.
                front.origin.gen = front.origin.gen.saturating_add(take as u32);
            }
            self.tokens -= take;
            need -= take;
            self.awaited = (self.awaited - take).max(0);
            if front.count == 0 {
                self.runs.pop_front();
            }
        }
        self.debt += need;
        self.floor = Snapshot::of(clock);
    }

    /// Notes that a wait for `expected` (`deferred`: a `defer_wait`) was satisfied: every
    /// token up to the one that satisfied it has been waited for.
    pub fn note_awaited(&mut self, expected: i32, deferred: bool) {
        if expected >= 1 {
            self.awaited = self.awaited.max(i64::from(expected) + self.debt);
        }
        self.deferred |= deferred;
    }

    /// Credits the cell holds that no satisfied wait reached (0 when the ledger does not
    /// explain the cell's `value`, or a data op read it): a notify nobody waits for, left over
    /// at the end of a run.
    pub fn unawaited(&self, value: i32) -> i64 {
        if self.observed || self.held() != i64::from(value) {
            return 0;
        }
        (self.tokens - self.awaited).max(0)
    }

    /// What satisfies a wait for `expected` on a cell holding `value` (the predicate holds).
    pub fn satisfied(&self, value: i32, expected: i32) -> Satisfied<'_> {
        if self.held() != i64::from(value) {
            return Satisfied::Unknown;
        }
        if expected <= 0 {
            return Satisfied::Floor(&self.floor);
        }
        // A cell driven by Sets: the first Set of the current non-decreasing run whose value
        // satisfies the wait, whichever later Set the waiter happened to see.
        if let Some((_, clock, origin)) = self.sets.iter().find(|(w, ..)| *w >= i64::from(expected)) {
            return Satisfied::Token(clock, *origin);
        }
        // The run holding the `t`-th token from the front, found from the back: a barrier
        // counter's wait for its latest generation is satisfied by one of its last runs.
        let t = i64::from(expected) + self.debt;
        if t > self.tokens {
            return Satisfied::Unknown;
        }
        let mut before = self.tokens;
        for r in self.runs.iter().rev() {
            before -= r.count;
            if t > before {
                // The token's own generation: the run's first plus its place in the run (a
                // run merged into a later one counts from that one's: higher, never lower).
                let mut origin = r.origin;
                if origin.gen > 0 {
                    origin.gen = origin.gen.saturating_add((t - before - 1) as u32);
                }
                return Satisfied::Token(&r.clock, origin);
            }
        }
        Satisfied::Unknown
    }
}

/// Cell key: (domain, owning domain rank, byte offset).
type CellKey = (usize, usize, u64);

/// A rank's barrier generations within its current call: credits it sent into each cell, and
/// waits it completed on each cell, each as (call index, count).
#[derive(Clone, Debug, Default)]
pub struct Generations {
    sent: rustc_hash::FxHashMap<(CellKey, u64), (u32, u32)>,
    /// Keyed by cell and waiting kernel (the two lanes of a mixed kernel each wait).
    waited: rustc_hash::FxHashMap<(CellKey, u64), (u32, u32)>,
}

/// A kernel name's key in [`Generations`] (hashed a word at a time: FNV-1a's byte loop over a
/// builtin kernel's long name was a fifth of each counted wait).
fn kernel_key(who: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    who.hash(&mut h);
    h.finish()
}

impl Generations {
    /// Counts `credits` more credits into `cell` in `call`; returns the generation of the first.
    pub(crate) fn count_sent(&mut self, cell: CellKey, call: u32, credits: u32) -> u32 {
        bump(&mut self.sent, (cell, 0), call, credits) + 1 - credits
    }

    /// Counts one more wait of kernel `who` on `cell` in `call`; returns how many it made.
    pub(crate) fn count_wait(&mut self, cell: CellKey, who: &str, call: u32) -> u32 {
        bump(&mut self.waited, (cell, kernel_key(who)), call, 1)
    }
}

/// Cells a rank's generation counts make room for at their first count (see [`bump`]).
const FIRST_CELLS: usize = 64;

/// Counts `by` more events of `call` in `map[key]` (restarting at a new call); returns the count.
fn bump(
    map: &mut rustc_hash::FxHashMap<(CellKey, u64), (u32, u32)>,
    key: (CellKey, u64),
    call: u32,
    by: u32,
) -> u32 {
    if map.capacity() == 0 {
        // A rank that counts one cell counts a barrier's worth: room for them up front, not
        // regrown from 3 entries by doubling (each growth rehashes every entry).
        map.reserve(FIRST_CELLS);
    }
    let e = map.entry(key).or_insert((call, 0));
    if e.0 != call {
        *e = (call, 0);
    }
    e.1 = e.1.saturating_add(by);
    e.1
}

/// A rank's progress through the self-clearing calls on one signal buffer.
#[derive(Clone, Copy, Debug, Default)]
pub struct CallPhase {
    /// Epilogues started.
    pub index: u32,
    /// The rank's last signal op on the buffer was an epilogue add.
    in_epilogue: bool,
}

impl CallPhase {
    /// Notes a signal op (`epilogue`: a negative AtomicAdd into the rank's own cell); returns
    /// the call index the op belongs to.
    pub fn step(&mut self, epilogue: bool) -> u32 {
        if epilogue && !self.in_epilogue {
            self.index += 1;
        }
        self.in_epilogue = epilogue;
        self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(rank: u16, call: u32) -> Origin {
        Origin { rank, call, gen: 0, span: Span::DUMMY }
    }

    /// A ledger after these clockless adds: `(value, origin)` in order.
    fn after_adds(adds: &[(i32, Origin)]) -> Ledger {
        let mut l = Ledger::default();
        for &(value, origin) in adds {
            l.notify(false, value, origin, &CellClock::None);
        }
        l
    }

    /// The origin of the token that satisfies a wait for `expected` on a cell holding `value`.
    fn satisfier(l: &Ledger, value: i32, expected: i32) -> Origin {
        match l.satisfied(value, expected) {
            Satisfied::Token(_, origin) => origin,
            _ => panic!("a token satisfies the wait"),
        }
    }

    #[test]
    fn a_wait_is_satisfied_by_its_own_token_not_by_later_ones() {
        let mut l = Ledger::default();
        let c = CellClock::Own(vec![2, 0]);
        l.notify(false, 1, o(0, 0), &c);
        l.notify(false, 1, o(0, 0), &CellClock::Own(vec![5, 0]));
        match l.satisfied(2, 1) {
            Satisfied::Token(clock, origin) => {
                assert_eq!(clock.as_slice(), &[2, 0]);
                assert_eq!(origin.call, 0);
            }
            _ => panic!("the first token satisfies Ge 1"),
        }
    }

    #[test]
    fn the_epilogue_consumes_the_oldest_call_first() {
        // Rank 1's next-call credit lands before rank 0's epilogue, after a credit of the
        // current call from another producer is still outstanding.
        let l = after_adds(&[(1, o(1, 0)), (1, o(1, 1)), (1, o(2, 0)), (-2, o(0, 1))]);
        let origin = satisfier(&l, 1, 1);
        assert_eq!((origin.rank, origin.call), (1, 1), "one token left");
    }

    #[test]
    fn a_leftover_credit_of_an_earlier_call_is_what_satisfies_the_wait() {
        let l = after_adds(&[(1, o(1, 0)), (1, o(1, 1))]);
        assert_eq!(satisfier(&l, 2, 1).call, 0);
        assert!(matches!(l.satisfied(3, 1), Satisfied::Unknown), "value the ledger cannot explain");
    }

    #[test]
    fn a_credit_of_an_earlier_call_notified_later_goes_before_the_later_calls_run() {
        // Rank 2's call-0 credit comes after rank 1's call-1 credit: it is still the oldest.
        let l = after_adds(&[(1, o(1, 1)), (1, o(2, 0))]);
        let origin = satisfier(&l, 2, 1);
        assert_eq!((origin.rank, origin.call), (2, 0));
    }

    #[test]
    fn credits_past_the_highest_satisfied_wait_are_unawaited() {
        let mut l = after_adds(&[(1, o(1, 0)), (1, o(1, 0))]);
        assert_eq!(l.unawaited(2), 2);
        l.note_awaited(1, false);
        assert_eq!(l.unawaited(2), 1, "two credits, one waited for");
        l.note_awaited(2, false);
        assert_eq!(l.unawaited(2), 0);
        l.notify(false, -1, o(0, 1), &CellClock::None);
        assert_eq!(l.unawaited(1), 0, "consumption moves the awaited mark with the tokens");
        l.notify(false, 1, o(1, 1), &CellClock::None);
        assert_eq!(l.unawaited(2), 1);
        assert_eq!(l.unawaited(5), 0, "a value the ledger cannot explain is not judged");
    }

    #[test]
    fn call_indices_count_epilogues() {
        let mut p = CallPhase::default();
        assert_eq!(p.step(false), 0);
        assert_eq!(p.step(true), 1);
        assert_eq!(p.step(true), 1);
        assert_eq!(p.step(false), 1);
        assert_eq!(p.step(true), 2);
    }
}
