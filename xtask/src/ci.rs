//! `cargo xtask ci`: every check CI runs, in order, stopping at the first failure.
//!
//! Locally green means CI green: `.ci/run` installs the tools and calls exactly
//! this. Each step prints its name and duration; a failure names the step, the
//! command that failed and the command that fixes it; a summary table of step
//! durations ends every run.

use std::time::{Duration, Instant};

use crate::shell::Cmd;
use crate::{abi, no_args, readme, tidy, Failure, Result};

/// A failed step: what went wrong and how to fix it.
struct StepFailure {
    what: String,
    fix: String,
}

/// Turns a command error into a step failure with the given fix.
fn fails_with(fix: &str) -> impl FnOnce(String) -> StepFailure + '_ {
    move |what| StepFailure { what, fix: fix.to_owned() }
}

type StepResult = std::result::Result<(), StepFailure>;

/// One CI step.
struct Step {
    name: &'static str,
    run: fn() -> StepResult,
}

const STEPS: &[Step] = &[
    Step { name: "fmt", run: fmt },
    Step { name: "abi-header", run: abi_header },
    Step { name: "abi-c", run: abi_c },
    Step { name: "clippy", run: clippy },
    Step { name: "test", run: test },
    Step { name: "mpi", run: mpi },
    Step { name: "doc", run: doc },
    Step { name: "tidy", run: tidy_step },
    Step { name: "readme", run: readme_step },
    Step { name: "lib-example", run: lib_example },
];

fn fmt() -> StepResult {
    Cmd::cargo(&["fmt", "--all", "--", "--check"]).run().map_err(fails_with("run `cargo fmt --all`"))
}

fn abi_header() -> StepResult {
    abi::check().map_err(fails_with(abi::FIX))
}

fn abi_c() -> StepResult {
    abi::check_c().map_err(fails_with(
        "make pld-runtime-abi/tests/abi_check.c and the generated header agree \
         (`cargo xtask abi-header` regenerates the header; `.ci/run` installs gcc)",
    ))
}

