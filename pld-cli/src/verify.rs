//! `pld verify FILE --ranks R [--schedules N]`: schedule exploration.
//!
//! Takes every `pld run` option but `--schedule`, `--trace`, `--trace-all` and `--sweep` (not
//! listed in its `--help`; given anyway, a usage error; `--out` gets the agreed outputs, `--report-json`
//! the verdict), builds the inputs once, and runs
//! the deterministic schedule plus N PCT schedules (`pld_sim::verify`). Exit 0 when every
//! schedule ran clean with identical outputs and traffic; exit 3 with the failing schedule's
//! report (replayable with `pld run --schedule pct:SEED`), or with both schedules' names and
//! the first differing output bytes. `--expect` / `--check-golden` then compare the outputs
//! the schedules agreed on (exit 4 when they differ), as `pld run` does.

use crate::driver::Failure;
use crate::run::RunArgs;
use clap::Args;
use pld_ir::Program;
use pld_sim::verify::VerifyFailure;
use pld_sim::{Inputs, SimConfig};
use std::path::Path;

/// Arguments of `pld verify`.
#[derive(Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    run: RunArgs,
    /// PCT schedules to explore after the deterministic one.
    #[arg(long, default_value_t = 16)]
    schedules: usize,
    /// Explore every execution up to equivalence (DPOR): proved, refuted (with a replay file)
    /// or incomplete (exit 5) when --max-executions or --timeout stops it first.
    #[arg(long, conflicts_with = "schedules")]
    exhaustive: bool,
    /// With --exhaustive: stop after this many executions (incomplete).
    #[arg(long, value_name = "N", requires = "exhaustive")]
    max_executions: Option<u64>,
    /// With --exhaustive: where a refutation's replay file goes (default: FILE's name with
    /// `.replay.json`, in the current directory).
    #[arg(long, value_name = "PATH.json", requires = "exhaustive")]
    replay_file: Option<std::path::PathBuf>,
    /// With --exhaustive: run every interleaving without reduction (for testing the reduction).
    #[arg(long, hide = true, requires = "exhaustive")]
    exhaustive_naive: bool,
    /// With --exhaustive: go on past a refutation and print a census line (executions that
    /// ended, their distinct traces, every outcome) before the verdict (for tests).
    #[arg(long, hide = true, requires = "exhaustive")]
    exhaustive_census: bool,
}

/// Runs `pld verify`.
pub fn run(mut args: VerifyArgs) -> Result<(), Failure> {
    if args.schedules > 100_000 {
        return Err(Failure::usage(format!("--schedules {} is above 100000", args.schedules)));
    }
    if args.run.schedule.sched != pld_sim::Schedule::Deterministic
        || args.run.schedule.replay.is_some()
        || args.run.trace.is_some()
        || args.run.trace_all
    {
        return Err(Failure::usage(
            "pld verify chooses its own schedules and records no trace: drop --schedule, --trace and --trace-all (replay one schedule with pld run --schedule pct:SEED)",
        ));
    }
    if args.run.sweep.is_some() {
        return Err(Failure::usage("pld verify explores one size: drop --sweep (sweep sizes with pld run)"));
    }
    if args.exhaustive {
        let file = args.run.file().to_path_buf();
        let stem = file.file_stem().map_or("program".into(), |s| s.to_string_lossy().into_owned());
        let replay_file = args.replay_file.unwrap_or_else(|| format!("{stem}.replay.json").into());
        args.run.exhaustive = Some(crate::exhaustive::Exhaustive {
            max_executions: args.max_executions,
            replay_file,
            naive: args.exhaustive_naive,
            census: args.exhaustive_census,
            file,
        });
    } else {
        args.run.verify = Some(args.schedules);
    }
    crate::run::run(&args.run)
}

/// Explores the schedules of one prepared run (called by `pld run`'s setup); returns the
/// outcome every schedule agreed on (the deterministic schedule's), for `--expect` /
/// `--check-golden` and `--out`. `--report-json` is written as `pld run` writes it (the failing
/// schedule's report; no report when two schedules disagree).
pub fn explore(
    program: &Program,
    entry: &str,
    inputs: &Inputs,
    cfg: &SimConfig,
    n: usize,
    report_json: Option<&Path>,
) -> Result<pld_sim::SimOutcome, Failure> {
    let result = crate::progress::shown(crate::progress::Work::Schedules(n + 1), cfg, |cfg| {
        pld_sim::verify::verify(program, entry, inputs, cfg, n)
    });
    if let Some(path) = report_json {
        use crate::run_json::RunJson;
        let doc = match &result {
            Ok((base, _)) => {
                RunJson { ok: true, modeled_ps: base.timing.rank_ps.clone(), ..RunJson::default() }
            }
            Err(VerifyFailure::Fault { report, .. }) => {
                RunJson { ok: false, report: Some(&report.json), ..RunJson::default() }
            }
            Err(_) => RunJson::default(),
        };
        let json = doc.text();
        crate::driver::write_file(path, json.as_bytes())?;
    }
    match result {
        Ok((outcome, ran)) => {
            outln!(
                "verified `{entry}` on {} rank(s): {ran} schedules (det, pct:1..={n}) ran clean with identical outputs and traffic",
                cfg.nranks
            );
            Ok(outcome)
        }
        Err(VerifyFailure::Invalid(pld_sim::SimError::Invalid(d))) => {
            Err(Failure::usage(d.iter().map(|d| d.message.clone()).collect::<Vec<_>>().join("; ")))
        }
        Err(e) => Err(Failure::Fault(e.to_string())),
    }
}
