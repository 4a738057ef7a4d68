//! A host loop of identical collective dispatches (the queued work is run-length encoded):
//! every iteration still runs, in order, with its own traffic, under every schedule.

use pld_sim::{run, HostTensor, Inputs, Schedule, SimConfig};

fn parse(text: &str) -> pld_ir::Program {
    let _ = pld_ops::registry();
    match pld_frontend::parse_str(text) {
        Ok(p) => p,
        Err(d) => panic!("parse failed: {d:?}"),
    }
}

const LOOP: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 600
NR = pl.dynamic("NR")

@pl.program
class HostLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def publish_step(self, inp: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        t = pl.load(inp, [0, 0], [1, SIZE])
        pl.store(t, [0, 0], data)
        return data

    @pl.function(type=pl.FunctionType.InCore)
    def consume_step(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        t = pl.load(data, [0, 0], [1, SIZE])
        pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(self, inp: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        data = self.publish_step(inp, data)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume_orch(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        out = self.consume_step(data, out)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
        data_buf = pld.alloc_window_buffer(SIZE * 4, name="data")
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="signal")
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(sig_buf, [NR], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.publish_orch(inputs[r], data, device=r)
        for it in pl.range(__ITERS__):
            data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)
        for r in pl.range(pld.world_size()):
            self.consume_orch(data, outputs[r], device=r)
"#;

const SIZE: usize = 600;

fn go(p: usize, iters: usize, schedule: Schedule) -> pld_sim::SimOutcome {
    let prog = parse(&LOOP.replace("__ITERS__", &iters.to_string()));
    // Rank r holds r + 1 + (i mod 5) / 4: small dyadic values, exact in FP32 through the sums.
    let vals: Vec<f32> =
        (0..p).flat_map(|r| (0..SIZE).map(move |i| (r + 1) as f32 + (i % 5) as f32 / 4.0)).collect();
    let mut inp = Inputs::new();
    inp.insert("inputs".into(), HostTensor::from_f32(vec![p, 1, SIZE], &vals));
    let cfg = SimConfig { schedule, ..SimConfig::ranks(p) };
    run(&prog, "host", &inp, &cfg).unwrap_or_else(|e| panic!("P={p} iters={iters} {schedule:?}: {e}"))
}

#[test]
fn a_loop_of_identical_collectives_runs_every_iteration() {
    for p in [2usize, 3, 4] {
        let one = go(p, 1, Schedule::Deterministic);
        for schedule in [Schedule::Deterministic, Schedule::Random(7), Schedule::Parallel] {
            let iters = 5;
            let out = go(p, iters, schedule);
            // After the first call every rank holds the sum S; each further call multiplies by P.
            let got = out.outputs["outputs"].to_f32();
            let scale = (p as f32).powi(iters as i32 - 1);
            for r in 0..p {
                for i in 0..SIZE {
                    let s: f32 = (0..p).map(|q| (q + 1) as f32 + (i % 5) as f32 / 4.0).sum();
                    assert_eq!(got[r * SIZE + i], s * scale, "P={p} {schedule:?} rank {r} element {i}");
                }
            }
            // Every iteration moved its own bytes: traffic is `iters` times one call's.
            for r in 0..p {
                assert_eq!(
                    out.stats.remote_of(r, "allreduce"),
                    iters as u64 * one.stats.remote_of(r, "allreduce"),
                    "P={p} {schedule:?} rank {r}"
                );
            }
        }
    }
}
