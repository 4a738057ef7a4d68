//! Load test of the trace's size: a 16 MiB allreduce on 8 ranks, its protocol run tile by tile
//! (`protocol_grain: 0`, about a million protocol steps), must give a trace small enough to open in Perfetto or chrome://tracing — merged
//! into windows of modeled time, with a bounded number of flows.

use pld_sim::{run, HostTensor, Inputs, SimConfig};
use serde_json::Value;

const BIG: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 4194304
STAGE = 16384
NR = pl.dynamic("NR")

@pl.program
class Big:
    @pl.function(type=pl.FunctionType.InCore)
    def publish_step(self, inp: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        for col in pl.range(0, SIZE, STAGE):
            t = pl.load(inp, [0, col], [1, STAGE])
            pl.store(t, [0, col], data)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(self, inp: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        data = self.publish_step(inp, data)
        return data

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32]):
        data_buf = pld.alloc_window_buffer(SIZE * 4, name="data")
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="signal")
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(sig_buf, [NR], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.publish_orch(inputs[r], data, device=r)
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)
"#;

#[test]
fn a_16_mib_allreduce_on_8_ranks_gives_a_trace_that_opens() {
    let _ = pld_ops::registry();
    let prog = pld_frontend::parse_str(BIG).unwrap_or_else(|d| panic!("{d:?}"));
    let n = 4 * 1024 * 1024;
    let mut inputs = Inputs::new();
    inputs.insert("inputs".into(), HostTensor::zeros(pld_ir::DataType::FP32, vec![8, 1, n]));
    // Races are checked elsewhere; this test is about the trace's size. The protocol runs tile
    // by tile (grain 0), as the rendered kernel does: a step per tile is the load.
    let cfg = SimConfig { trace: true, check_races: false, protocol_grain: 0, ..SimConfig::ranks(8) };
    let out = run(&prog, "host", &inputs, &cfg).unwrap_or_else(|e| panic!("{e}"));
    let trace = out.trace.expect("trace");
    // About 1.5 million protocol steps, merged: tens of MB, not a gigabyte.
    assert!(trace.len() < 64 << 20, "trace is {} bytes", trace.len());
    let v: Value = serde_json::from_str(&trace).expect("trace JSON");
    let ev = v["traceEvents"].as_array().expect("events");
    assert!(ev.len() < 500_000, "{} events", ev.len());
    let flows = ev.iter().filter(|e| e["ph"] == "s").count();
    assert!(flows > 0 && flows <= pld_sim::trace::FLOW_LIMIT, "{flows} flows");
    let merged =
        ev.iter().filter(|e| e["ph"] == "X" && e["args"]["ops"].as_u64().is_some_and(|k| k > 1)).count();
    assert!(merged > 1000, "{merged} merged slices");
    // Every rank has a lane and the collective's bytes are the 16 MiB buffer.
    for r in 0..8 {
        assert!(ev.iter().any(|e| e["ph"] == "X" && e["pid"] == r), "rank {r}");
    }
    let [call] = out.timing.collectives.as_slice() else { panic!("{:?}", out.timing.collectives) };
    assert_eq!(call.bytes, 16 << 20);
    assert_eq!(call.ranks, 8);
    assert!(call.busbw_gbps.is_some_and(|b| b > 0.0));
}
