//! The progress line of a long `pld run`, drawn by `indicatif` on stderr.
//!
//! Guarantees: drawn only when stderr is a terminal, and only once the run has taken a
//! second (a short run never flickers); it shows the elapsed time, the steps taken and the
//! bytes moved, read from the simulator's live counters ([`pld_sim::budget::Progress`]), and
//! is cleared when the run ends. When stderr is not a terminal nothing is drawn and no thread
//! is started, so captured output is exactly what it would be without it.

use indicatif::{HumanBytes, HumanCount, ProgressBar, ProgressDrawTarget, ProgressStyle};
use pld_sim::budget::Progress as Counters;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a run goes before its progress line appears.
const QUIET_FOR: Duration = Duration::from_secs(1);

/// A running progress display (or none, off a terminal).
pub struct Progress {
    done: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts the display for a run on `ranks` ranks, returning the counters the simulator
    /// fills (`None` off a terminal).
    pub fn start(ranks: usize) -> (Progress, Option<Arc<Counters>>) {
        let done = Arc::new(AtomicBool::new(false));
        if !std::io::stderr().is_terminal() {
            return (Progress { done, handle: None }, None);
        }
        let counters = Arc::new(Counters::default());
        let (flag, c) = (Arc::clone(&done), Arc::clone(&counters));
        let handle = std::thread::spawn(move || draw(ranks, &flag, &c));
        (Progress { done, handle: Some(handle) }, Some(counters))
    }

    /// Stops and clears the display.
    pub fn stop(self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle {
            let _ = h.join();
        }
    }
}

/// Redraws the line every 100 ms until `done`.
fn draw(ranks: usize, done: &AtomicBool, c: &Counters) {
    let start = Instant::now();
    let mut bar: Option<ProgressBar> = None;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        if start.elapsed() < QUIET_FOR {
            continue;
        }
        let steps = c.steps.load(Ordering::Relaxed);
        let bytes = c.bytes.load(Ordering::Relaxed);
        let msg = format!("{} steps, {} moved", HumanCount(steps), HumanBytes(bytes));
        match &bar {
            Some(b) => b.set_message(msg),
            None => {
                let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
                    .with_elapsed(start.elapsed())
                    .with_prefix(format!("{ranks} rank(s)"))
                    .with_message(msg);
                if let Ok(style) =
                    ProgressStyle::with_template("  {spinner} simulating {prefix}: {msg}, {elapsed}")
                {
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
