//! `bench_mpi` (feature `mpi`; run by `cargo xtask bench --mpi`): one row of the in-process
//! vs MPI engine comparison. `bench_mpi inproc COLL P BYTES` runs the workload in this
//! process: a collective of [`pld_bench::coll::Workload`], or `host_rows`
//! ([`pld_bench::hostrows::HostRows`], a user-style program whose `[NR, …]` host tensors are
//! indexed by rank; `host_rows_eager` hands its input over as bytes, as every run did before
//! docs/DECISIONS.md D-mpi-7); `mpirun -n P bench_mpi mpi COLL P BYTES [LABEL]` runs it with
//! one process per rank. Each prints one row: the engine (or LABEL), the workload, P, the payload, the
//! whole run's wall time, what the whole run must hold (`need`), and the peak resident memory
//! per process: the largest over the processes, and under MPI rank 0's and the largest of the
//! others (Linux `VmHWM`, read at the end of the run; it also counts the pages of peers'
//! windows a process maps when MPI keeps windows in shared memory).
//!
//! Guarantees: a row is printed only for a run that ended without a fault (else the fault and
//! exit 3); under MPI only rank 0 prints, after every rank's peak has been gathered. The MPI
//! rows do not gather the output bytes to rank 0 (nothing writes or checks them here: `pld
//! run` does, for `--out`).

use pld_bench::coll::{Coll, Workload};
use pld_bench::hostrows::HostRows;
use pld_sim::{Inputs, Schedule, SimConfig};
use std::time::Instant;

/// This process's peak resident set in bytes (`VmHWM` of `/proc/self/status`; 0 elsewhere).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1 << 20) as f64)
}

fn fail(code: i32, msg: &str) -> ! {
    eprintln!("{msg}");
    std::process::exit(code)
}

/// A workload to run: its program text, entry, inputs, configuration, payload and need.
struct Job {
    text: String,
    entry: &'static str,
    inputs: Inputs,
    cfg: SimConfig,
    payload: u64,
    need: u64,
}

fn job(name: &str, p: usize, bytes: u64) -> Option<Job> {
    // `host_rows_eager`: the same run with its input handed over as bytes, which every process
    // then holds whole (how every MPI run held its host tensors before D-mpi-7).
    let eager = name == format!("{}_eager", HostRows::NAME);
    if name == HostRows::NAME || eager {
        let h = HostRows { p, bytes };
        let text = h.text().unwrap_or_else(|e| fail(2, &format!("error: {e}")));
        let mut cfg = h.config(Schedule::Deterministic);
        let mut inputs = Inputs::new();
        if eager {
            inputs.extend(cfg.lazy_inputs.drain().map(|(k, l)| (k, l.materialize())));
        }
        let (payload, need) = (h.payload(), h.must_hold());
        return Some(Job { text, entry: HostRows::ENTRY, inputs, cfg, payload, need });
    }
    let coll = Coll::ALL.into_iter().find(|x| x.name() == name)?;
    let w = Workload::new(coll, p, bytes);
    let cfg = w.config(Schedule::Deterministic);
    Some(Job {
        text: w.text(),
        entry: "host",
        inputs: w.inputs(),
        cfg,
        payload: w.payload(),
        need: w.must_hold(),
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: bench_mpi inproc|mpi COLL|host_rows|host_rows_eager P BYTES [LABEL]";
    let (Some(engine), Some(c), Some(p), Some(b)) = (args.first(), args.get(1), args.get(2), args.get(3))
    else {
        fail(2, usage)
    };
    let (Ok(p), Ok(bytes)) = (p.parse::<usize>(), b.parse::<u64>()) else { fail(2, usage) };
    let Some(job) = job(c, p, bytes) else { fail(2, usage) };
    if let Err(e) = pld_bench::init() {
        fail(2, &format!("error: {e}"));
    }
    let program = pld_bench::compile(&job.text).unwrap_or_else(|e| fail(1, &format!("error: {e}")));
    let start = Instant::now();
    let (ok, peaks) = match engine.as_str() {
        "inproc" => {
            let r = pld_sim::run(&program, job.entry, &job.inputs, &job.cfg).map(|_| ());
            (r, Some(vec![peak_rss()]))
        }
        "mpi" => {
            let Some(m) = pld_sim_mpi::engine::init() else { fail(2, "error: MPI is already initialised") };
            let r = m.run(&program, job.entry, &job.inputs, &job.cfg, false).map(|_| ());
            let peaks = m.gather_u64(peak_rss());
            (r, peaks)
        }
        _ => fail(2, usage),
    };
    let time = start.elapsed();
    if let Err(e) = ok {
        fail(3, &e.to_string());
    }
    if let Some(peaks) = peaks {
        let peak = peaks.iter().copied().max().unwrap_or(0);
        let split = match peaks.split_first() {
            Some((zero, rest)) if !rest.is_empty() => format!(
                "  (rank 0 {}, others ≤ {})",
                mib(*zero),
                mib(rest.iter().copied().max().unwrap_or(0))
            ),
            _ => String::new(),
        };
        println!(
            "{:<11} {:<15} P={p:<3} {:>10}  {:>8.3} s  need {:>10}  peak/process {:>10}{split}",
            args.get(4).unwrap_or(engine),
            c,
            mib(job.payload),
            time.as_secs_f64(),
            mib(job.need),
            mib(peak),
        );
    }
}
