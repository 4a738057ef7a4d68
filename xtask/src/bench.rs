//! `cargo xtask bench`: runs the benchmarks.
//!
//! There are none yet; when the pipeline and simulator benchmarks land, this is
//! where `cargo bench` (criterion) gets invoked and its results summarised.

use crate::{no_args, Result};

/// The `bench` subcommand.
pub fn run(args: &[String]) -> Result {
    no_args("bench", args)?;
    println!("no benchmarks yet");
    Ok(())
}
