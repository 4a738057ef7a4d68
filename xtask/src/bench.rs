//! `cargo xtask bench`: the short benchmark run. Builds and runs `pld-bench`'s `bench_table`
//! binary in release (`cargo run --release -p pld-bench --bin bench_table`), which prints one
//! table: compile time per statement at 1×/10×/100× program sizes, and per simulated collective
//! (on real data) the whole run's time, the collective's own time and its data rate against this
//! machine's memcpy rate, bytes moved over the lower bound, peak memory, plus the deterministic vs
//! parallel scheduler comparison. Arguments after `bench` go to the binary
//! (`--sim COLL P BYTES [SCHED] [ITERS] [norace|race [RUNS]]`, `--compile SCALE [REPS]`, `--passes`,
//! `--kernel`).
//!
//! The full criterion benches (`cargo bench -p pld-bench`) are separate and much longer.

use crate::shell::Cmd;
use crate::{Failure, Result};

/// The `bench` subcommand.
pub fn run(args: &[String]) -> Result {
    Cmd::cargo(&["run", "--release", "-p", "pld-bench", "--bin", "bench_table", "--"])
        .args(args)
        .run()
        .map_err(Failure::Failed)
}
