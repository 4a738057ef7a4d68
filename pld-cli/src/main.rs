//! The `pld` command.
//!
//! Subcommands follow ARCHITECTURE §8 exactly, since scripts depend on them. Exit codes:
//! 0 success, 1 compile diagnostics, 2 usage errors, 3 a simulator fault, 4 a checked output
//! (`pld run --expect` / `--check-golden`) differs, 130 a run stopped by Ctrl-C.

#[macro_use]
mod out;

mod assemble;
mod check;
mod compile;
mod driver;
mod engine;
mod exhaustive;
mod expect;
mod explain;
mod limits;
mod npy;
mod ops;
mod ops_name;
mod paths;
mod progress;
mod ptoas;
mod replay;
mod run;
mod run_json;
mod select;
mod sweep;
mod table;
mod verify;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Exit code for compile diagnostics.
pub const EXIT_DIAGNOSTICS: u8 = 1;
/// Exit code for command-line usage errors.
pub const EXIT_USAGE: u8 = 2;
/// Exit code for a simulator fault (deadlock, race, bounds, step budget, memory limit).
pub const EXIT_FAULT: u8 = 3;
/// Exit code for a checked output that differs (`pld run --expect`, `--check-golden`).
pub const EXIT_MISMATCH: u8 = 4;
/// `pld verify --exhaustive` hit a limit before it proved or refuted the program.
pub const EXIT_INCOMPLETE: u8 = 5;

/// Exit code of a run stopped by Ctrl-C (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

#[derive(Parser)]
#[command(name = "pld", version, about = "Compile and simulate N6 distributed PTO programs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse, verify and run the pipeline, then the PTO verifier; print diagnostics only.
    Check(check::CheckArgs),
    /// Compile to IR and/or PTO modules.
    Compile(compile::CompileArgs),
    /// Run ptoas on a runtime directory written without it (`pld compile --emit runtime`).
    Assemble(assemble::AssembleArgs),
    /// Compile and run a program on the simulator.
    Run(run::RunArgs),
    /// Run a program under the deterministic and N PCT schedules; fail when any faults or
    /// when outputs or traffic differ between schedules.
    #[command(
        mut_arg("schedule", |a| a.hide(true)),
        mut_arg("trace", |a| a.hide(true)),
        mut_arg("trace_all", |a| a.hide(true)),
        mut_arg("sweep", |a| a.hide(true))
    )]
    Verify(verify::VerifyArgs),
    /// List the op registry: every op, its affinity, no_duplicate flag and kwargs; with NAME,
    /// one op's full record.
    Ops(ops::OpsArgs),
    /// Explain an error code (`pld explain E0301`) with a wrong and a fixed example; without a
    /// code, list every code.
    Explain(explain::ExplainArgs),
}

fn main() -> ExitCode {
    // Runs of one process (`verify`, `explore`) reuse each other's memory (D-sim-11).
    pld_sim::arena::keep_freed_heap();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let () = pld_ops::LINKED;
    if let Err(errs) = pld_ir::registry().check() {
        for e in errs {
            eprintln!("error: {e}");
        }
        return ExitCode::from(EXIT_USAGE);
    }
    let result = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Compile(args) => compile::run(&args),
        Command::Assemble(args) => assemble::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Verify(args) => verify::run(args),
        Command::Ops(args) => ops::run(&args),
        Command::Explain(args) => explain::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            let (text, code) = report(failure);
            eprint!("{text}");
            ExitCode::from(code)
        }
    }
}

/// What a failed command prints on stderr, and its exit code.
fn report(failure: driver::Failure) -> (String, u8) {
    use driver::Failure;
    match failure {
        Failure::Diagnostics(d, sources) => {
            let n = d.iter().filter(|d| d.severity == pld_ir::Severity::Error).count();
            let plural = if n == 1 { "" } else { "s" };
            let text = format!("{}error: aborting due to {n} error{plural}\n", driver::render(&d, &sources));
            (text, EXIT_DIAGNOSTICS)
        }
        Failure::Fault(report) => (report, EXIT_FAULT),
        Failure::Interrupted(report) => (report, EXIT_INTERRUPTED),
        Failure::Mismatch(msg) => (format!("error: {msg}\n"), EXIT_MISMATCH),
        Failure::Incomplete(msg) => (msg, EXIT_INCOMPLETE),
        Failure::Usage(msg) => (format!("error: {msg}\n"), EXIT_USAGE),
    }
}
