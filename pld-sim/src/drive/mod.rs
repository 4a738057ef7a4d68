//! The driven schedule: something outside the scheduler picks which thread runs each step
//! ([`Driver`]), and is told what the step did ([`Ev`]s, which the world records); a
//! [`Replay`] file is one such sequence of picks, written by `pld verify --exhaustive` and
//! followed by `pld run --schedule replay:PATH`. The explorer ([`crate::explore`]) drives runs
//! through it from above; the world and the scheduler below it only record and obey.
//!
//! Guarantees: under a driver the scheduler runs the picked thread up to its next op that
//! touches shared state (or parks or ends) per step, hands the driver that
//! step's shared-state events and whether the thread ended parked, and stops the run
//! ([`crate::ReportKind::Interrupted`]) when the driver picks nothing. The same program, inputs
//! and picks give the same run; a replay whose pick is not runnable is a runtime fault naming
//! the pick, never a different run.

mod step;

use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
pub use step::{Ev, EvKind, Space, Step, Tid};

/// Picks the next thread of a driven run.
pub trait Driver: Send {
    /// The thread to run next among `runnable` (sorted), or why the run stops.
    fn pick(&mut self, runnable: &[Tid]) -> Result<Tid, Stop>;
    /// What the picked thread's step did: its events (and those of the scheduler transitions
    /// it caused, such as deferred completions it satisfied) and whether it ended parked.
    fn ran(&mut self, tid: Tid, evs: Vec<Ev>, parked: bool);
}

/// Why a driver stopped a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The explorer has seen what this run would show (an interrupt report, not a finding).
    Explored,
    /// A replayed pick is not runnable (a runtime fault with this message).
    Mismatch(String),
}

/// A shared handle on a driver, for [`crate::SimConfig::driver`].
#[derive(Clone)]
pub struct DriverCell(pub Arc<Mutex<dyn Driver>>);

impl DriverCell {
    /// Wraps `d`.
    pub fn new(d: impl Driver + 'static) -> DriverCell {
        DriverCell(Arc::new(Mutex::new(d)))
    }
}

impl std::fmt::Debug for DriverCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DriverCell")
    }
}

/// A recorded schedule: every pick of one run, in order (a pick whose thread then parked
/// without touching shared state included).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replay {
    /// What wrote it (`pld verify --exhaustive`) and why.
    pub note: String,
    /// The rank count it was recorded at.
    pub ranks: usize,
    /// The picks.
    pub picks: Vec<Tid>,
}

impl Replay {
    /// The file's JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Parses a replay file's text.
    pub fn from_json(text: &str) -> Result<Replay, String> {
        serde_json::from_str(text).map_err(|e| format!("not a pld replay file: {e}"))
    }
}

/// Follows a [`Replay`]: each pick in turn; after the last one, the first runnable thread.
pub struct ReplayDriver {
    picks: Vec<Tid>,
    at: usize,
}

impl ReplayDriver {
    /// A driver following `r`.
    pub fn new(r: &Replay) -> ReplayDriver {
        ReplayDriver { picks: r.picks.clone(), at: 0 }
    }
}

impl Driver for ReplayDriver {
    fn pick(&mut self, runnable: &[Tid]) -> Result<Tid, Stop> {
        let Some(&want) = self.picks.get(self.at) else {
            return runnable.first().copied().ok_or(Stop::Explored);
        };
        self.at += 1;
        if runnable.contains(&want) {
            return Ok(want);
        }
        let list: Vec<String> = runnable.iter().map(|t| t.to_string()).collect();
        Err(Stop::Mismatch(format!(
            "replay pick #{} ({want}) is not runnable here (runnable: {}): the file was recorded for another program, input, rank count or binding",
            self.at,
            list.join("; ")
        )))
    }

    fn ran(&mut self, _: Tid, _: Vec<Ev>, _: bool) {}
}
