//! What one scheduling step of a driven run did, and when two steps are dependent.
//!
//! Guarantees: [`Step::dependent`] is symmetric and holds for any two steps that could observe
//! each other's order — same thread, a thread's first step and the step that created it
//! (launched its task, finished the task or dispatch it waited for), two steps of one rank
//! that both touched shared state (ranks keep per-rank checker state: vector clocks, call
//! phases, shared by the cores of the rank), a step the run faulted in and any other (the
//! fault ends the run: nothing runs after it), a signal operation on a
//! cell the other touches, or overlapping bytes of one window or host tensor where one side
//! writes (plain writes and atomic adds alike: two atomic adds stay dependent,
//! docs/DECISIONS.md D-explore-1). Two steps it calls independent commute: running them in
//! either order from the same state gives the same state.

use serde::{Deserialize, Serialize};

/// Which memory an event touched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    /// Domain rank `owner`'s window of comm domain `domain`.
    Window {
        /// The comm domain.
        domain: u32,
        /// The owning domain rank.
        owner: u32,
    },
    /// A host tensor buffer (every rank sees the same bytes).
    Host(u32),
    /// A thread's existence: written by the step that created it and by its first step, so
    /// the two are dependent (a thread cannot run before it exists).
    Thread(Tid),
    /// The run stopped at a fault in this step: no other step can follow it, so it is
    /// dependent with every step (its reversals run the others first).
    Halt,
}

/// How an event touched its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EvKind {
    /// A data read.
    Read,
    /// A data write.
    Write,
    /// An atomic accumulate.
    Atomic,
    /// A signal operation (notify, satisfied wait) on a 4-byte cell.
    Sync,
}

/// One access to shared state, by rank `by`, of bytes `[lo, hi)` of `space`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ev {
    /// The rank that performed it.
    pub by: u32,
    /// The memory.
    pub space: Space,
    /// First byte.
    pub lo: u64,
    /// One past the last byte.
    pub hi: u64,
    /// How.
    pub kind: EvKind,
}

impl Ev {
    /// Whether the two accesses conflict: overlapping bytes of one space, not both reads.
    pub fn conflicts(&self, o: &Ev) -> bool {
        self.space == o.space
            && self.lo < o.hi
            && o.lo < self.hi
            && !(self.kind == EvKind::Read && o.kind == EvKind::Read)
    }
}

/// A schedulable thread of a driven run: the orchestrator (`task: None`) or one lane of a
/// task of one dispatch of one rank. The same program and choices give the same ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Tid {
    /// The rank.
    pub rank: u32,
    /// The rank's dispatch (0 = its first).
    pub dispatch: u32,
    /// The task of the dispatch (launch order), or the chip orchestrator.
    pub task: Option<u32>,
    /// The vector sub-lane (0 unless `dual_aiv`).
    pub lane: u32,
}

impl std::fmt::Display for Tid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.task {
            None => write!(f, "rank {} dispatch {} orchestrator", self.rank, self.dispatch),
            Some(t) => {
                write!(f, "rank {} dispatch {} task {} lane {}", self.rank, self.dispatch, t, self.lane)
            }
        }
    }
}

/// One executed step: its thread, the ranks whose state it touched and its events (sorted,
/// duplicates removed).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Step {
    /// The thread that ran.
    pub tid: Tid,
    /// Bit `r`: rank `r`'s state was touched (the thread's own rank always).
    pub ranks: u64,
    /// The shared-state accesses.
    pub evs: Vec<Ev>,
    /// The run faulted in this step ([`Space::Halt`]).
    pub halts: bool,
}

impl Step {
    /// The step of `tid` that performed `evs` (`first`: the thread's first step).
    pub fn new(tid: Tid, mut evs: Vec<Ev>, first: bool) -> Step {
        if first {
            evs.push(Ev { by: tid.rank, space: Space::Thread(tid), lo: 0, hi: 1, kind: EvKind::Write });
        }
        evs.sort_unstable();
        evs.dedup();
        // A step that touched shared state touched its rank's checker state too (its vector
        // clock, call phases); a purely local step touched neither.
        let mut ranks = 0;
        for e in evs.iter().filter(|e| !matches!(e.space, Space::Thread(_) | Space::Halt)) {
            ranks |= rank_bit(e.by) | rank_bit(tid.rank);
        }
        let halts = evs.iter().any(|e| e.space == Space::Halt);
        Step { tid, ranks, evs, halts }
    }

    /// Whether the order of the two steps can matter (see the module guarantees).
    pub fn dependent(&self, o: &Step) -> bool {
        self.tid == o.tid
            || self.halts
            || o.halts
            || self.ranks & o.ranks != 0
            || self.evs.iter().any(|a| o.evs.iter().any(|b| a.conflicts(b)))
    }
}

fn rank_bit(r: u32) -> u64 {
    1u64.checked_shl(r).unwrap_or(0)
}
