//! `bench_mpi` (feature `mpi`; run by `cargo xtask bench --mpi`): one row of the in-process
//! vs MPI engine comparison. `bench_mpi inproc COLL P BYTES` runs the collective workload
//! ([`pld_bench::coll::Workload`]) on every rank in this process; `mpirun -n P bench_mpi mpi
//! COLL P BYTES [LABEL]` runs it with one process per rank. Each prints one row: the engine
//! (or LABEL), the collective, P, the payload, the whole run's wall time and the peak resident
//! memory per process (the largest over the processes: Linux `VmHWM`, which also counts the
//! pages of peers' windows a process maps when MPI keeps windows in shared memory).
//!
//! Guarantees: a row is printed only for a run that ended without a fault (else the fault and
//! exit 3); under MPI only rank 0 prints, after every rank's peak has been gathered.

use pld_bench::coll::{Coll, Workload};
use pld_sim::Schedule;
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

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: bench_mpi inproc|mpi COLL P BYTES [LABEL]";
    let (Some(engine), Some(c), Some(p), Some(b)) = (args.first(), args.get(1), args.get(2), args.get(3))
    else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let coll = Coll::ALL.into_iter().find(|x| x.name() == c);
    let (Some(coll), Ok(p), Ok(bytes)) = (coll, p.parse::<usize>(), b.parse::<u64>()) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    if let Err(e) = pld_bench::init() {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
    let w = Workload::new(coll, p, bytes);
    let program = match pld_bench::compile(&w.text()) {
        Ok(prog) => prog,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let cfg = w.config(Schedule::Deterministic);
    let start = Instant::now();
    let (ok, peaks) = match engine.as_str() {
        "inproc" => (pld_sim::run(&program, "host", &w.inputs(), &cfg).map(|_| ()), Some(vec![peak_rss()])),
        "mpi" => {
            let Some(m) = pld_sim_mpi::engine::init() else {
                eprintln!("error: MPI is already initialised");
                std::process::exit(2);
            };
            let r = m.run(&program, "host", &w.inputs(), &cfg).map(|_| ());
            let peaks = m.gather_u64(peak_rss());
            (r, peaks)
        }
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let time = start.elapsed();
    if let Err(e) = ok {
        eprintln!("{e}");
        std::process::exit(3);
    }
    if let Some(peaks) = peaks {
        let peak = peaks.iter().copied().max().unwrap_or(0);
        println!(
            "{:<11} {:<15} P={p:<3} {:>10}  {:>8.3} s  peak/process {:>10}  (of {} processes)",
            args.get(4).unwrap_or(engine),
            coll.name(),
            mib(w.payload()),
            time.as_secs_f64(),
            mib(peak),
            peaks.len()
        );
    }
}
