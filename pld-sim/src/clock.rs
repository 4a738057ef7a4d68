//! Vector clocks of the race checker's happens-before order: the only cross-rank edges are
//! notify → wait, so a notify releases the notifier's clock into the signal cell and a
//! satisfied wait joins the cell's clock into the waiter's.
//!
//! Guarantees: the order is exactly the one of advancing a rank's own clock entry right after
//! every release — the advance is only deferred ([`Release`]) to the rank's next recorded
//! access or clock change, where nothing in between could tell the two apart. Above
//! [`SHARE_FROM`] ranks the cells a rank notifies in a row share one snapshot of its clock, so a
//! P-rank protocol's O(P²) cells do not each hold a P-entry copy.

use smallvec::SmallVec;
use std::sync::Arc;

/// A rank's state between a release (notify) and its next clock change: the clock advance
/// that must follow a release, left pending until the rank's next recorded access or clock
/// change, so that the cells a rank notifies in the meantime can share one snapshot of it.
#[derive(Clone, Debug, Default)]
pub struct Release {
    /// A release happened since the rank's clock last advanced.
    advance: bool,
    /// The snapshot of the (unchanged) clock those releases shared, in runs of more than
    /// [`SHARE_FROM`] ranks.
    snap: Option<Arc<[u32]>>,
}

impl Release {
    /// Applies the pending advance to the clock `vc` of rank `g`.
    #[inline]
    pub(crate) fn settle(&mut self, vc: &mut [u32], g: usize) {
        if std::mem::take(&mut self.advance) {
            self.snap = None;
            vc[g] += 1;
        }
    }
}

/// Clocks of at most this many ranks are joined into each cell's own copy in place (cheapest
/// for few ranks); longer ones are shared snapshots, as a P-rank protocol's O(P²) cells would
/// otherwise each hold a P-entry clock.
pub const SHARE_FROM: usize = 8;

/// The vector clock released into a signal cell.
#[derive(Clone, Debug, Default)]
pub enum CellClock {
    /// Nothing released yet.
    #[default]
    None,
    /// The cell's own clock, joined in place (runs of at most [`SHARE_FROM`] ranks).
    Own(Vec<u32>),
    /// A snapshot shared with the other cells its notifier released it into.
    Shared(Arc<[u32]>),
}

/// A copy of a cell's released clock that the credit ledger keeps with every notify: held
/// inline up to [`SHARE_FROM`] ranks (a copy allocates nothing), the shared snapshot above.
/// Not [`CellClock`] itself: the cells of a P-rank protocol each hold one of those, and an
/// inline clock would make every cell larger.
#[derive(Clone, Debug, Default)]
pub enum Snapshot {
    /// Nothing released yet.
    #[default]
    None,
    /// A clock of at most [`SHARE_FROM`] ranks.
    Inline(SmallVec<[u32; SHARE_FROM]>),
    /// The cell's shared snapshot.
    Shared(Arc<[u32]>),
}

impl Snapshot {
    /// A copy of `c`.
    pub fn of(c: &CellClock) -> Snapshot {
        match c {
            CellClock::None => Snapshot::None,
            CellClock::Own(v) => Snapshot::Inline(SmallVec::from_slice(v)),
            CellClock::Shared(a) => Snapshot::Shared(Arc::clone(a)),
        }
    }

    /// The clock (empty when nothing was released).
    #[inline]
    pub fn as_slice(&self) -> &[u32] {
        match self {
            Snapshot::None => &[],
            Snapshot::Inline(v) => v,
            Snapshot::Shared(a) => a,
        }
    }
}

impl CellClock {
    /// The clock (empty when nothing was released).
    #[inline]
    pub fn as_slice(&self) -> &[u32] {
        match self {
            CellClock::None => &[],
            CellClock::Own(v) => v,
            CellClock::Shared(a) => a,
        }
    }
}

/// Releases clock `vc` (of a rank in release state `rel`) into a cell's clock: the cell's
/// clock becomes the join of both, and the rank's clock advance is left pending. In runs of
/// more than [`SHARE_FROM`] ranks the cells a rank notifies meanwhile share one snapshot of its
/// clock, and a cell whose clock the snapshot covers (an epilogue into cells the rank has waited
/// on) takes it as is.
#[inline]
pub fn release_clock(vc: &[u32], rel: &mut Release, cell: &mut CellClock) {
    rel.advance = true;
    if vc.len() <= SHARE_FROM {
        if let CellClock::Own(c) = cell {
            if c.len() < vc.len() {
                c.resize(vc.len(), 0);
            }
            for (a, b) in c.iter_mut().zip(vc) {
                *a = (*a).max(*b);
            }
        } else {
            let old = cell.as_slice();
            *cell = CellClock::Own((0..vc.len().max(old.len())).map(|i| join_at(old, vc, i)).collect());
        }
        return;
    }
    let snap = rel.snap.get_or_insert_with(|| Arc::from(vc));
    let old = cell.as_slice();
    *cell = if covers(snap, old) {
        CellClock::Shared(Arc::clone(snap))
    } else {
        CellClock::Shared((0..old.len().max(snap.len())).map(|i| join_at(old, snap, i)).collect())
    };
}

/// Joins a cell's released clock into rank `g`'s clock `vc` (a satisfied wait); a clock that
/// changes applies the rank's pending advance (the join never raises `vc[g]`: no clock knows
/// more of rank `g` than `g` itself).
#[inline]
pub(crate) fn acquire_clock(vc: &mut Vec<u32>, rel: &mut Release, g: usize, cell: &[u32]) {
    if vc.len() < cell.len() {
        vc.resize(cell.len(), 0);
    }
    let mut changed = false;
    for (a, &b) in vc.iter_mut().zip(cell) {
        changed |= b > *a;
        *a = (*a).max(b);
    }
    if changed {
        rel.settle(vc, g);
    }
}

/// Whether clock `a` is at least `b` in every entry (missing entries are 0).
#[inline]
fn covers(a: &[u32], b: &[u32]) -> bool {
    let (head, tail) = b.split_at(a.len().min(b.len()));
    a.iter().zip(head).all(|(x, y)| x >= y) && tail.iter().all(|&y| y == 0)
}

#[inline]
fn join_at(a: &[u32], b: &[u32], i: usize) -> u32 {
    a.get(i).copied().unwrap_or(0).max(b.get(i).copied().unwrap_or(0))
}
