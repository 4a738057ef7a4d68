//! One global rank's part of the world: its vector clock and pending release, its calls and
//! barrier generations on the self-clearing signal protocols, its barrier-round flag, its
//! window writes no GM fence covered yet, the notifies its mixed-kernel lanes executed, and
//! the warnings it already gave.
//!
//! Guarantees: everything the world keeps per rank lives in [`PerRank`], and only the rank's
//! own work changes it. A parallel run's handle holds exactly its ranks' states, and
//! [`World::join`](super::World::join) moves each back whole, so a new per-rank field needs
//! no fork or join edit.

use crate::clock::Release;
use crate::credit::{CallPhase, Generations};
use pld_ir::Span;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The world's state of one global rank (see the module documentation).
#[derive(Clone, Debug, Default)]
pub(super) struct PerRank {
    /// Vector clock (one entry per global rank; its own starts at 1).
    pub(super) vc: Vec<u32>,
    /// The pending clock advance after a release (applied before the rank's next recorded
    /// access or clock change).
    pub(super) released: Release,
    /// Its call index on each self-clearing signal buffer (see [`crate::credit`]).
    pub(super) calls: BTreeMap<usize, CallPhase>,
    /// Its barrier generations within its current calls.
    pub(super) gens: Generations,
    /// A notify was issued since the last completed wait (barrier-round counting).
    pub(super) notified: bool,
    /// The first window write not yet covered by a `system.fence`: its race site (op,
    /// kernel), buffer and span (only the first is ever reported; names are looked up then).
    pub(super) unfenced: Option<(u32, usize, Span)>,
    /// (mixed-kernel group, notify span) -> the lane that executed that notify.
    pub(super) lane_notifies: HashMap<(String, Span), String>,
    /// The (buffer, kind) warnings already given for this rank, each once.
    pub(super) warned: BTreeSet<(usize, &'static str)>,
}

impl PerRank {
    /// Global rank `g` of `nranks` at the start of a run.
    pub(super) fn new(nranks: usize, g: usize) -> PerRank {
        let mut vc = vec![0u32; nranks];
        if let Some(own) = vc.get_mut(g) {
            *own = 1;
        }
        PerRank { vc, ..PerRank::default() }
    }

    /// The clock and its pending release, borrowed together.
    pub(super) fn clocks(&mut self) -> (&mut Vec<u32>, &mut Release) {
        (&mut self.vc, &mut self.released)
    }

    /// A persistent worker's next call: clocks and call indices stay; generations, lane
    /// notes, warnings, unfenced writes and the barrier-round flag start afresh.
    pub(super) fn next_call(&mut self) {
        // Generations count within one call of the worker (retained signals are not judged).
        self.gens = Generations::default();
        self.notified = false;
        self.unfenced = None;
        self.lane_notifies.clear();
        self.warned.clear();
    }
}
