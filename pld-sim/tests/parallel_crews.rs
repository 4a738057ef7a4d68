//! The parallel schedule with every crew: governed (one worker or all, window by window),
//! and fixed at one, two and four worker threads. A host loop of mesh and ring allreduces long
//! enough to span several governor windows gives the deterministic schedule's outputs, traffic
//! and signal counts under each; a skipped notify and a missing barrier give the same deadlock
//! and race reports with four threads from the first slice as under `det`.

use pld_sim::{run, HostTensor, Inputs, ReportKind, Schedule, SimConfig, SimError, SimOutcome};

fn parse(text: &str) -> pld_ir::Program {
    let _ = pld_ops::registry();
    match pld_frontend::parse_str(text) {
        Ok(p) => p,
        Err(d) => panic!("parse failed: {d:?}"),
    }
}

/// `ITERS` rounds of "scale my row, mesh-allreduce it, ring-allreduce it" on one window.
const ROUNDS: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 4096
ITERS = 10
NR = pl.dynamic("NR")


@pl.program
class Rounds:
    @pl.function(type=pl.FunctionType.InCore)
    def publish(self, x: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)

    @pl.function(type=pl.FunctionType.InCore)
    def halve(self, data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        y = pl.load(data, [0, 0], [1, SIZE])
        data = pl.store(pl.muls(y, 0.5), [0, 0], data)

    @pl.function(type=pl.FunctionType.InCore)
    def collect(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        out = pl.store(pl.load(data, [0, 0], [1, SIZE]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(self, x: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        self.publish(x, data)

    @pl.function(type=pl.FunctionType.Orchestration)
    def halve_orch(self, data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        self.halve(data)

    @pl.function(type=pl.FunctionType.Orchestration)
    def collect_orch(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        self.collect(data, out)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        mesh_buf = pld.alloc_window_buffer([pld.world_size()], dtype=pl.INT32)
        ring_buf = pld.alloc_window_buffer([2 * (pld.world_size() - 1) + 1, pld.world_size()], dtype=pl.INT32)
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        mesh = pld.window(mesh_buf, [NR], dtype=pl.INT32)
        ring = pld.window(ring_buf, [2 * (NR - 1) + 1, NR], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.publish_orch(x[r], data, device=r)
        for i in pl.range(ITERS):
            for r in pl.range(pld.world_size()):
                self.halve_orch(data, device=r)
            data = pld.tensor.allreduce(data, mesh, op=pld.ReduceOp.Sum)
            data = pld.tensor.allreduce(data, ring, op=pld.ReduceOp.Sum, mode="ring")
        for r in pl.range(pld.world_size()):
            self.collect_orch(data, out[r], device=r)
"#;

const SIZE: usize = 4096;
const ITERS: i32 = 10;

/// Rank r's row: small dyadic values, so every sum and halving is exact in FP32.
fn inputs(p: usize) -> Inputs {
    let x: Vec<f32> = (0..p).flat_map(|r| (0..SIZE).map(move |i| (r + 1 + i % 7) as f32)).collect();
    let mut inp = Inputs::new();
    inp.insert("x".into(), HostTensor::from_f32(vec![p, 1, SIZE], &x));
    inp
}

/// The golden: each round halves every row, then two allreduces multiply the sum by P.
fn golden(p: usize) -> Vec<f32> {
    let row: Vec<f32> = (0..SIZE)
        .map(|i| {
            let mut y: Vec<f64> = (0..p).map(|r| (r + 1 + i % 7) as f64).collect();
            for _ in 0..ITERS {
                let s: f64 = y.iter().map(|v| v * 0.5).sum::<f64>() * p as f64;
                y = vec![s; p];
            }
            y[0] as f32
        })
        .collect();
    (0..p).flat_map(|_| row.clone()).collect()
}

fn go(p: usize, schedule: Schedule, workers: Option<usize>) -> SimOutcome {
    let cfg = SimConfig { schedule, parallel_workers: workers, ..SimConfig::ranks(p) };
    run(&parse(ROUNDS), "host", &inputs(p), &cfg)
        .unwrap_or_else(|e| panic!("P={p} {schedule:?} workers {workers:?}: {e}"))
}

#[test]
fn every_crew_gives_the_deterministic_outputs_traffic_and_signal_counts() {
    for p in [2, 4] {
        let det = go(p, Schedule::Deterministic, None);
        assert_eq!(det.outputs["out"].to_f32(), golden(p), "P={p} det");
        for workers in [None, Some(1), Some(2), Some(4)] {
            let par = go(p, Schedule::Parallel, workers);
            let what = format!("P={p} workers {workers:?}");
            assert_eq!(par.outputs["out"].to_f32(), golden(p), "{what}");
            assert_eq!(par.stats.remote_bytes, det.stats.remote_bytes, "{what}");
            assert_eq!(par.stats.local_bytes, det.stats.local_bytes, "{what}");
            assert_eq!(par.stats.notifies, det.stats.notifies, "{what}");
            assert_eq!(par.stats.waits, det.stats.waits, "{what}");
        }
    }
}

/// The hand-written mesh of p2p.rs, one barrier, `SIZE = 256`.
const MESH: &str = include_str!("programs/mesh_reduce.py");

fn mesh_fault(prog: &pld_ir::Program, p: usize, cfg: SimConfig) -> pld_sim::Report {
    let x: Vec<f32> = (0..p * 256).map(|i| i as f32).collect();
    let mut inp = Inputs::new();
    inp.insert("inputs".into(), HostTensor::from_f32(vec![p, 1, 256], &x));
    match run(prog, "host", &inp, &cfg) {
        Err(SimError::Fault(r)) => r,
        Err(SimError::Invalid(d)) => panic!("invalid: {d:?}"),
        Ok(_) => panic!("expected a fault"),
    }
}

#[test]
fn threads_from_the_first_slice_report_the_deterministic_deadlock_and_race() {
    let stuck = parse(&MESH.replace(
        "if peer != me:\n                pld.system.notify",
        "if peer != me and me != 0:\n                pld.system.notify",
    ));
    let racy = parse(&MESH.replace("pld.system.wait(signal, [src, 0], 1, cmp=pld.WaitCmp.Ge)", "w = src"));
    let parked = |rep: &pld_sim::Report| {
        let ReportKind::Deadlock(parked) = &rep.kind else { panic!("not a deadlock: {rep}") };
        let mut who: Vec<(usize, String, String, i32)> =
            parked.iter().map(|p| (p.rank, p.cell.clone(), p.predicate.clone(), p.value)).collect();
        who.sort();
        who
    };
    let det = mesh_fault(&stuck, 3, SimConfig::ranks(3));
    for workers in [2, 3, 4] {
        for _ in 0..4 {
            let cfg = SimConfig {
                schedule: Schedule::Parallel,
                parallel_workers: Some(workers),
                ..SimConfig::ranks(3)
            };
            let rep = mesh_fault(&stuck, 3, cfg.clone());
            assert_eq!(parked(&rep), parked(&det), "{workers} workers: {rep}");
            assert_eq!(rep.text, det.text, "{workers} workers");
            let rep = mesh_fault(&racy, 3, cfg);
            assert_eq!(rep.kind, ReportKind::Race, "{workers} workers: {rep}");
            assert!(rep.text.contains("buffer 'data'"), "{workers} workers: {}", rep.text);
        }
    }
}
