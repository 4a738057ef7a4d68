//! The exhaustive explorer's hook into the world: while switched on, every access to state
//! that ranks share (window bytes, host-tensor bytes, signal cells) is logged as an
//! [`Ev`](crate::drive::Ev) for the dependence relation of [`crate::explore`].
//!
//! Guarantees: logging is off unless [`World::log_deps`] switched it on (then one branch per
//! access is its whole cost); while on, every window access checked by `touch`, every
//! host-tensor access, every notify and every satisfied wait (deferred completions included)
//! appends one event naming the rank that performed it, in the order they happened.

use super::World;
use crate::drive::{Ev, EvKind, Space};

impl World {
    /// Switches the dependence log on (an empty one) or off.
    pub fn log_deps(&mut self, on: bool) {
        self.local.deps = on.then(Vec::new);
    }

    /// The events logged since the last call (empty when logging is off).
    pub fn take_deps(&mut self) -> Vec<Ev> {
        self.local.deps.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Whether events were logged since the last [`World::take_deps`].
    pub fn has_deps(&self) -> bool {
        self.local.deps.as_ref().is_some_and(|d| !d.is_empty())
    }

    /// Logs one access of rank `g` to bytes `[lo, hi)` of `space`.
    #[inline]
    pub(super) fn dep(&mut self, g: usize, space: Space, lo: u64, hi: u64, kind: EvKind) {
        if let Some(log) = &mut self.local.deps {
            log.push(Ev { by: g as u32, space, lo, hi, kind });
        }
    }
}

/// A signal operation of rank `g` on the cell at byte `offset` of domain rank `owner`'s
/// window of `domain`.
pub(super) fn cell_ev(g: usize, domain: usize, owner: usize, offset: u64) -> Ev {
    let space = Space::Window { domain: domain as u32, owner: owner as u32 };
    Ev { by: g as u32, space, lo: offset, hi: offset + 4, kind: EvKind::Sync }
}

impl From<super::AccessKind> for EvKind {
    fn from(k: super::AccessKind) -> EvKind {
        match k {
            super::AccessKind::Read => EvKind::Read,
            super::AccessKind::Atomic => EvKind::Atomic,
            super::AccessKind::Write | super::AccessKind::Rewrite => EvKind::Write,
        }
    }
}
