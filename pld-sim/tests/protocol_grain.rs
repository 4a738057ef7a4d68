//! The builtin protocols' grain (`SimConfig::protocol_grain`): a protocol step may take several
//! kernel tiles together between one pair of barriers, and nothing a user sees may depend on
//! it. Mesh allreduces (one block and three block-cyclic blocks, FP32 and FP16, a short last
//! tile) and ring allreduces (several sub-chunks per segment) on 2, 3, 4 and 8 ranks, run tile
//! by tile (grain 0) and at coarser grains, give bit-identical outputs equal to the golden,
//! the same traffic, the same notify, wait and barrier-round counts, and the same modeled
//! times; a rank that never joins still deadlocks the others, at every grain.

use pld_sim::{run, HostTensor, Inputs, ReportKind, Schedule, SimConfig, SimError, SimOutcome};

fn parse(text: &str) -> pld_ir::Program {
    let _ = pld_ops::registry();
    pld_frontend::parse_str(text).unwrap_or_else(|d| panic!("parse failed: {d:?}"))
}

/// A mesh allreduce with `cores` blocks on a `[NR, 4]` signal, then (FP32 only) a ring
/// allreduce, of a `[1, size]` row of `dt`; each rank publishes its row first.
fn program(size: usize, dt: &str, cores: usize, ring: bool) -> String {
    let ring_alloc = if ring {
        "        ring_buf = pld.alloc_window_buffer([2 * (pld.world_size() - 1) + 1, pld.world_size()], dtype=pl.INT32)\n\
         \x20       ring = pld.window(ring_buf, [2 * (NR - 1) + 1, NR], dtype=pl.INT32)\n"
    } else {
        ""
    };
    let ring_call = if ring {
        "        data = pld.tensor.allreduce(data, ring, op=pld.ReduceOp.Sum, mode=\"ring\")\n"
    } else {
        ""
    };
    format!(
        r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = {size}
NR = pl.dynamic("NR")


@pl.program
class Grain:
    @pl.function(type=pl.FunctionType.InCore)
    def publish(self, x: pl.Tensor[[1, SIZE], {dt}], data: pl.Out[pld.DistributedTensor[[1, SIZE], {dt}]]):
        data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)

    @pl.function(type=pl.FunctionType.InCore)
    def collect(self, data: pld.DistributedTensor[[1, SIZE], {dt}], out: pl.Out[pl.Tensor[[1, SIZE], {dt}]]):
        out = pl.store(pl.load(data, [0, 0], [1, SIZE]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(self, x: pl.Tensor[[1, SIZE], {dt}], data: pl.Out[pld.DistributedTensor[[1, SIZE], {dt}]]):
        self.publish(x, data)

    @pl.function(type=pl.FunctionType.Orchestration)
    def collect_orch(self, data: pld.DistributedTensor[[1, SIZE], {dt}], out: pl.Out[pl.Tensor[[1, SIZE], {dt}]]):
        self.collect(data, out)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, SIZE], {dt}], out: pl.Out[pl.Tensor[[NR, 1, SIZE], {dt}]]):
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype={dt})
        mesh_buf = pld.alloc_window_buffer([pld.world_size(), 4], dtype=pl.INT32)
        data = pld.window(data_buf, [1, SIZE], dtype={dt})
        mesh = pld.window(mesh_buf, [NR, 4], dtype=pl.INT32)
{ring_alloc}        for r in pl.range(pld.world_size()):
            self.publish_orch(x[r], data, device=r)
        data = pld.tensor.allreduce(data, mesh, op=pld.ReduceOp.Sum, core_num={cores})
{ring_call}        for r in pl.range(pld.world_size()):
            self.collect_orch(data, out[r], device=r)
"#
    )
}

/// Rank r's element i: small integers, so every sum is exact in FP16 and FP32.
fn value(r: usize, i: usize) -> f32 {
    ((r * 3 + i) % 5) as f32
}

fn inputs(p: usize, size: usize, fp16: bool) -> Inputs {
    let x: Vec<f64> = (0..p).flat_map(|r| (0..size).map(move |i| f64::from(value(r, i)))).collect();
    let dt = if fp16 { pld_ir::DataType::FP16 } else { pld_ir::DataType::FP32 };
    let t = HostTensor::from_f64(dt, vec![p, 1, size], &x);
    let mut inp = Inputs::new();
    inp.insert("x".into(), t);
    inp
}

/// Every rank's row: the sum over ranks, times P again after the ring allreduce.
fn golden(p: usize, size: usize, ring: bool) -> Vec<f32> {
    let scale = if ring { p as f32 } else { 1.0 };
    let row: Vec<f32> = (0..size).map(|i| (0..p).map(|r| value(r, i)).sum::<f32>() * scale).collect();
    (0..p).flat_map(|_| row.clone()).collect()
}

fn go(text: &str, p: usize, inp: &Inputs, grain: u64, schedule: Schedule) -> Result<SimOutcome, SimError> {
    let cfg = SimConfig { protocol_grain: grain, schedule, ..SimConfig::ranks(p) };
    run(&parse(text), "host", inp, &cfg)
}

