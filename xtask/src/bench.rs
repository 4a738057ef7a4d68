//! `cargo xtask bench`: the short benchmark run. Builds and runs `pld-bench`'s `bench_table`
//! binary in release (`cargo run --release -p pld-bench --bin bench_table`), which prints one
//! table: compile time per statement at 1×/10×/100× program sizes, and per simulated collective
//! (on real data) the whole run's time, the collective's own time and its data rate against this
//! machine's memcpy rate, bytes moved over the lower bound, peak memory, plus the deterministic vs
//! parallel scheduler comparison. Arguments after `bench` go to the binary
//! (`--sim COLL P BYTES [SCHED] [ITERS] [norace|race [RUNS]]`, `--compile SCALE [REPS]`, `--passes`,
//! `--kernel`). `cargo xtask bench --mpi` prints the in-process vs MPI engine rows instead
//! (`pld-bench/src/bin/bench_mpi.rs`; needs OpenMPI). `cargo xtask bench --against REV` compares
//! every simulator row side by side with REV's build (`against`), timed or, with
//! `--instructions`, counted under callgrind (`counted`).
//!
//! The full criterion benches (`cargo bench -p pld-bench`) are separate and much longer.

use crate::shell::Cmd;
use crate::{Failure, Result};

/// The in-process vs MPI rows of `cargo xtask bench --mpi`: (workload, payload bytes); the
/// last two are a user-style program whose `[NR, 1, SIZE]` host tensors are indexed by rank
/// (`pld_bench::hostrows`), its input given as a source (each process fills the rows its rank
/// touches) and as bytes (every process holds it whole, as before D-mpi-7).
const MPI_ROWS: [(&str, u64); 5] = [
    ("allreduce_mesh", 16 << 20),
    ("allreduce_ring", 16 << 20),
    ("all_to_all_v", 16 << 20),
    ("host_rows", 16 << 20),
    ("host_rows_eager", 16 << 20),
];

/// `cargo xtask bench --mpi`: builds `bench_mpi` (release, feature `mpi`) and prints, per
/// workload and P = 4, 8, the in-process row and two `mpirun -n P` rows (whole-run time, what
/// the run must hold, peak resident memory per process — the largest, rank 0's and the
/// others'): OpenMPI's default one-sided component (`sm` on one host:
/// every window in shared memory, so a process's resident set also counts the peers' windows it
/// reads) and `pt2pt` (each window in its process's private memory, as across hosts).
fn mpi_rows() -> Result {
    Cmd::cargo(&["build", "--release", "-p", "pld-bench", "--features", "mpi", "--bin", "bench_mpi"])
        .run()
        .map_err(Failure::Failed)?;
    let bin = crate::shell::workspace_root().join("target/release/bench_mpi");
    let bin = bin.to_string_lossy();
    for (coll, bytes) in MPI_ROWS {
        for p in [4usize, 8] {
            let (p, bytes) = (p.to_string(), bytes.to_string());
            Cmd::new(&bin, &["inproc", coll, &p, &bytes]).run().map_err(Failure::Failed)?;
            let run = ["--allow-run-as-root", "--oversubscribe", "-n", &p, &bin, "mpi", coll, &p, &bytes];
            Cmd::new("mpirun", &run).args(&["mpi"]).run().map_err(Failure::Failed)?;
            let private = ["--mca", "osc", "pt2pt"];
            Cmd::new("mpirun", &private).args(&run).args(&["mpi/pt2pt"]).run().map_err(Failure::Failed)?;
        }
    }
    Ok(())
}

/// The `bench` subcommand.
pub fn run(args: &[String]) -> Result {
    if args.first().is_some_and(|a| a == "--mpi") {
        return mpi_rows();
    }
    if args.first().is_some_and(|a| a == "--against") {
        return crate::against::run(&args[1..]);
    }
    Cmd::cargo(&["run", "--release", "-p", "pld-bench", "--bin", "bench_table", "--"])
        .args(args)
        .run()
        .map_err(Failure::Failed)
}
