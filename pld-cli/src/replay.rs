//! `--schedule`: the simulator's named schedules, or `replay:PATH`, a replay file that
//! `pld verify --exhaustive` wrote for a refuting execution.
//!
//! Guarantees: `replay:PATH` is read and checked (JSON, recorded at this rank count) before
//! the run starts (a usage error otherwise, exit 2); the run then follows its picks exactly
//! (`pld_sim::explore::ReplayDriver`), and a pick that is not runnable stops it with a runtime
//! report naming the pick.

use crate::driver::Failure;
use pld_sim::explore::{DriverCell, Replay, ReplayDriver};
use pld_sim::Schedule;
use std::path::PathBuf;

/// A `--schedule` value.
#[derive(Clone, Debug)]
pub struct ScheduleArg {
    /// The schedule (det when replaying).
    pub sched: Schedule,
    /// The replay file, for `replay:PATH`.
    pub replay: Option<PathBuf>,
}

impl ScheduleArg {
    /// The name `--schedule` takes.
    pub fn name(&self) -> String {
        match &self.replay {
            Some(p) => format!("replay:{}", p.display()),
            None => pld_sim::verify::schedule_name(self.sched),
        }
    }
}

/// Parses a `--schedule` value.
pub fn parse_schedule(s: &str) -> Result<ScheduleArg, String> {
    if let Some(path) = s.strip_prefix("replay:") {
        if path.is_empty() {
            return Err("replay: needs a file path (replay:PATH)".into());
        }
        return Ok(ScheduleArg { sched: Schedule::Deterministic, replay: Some(PathBuf::from(path)) });
    }
    s.parse::<Schedule>()
        .map(|sched| ScheduleArg { sched, replay: None })
        .map_err(|e| e.replace("or parallel)", "parallel or replay:PATH)"))
}

/// The replay driver of `--schedule replay:PATH` (none for the other schedules).
pub fn driver(arg: &ScheduleArg, ranks: usize) -> Result<Option<DriverCell>, Failure> {
    let Some(path) = &arg.replay else { return Ok(None) };
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::usage(format!("--schedule replay:{}: {e}", path.display())))?;
    let r = Replay::from_json(&text).map_err(|e| Failure::usage(format!("{}: {e}", path.display())))?;
    if r.ranks != ranks {
        return Err(Failure::usage(format!(
            "{} was recorded at --ranks {}, not {ranks}",
            path.display(),
            r.ranks
        )));
    }
    Ok(Some(DriverCell::new(ReplayDriver::new(&r))))
}

/// Writes `r` to `path`.
pub fn write(path: &std::path::Path, r: &Replay) -> Result<(), Failure> {
    crate::driver::write_file(path, r.to_json().as_bytes())
}
