//! §3 of tests_e2e.md: host-orchestrator collectives (`pld.tensor.<collective>` in host_orch),
//! run on the simulator unlowered (the simulator dispatches the builtin protocol to every rank)
//! and compared with the golden references.

mod common;
use common::*;
use pld_ir::DataType;
use pld_runtime_abi::ReduceOp;
use pld_sim::Schedule;
use pld_testkit::e2e::{assert_ranks, inputs, parse, stack, tol, unstack};
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

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(self, inp: pl.Tensor[[1, SIZE], pl.__DT__], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.__DT__]]):
        data = self.publish_step(inp, data)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume_orch(self, data: pld.DistributedTensor[[1, SIZE], pl.__DT__], out: pl.Out[pl.Tensor[[1, SIZE], pl.__DT__]]):
        out = self.consume_step(data, out)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, 1, SIZE], pl.__DT__], outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.__DT__]]):
        data_buf = pld.alloc_window_buffer(SIZE * __BYTES__, name="data")
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="signal")
        data = pld.window(data_buf, [1, SIZE], dtype=pl.__DT__)
        signal = pld.window(sig_buf, [NR], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.publish_orch(inputs[r], data, device=r)
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.__OP__)
        for r in pl.range(pld.world_size()):
            self.consume_orch(data, outputs[r], device=r)
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
    let out = run_both(&prog, p, &inp, schedule, &what);
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
            // Mesh: every rank reads (P-1)·S from its peers, in the seed's 256-element host
            // builtin tiles (as the rendered kernel), with a ready barrier plus one read-done
            // barrier per tile and the credit epilogue.
            let barriers = 1 + size.div_ceil(256) as u64;
            for r in 0..p {
                assert_eq!(
                    out.stats.remote_total(r),
                    ((p - 1) * size * 4) as u64,
                    "P={p} size={size} rank {r}"
                );
                assert_eq!(
                    out.stats.barrier_rounds[r], barriers,
                    "P={p} size={size} rank {r} barrier rounds"
                );
                assert_eq!(out.stats.waits[r], (p as u64 - 1) * barriers, "P={p} size={size} rank {r} waits");
                assert_eq!(
                    out.stats.notifies[r],
                    (p as u64 - 1) * (barriers + 1),
                    "P={p} size={size} rank {r} notifies"
                );
            }
        }
    }
}