fn clippy() -> StepResult {
    let cmd = Cmd::cargo(&["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]);
    cmd.run().map_err(fails_with(&format!("fix the warnings above; reproduce with `{cmd}`")))
}

fn test() -> StepResult {
    let fix = "fix the failing tests above; if only snapshot expectations changed, \
               run `cargo xtask bless` and review the diff";
    if Cmd::cargo(&["nextest", "--version"]).succeeds_quietly() {
        Cmd::cargo(&["nextest", "run", "--workspace", "--no-fail-fast"]).run().map_err(fails_with(fix))?;
        // nextest does not run doctests.
        Cmd::cargo(&["test", "--workspace", "--doc"]).run().map_err(fails_with(fix))
    } else {
        println!("(cargo-nextest not installed: using cargo test)");
        Cmd::cargo(&["test", "--workspace"]).run().map_err(fails_with(fix))
    }
}

/// The MPI engine (`pld-sim-mpi`, `pld-cli` and `pld-bench` with `--features mpi`) outside the
/// default build: clippy, its tests under `mpirun`, then README's own MPI build (its own target
/// directory) and `mpirun` line. Without OpenMPI it is skipped locally
/// and fails under `CI=true` (`.ci/run` installs it; docs/DECISIONS.md D-mpi-1).
fn mpi() -> StepResult {
    let fix = "install OpenMPI and libclang (`apt-get install openmpi-bin libopenmpi-dev libclang-dev`; .ci/run does)";
    let have = ["mpirun", "mpicc"].iter().all(|t| Cmd::new(t, &["--version"]).succeeds_quietly());
    if !have {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            return Err(StepFailure {
                what: "mpirun or mpicc is missing under CI=true".into(),
                fix: fix.into(),
            });
        }
        println!("(mpirun or mpicc not installed: the MPI engine is not built; {fix})");
        return Ok(());
    }
    let features = ["--features", "pld-cli/mpi,pld-sim-mpi/mpi,pld-bench/mpi"];
    let clippy =
        Cmd::cargo(&["clippy", "-p", "pld-sim-mpi", "-p", "pld-cli", "-p", "pld-bench", "--all-targets"])
            .args(&features)
            .args(&["--", "-D", "warnings"]);
    clippy.run().map_err(fails_with(&format!("fix the warnings above; reproduce with `{clippy}`")))?;
    for test in [
        Cmd::cargo(&["test", "-p", "pld-sim-mpi", "--features", "mpi"]),
        Cmd::cargo(&["test", "-p", "pld-cli", "--features", "mpi", "--test", "mpi_engine"]),
    ] {
        test.run()
            .map_err(fails_with(&format!("fix the failing MPI tests above; reproduce with `{test}`")))?;
    }
    readme_mpi()
}

/// README's MPI build and `mpirun` line, as written there (plus the flags a CI container needs
/// to run 4 processes as root on few cores, and an output folder under the MPI target).
fn readme_mpi() -> StepResult {
    readme::check_mpi().map_err(fails_with("document the MPI build as xtask/src/readme.rs says"))?;
    let build: Vec<&str> = readme::MPI_BUILD.split_whitespace().collect();
    let cmd = Cmd::cargo(&build[1..]);
    cmd.run().map_err(fails_with(&format!("README's MPI build fails; reproduce with `{cmd}`")))?;
    let run: Vec<&str> = readme::MPI_RUN.split_whitespace().collect();
    let cmd = Cmd::new(run[0], &["--allow-run-as-root", "--oversubscribe"])
        .args(&run[1..])
        .args(&["--out", "target/mpi/out"]);
    cmd.run().map_err(fails_with(&format!("README's mpirun line fails; reproduce with `{cmd}`")))
}

fn doc() -> StepResult {
    let cmd = Cmd::cargo(&["doc", "--workspace", "--no-deps"]).env("RUSTDOCFLAGS", "-D warnings");
    cmd.run().map_err(fails_with(&format!("fix the rustdoc warnings above; reproduce with `{cmd}`")))
}

fn tidy_step() -> StepResult {
    tidy::check().map_err(fails_with(
        "start each listed file with a `//!` comment and remove the listed attributes; \
         recheck with `cargo xtask tidy`",
    ))
}

fn readme_step() -> StepResult {
    readme::check().map_err(fails_with("make README.md's main-job command work (or fix the README)"))
}

fn lib_example() -> StepResult {
    let cmd = Cmd::cargo(&["run", "--quiet", "-p", "pld-testkit", "--example", "downstream"]);
    cmd.run().map_err(fails_with(&format!("the library example broke; reproduce with `{cmd}`")))
}

/// How a step ended, for the summary.
enum Outcome {
    Passed(Duration),
    Failed(Duration),
    NotRun,
}

fn secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

/// The summary table: one row per step, then the total.
fn summary(outcomes: &[(&str, Outcome)]) -> String {
    let width = outcomes.iter().map(|(n, _)| n.len()).max().unwrap_or(0).max(5);
    let mut out = format!("{:<width$}  {:<7}  {:>8}\n", "step", "result", "time");
    let mut total = Duration::ZERO;
    for (name, outcome) in outcomes {
        let (result, time) = match outcome {
            Outcome::Passed(d) => ("ok", Some(*d)),
            Outcome::Failed(d) => ("FAILED", Some(*d)),
            Outcome::NotRun => ("not run", None),
        };
        total += time.unwrap_or_default();
        let time = time.map(secs).unwrap_or_else(|| "-".to_owned());
        out.push_str(&format!("{name:<width$}  {result:<7}  {time:>8}\n"));
    }
    out.push_str(&format!("{:<width$}  {:<7}  {:>8}\n", "total", "", secs(total)));
    out
}

/// The `ci` subcommand.
pub fn run(args: &[String]) -> Result {
    no_args("ci", args)?;
    let mut outcomes: Vec<(&str, Outcome)> = STEPS.iter().map(|s| (s.name, Outcome::NotRun)).collect();
    let mut failure = None;
    for (i, step) in STEPS.iter().enumerate() {
        println!("\n==> [{}/{}] {}", i + 1, STEPS.len(), step.name);
        let start = Instant::now();
        let result = (step.run)();
        let elapsed = start.elapsed();
        match result {
            Ok(()) => {
                println!("==> {} ok ({})", step.name, secs(elapsed));
                outcomes[i].1 = Outcome::Passed(elapsed);
            }
            Err(e) => {
                println!("==> {} FAILED ({})", step.name, secs(elapsed));
                outcomes[i].1 = Outcome::Failed(elapsed);
                failure = Some((step.name, e));
                break;
            }
        }
    }
    println!("\n{}", summary(&outcomes));
    match failure {
        None => {
            println!("ci: all {} steps passed", STEPS.len());
            Ok(())
        }
        Some((name, e)) => {
            Err(Failure::Failed(format!("ci step `{name}` failed: {}\n  fix: {}", e.what, e.fix)))
        }
    }
}

#[cfg(test)]
mod tests {
    //! Step order and the summary table.
    use super::*;

    #[test]
    fn steps_run_in_the_documented_order() {
        let names: Vec<&str> = STEPS.iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            ["fmt", "abi-header", "abi-c", "clippy", "test", "mpi", "doc", "tidy", "readme", "lib-example"]
        );
    }

    #[test]
    fn summary_lists_every_step_and_the_total() {
        let table = summary(&[
            ("fmt", Outcome::Passed(Duration::from_millis(400))),
            ("clippy", Outcome::Failed(Duration::from_millis(12_300))),
            ("test", Outcome::NotRun),
        ]);
        assert_eq!(
            table,
            "\
step    result       time
fmt     ok           0.4s
clippy  FAILED      12.3s
test    not run         -
total               12.7s
"
        );
    }
}
