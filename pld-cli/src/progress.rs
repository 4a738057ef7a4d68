//! The progress line of a long `pld run` or `pld verify` (with or without `--exhaustive`),
//! drawn by `indicatif` on stderr.
//!
//! Guarantees: drawn only when stderr is a terminal, and only once the work has taken a
//! second (a short run never flickers); it shows the elapsed time and, read from the
//! simulator's live counters ([`pld_sim::budget::Progress`]), the steps taken and the bytes
//! moved (a run), the schedules done of how many with the steps of all of them (`pld verify`),
//! or the executions run and the complete ones among them (an exhaustive exploration, which
//! has no end to show until it proves or refutes), and is
//! cleared when the work ends. When stderr is not a terminal nothing is drawn and no thread is
//! started, so captured output is exactly what it would be without it.

use indicatif::{HumanBytes, HumanCount, ProgressBar, ProgressDrawTarget, ProgressStyle};
use pld_sim::budget::Progress as Counters;
use pld_sim::SimConfig;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a run goes before its progress line appears.
const QUIET_FOR: Duration = Duration::from_secs(1);

/// What the line is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// One simulation (`pld run`).
    Run,
    /// An exhaustive exploration (`pld verify --exhaustive`).
    Exploration,
    /// `pld verify`'s schedules, this many in all.
    Schedules(usize),
}

/// A running progress display (or none, off a terminal).
struct Progress {
    done: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

/// Runs `f` on a copy of `cfg` that carries the counters of `work`'s progress line, the line
/// shown (on a terminal) while `f` runs and cleared when it returns.
pub fn shown<R>(work: Work, cfg: &SimConfig, f: impl FnOnce(&SimConfig) -> R) -> R {
    let (progress, counters) = Progress::start(work, cfg.nranks);
    let result = f(&SimConfig { progress: counters, ..cfg.clone() });
    progress.stop();
    result
}

impl Progress {
    /// Starts the display for `work` on `ranks` ranks, returning the counters the simulator
    /// fills (`None` off a terminal).
    fn start(work: Work, ranks: usize) -> (Progress, Option<Arc<Counters>>) {
        let done = Arc::new(AtomicBool::new(false));
        if !std::io::stderr().is_terminal() {
            return (Progress { done, handle: None }, None);
        }
        let counters = Arc::new(Counters::default());
        let (flag, c) = (Arc::clone(&done), Arc::clone(&counters));
        let handle = std::thread::spawn(move || draw(work, ranks, &flag, &c));
        (Progress { done, handle: Some(handle) }, Some(counters))
    }

    /// Stops and clears the display.
    fn stop(self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle {
            let _ = h.join();
        }
    }
}

/// The line's text after its spinner and before the elapsed time.
fn message(work: Work, ranks: usize, c: &Counters) -> String {
    let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    match work {
        Work::Run => format!(
            "simulating {ranks} rank(s): {} steps, {} moved",
            HumanCount(load(&c.steps)),
            HumanBytes(load(&c.bytes))
        ),
        Work::Exploration => format!(
            "exploring {ranks} rank(s): {} executions, {} complete",
            HumanCount(load(&c.executions)),
            HumanCount(load(&c.classes))
        ),
        Work::Schedules(n) => format!(
            "verifying {ranks} rank(s): {} of {n} schedules done, {} steps",
            load(&c.executions),
            HumanCount(load(&c.steps))
        ),
    }
}

/// Redraws the line every 100 ms until `done`.
fn draw(work: Work, ranks: usize, done: &AtomicBool, c: &Counters) {
    let start = Instant::now();
    let mut bar: Option<ProgressBar> = None;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        if start.elapsed() < QUIET_FOR {
            continue;
        }
        let msg = message(work, ranks, c);
        match &bar {
            Some(b) => b.set_message(msg),
            None => {
                let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
                    .with_elapsed(start.elapsed())
                    .with_message(msg);
                if let Ok(style) = ProgressStyle::with_template("  {spinner} {msg}, {elapsed}") {
                    b.set_style(style);
                }
                bar = Some(b);
            }
        }
        if let Some(b) = &bar {
            b.tick();
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_work_shows_its_own_counts() {
        let c = Counters::default();
        c.steps.store(12_345, Ordering::Relaxed);
        c.bytes.store(3 << 20, Ordering::Relaxed);
        c.executions.store(100_000, Ordering::Relaxed);
        c.classes.store(7_355, Ordering::Relaxed);
        assert_eq!(message(Work::Run, 4, &c), "simulating 4 rank(s): 12,345 steps, 3.00 MiB moved");
        assert_eq!(
            message(Work::Exploration, 3, &c),
            "exploring 3 rank(s): 100,000 executions, 7,355 complete"
        );
        c.executions.store(3, Ordering::Relaxed);
        assert_eq!(
            message(Work::Schedules(17), 2, &c),
            "verifying 2 rank(s): 3 of 17 schedules done, 12,345 steps"
        );
    }
}
