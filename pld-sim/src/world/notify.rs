//! The checks every notify runs before it touches its cell, whichever path issues it: the DSL
//! notify op, a micro program's notify (builtin and unlowered collectives, chunked TPUT/TGET).
//!
//! Guarantees:
//! - [`World::notify_cell`] takes a [`Checked`] notifier, and only [`World::check_notify`]
//!   makes one, so no notify reaches a cell without these checks, run in this order:
//!   1. with fence checking on, the rank has no window write that no GM fence covered
//!      (an `UnfencedNotify` fault names the first one);
//!   2. in a mixed kernel, no other lane of the group already executed the notify written at
//!      the same place (a `DuplicateNotify` fault names both lanes).
//! - The faults read the same on every path: they name the notifier's op, rank, kernel and
//!   span, nothing about the path that issued it.

use super::*;

/// Who issues a notify and where: the rank, its kernel (lane) and that lane's mixed-kernel
/// group, the span, and the op name faults are reported under.
#[derive(Clone, Copy, Debug)]
pub struct Notifier<'a> {
    /// Global rank.
    pub g: usize,
    /// The kernel (lane) running the notify.
    pub who: &'a str,
    /// The mixed-kernel group of that lane, if it is one.
    pub group: Option<&'a str>,
    /// Where the notify is written.
    pub span: Span,
    /// The op name its faults are reported under.
    pub op: &'a str,
}

/// A notifier that passed [`World::check_notify`] (the only way to make one).
#[derive(Clone, Copy, Debug)]
pub struct Checked<'a>(Notifier<'a>);

impl<'a> Checked<'a> {
    /// The notifier that passed the checks.
    pub fn notifier(&self) -> &Notifier<'a> {
        &self.0
    }
}

impl World {
    /// Runs the checks every notify runs (see the module documentation) for notifier `n`.
    pub fn check_notify<'a>(&mut self, n: Notifier<'a>) -> Result<Checked<'a>, Fault> {
        self.check_fenced(&n)?;
        self.check_single_lane(&n)?;
        Ok(Checked(n))
    }

    /// With fence checking on, a notify may not publish window writes that no GM fence covered.
    fn check_fenced(&self, n: &Notifier<'_>) -> Result<(), Fault> {
        match self.first_unfenced(n.g) {
            None => Ok(()),
            Some((op, buf, span)) => Err(Fault::new(
                ReportKind::UnfencedNotify,
                n.span,
                format!(
                    "{} on rank {} publishes a write to buffer '{buf}' ({op}) that no GM fence has made visible",
                    n.op, n.g
                ),
            )
            .note_at(format!("the unfenced {op} is at"), span)
            .note("a peer released by this notify may read stale bytes; fence (pipe barrier + dsb) before notifying")),
        }
    }

    /// A notify written outside every `split_aiv` region is duplicated onto both lanes of a
    /// mixed kernel: the same source notify executed by two lanes of one group is reported.
    fn check_single_lane(&mut self, n: &Notifier<'_>) -> Result<(), Fault> {
        let Some(group) = n.group else { return Ok(()) };
        match self.note_lane_notify(n.g, group, n.span, n.who) {
            Some(lane) => Err(Fault::new(
                ReportKind::DuplicateNotify,
                n.span,
                format!(
                    "{} of mixed kernel '{group}' runs on two lanes ('{lane}' and '{}') of rank {}: duplicate credit, and the cube lane can publish before the vector lane's data landed",
                    n.op, n.who, n.g
                ),
            )
            .note("put the notify inside a pl.split_aiv region so it is pinned to the vector lane")),
            None => Ok(()),
        }
    }

    /// With fence checking on, rank `g`'s first window write no GM fence covered yet
    /// (op, buffer, span).
    pub(super) fn first_unfenced(&self, g: usize) -> Option<(String, String, Span)> {
        if !self.shared.checks.fences {
            return None;
        }
        let (site, alloc, span) = self.ranks.get(g)?.unfenced?;
        Some((self.site(site).0, self.shared.allocs[alloc].name.clone(), span))
    }

    /// Notes that lane `who` of mixed-kernel `group` on rank `g` executed the notify at `span`;
    /// returns the other lane when a different one already did.
    pub(super) fn note_lane_notify(
        &mut self,
        g: usize,
        group: &str,
        span: Span,
        who: &str,
    ) -> Option<String> {
        let lanes = &mut self.ranks.get_mut(g)?.lane_notifies;
        let key = (group.to_string(), span);
        match lanes.get(&key) {
            Some(lane) if lane != who => Some(lane.clone()),
            Some(_) => None,
            None => {
                lanes.insert(key, who.to_string());
                None
            }
        }
    }
}
