//! Criterion benches of the simulator: mesh and ring allreduce, allgather and all_to_all_v at
//! P = 2, 4, 8 with FP32 payloads from 4 KiB to 64 MiB (deterministic scheduler), plus the
//! parallel scheduler on the 16 MiB P=4 allreduces; and a hand-written DSL mesh allreduce the
//! interpreter runs op by op (`interpreted_allreduce`, P=4, 64 KiB to 64 MiB per rank, all its
//! tile operations counted). Throughput is the bytes read and written
//! by the collective's tile operations (from the simulator's Stats of a warm-up run) over a
//! whole run — window set-up, the prepare kernel that fills the source window, the collective;
//! `cargo xtask bench` also reports the collective's own time (D-bench-1).
//!
//! Big payloads take long per iteration (a 64 MiB mesh allreduce at P=8 runs for minutes
//! before the simulator's fixes land): set `PLD_BENCH_MAX_BYTES` (e.g. 1048576) to cap the
//! payloads, or pick benchmarks with criterion's filter argument (matched here as a plain
//! substring before the warm-up run, so filtered-out workloads are never simulated).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use pld_bench::coll::{Coll, Workload};
use pld_bench::{compile, rw_bytes, simulate};
use pld_sim::Schedule;
use std::time::Duration;

const PAYLOADS: [u64; 5] = [4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20];

/// Criterion's positional filter arguments (flags and their values skipped).
fn filters() -> Vec<String> {
    const VALUED: [&str; 14] = [
        "--warm-up-time",
        "--measurement-time",
        "--sample-size",
        "--save-baseline",
        "--baseline",
        "--load-baseline",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--nresamples",
        "--profile-time",
        "--output-format",
        "--color",
        "--plotting-backend",
    ];
    let mut out = Vec::new();
    let mut skip = false;
    for a in std::env::args().skip(1) {
        if skip {
            skip = false;
        } else if a.starts_with('-') {
            skip = VALUED.contains(&a.as_str());
        } else {
            out.push(a);
        }
    }
    out
}

fn bench_one(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    w: &Workload,
    s: Schedule,
) {
    let sched = if s == Schedule::Parallel { "par" } else { "det" };
    let full = format!("{}/P{}_{sched}/{}", w.coll.name(), w.p, w.bytes);
    let f = filters();
    if !f.is_empty() && !f.iter().any(|x| full.contains(x.as_str())) {
        return;
    }
    let prog = match compile(&w.text()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{} P={} {} B: does not compile: {e}", w.coll.name(), w.p, w.bytes);
            return;
        }
    };
    let inputs = w.inputs();
    let cfg = w.config(s);
    let moved = match simulate(&prog, &inputs, &cfg) {
        Ok(o) => rw_bytes(&o.stats, w.coll.stats_kind()),
        Err(e) => {
            eprintln!("{} P={} {} B {s:?}: simulation failed: {e}", w.coll.name(), w.p, w.bytes);
            return;
        }
    };
    g.throughput(Throughput::Bytes(moved));
    let id = BenchmarkId::new(format!("P{}_{sched}", w.p), w.bytes);
    g.bench_with_input(id, &prog, |b, p| b.iter(|| simulate(p, &inputs, &cfg)));
}

fn benches(c: &mut Criterion) {
    if let Err(e) = pld_bench::init() {
        panic!("op registry: {e}");
    }
    let max: u64 = std::env::var("PLD_BENCH_MAX_BYTES").ok().and_then(|s| s.parse().ok()).unwrap_or(u64::MAX);
    for coll in Coll::CORE {
        let mut g = c.benchmark_group(coll.name());
        g.sample_size(10);
        g.warm_up_time(Duration::from_millis(200));
        g.measurement_time(Duration::from_secs(2));
        for p in [2usize, 4, 8] {
            for bytes in PAYLOADS.into_iter().filter(|&b| b <= max) {
                bench_one(&mut g, &Workload::new(coll, p, bytes), Schedule::Deterministic);
            }
        }
        if coll != Coll::Allgather && coll != Coll::AllToAllV && (16 << 20) <= max {
            bench_one(&mut g, &Workload::new(coll, 4, 16 << 20), Schedule::Parallel);
        }
        g.finish();
    }
    interpreted(c, max);
}

/// The hand-written DSL mesh allreduce ([`pld_bench::kernel`]), run op by op by the
/// interpreter, at P = 4 (throughput: every tile operation's read + written bytes).
fn interpreted(c: &mut Criterion, max: u64) {
    let mut g = c.benchmark_group("interpreted_allreduce");
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(200));
    g.measurement_time(Duration::from_secs(2));
    for bytes in PAYLOADS.into_iter().filter(|&b| b <= max && b >= 64 << 10) {
        let k = pld_bench::kernel::HandAllreduce { p: 4, size: (bytes / 4) as usize, tile: 2048 };
        let full = format!("interpreted_allreduce/P4_det/{bytes}");
        let f = filters();
        if !f.is_empty() && !f.iter().any(|x| full.contains(x.as_str())) {
            continue;
        }
        let (prog, inputs, cfg) = match compile(&k.text()) {
            Ok(p) => (p, k.inputs(), pld_sim::SimConfig::ranks(k.p)),
            Err(e) => {
                eprintln!("hand-written allreduce {bytes} B: does not compile: {e}");
                continue;
            }
        };
        match simulate(&prog, &inputs, &cfg) {
            Ok(o) => g.throughput(Throughput::Bytes(rw_bytes(&o.stats, ""))),
            Err(e) => {
                eprintln!("hand-written allreduce {bytes} B: simulation failed: {e}");
                continue;
            }
        };
        let id = BenchmarkId::new("P4_det", bytes);
        g.bench_with_input(id, &prog, |b, p| b.iter(|| simulate(p, &inputs, &cfg)));
    }
    g.finish();
}

criterion_group!(simulate_benches, benches);
criterion_main!(simulate_benches);
