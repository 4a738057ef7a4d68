//! §3 of tests_e2e.md: host-orchestrator collectives (`pld.tensor.<collective>` in host_orch),
//! run on the simulator unlowered (the simulator dispatches the builtin protocol to every rank)
//! and compared with the golden references.

use pld_ir::DataType;
use pld_runtime_abi::ReduceOp;
use pld_sim::Schedule;
use pld_testkit::e2e::{assert_ranks, inputs, parse, run_ok, stack, tol, unstack};
use pld_testkit::reference as gold;

const ALLREDUCE: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = __SIZE__
STAGE = __STAGE__
NR = pl.dynamic("NR")

@pl.program
class HostAllReduce:
    @pl.function(type=pl.FunctionType.InCore)
    def publish_step(self, inp: pl.Tensor[[1, SIZE], pl.__DT__], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.__DT__]]):
        for col in pl.range(0, SIZE, STAGE):
            valid = min(STAGE, SIZE - col)
            t = pl.load(inp, [0, col], [1, STAGE], [1, valid])
            pl.store(t, [0, col], data)
        return data

    @pl.function(type=pl.FunctionType.InCore)
    def consume_step(self, data: pld.DistributedTensor[[1, SIZE], pl.__DT__], out: pl.Out[pl.Tensor[[1, SIZE], pl.__DT__]]):
        for col in pl.range(0, SIZE, STAGE):
            valid = min(STAGE, SIZE - col)
            t = pl.load(data, [0, col], [1, STAGE], [1, valid])
            pl.store(t, [0, col], out)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, 1, SIZE], pl.__DT__], outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.__DT__]]):
        data_buf = pld.alloc_window_buffer(SIZE * __BYTES__, name="data")
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="signal")
        data = pld.window(data_buf, [1, SIZE], dtype=pl.__DT__)
        signal = pld.window(sig_buf, [NR], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.publish_step(inputs[r], data, device=r)
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.__OP__)
        for r in pl.range(pld.world_size()):
            self.consume_step(data, outputs[r], device=r)
"#;

fn allreduce_text(size: usize, dt: DataType, op: ReduceOp) -> String {
    let stage = size.min(4096);
    ALLREDUCE
        .replace("__SIZE__", &size.to_string())
        .replace("__STAGE__", &stage.to_string())
        .replace("__DT__", dt.dsl_name())
        .replace("__BYTES__", &dt.bytes().to_string())
        .replace("__OP__", op.dsl_name())
}

fn check_allreduce(
    p: usize,
    size: usize,
    dt: DataType,
    op: ReduceOp,
    schedule: Schedule,
) -> pld_sim::SimOutcome {
    let prog = parse(&allreduce_text(size, dt, op));
    let per: Vec<Vec<f64>> = (0..p)
        .map(|r| {
            if dt == DataType::FP16 || op == ReduceOp::Prod {
                gold::fp16ramp(r, size)
            } else {
                gold::ramp(r, size)
            }
        })
        .collect();
    let inp = inputs(vec![("inputs", stack(dt, &per, &[1, size]))]);
    let what = format!("host allreduce P={p} size={size} {dt} {op:?} {schedule:?}");
    let out = run_ok(&prog, "host", p, &inp, schedule, &what);
    let got = unstack(&out.outputs["outputs"]);
    let want = gold::allreduce(
        &gold::round(dt, &per.concat()).chunks(size).map(<[f64]>::to_vec).collect::<Vec<_>>(),
        op,
        dt,
    );
    let (rtol, atol) = tol(dt);
    assert_ranks(&got, &want, rtol, atol, &what);
    out
}

#[test]
fn host_allreduce_sum_fp32_ranks_and_odd_lengths() {
    for p in [2, 3, 4, 8] {
        for size in [1, 17, 256, 4097] {
            let out = check_allreduce(p, size, DataType::FP32, ReduceOp::Sum, Schedule::Deterministic);
            // Mesh: every rank reads (P-1)·S from its peers.
            for r in 0..p {
                assert_eq!(
                    out.stats.remote_total(r),
                    ((p - 1) * size * 4) as u64,
                    "P={p} size={size} rank {r}"
                );
            }
        }
    }
}

#[test]
fn host_allreduce_fp16_and_reduce_ops() {
    for size in [1, 17, 257, 8193] {
        check_allreduce(2, size, DataType::FP16, ReduceOp::Sum, Schedule::Deterministic);
    }
    for op in [ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod] {
        for dt in [DataType::FP32, DataType::FP16] {
            check_allreduce(2, 17, dt, op, Schedule::Deterministic);
            check_allreduce(4, 17, dt, op, Schedule::Deterministic);
        }
    }
}

#[test]
fn host_allreduce_random_schedules() {
    for seed in 0..100 {
        check_allreduce(4, 300, DataType::FP32, ReduceOp::Sum, Schedule::Random(seed));
    }
}
