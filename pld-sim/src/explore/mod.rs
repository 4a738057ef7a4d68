//! Exhaustive schedule exploration (`pld verify --exhaustive`): stateless model checking of
//! one program on one input with dynamic partial-order reduction over the scheduler driven one
//! step at a time.
//!
//! Guarantees: [`exhaustive`] runs the program once per explored execution, each from a fresh
//! world; the first execution that faults, or whose outputs or traffic differ from the first
//! complete execution's, refutes the program with its report and the [`Replay`] of its picks
//! (`pld run --schedule replay:PATH` reproduces it). When the search ends without one, every
//! Mazurkiewicz trace of the program's steps under [`Step::dependent`] was run to completion:
//! no interleaving of this program at this rank count, with these inputs' control flow and
//! these bindings, faults or changes the outputs ([`Verdict::Proved`]). A limit (executions,
//! wall clock) ends the search as [`Verdict::Incomplete`], never as a proof.

mod dpor;

pub use crate::drive::{Driver, DriverCell, Ev, EvKind, Replay, ReplayDriver, Space, Step, Stop, Tid};
pub use dpor::Dpor;

use crate::{run, Report, ReportKind, SimConfig, SimError, SimOutcome};
use pld_ir::Program;
use std::collections::{BTreeSet, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Bounds and modes of a search.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// Stop (incomplete) after this many executions.
    pub max_executions: Option<u64>,
    /// Stop (incomplete) at this instant.
    pub deadline: Option<Instant>,
    /// Run every interleaving (no reduction): the reference the search is tested against.
    pub naive: bool,
    /// Keep exploring after a refutation, collecting every outcome (tests).
    pub keep_going: bool,
    /// Record each complete execution's trace key (tests).
    pub record_classes: bool,
}

/// What a search covered.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Complete executions (each a distinct trace unless `naive`).
    pub classes: u64,
    /// Executions run, including those the search stopped as redundant.
    pub executions: u64,
    /// Executions that ran to their end (completed or faulted).
    pub ends: u64,
    /// Most steps in one execution.
    pub max_steps: usize,
    /// Distinct trace keys of the executions that ran to their end, completed or faulted
    /// (with `record_classes`).
    pub keys: HashSet<u64>,
    /// Every distinct outcome seen (with `keep_going`): `ok <digest>` or `<fault kind>: <message>`.
    pub outcomes: BTreeSet<String>,
}

/// Why an execution refutes the program.
#[derive(Clone, Debug)]
pub enum Finding {
    /// It faulted, with the report `pld run` gives.
    Fault(Report),
    /// Its outputs or traffic differ from the first complete execution's.
    Differ(String),
}

/// The result of a search.
#[derive(Debug)]
pub enum Verdict {
    /// Every trace was run: none faults, all agree (the first one's outcome).
    Proved {
        /// Coverage.
        tally: Tally,
        /// The outcome every execution agreed on.
        outcome: SimOutcome,
    },
    /// An execution faults or disagrees.
    Refuted {
        /// Coverage up to (or, with `keep_going`, past) it.
        tally: Tally,
        /// What it found.
        finding: Finding,
        /// Its picks.
        replay: Replay,
    },
    /// A limit stopped the search first.
    Incomplete {
        /// Coverage so far.
        tally: Tally,
        /// Which limit.
        reason: String,
        /// The outcome every complete execution so far agreed on.
        outcome: Option<SimOutcome>,
    },
}

