//! `cargo xtask`: project automation for the `pld` workspace, in plain Rust so it
//! runs wherever cargo does.
//!
//! One module per subcommand (`ci`, `abi`, `bless`, `bench`, `tidy`); `shell` holds
//! the command runner they share. Every command runs from the workspace root, so
//! `cargo xtask ...` behaves the same from any directory. Exit codes: 0 success,
//! 1 a failed step or command, 2 usage.

mod abi;
mod against;
mod bench;
mod bless;
mod ci;
mod counted;
mod readme;
mod shell;
mod sizes;
mod tidy;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command> [args]

commands:
  ci                 run every CI step in order (fmt, ABI header, C ABI check, clippy,
                     tests, the MPI engine, docs, tidy, the README's main-job command, the library
                     example); stops at the
                     first failure
  abi-header         regenerate pld-runtime-abi/include/pld_runtime_abi.h
  abi-header --check fail if the checked-in header is stale
  bless [ARGS...]    rerun the tests with PLD_BLESS=1 UPDATE_EXPECT=1 so snapshot tests
                     rewrite their expectations (ARGS go to `cargo test`, default --workspace)
  bench              run the benchmarks (`bench --against REV`: every simulator row side by
                     side with REV's build, alternating; flags rows >= 1.15x slower)
  tidy               check source hygiene (`//!` file docs, no #[ignore] / #[should_panic])
  help               print this message";

/// Why a subcommand did not succeed.
#[derive(Debug)]
pub enum Failure {
    /// Bad command line: print the message and the usage, exit 2.
    Usage(String),
    /// The work itself failed: print the message, exit 1.
    Failed(String),
}

/// What every subcommand returns.
pub type Result<T = ()> = std::result::Result<T, Failure>;

/// Rejects arguments for subcommands that take none.
pub fn no_args(command: &str, args: &[String]) -> Result {
    match args.first() {
        None => Ok(()),
        Some(arg) => Err(Failure::Usage(format!("`{command}` takes no arguments, got `{arg}`"))),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let result = match command.as_str() {
        "ci" => ci::run(rest),
        "abi-header" => abi::run(rest),
        "bless" => bless::run(rest),
        "bench" => bench::run(rest),
        "tidy" => tidy::run(rest),
        "help" | "-h" | "--help" => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        other => Err(Failure::Usage(format!("unknown command `{other}`"))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(msg)) => {
            eprintln!("error: {msg}\n\n{USAGE}");
            ExitCode::from(2)
        }
        Err(Failure::Failed(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::FAILURE
        }
    }
}
