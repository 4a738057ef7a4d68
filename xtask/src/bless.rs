//! `cargo xtask bless [ARGS...]`: reruns the tests with `PLD_BLESS=1` and
//! `UPDATE_EXPECT=1`, the switches that make snapshot-style tests (the `pld`
//! file tests, `expect-test` expectations, the checked-in ABI header) rewrite
//! their expected files instead of failing. Review the diff afterwards.

use crate::shell::Cmd;
use crate::{Failure, Result};

/// The command `bless` runs; `args` replace the default `--workspace`.
pub fn command(args: &[String]) -> Cmd {
    let cmd = Cmd::cargo(&["test"]).env("PLD_BLESS", "1").env("UPDATE_EXPECT", "1");
    if args.is_empty() {
        cmd.args(&["--workspace"])
    } else {
        cmd.args(args)
    }
}

/// The `bless` subcommand.
pub fn run(args: &[String]) -> Result {
    command(args).run().map_err(Failure::Failed)?;
    println!("blessed: review the changed expectation files with `git diff`");
    Ok(())
}

#[cfg(test)]
mod tests {
    //! What `bless` runs.
    use super::*;

    #[test]
    fn blesses_the_workspace_by_default() {
        assert_eq!(command(&[]).to_string(), "PLD_BLESS=1 UPDATE_EXPECT=1 cargo test --workspace");
        assert_eq!(
            command(&["-p".to_owned(), "pld-ir".to_owned()]).to_string(),
            "PLD_BLESS=1 UPDATE_EXPECT=1 cargo test -p pld-ir"
        );
    }
}