/// Explores every execution of `entry` on `inputs` up to equivalence (`cfg.schedule` and
/// tracing are ignored).
pub fn exhaustive(
    program: &Program,
    entry: &str,
    inputs: &crate::Inputs,
    cfg: &SimConfig,
    limits: &Limits,
) -> Result<Verdict, SimError> {
    let search = Arc::new(Mutex::new(Dpor::new(limits.naive)));
    let driver: Arc<Mutex<dyn Driver>> = search.clone();
    let deadline = match (limits.deadline, cfg.deadline) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let c = SimConfig {
        schedule: crate::Schedule::Deterministic,
        trace: false,
        driver: Some(DriverCell(driver)),
        deadline,
        ..cfg.clone()
    };
    let mut tally = Tally::default();
    let mut first: Option<SimOutcome> = None;
    let mut refuted: Option<(Finding, Replay)> = None;
    lock(&search).first_execution();
    loop {
        if let Some(n) = limits.max_executions.filter(|&n| tally.executions >= n) {
            return Ok(incomplete(tally, format!("--max-executions {n} reached"), first, refuted));
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(incomplete(tally, "the time limit was reached".into(), first, refuted));
        }
        let result = run(program, entry, inputs, &c);
        tally.executions += 1;
        if let Some(p) = &cfg.progress {
            p.executions.store(tally.executions, std::sync::atomic::Ordering::Relaxed);
        }
        let mut s = lock(&search);
        let timed_out = deadline.is_some_and(|d| Instant::now() >= d);
        if timed_out && matches!(&result, Err(SimError::Fault(r)) if r.kind == ReportKind::Budget) {
            // The time limit stopped this run in the middle (a replay included).
            return Ok(incomplete(tally, "the time limit was reached".into(), first, refuted));
        }
        if let Some(d) = s.diverged.take() {
            return Err(crate::entry::invalid(format!(
                "the simulator did not replay deterministically: {d}"
            )));
        }
        tally.max_steps = tally.max_steps.max(s.depth());
        let replay = || Replay {
            note: "pld verify --exhaustive: the picks of the refuting execution".into(),
            ranks: cfg.nranks,
            picks: s.picks.clone(),
        };
        if !s.stopped {
            tally.ends += 1;
            if limits.record_classes {
                tally.keys.insert(s.class_key());
            }
        }
        let finding = match result {
            Ok(o) => {
                tally.classes += 1;
                if let Some(p) = &cfg.progress {
                    p.classes.store(tally.classes, std::sync::atomic::Ordering::Relaxed);
                }
                if limits.keep_going {
                    tally.outcomes.insert(format!("ok {}", digest(&o)));
                }
                match &first {
                    None => {
                        first = Some(o);
                        None
                    }
                    Some(f) => crate::verify::difference(f, &o).map(Finding::Differ),
                }
            }
            Err(SimError::Fault(r)) if r.kind == ReportKind::Interrupted && s.stopped => None,
            Err(SimError::Fault(r)) if r.kind == ReportKind::Interrupted => return Err(SimError::Fault(r)),
            Err(SimError::Fault(r)) => {
                if limits.keep_going {
                    let line = r.text.lines().next().unwrap_or_default().to_string();
                    tally.outcomes.insert(format!("{}: {line}", r.kind.name()));
                }
                Some(Finding::Fault(r))
            }
            Err(e) => return Err(e),
        };
        if let Some(f) = finding {
            let rep = replay();
            if !limits.keep_going {
                return Ok(Verdict::Refuted { tally, finding: f, replay: rep });
            }
            refuted.get_or_insert((f, rep));
        }
        if !s.next_execution() {
            break;
        }
    }
    Ok(match (refuted, first) {
        (Some((finding, replay)), _) => Verdict::Refuted { tally, finding, replay },
        (None, Some(outcome)) => Verdict::Proved { tally, outcome },
        (None, None) => Verdict::Incomplete { tally, reason: "no execution completed".into(), outcome: None },
    })
}

fn incomplete(
    tally: Tally,
    reason: String,
    first: Option<SimOutcome>,
    refuted: Option<(Finding, Replay)>,
) -> Verdict {
    match refuted {
        Some((finding, replay)) => Verdict::Refuted { tally, finding, replay },
        None => Verdict::Incomplete { tally, reason, outcome: first },
    }
}

/// A digest of an outcome's outputs (name, dtype, shape, bytes).
fn digest(o: &SimOutcome) -> String {
    use std::hash::{Hash, Hasher};
    let mut names: Vec<&String> = o.outputs.keys().collect();
    names.sort();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for n in names {
        let t = &o.outputs[n];
        (n, t.dtype.to_string(), &t.shape, &t.data).hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

fn lock(m: &Mutex<Dpor>) -> std::sync::MutexGuard<'_, Dpor> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
