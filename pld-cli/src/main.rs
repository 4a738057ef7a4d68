//! The `pld` command.
//!
//! Subcommands follow ARCHITECTURE §8 exactly, since scripts depend on them. Exit codes:
//! 0 success, 1 compile diagnostics, 2 usage errors, 3 a simulator fault.

mod ops;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Exit code for compile diagnostics.
pub const EXIT_DIAGNOSTICS: u8 = 1;
/// Exit code for command-line usage errors.
pub const EXIT_USAGE: u8 = 2;
/// Exit code for a simulator fault (deadlock, race, bounds).
pub const EXIT_FAULT: u8 = 3;

#[derive(Parser)]
#[command(name = "pld", version, about = "Compile and simulate N6 distributed PTO programs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the op registry: every op, its affinity, no_duplicate flag and kwargs.
    Ops(ops::OpsArgs),
}

fn main() -> ExitCode {
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
    match cli.command {
        Command::Ops(args) => ops::run(&args),
    }
}