/// What a user sees of a run besides its outputs: traffic, signal counts, modeled times.
fn assert_same_view(a: &SimOutcome, b: &SimOutcome, what: &str) {
    assert_eq!(a.stats.remote_bytes, b.stats.remote_bytes, "{what}: remote bytes");
    assert_eq!(a.stats.local_bytes, b.stats.local_bytes, "{what}: local bytes");
    assert_eq!(a.stats.rw_bytes, b.stats.rw_bytes, "{what}: read+written bytes");
    assert_eq!(a.stats.notifies, b.stats.notifies, "{what}: notifies");
    assert_eq!(a.stats.waits, b.stats.waits, "{what}: waits");
    assert_eq!(a.stats.barrier_rounds, b.stats.barrier_rounds, "{what}: barrier rounds");
    // Modeled times agree up to the rounding of each step's transfer time to a picosecond.
    let close = |x: u64, y: u64| x.abs_diff(y) as f64 <= 1e-6 * x.max(y) as f64 + 100.0;
    for (r, (x, y)) in a.timing.rank_ps.iter().zip(&b.timing.rank_ps).enumerate() {
        assert!(close(*x, *y), "{what}: rank {r} modeled {x} ps vs {y} ps");
    }
    assert_eq!(a.timing.collectives.len(), b.timing.collectives.len(), "{what}");
    for (x, y) in a.timing.collectives.iter().zip(&b.timing.collectives) {
        assert!(
            close(x.time_ps, y.time_ps),
            "{what}: {} modeled {} ps vs {} ps",
            x.name,
            x.time_ps,
            y.time_ps
        );
    }
}

#[test]
fn every_grain_gives_the_tile_by_tile_outputs_traffic_counts_and_modeled_time() {
    // (ranks, elements, dtype, mesh blocks, ring): odd lengths, a short last tile, rings
    // whose segments hold several 4096-element sub-chunks.
    let cases = [
        (2, 9_001, "pl.FP32", 1, true),
        (3, 50_001, "pl.FP32", 1, true),
        (4, 4_999, "pl.FP16", 3, false),
        (4, 70_001, "pl.FP32", 3, true),
        (8, 3_333, "pl.FP32", 2, false),
        (8, 2_001, "pl.FP16", 1, false),
    ];
    for (p, size, dt, cores, ring) in cases {
        let text = program(size, dt, cores, ring);
        let fp16 = dt == "pl.FP16";
        let inp = inputs(p, size, fp16);
        let want = golden(p, size, ring);
        let what = format!("P={p} {size} x {dt}, {cores} block(s), ring {ring}");
        let fine = go(&text, p, &inp, 0, Schedule::Deterministic).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(fine.outputs["out"].to_f32(), want, "{what}: grain 0 against the golden");
        // One tile, a few tiles (ragged batches), the default, more than the whole row.
        for grain in [1024, 3 * 1024, 40 * 1024, pld_sim::DEFAULT_PROTOCOL_GRAIN, 1 << 30] {
            for schedule in [Schedule::Deterministic, Schedule::Random(7)] {
                let what = format!("{what}, grain {grain}, {schedule:?}");
                let out = go(&text, p, &inp, grain, schedule).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(out.outputs["out"], fine.outputs["out"], "{what}: outputs");
                if schedule == Schedule::Deterministic {
                    assert_same_view(&out, &fine, &what);
                }
            }
        }
    }
}

/// Rank 1 never reaches the allreduce (its host loop skips it): the others must wait.
const SKIPPER: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 20000
NR = pl.dynamic("NR")


@pl.program
class Skipper:
    @pl.function(type=pl.FunctionType.InCore)
    def publish(self, x: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)

    @pl.function(type=pl.FunctionType.InCore)
    def reduce(self, data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]], signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def step(self, x: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]], signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        self.publish(x, data)
        if pld.rank(pld.get_comm_ctx(data)) != 1:
            data = self.reduce(data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, SIZE], pl.FP32]):
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        sig_buf = pld.alloc_window_buffer([pld.world_size()], dtype=pl.INT32)
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.step(x[r], data, signal, device=r)
"#;

#[test]
fn a_rank_that_never_joins_deadlocks_the_others_at_every_grain() {
    let inp = inputs(3, 20000, false);
    let mut texts = Vec::new();
    for grain in [0, 1024, pld_sim::DEFAULT_PROTOCOL_GRAIN] {
        match go(SKIPPER, 3, &inp, grain, Schedule::Deterministic) {
            Err(SimError::Fault(r)) => {
                assert!(matches!(r.kind, ReportKind::Deadlock(_)), "grain {grain}: {r:?}");
                texts.push(r.text);
            }
            Ok(_) => panic!("grain {grain}: the run finished without rank 1"),
            Err(e) => panic!("grain {grain}: {e}"),
        }
    }
    assert!(texts.windows(2).all(|w| w[0] == w[1]), "the same report at every grain: {texts:#?}");
}
