//! `pld verify FILE --ranks P --exhaustive [--max-executions N] [--timeout S]`: every
//! execution of the program up to equivalence (`pld_sim::explore`), with one of three
//! verdicts.
//!
//! Guarantees: proved (exit 0) names the checks that held over how many classes and
//! executions, and the scope of the proof (this rank count, these inputs' control flow, these
//! bindings); refuted prints the failing execution's report exactly as `pld run` prints it
//! (exit 3), or the first output difference (exit 3), and writes the replay file that
//! `pld run FILE --schedule replay:PATH` reproduces it with; incomplete (a limit hit) says what
//! it covered and is never a proof (exit 5). `--report-json` gets the verdict as `pld run`
//! writes its own.

use crate::driver::Failure;
use pld_ir::Program;
use pld_sim::explore::{Finding, Limits, Tally, Verdict};
use pld_sim::{Inputs, SimConfig};
use std::path::{Path, PathBuf};

/// The limits of one exhaustive verification.
#[derive(Clone, Debug)]
pub struct Exhaustive {
    /// `--max-executions`.
    pub max_executions: Option<u64>,
    /// Where a refutation's replay file goes.
    pub replay_file: PathBuf,
    /// `--exhaustive-naive`: every interleaving, no reduction (hidden; tests).
    pub naive: bool,
    /// `--exhaustive-census`: explore past refutations and print the census (hidden; tests).
    pub census: bool,
    /// The program file, for the replay command line.
    pub file: PathBuf,
}

/// The checks a proof covers.
const CHECKS: &str =
    "no deadlock, race, uninitialised read, stale credit, credit leak, or schedule-dependent output";

/// Explores every execution of one prepared run; returns the outcome every execution agreed
/// on (for `--expect` / `--check-golden` and `--out`).
pub fn explore(
    program: &Program,
    entry: &str,
    inputs: &Inputs,
    cfg: &SimConfig,
    x: &Exhaustive,
    report_json: Option<&Path>,
) -> Result<pld_sim::SimOutcome, Failure> {
    let limits = Limits {
        max_executions: x.max_executions,
        naive: x.naive,
        keep_going: x.census,
        record_classes: x.census,
        ..Limits::default()
    };
    let start = std::time::Instant::now();
    let explored = crate::progress::shown(crate::progress::Work::Exploration, cfg, |cfg| {
        pld_sim::explore::exhaustive(program, entry, inputs, cfg, &limits)
    });
    let verdict = match explored {
        Ok(v) => v,
        Err(pld_sim::SimError::Invalid(d)) => {
            return Err(Failure::usage(d.iter().map(|d| d.message.clone()).collect::<Vec<_>>().join("; ")))
        }
        Err(pld_sim::SimError::Fault(r)) => return Err(Failure::Interrupted(r.to_string())),
    };
    let secs = start.elapsed().as_secs_f64();
    if x.census {
        let t = match &verdict {
            Verdict::Proved { tally, .. }
            | Verdict::Refuted { tally, .. }
            | Verdict::Incomplete { tally, .. } => tally,
        };
        let outcomes: Vec<&String> = t.outcomes.iter().collect();
        outln!("census: ends={} traces={} outcomes={outcomes:?}", t.ends, t.keys.len());
    }
    let scope =
        format!("holds for {} rank(s), these inputs' control flow and these bound values only", cfg.nranks);
    let json = |doc: crate::run_json::RunJson<'_>| -> Result<(), Failure> {
        match report_json {
            Some(p) => crate::driver::write_file(p, doc.text().as_bytes()),
            None => Ok(()),
        }
    };
    match verdict {
        Verdict::Proved { tally, outcome } => {
            json(crate::run_json::RunJson {
                ok: true,
                modeled_ps: outcome.timing.rank_ps.clone(),
                ..Default::default()
            })?;
            outln!("proved `{entry}`: {CHECKS} over {} ({}); {scope}", classes(&tally), rate(&tally, secs));
            Ok(outcome)
        }
        Verdict::Refuted { tally, finding, replay } => {
            crate::replay::write(&x.replay_file, &replay)?;
            let how = format!(
                "  = refuted by exhaustive exploration after {} ({})\n  = replay: pld run {} --ranks {} --schedule replay:{}\n",
                classes(&tally),
                rate(&tally, secs),
                x.file.display(),
                cfg.nranks,
                x.replay_file.display()
            );
            match finding {
                Finding::Fault(report) => {
                    json(crate::run_json::RunJson {
                        ok: false,
                        report: Some(&report.json),
                        ..Default::default()
                    })?;
                    Err(Failure::Fault(format!("{report}{how}")))
                }
                Finding::Differ(what) => {
                    json(crate::run_json::RunJson::default())?;
                    Err(Failure::Fault(format!(
                        "error: schedule-dependent result: this execution and the first one explored disagree: {what}\n  = a correct protocol gives the same bytes under every interleaving\n{how}"
                    )))
                }
            }
        }
        Verdict::Incomplete { tally, reason, .. } => {
            json(crate::run_json::RunJson::default())?;
            Err(Failure::Incomplete(format!(
                "incomplete: {reason} after {} ({}); nothing was proved: {CHECKS} were checked on those executions only, not on every interleaving\n",
                classes(&tally),
                rate(&tally, secs)
            )))
        }
    }
}

fn classes(t: &Tally) -> String {
    format!(
        "{} class{} ({} execution{}, at most {} steps each)",
        t.classes,
        if t.classes == 1 { "" } else { "es" },
        t.executions,
        if t.executions == 1 { "" } else { "s" },
        t.max_steps
    )
}

fn rate(t: &Tally, secs: f64) -> String {
    format!("{secs:.2} s, {:.0} executions/s", t.executions as f64 / secs.max(1e-9))
}
