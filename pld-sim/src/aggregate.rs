//! The trace's slices ([`Slice`]) and their bounded recording: slices kept one by one until a
//! run records more than [`SLICE_LIMIT`], then merged per core lane into fixed windows of
//! modeled time.
//!
//! Guarantees: a run with at most [`SLICE_LIMIT`] slices keeps every slice as recorded; past
//! it (unless every slice is kept, `--trace-all`) the window width starts at
//! [`FIRST_WINDOW_PS`] and doubles until the slices fit in half the limit, so memory and the
//! trace's size stay bounded whatever the run's length. A merged slice covers its slices'
//! span on one lane, sums their bytes and op counts, names its distinct ops (at most three,
//! then `…`), keeps their flow endpoints and the time-weighted mean of their remote bytes in
//! flight. Merging depends only on the slices' modeled times, so it is schedule-independent
//! too.

use pld_ir::Span;
use std::collections::HashMap;

/// Where a slice sits: rank and lane (core number, or [`crate::timeline::ORCH_LANE`]).
pub type LaneId = (usize, usize);

/// One slice of the trace.
#[derive(Clone, Debug)]
pub struct Slice {
    /// Rank and lane.
    pub at: LaneId,
    /// Name (op; `wait (blocked)` for a blocked wait; `N ops` for an aggregate).
    pub name: String,
    /// Start (ps).
    pub ts: u64,
    /// Duration (ps).
    pub dur: u64,
    /// Kernel running on the lane.
    pub kernel: String,
    /// Bytes moved.
    pub bytes: u64,
    /// Of those, bytes to or from peers.
    pub remote: u64,
    /// Remote bytes in flight integrated over the slice (bytes × ps).
    pub inflight_area: f64,
    /// Peers touched (global ranks).
    pub peer: Option<usize>,
    /// Signal cell named.
    pub cell: Option<String>,
    /// Source location of the op.
    pub span: Span,
    /// Ops merged into this slice (1 unless aggregated).
    pub ops: u32,
    /// Flows starting here (ids).
    pub flows_out: Vec<u64>,
    /// Flows ending here (ids).
    pub flows_in: Vec<u64>,
}

/// Slices a run keeps one by one before it starts merging.
pub const SLICE_LIMIT: usize = 200_000;

/// The first merge window (ps).
pub const FIRST_WINDOW_PS: u64 = 1_000_000;

/// A run's recorded slices.
#[derive(Debug, Default)]
pub struct Slices {
    /// The slices, in recording order.
    pub list: Vec<Slice>,
    /// Merge window (ps); 0 while every slice is kept.
    pub window: u64,
    /// Never merge.
    pub keep_all: bool,
    last: HashMap<LaneId, usize>,
}

impl Slices {
    /// An empty record (`keep_all`: never merge).
    pub fn new(keep_all: bool) -> Slices {
        Slices { keep_all, ..Slices::default() }
    }

    /// Appends a slice (merged into its lane's last one when both fall in one window).
    pub fn push(&mut self, s: Slice) {
        if self.window > 0 {
            self.push_merged(s);
        } else {
            self.last.insert(s.at, self.list.len());
            self.list.push(s);
        }
        if !self.keep_all && self.list.len() > SLICE_LIMIT {
            self.compact();
        }
    }

    /// Widens the window until the slices fit in half the limit.
    fn compact(&mut self) {
        while self.list.len() > SLICE_LIMIT / 2 {
            self.window = if self.window == 0 { FIRST_WINDOW_PS } else { self.window * 2 };
            let old = std::mem::take(&mut self.list);
            self.last.clear();
            for s in old {
                self.push_merged(s);
            }
        }
    }

    /// Appends a slice into its lane's last one when both fall in one window (`window > 0`).
    fn push_merged(&mut self, s: Slice) {
        if let Some(&i) = self.last.get(&s.at) {
            let prev = &mut self.list[i];
            if prev.ts.checked_div(self.window) == s.ts.checked_div(self.window) {
                merge(prev, s);
                return;
            }
        }
        self.last.insert(s.at, self.list.len());
        self.list.push(s);
    }

    /// Takes another record's slices (another thread's lanes).
    pub fn extend(&mut self, other: Slices) {
        self.window = self.window.max(other.window);
        for s in other.list {
            self.push(s);
        }
    }
}

/// Folds slice `s` (later on the same lane) into `prev`.
fn merge(prev: &mut Slice, s: Slice) {
    let end = (prev.ts + prev.dur).max(s.ts + s.dur);
    prev.dur = end - prev.ts;
    prev.bytes += s.bytes;
    prev.remote += s.remote;
    prev.inflight_area += s.inflight_area;
    prev.ops += s.ops;
    if prev.peer != s.peer {
        prev.peer = None;
    }
    if prev.cell != s.cell {
        prev.cell = None;
    }
    if prev.kernel != s.kernel && !prev.kernel.ends_with('…') {
        prev.kernel.push_str(", …");
    }
    prev.flows_in.extend(s.flows_in);
    prev.flows_out.extend(s.flows_out);
    for n in s.name.split(" + ") {
        if prev.name.ends_with('…') || prev.name.split(" + ").any(|m| m == n) {
            continue;
        }
        if prev.name.matches(" + ").count() >= 2 {
            prev.name.push_str(" + …");
        } else {
            prev.name = format!("{} + {n}", prev.name);
        }
    }
}
