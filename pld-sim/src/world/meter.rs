//! What the current step did to signal cells and windows: the world's hooks fill a [`Meter`]
//! as a step runs, and the timeline ([`crate::timeline`]) charges and traces the step from it.
//!
//! Guarantees: a meter holds one step's records only ([`Meter::reset`] before each step);
//! window accesses are recorded only while tracing ([`Meter::record_touches`]).

use super::{Park, Resolved};
use crate::cost::StepWork;

/// What the current step did to signal cells and windows (filled by the world's hooks).
#[derive(Clone, Debug, Default)]
pub struct Meter {
    /// Traffic and sync counts of the step.
    pub work: StepWork,
    /// Notifies (cell, value after, whether the cell is a peer's) and satisfied waits, in order.
    pub cells: Vec<CellOp>,
    /// Window accesses of the step (recorded only while tracing).
    pub touches: Vec<TouchRec>,
    /// Whether window accesses are recorded.
    pub record_touches: bool,
}

/// The kernel's work per tile of a builtin protocol that a coarse protocol step stands for
/// without running it one by one ([`crate::micro::Micro::Charge`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TileWork {
    /// Messages: remote accesses, and barriers' landing latencies (`alpha_ns` each).
    pub msgs: u64,
    /// Notifies issued.
    pub notifies: u64,
    /// Waits completed.
    pub waits: u64,
    /// Wait polls charged (a barrier's blocking wait: one).
    pub polls: u64,
    /// Barrier rounds.
    pub rounds: u64,
}

/// A signal-cell event of a step.
#[derive(Clone, Debug)]
pub enum CellOp {
    /// A notify left `value` in `cell`.
    Notify {
        /// The cell.
        cell: Resolved,
        /// A Set (else an AtomicAdd).
        set: bool,
        /// The value set or added.
        value: i32,
        /// The value before the notify.
        old: i32,
        /// The value after it.
        new: i32,
        /// The cell is a peer's.
        remote: bool,
    },
    /// A wait was satisfied.
    Waited(Park),
}

/// One window access of a step.
#[derive(Clone, Copy, Debug)]
pub struct TouchRec {
    /// Window (domain, owner).
    pub win: (usize, usize),
    /// Byte range.
    pub lo: u64,
    /// End of the byte range.
    pub hi: u64,
    /// A write.
    pub write: bool,
    /// The accessor is not the owner.
    pub remote: bool,
}

impl Meter {
    /// Counts traffic (the world's traffic counter calls it).
    #[inline]
    pub fn count(&mut self, remote: bool, bytes: u64) {
        if remote {
            self.work.remote_bytes += bytes;
            self.work.remote_msgs += 1;
        } else {
            self.work.local_bytes += bytes;
        }
    }

    /// Records a notify of `cell` (`set`: a Set of `value`, else an AtomicAdd of `value`)
    /// that changed it from `old` to `new`; `remote`: the cell is a peer's.
    #[inline]
    pub fn notified(&mut self, cell: Resolved, set: bool, value: i32, old: i32, new: i32, remote: bool) {
        self.work.notifies += 1;
        self.cells.push(CellOp::Notify { cell, set, value, old, new, remote });
    }

    /// Records a satisfied wait.
    #[inline]
    pub fn waited(&mut self, park: &Park) {
        self.work.polls += 1;
        self.cells.push(CellOp::Waited(park.clone()));
    }

    /// Records a window access (while tracing).
    #[inline]
    pub fn touched(&mut self, t: TouchRec) {
        if self.record_touches {
            self.touches.push(t);
        }
    }

    /// Whether the step did nothing the model charges (no traffic, notify or wait).
    pub fn is_idle(&self) -> bool {
        self.work == StepWork::default() && self.cells.is_empty()
    }

    /// Forgets the step's records (before each step).
    pub fn reset(&mut self) {
        self.work = StepWork::default();
        self.cells.clear();
        self.touches.clear();
    }
}
