//! The run's budget: steps, wall-clock deadline and interruption (Ctrl-C).
//!
//! Guarantees: every interpreted step — every statement, micro instruction and loop iteration,
//! an iteration of an empty loop body included — is counted against
//! [`SimConfig::max_steps`](crate::SimConfig::max_steps) (the whole run; unlimited by default)
//! and, since the last step that changed window or host bytes or a signal cell's value,
//! against [`SimConfig::max_idle_steps`](crate::SimConfig::max_idle_steps) (the liveness
//! budget; a host orchestrator loop counts all its steps there); every [`CHECK_EVERY`] steps the
//! deadline ([`SimConfig::deadline`](crate::SimConfig::deadline)) and the interrupt flag
//! ([`SimConfig::interrupt`](crate::SimConfig::interrupt)) are polled, so a run stops within
//! a few milliseconds of either. When the budget fires, the report names, per rank, every core
//! that was running: its function, the source line it was at and the wait it last parked on
//! (the model is the hardware's TWAIT spin-count assert). Every [`CHECK_EVERY`] steps a run
//! with [`SimConfig::progress`](crate::SimConfig::progress) adds its steps and the bytes it
//! moved since the last time to those counters, for a progress display; nothing else reads
//! them.

use crate::config::SimConfig;
pub use crate::config::{Progress, DEFAULT_MAX_IDLE_STEPS, DEFAULT_MAX_STEPS};
use crate::interp::Thread;
use crate::report::{span_text, Fault, ReportKind};
use crate::world::World;
use pld_ir::Span;
use std::sync::atomic::Ordering;

/// Adds [`CHECK_EVERY`] steps and the bytes `world` moved since its last report to the run's
/// progress counters (every [`CHECK_EVERY`] steps of a core).
pub fn publish(cfg: &SimConfig, world: &mut World) {
    if let Some(p) = &cfg.progress {
        p.steps.fetch_add(CHECK_EVERY, Ordering::Relaxed);
        p.bytes.fetch_add(world.take_moved(), Ordering::Relaxed);
    }
}

/// Steps between two polls of the clock and the interrupt flag.
pub const CHECK_EVERY: u64 = 1024;

/// Whether the run may take its `steps`-th step, `idle` of them in a row without progress;
/// `who` names the thread that takes it.
pub fn check(steps: u64, idle: u64, cfg: &SimConfig, who: &str) -> Result<(), Fault> {
    check_total(steps, cfg, who)?;
    if idle > cfg.max_idle_steps {
        return Err(over(
            format!(
                "the run took {} steps in a row without progress: no data written and no signal cell changed (a livelock or a runaway loop?); raise it with --max-idle-steps",
                cfg.max_idle_steps
            ),
            who,
        ));
    }
    if steps % CHECK_EVERY == 0 {
        poll(cfg, who)?;
    }
    Ok(())
}

/// Whether a run's `steps` so far stay within [`SimConfig::max_steps`]; `who` names what ran
/// over. The parallel schedule's handles check their own steps as they go, and the run's total
/// once they are joined.
pub fn check_total(steps: u64, cfg: &SimConfig, who: &str) -> Result<(), Fault> {
    if steps > cfg.max_steps {
        return Err(over(
            format!(
                "the run took more than {} steps (a livelock or a runaway loop?); raise it with --max-steps",
                cfg.max_steps
            ),
            who,
        ));
    }
    Ok(())
}

/// A budget fault saying `what`, naming `who` took the step that ran over.
fn over(what: String, who: &str) -> Fault {
    Fault::new(ReportKind::Budget, Span::DUMMY, what).note(format!("the step that ran over: '{who}'"))
}

/// The deadline and interrupt checks alone (also for loops that count no steps).
pub fn poll(cfg: &SimConfig, who: &str) -> Result<(), Fault> {
    if cfg.interrupt.as_ref().is_some_and(|f| f.load(Ordering::Relaxed)) {
        return Err(Fault::new(ReportKind::Interrupted, Span::DUMMY, "the run was interrupted")
            .note(format!("running at the time: '{who}'")));
    }
    if cfg.deadline.is_some_and(|d| std::time::Instant::now() >= d) {
        return Err(Fault::new(
            ReportKind::Budget,
            Span::DUMMY,
            "the run reached its wall-clock limit (a livelock or a runaway loop?); raise it with --timeout",
        )
        .note(format!("running at the time: '{who}'")));
    }
    Ok(())
}

/// Whether `f` is a budget or interrupt fault (which [`describe_cores`] completes).
pub fn is_budget(f: &Fault) -> bool {
    matches!(f.kind, ReportKind::Budget | ReportKind::Interrupted)
}

/// Adds one note per running core: rank, function, source line, the wait it last parked on.
pub fn describe_cores<'a, 'p: 'a>(
    mut f: Fault,
    cores: impl Iterator<Item = (usize, usize, &'a Thread<'p>)>,
    world: &World,
    cfg: &SimConfig,
) -> Fault {
    let src = cfg.sources.as_ref();
    for (rank, core, t) in cores {
        let (func, span) = t.position();
        let who = if rank == usize::MAX { "host".to_string() } else { format!("rank {rank} core {core}") };
        let waited = match &t.last_wait {
            Some((p, at)) => format!(
                "last waited on {} {} (now {}) at {}",
                world.cell_name(p.cell),
                p.describe(),
                world.cell_value(p.cell),
                span_text(*at, src)
            ),
            None => "never waited".to_string(),
        };
        let parked = if t.parked.is_some() { ", parked" } else { "" };
        let last = match &t.last_op {
            Some((op, at)) => format!("last op '{op}' at {}; ", span_text(*at, src)),
            None => String::new(),
        };
        f = f.note(format!("{who}: in '{func}' at {}{parked}; {last}{waited}", span_text(span, src)));
    }
    f
}