/// The builtin mesh allreduce adds a rank's own value first, then its peers' in rank order, as
/// the rendered kernel and the reference template do — so FP32 results can differ between ranks
/// in the last bits, exactly as on hardware (a simulator summing in one global order would show
/// every rank the same bits and hide that). With 1e8, -1e8 and 1: ranks 0 and 1 compute
/// (1e8 - 1e8) + 1 = 1, rank 2 computes (1 + 1e8) - 1e8 = 0 (1e8 + 1 rounds to 1e8 in FP32).
#[test]
fn host_allreduce_adds_own_value_first_like_the_rendered_kernel() {
    let prog = parse(&allreduce_text(1, DataType::FP32, ReduceOp::Sum));
    let per = vec![vec![1e8], vec![-1e8], vec![1.0]];
    let inp = inputs(vec![("inputs", stack(DataType::FP32, &per, &[1, 1]))]);
    for schedule in [Schedule::Deterministic, Schedule::Parallel, Schedule::Random(7)] {
        let what = format!("summation order {schedule:?}");
        let out = run_both(&prog, 3, &inp, schedule, &what);
        assert_eq!(unstack(&out.outputs["outputs"]), vec![vec![1.0], vec![1.0], vec![0.0]], "{what}");
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

#[test]
fn host_ring_allreduce_with_signal_reuse() {
    for p in [2, 3, 4, 8] {
        for size in [1, 17, 256, 4097] {
            let prog = generic(&Generic {
                size,
                in_rows: "1",
                out_rows: "1",
                rounds: 3,
                sig_cells: "(2 * (pld.world_size() - 1) + 1) * pld.world_size()",
                sig_shape: "[2 * (NR - 1) + 1, NR]",
                body: "data = pld.tensor.allreduce(stage, signal, op=pld.ReduceOp.Sum, mode=\"ring\")",
            });
            let per = rounds_of(p, 3, |r| gold::ramp(r, size));
            let (got, out) = run_generic(&prog, p, &per, &[1, size], Schedule::Deterministic);
            for rd in 0..3 {
                let want = gold::allreduce(&per[rd], ReduceOp::Sum, DataType::FP32);
                assert_ranks(&got[rd], &want, 1e-6, 1e-6, &format!("ring P={p} size={size} round {rd}"));
            }
            // Ring traffic: 2(P-1)/P·S per rank and call (balanced segments).
            for r in 0..p {
                let want = 3 * gold::ring_allreduce_bytes(size, p, 4, r);
                assert_eq!(out.stats.remote_total(r), want as u64, "ring P={p} size={size} rank {r}");
            }
        }
    }
}

#[test]
fn host_barrier_broadcast_reduce_scatter_allgather_all_to_all() {
    for p in [2, 3, 4, 8] {
        let size = 64;
        // Broadcast from root 0, two rounds in a host loop on one signal.
        let prog = mesh_program(size, "1", "1", 2, "data = pld.tensor.broadcast(stage, signal, root=0)");
        let per = rounds_of(p, 2, |r| gold::ramp(r, size));
        let (got, _) = run_generic(&prog, p, &per, &[1, size], Schedule::Deterministic);
        for rd in 0..2 {
            assert_ranks(
                &got[rd],
                &gold::broadcast(&per[rd], 0),
                0.0,
                0.0,
                &format!("broadcast P={p} round {rd}"),
            );
        }
        // Reduce-scatter over [NR, SIZE] windows.
        let prog = mesh_program(
            size,
            "NR",
            "NR",
            2,
            "data = pld.tensor.reduce_scatter(stage, signal, op=pld.ReduceOp.Sum)",
        );
        let per = rounds_of(p, 2, |r| (0..p * size).map(|i| (100 * r + i) as f64).collect());
        let (got, _) = run_generic(&prog, p, &per, &[p, size], Schedule::Deterministic);
        for rd in 0..2 {
            let want = gold::reduce_scatter(&per[rd], ReduceOp::Sum, DataType::FP32);
            for r in 0..p {
                assert_eq!(
                    &got[rd][r][r * size..(r + 1) * size],
                    &want[r][..],
                    "reduce_scatter P={p} round {rd} rank {r}"
                );
            }
        }
        // Allgather: [1, SIZE] stage into [NR, SIZE] data.
        let prog = mesh_program(size, "1", "NR", 2, "data = pld.tensor.allgather(stage, data, signal)");
        let per = rounds_of(p, 2, |r| gold::ramp(r, size));
        let (got, _) = run_generic(&prog, p, &per, &[1, size], Schedule::Deterministic);
        for rd in 0..2 {
            assert_ranks(
                &got[rd],
                &gold::allgather(&per[rd]),
                0.0,
                0.0,
                &format!("allgather P={p} round {rd}"),
            );
        }
        // All-to-all: in[r][d][j] = 1000r + 100d + j.
        let prog = mesh_program(size, "NR", "NR", 2, "data = pld.tensor.all_to_all(stage, data, signal)");
        let per = rounds_of(p, 2, |r| {
            (0..p).flat_map(|d| (0..size).map(move |j| (1000 * r + 100 * d + j) as f64)).collect()
        });
        let (got, _) = run_generic(&prog, p, &per, &[p, size], Schedule::Deterministic);
        for rd in 0..2 {
            assert_ranks(
                &got[rd],
                &gold::all_to_all(&per[rd], size),
                0.0,
                0.0,
                &format!("all_to_all P={p} round {rd}"),
            );
        }
    }
}

#[test]
fn host_broadcast_larger_than_one_ub_stage() {
    // The simulator pulls the root's data through the rendered kernel's UB-bounded stage
    // (D-ops-13: whole rows while they fit in 16 KiB, else column pieces): an odd-length row
    // over three pieces, and rows that pack three to a stage, still arrive whole everywhere.
    let chunk = (pld_runtime_abi::UB_CHUNK_BYTES / 4) as usize;
    for (rows, irows, size) in [(1usize, "1", 2 * chunk + 5), (3, "NR", chunk / 4 + 3)] {
        let p = 3;
        let prog = mesh_program(size, irows, irows, 1, "data = pld.tensor.broadcast(stage, signal, root=2)");
        let rows = if rows == 1 { 1 } else { p };
        let per = rounds_of(p, 1, |r| (0..rows * size).map(|i| (r * 1_000_000 + i) as f64).collect());
        let (got, out) = run_generic(&prog, p, &per, &[rows, size], Schedule::Deterministic);
        assert_ranks(&got[0], &gold::broadcast(&per[0], 2), 0.0, 0.0, &format!("broadcast {rows}x{size}"));
        // Every non-root rank read the root's whole payload once, in pieces.
        for r in 0..p {
            let want = if r == 2 { 0 } else { (rows * size * 4) as u64 };
            assert_eq!(out.stats.remote_of(r, "broadcast"), want, "rank {r}");
        }
    }
}

#[test]
fn host_allgather_and_all_to_all_of_rows_longer_than_one_ub_stage() {
    // Rows of two whole UB stages and an odd tail (D-ops-13) arrive whole, each pushed once.
    let (p, size) = (3usize, 2 * (pld_runtime_abi::UB_CHUNK_BYTES / 4) as usize + 3);
    let prog = mesh_program(size, "1", "NR", 1, "data = pld.tensor.allgather(stage, data, signal)");
    let per = rounds_of(p, 1, |r| gold::ramp(r, size));
    let (got, out) = run_generic(&prog, p, &per, &[1, size], Schedule::Deterministic);
    assert_ranks(&got[0], &gold::allgather(&per[0]), 0.0, 0.0, "allgather");
    for r in 0..p {
        assert_eq!(out.stats.remote_of(r, "allgather"), ((p - 1) * size * 4) as u64, "allgather rank {r}");
    }
    let prog = mesh_program(size, "NR", "NR", 1, "data = pld.tensor.all_to_all(stage, data, signal)");
    let per = rounds_of(p, 1, |r| (0..p * size).map(|i| (1000 * r + i % 977) as f64).collect());
    let (got, out) = run_generic(&prog, p, &per, &[p, size], Schedule::Deterministic);
    assert_ranks(&got[0], &gold::all_to_all(&per[0], size), 0.0, 0.0, "all_to_all");
    for r in 0..p {
        assert_eq!(out.stats.remote_of(r, "all_to_all"), ((p - 1) * size * 4) as u64, "all_to_all rank {r}");
    }
}

#[test]
fn host_reduce_scatter_longer_than_one_ub_chunk() {
    // The simulated host reduce_scatter reduces its row in UB chunks, as its rendered kernel
    // does (D-ops-12): a row of two whole chunks and an odd tail is still every rank's sum, and
    // every rank reads each peer's row once.
    let chunk = (pld_runtime_abi::UB_CHUNK_BYTES / 4) as usize;
    let (p, size) = (3usize, 2 * chunk + 5);
    let prog = mesh_program(
        size,
        "NR",
        "NR",
        1,
        "data = pld.tensor.reduce_scatter(stage, signal, op=pld.ReduceOp.Sum)",
    );
    let per = rounds_of(p, 1, |r| (0..p * size).map(|i| (r * 7 + i % 1000) as f64).collect());
    let (got, out) = run_generic(&prog, p, &per, &[p, size], Schedule::Deterministic);
    let want = gold::reduce_scatter(&per[0], ReduceOp::Sum, DataType::FP32);
    for r in 0..p {
        assert_eq!(&got[0][r][r * size..(r + 1) * size], &want[r][..], "rank {r}");
        assert_eq!(out.stats.remote_of(r, "reduce_scatter"), ((p - 1) * size * 4) as u64, "rank {r}");
    }
}

/// Each `(input rows, output rows, collective)` case, twice on one signal at `p` ranks and
/// `size`-element rows, gives the deterministic run's bytes under every seed of `seeds` random
/// schedules (race checker on).
fn same_under_random_schedules(p: usize, size: usize, cases: &[(&str, &str, &str)], seeds: u64) {
    for &(irows, orows, body) in cases {
        let prog = mesh_program(size, irows, orows, 2, body);
        let rows = if irows == "1" { 1 } else { p };
        let per = rounds_of(p, 2, |r| (0..rows * size).map(|i| (1000 * r + i % 997) as f64).collect());
        let (base, _) = run_generic(&prog, p, &per, &[rows, size], Schedule::Deterministic);
        for seed in 0..seeds {
            let (got, _) = run_generic(&prog, p, &per, &[rows, size], Schedule::Random(seed));
            assert_eq!(got, base, "{body} seed {seed}");
        }
    }
}

#[test]
fn chunked_and_staged_collectives_under_random_schedules() {
    // D-ops-12/13 move long rows in UB chunks and stages, and reduce_scatter stores each chunk
    // before its read-done barrier.
    let size = 2 * (pld_runtime_abi::UB_CHUNK_BYTES / 4) as usize + 5;
    let cases = [
        ("NR", "NR", "data = pld.tensor.reduce_scatter(stage, signal, op=pld.ReduceOp.Sum)"),
        ("1", "NR", "data = pld.tensor.allgather(stage, data, signal)"),
        ("1", "1", "data = pld.tensor.broadcast(stage, signal, root=1)"),
    ];
    same_under_random_schedules(3, size, &cases, 12);
}

#[test]
fn host_collectives_under_random_schedules() {
    let cases = [
        ("1", "1", "data = pld.tensor.allreduce(stage, signal, op=pld.ReduceOp.Sum)"),
        ("1", "1", "data = pld.tensor.broadcast(stage, signal, root=1)"),
        ("NR", "NR", "data = pld.tensor.reduce_scatter(stage, signal, op=pld.ReduceOp.Sum)"),
        ("1", "NR", "data = pld.tensor.allgather(stage, data, signal)"),
        ("NR", "NR", "data = pld.tensor.all_to_all(stage, data, signal)"),
    ];
    same_under_random_schedules(4, 40, &cases, 100);
}
