//! §3 of tests_e2e.md: host-orchestrator collectives (`pld.tensor.<collective>` in host_orch),
//! run on the simulator unlowered (the simulator dispatches the builtin protocol to every rank)
//! and compared with the golden references.

use pld_ir::DataType;
use pld_runtime_abi::ReduceOp;
use pld_sim::Schedule;
use pld_testkit::e2e::{assert_ranks, inputs, lower, parse, run_ok, stack, tol, unstack};
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

/// Runs `prog` as written and after the pipeline (host collectives become per-rank
/// `builtin.tensor.*` dispatches); both must succeed with byte-identical outputs and traffic.
fn run_both(
    prog: &pld_ir::Program,
    p: usize,
    inp: &pld_sim::Inputs,
    schedule: Schedule,
    what: &str,
) -> pld_sim::SimOutcome {
    run_both_with(prog, p, inp, schedule, false, what)
}

/// [`run_both`], with reads of undefined window bytes downgraded to warnings when
/// `allow_uninit` is set.
fn run_both_with(
    prog: &pld_ir::Program,
    p: usize,
    inp: &pld_sim::Inputs,
    schedule: Schedule,
    allow_uninit: bool,
    what: &str,
) -> pld_sim::SimOutcome {
    let direct = if allow_uninit {
        let cfg = pld_sim::SimConfig { schedule, allow_uninit_reads: true, ..pld_sim::SimConfig::ranks(p) };
        pld_sim::run(prog, "host", inp, &cfg).unwrap_or_else(|e| panic!("{what} (direct): {e}"))
    } else {
        run_ok(prog, "host", p, inp, schedule, &format!("{what} (direct)"))
    };
    let low = lower(prog).unwrap_or_else(|d| {
        panic!("{what}: pipeline failed: {:?}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>())
    });
    let text = pld_ir::print_program(&low);
    assert!(
        text.contains("builtin.tensor.") && !text.contains("pld.tensor.allreduce("),
        "{what}: not lowered to a builtin:\n{text}"
    );
    // Lowered programs carry the pipeline's fences: check them too.
    let cfg = pld_sim::SimConfig {
        schedule,
        check_fences: true,
        allow_uninit_reads: allow_uninit,
        ..pld_sim::SimConfig::ranks(p)
    };
    let lowered = pld_sim::run(&low, "host", inp, &cfg).unwrap_or_else(|e| panic!("{what} (lowered): {e}"));
    assert_eq!(lowered.outputs, direct.outputs, "{what}: lowered and direct outputs differ");
    assert_eq!(
        lowered.stats.remote_bytes, direct.stats.remote_bytes,
        "{what}: lowered and direct traffic differ"
    );
    lowered
}

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

/// Publish/consume kernels over a `[ROWS, SIZE]` FP32 window plus a host body.
const GENERIC: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = __SIZE__
NR = pl.dynamic("NR")

@pl.program
class HostColl:
    @pl.function(type=pl.FunctionType.InCore)
    def publish_step(self, inp: pl.Tensor[[__IROWS__, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[__IROWS__, SIZE], pl.FP32]]):
        t = pl.load(inp, [0, 0], [__IROWS__, SIZE])
        pl.store(t, [0, 0], data)
        return data

    @pl.function(type=pl.FunctionType.InCore)
    def consume_step(self, data: pld.DistributedTensor[[__OROWS__, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[__OROWS__, SIZE], pl.FP32]]):
        t = pl.load(data, [0, 0], [__OROWS__, SIZE])
        pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(self, inp: pl.Tensor[[__IROWS__, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[__IROWS__, SIZE], pl.FP32]]):
        data = self.publish_step(inp, data)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume_orch(self, data: pld.DistributedTensor[[__OROWS__, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[__OROWS__, SIZE], pl.FP32]]):
        out = self.consume_step(data, out)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[__ROUNDS__, NR, __IROWS__, SIZE], pl.FP32], outputs: pl.Out[pl.Tensor[[__ROUNDS__, NR, __OROWS__, SIZE], pl.FP32]]):
        sig_buf = pld.alloc_window_buffer(__SIGCELLS__ * 4, name="signal")
        signal = pld.window(sig_buf, __SIGSHAPE__, dtype=pl.INT32)
        for rd in pl.range(__ROUNDS__):
            in_buf = pld.alloc_window_buffer(__IROWS__ * SIZE * 4, name="stage")
            stage = pld.window(in_buf, [__IROWS__, SIZE], dtype=pl.FP32)
            __DATA_ALLOC__
            for r in pl.range(pld.world_size()):
                self.publish_orch(inputs[rd, r], stage, device=r)
            __BODY__
            for r in pl.range(pld.world_size()):
                self.consume_orch(data, outputs[rd, r], device=r)
"#;

struct Generic<'a> {
    size: usize,
    in_rows: &'a str,
    out_rows: &'a str,
    rounds: usize,
    sig_cells: &'a str,
    sig_shape: &'a str,
    body: &'a str,
}

/// [`generic`] with the mesh collectives' one-cell-per-rank `[NR]` signal.
fn mesh_program(size: usize, in_rows: &str, out_rows: &str, rounds: usize, body: &str) -> pld_ir::Program {
    generic(&Generic {
        size,
        in_rows,
        out_rows,
        rounds,
        sig_cells: "pld.world_size()",
        sig_shape: "[NR]",
        body,
    })
}

fn generic(g: &Generic<'_>) -> pld_ir::Program {
    parse(
        &GENERIC
            .replace("__SIZE__", &g.size.to_string())
            .replace("__IROWS__", g.in_rows)
            .replace("__OROWS__", g.out_rows)
            .replace("__ROUNDS__", &g.rounds.to_string())
            .replace("__SIGCELLS__", g.sig_cells)
            .replace("__SIGSHAPE__", g.sig_shape)
            .replace(
                "__DATA_ALLOC__",
                if g.body.contains("stage, data, signal") {
                    "out_buf = pld.alloc_window_buffer(__OROWS__ * SIZE * 4, name=\"data\")\n            data = pld.window(out_buf, [__OROWS__, SIZE], dtype=pl.FP32)"
                } else {
                    ""
                },
            )
            .replace("__OROWS__", g.out_rows)
            .replace("__BODY__", g.body),
    )
}

/// Runs a generic program: `inputs[rd][r]` given per round and rank; returns `outputs[rd][r]`.
fn run_generic(
    prog: &pld_ir::Program,
    p: usize,
    per: &[Vec<Vec<f64>>],
    in_shape: &[usize],
    schedule: Schedule,
) -> (Vec<Vec<Vec<f64>>>, pld_sim::SimOutcome) {
    let rounds = per.len();
    let flat: Vec<Vec<f64>> = per.iter().flat_map(|rd| rd.iter().cloned()).collect();
    let mut shape = vec![p];
    shape.extend_from_slice(in_shape);
    let t = stack(DataType::FP32, &flat, &shape);
    let t = pld_sim::HostTensor { shape: [vec![rounds], t.shape[1..].to_vec()].concat(), ..t };
    let out = run_both(prog, p, &inputs(vec![("inputs", t)]), schedule, "generic host collective");
    let all = unstack(&out.outputs["outputs"]);
    let res = all.iter().map(|rd| rd.chunks(rd.len() / p).map(<[f64]>::to_vec).collect()).collect();
    (res, out)
}

fn rounds_of(p: usize, rounds: usize, f: impl Fn(usize) -> Vec<f64>) -> Vec<Vec<Vec<f64>>> {
    (0..rounds)
        .map(|rd| (0..p).map(|r| f(r).iter().map(|x| x + 10000.0 * rd as f64).collect()).collect())
        .collect()
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
    let chunk = (pld_ir::UB_CHUNK_BYTES / 4) as usize;
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
    let (p, size) = (3usize, 2 * (pld_ir::UB_CHUNK_BYTES / 4) as usize + 3);
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
    let chunk = (pld_ir::UB_CHUNK_BYTES / 4) as usize;
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
    let size = 2 * (pld_ir::UB_CHUNK_BYTES / 4) as usize + 5;
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

const A2AV: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 64
MAXR = 4
NR = pl.dynamic("NR")

@pl.program
class HostA2AV:
    @pl.function(type=pl.FunctionType.InCore)
    def stage_step(self, inp: pl.Tensor[[NR * MAXR, SIZE], pl.FP32], cnt: pl.Tensor[[NR, 1], pl.INT32],
                   stage: pl.Out[pld.DistributedTensor[[NR * MAXR, SIZE], pl.FP32]],
                   counts: pl.Out[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        t = pl.load(inp, [0, 0], [NR * MAXR, SIZE])
        pl.store(t, [0, 0], stage)
        c = pl.load(cnt, [0, 0], [NR, 1])
        pl.store(c, [0, 0], counts)
        return stage

    @pl.function(type=pl.FunctionType.InCore)
    def consume_step(self, data: pld.DistributedTensor[[NR * MAXR, SIZE], pl.FP32], recv: pld.DistributedTensor[[NR, 1], pl.INT32],
                     out: pl.Out[pl.Tensor[[NR * MAXR, SIZE], pl.FP32]], recv_out: pl.Out[pl.Tensor[[NR, 1], pl.INT32]]):
        t = pl.load(data, [0, 0], [NR * MAXR, SIZE])
        pl.store(t, [0, 0], out)
        c = pl.load(recv, [0, 0], [NR, 1])
        pl.store(c, [0, 0], recv_out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def stage_orch(self, inp: pl.Tensor[[NR * MAXR, SIZE], pl.FP32], cnt: pl.Tensor[[NR, 1], pl.INT32],
                   stage: pl.Out[pld.DistributedTensor[[NR * MAXR, SIZE], pl.FP32]],
                   counts: pl.Out[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        stage = self.stage_step(inp, cnt, stage, counts)
        return stage

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume_orch(self, data: pld.DistributedTensor[[NR * MAXR, SIZE], pl.FP32], recv: pld.DistributedTensor[[NR, 1], pl.INT32],
                     out: pl.Out[pl.Tensor[[NR * MAXR, SIZE], pl.FP32]], recv_out: pl.Out[pl.Tensor[[NR, 1], pl.INT32]]):
        out = self.consume_step(data, recv, out, recv_out)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, NR * MAXR, SIZE], pl.FP32], send_counts: pl.Tensor[[NR, NR, 1], pl.INT32],
             outputs: pl.Out[pl.Tensor[[NR, NR * MAXR, SIZE], pl.FP32]], recv_out: pl.Out[pl.Tensor[[NR, NR, 1], pl.INT32]]):
        in_buf = pld.alloc_window_buffer(pld.world_size() * MAXR * SIZE * 4, name="input")
        data_buf = pld.alloc_window_buffer(pld.world_size() * MAXR * SIZE * 4, name="data")
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="signal")
        cnt_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="counts")
        recv_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="recv")
        stage = pld.window(in_buf, [NR * MAXR, SIZE], dtype=pl.FP32)
        data = pld.window(data_buf, [NR * MAXR, SIZE], dtype=pl.FP32)
        signal = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
        counts = pld.window(cnt_buf, [NR, 1], dtype=pl.INT32)
        recv = pld.window(recv_buf, [NR, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.stage_orch(inputs[r], send_counts[r], stage, counts, device=r)
        data = pld.tensor.all_to_all_v(stage, data, signal, counts, recv)
        for r in pl.range(pld.world_size()):
            self.consume_orch(data, recv, outputs[r], recv_out[r], device=r)
"#;

fn check_a2av(p: usize, counts: &dyn Fn(usize, usize) -> i64, schedule: Schedule) {
    const SIZE: usize = 64;
    const MAXR: usize = 4;
    let prog = parse(&A2AV.replace("pl.dynamic(\"NR\")", &p.to_string()));
    let per: Vec<Vec<f64>> = (0..p)
        .map(|r| {
            (0..p * MAXR)
                .flat_map(|row| {
                    (0..SIZE)
                        .map(move |j| (1000 * r + 100 * (row / MAXR) + 10 * (row % MAXR) + j % 10) as f64)
                })
                .collect()
        })
        .collect();
    let cnt: Vec<Vec<i64>> = (0..p).map(|r| (0..p).map(|d| counts(r, d)).collect()).collect();
    let cnt_f: Vec<Vec<f64>> = cnt.iter().map(|c| c.iter().map(|&x| x as f64).collect()).collect();
    let inp = inputs(vec![
        ("inputs", stack(DataType::FP32, &per, &[p * MAXR, SIZE])),
        ("send_counts", stack(DataType::INT32, &cnt_f, &[p, 1])),
    ]);
    let what = format!("host all_to_all_v P={p} {schedule:?}");
    // The consumer copies the whole capacity block: the rows past the counts were never
    // written, which the simulator reports as an undefined-byte read — a fault by default, a
    // warning with `allow_uninit_reads` (which this test uses to see what was written).
    if cnt.iter().flatten().any(|&c| c < MAXR as i64) {
        let cfg = pld_sim::SimConfig { schedule, ..pld_sim::SimConfig::ranks(p) };
        match pld_sim::run(&prog, "host", &inp, &cfg) {
            Err(pld_sim::SimError::Fault(r)) => {
                assert_eq!(r.kind, pld_sim::ReportKind::UninitRead, "{what}: {r}");
                assert!(r.text.contains("buffer 'data'"), "{what}: {r}");
            }
            other => {
                panic!("{what}: expected an uninitialised-read fault, got {:?}", other.map(|o| o.warnings))
            }
        }
    }
    let out = run_both_with(&prog, p, &inp, schedule, true, &what);
    let got = unstack(&out.outputs["outputs"]);
    let recv = unstack(&out.outputs["recv_out"]);
    assert!(
        out.warnings.iter().any(|w| w.contains("buffer 'data'") && w.contains("undefined")),
        "{what}: {:?}",
        out.warnings
    );
    let want = gold::all_to_all_v(&per, &cnt, MAXR, SIZE);
    for r in 0..p {
        let (wc, wbuf) = &want[r];
        let rc: Vec<i64> = recv[r].iter().map(|&x| x as i64).collect();
        assert_eq!(&rc, wc, "{what}: recv_counts of rank {r}");
        for (i, w) in wbuf.iter().enumerate() {
            match w {
                Some(v) => assert_eq!(got[r][i], *v, "{what}: rank {r} element {i}"),
                // Rows past the count were never written: they still hold the garbage pattern.
                None => assert!(
                    got[r][i].is_nan(),
                    "{what}: rank {r} element {i} should be untouched, got {}",
                    got[r][i]
                ),
            }
        }
        // Exactly the clamped rows cross the wire (padding never does).
        let rows: i64 = (0..p).filter(|&d| d != r).map(|d| cnt[r][d].clamp(0, MAXR as i64)).sum();
        assert_eq!(
            out.stats.remote_of(r, "all_to_all_v"),
            (rows as u64) * SIZE as u64 * 4,
            "{what}: rank {r} traffic"
        );
    }
}

#[test]
fn host_all_to_all_v_counts_clamp_and_traffic() {
    for p in [2, 3, 4, 8] {
        // The scenario's counts: P - d rows to destination d (clamped to MAX_RECV = 4).
        check_a2av(p, &|_, d| (p - d) as i64, Schedule::Deterministic);
        // Negative and oversized counts: -3 publishes 0, MAX_RECV+5 publishes MAX_RECV.
        check_a2av(p, &|r, d| [-3, 0, 4, 9][(r + d) % 4], Schedule::Deterministic);
    }
    for seed in 0..100 {
        check_a2av(4, &|r, d| [-3, 0, 4, 9][(r + 2 * d) % 4], Schedule::Random(seed));
    }
}

const BARRIER: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 64
NR = pl.dynamic("NR")

@pl.program
class HostBarrier:
    @pl.function(type=pl.FunctionType.InCore)
    def publish_step(self, inp: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
                     signal: pld.DistributedTensor[[NR], pl.INT32]):
        t = pl.load(inp, [0, 0], [1, SIZE])
        pl.store(t, [0, 0], data)
        return data

    @pl.function(type=pl.FunctionType.InCore)
    def consume_step(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]], peer: pl.Scalar[pl.INDEX]):
        t = pld.tile.remote_load(data, peer, [0, 0], [1, SIZE])
        pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(self, inp: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
                     signal: pld.DistributedTensor[[NR], pl.INT32]):
        data = self.publish_step(inp, data, signal)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume_orch(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]], peer: pl.Scalar[pl.INDEX]):
        out = self.consume_step(data, out, peer)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[2, NR, 1, SIZE], pl.FP32], outputs: pl.Out[pl.Tensor[[2, NR, 1, SIZE], pl.FP32]]):
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="signal")
        signal = pld.window(sig_buf, [NR], dtype=pl.INT32)
        for rd in pl.range(2):
            data_buf = pld.alloc_window_buffer(SIZE * 4, name="data")
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            for r in pl.range(pld.world_size()):
                self.publish_orch(inputs[rd, r], data, signal, device=r)
            pld.tensor.barrier(signal)
            for r in pl.range(pld.world_size()):
                self.consume_orch(data, outputs[rd, r], (r + 1) % pld.world_size(), device=r)
"#;

#[test]
fn host_barrier_peer_swap_two_rounds() {
    let prog = parse(BARRIER);
    for p in [2, 3, 4] {
        let per = rounds_of(p, 2, |r| gold::ramp(r, 64));
        let (got, out) = run_generic(&prog, p, &per, &[1, 64], Schedule::Deterministic);
        for rd in 0..2 {
            assert_ranks(
                &got[rd],
                &gold::ring_pull(&per[rd]),
                0.0,
                0.0,
                &format!("barrier P={p} round {rd}"),
            );
        }
        assert!(out.stats.barrier_rounds.iter().all(|&b| b >= 2), "{:?}", out.stats.barrier_rounds);
    }
}

const MULTICORE: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = __SIZE__
S = __S__
C = __C__
NR = pl.dynamic("NR")

@pl.program
class HostMulticore:
    @pl.function(type=pl.FunctionType.InCore)
    def publish_step(self, inp: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        t = pl.load(inp, [0, 0], [1, SIZE])
        pl.store(t, [0, 0], data)
        return data

    @pl.function(type=pl.FunctionType.InCore)
    def consume_step(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32], signal: pld.DistributedTensor[[NR, S], pl.INT32],
                     out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]], signal_out: pl.Out[pl.Tensor[[NR, S], pl.INT32]]):
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        for peer in pl.range(n):
            if peer != me:
                for lane in pl.range(C):
                    pld.system.wait(signal, [peer, lane], 0, cmp=pld.WaitCmp.Eq)
        t = pl.load(data, [0, 0], [1, SIZE])
        pl.store(t, [0, 0], out)
        s = pl.load(signal, [0, 0], [NR, S])
        pl.store(s, [0, 0], signal_out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(self, inp: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        data = self.publish_step(inp, data)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume_orch(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32], signal: pld.DistributedTensor[[NR, S], pl.INT32],
                     out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]], signal_out: pl.Out[pl.Tensor[[NR, S], pl.INT32]]):
        out = self.consume_step(data, signal, out, signal_out)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[2, NR, 1, SIZE], pl.FP32], outputs: pl.Out[pl.Tensor[[2, NR, 1, SIZE], pl.FP32]],
             signal_outs: pl.Out[pl.Tensor[[2, NR, NR, S], pl.INT32]]):
        data_buf = pld.alloc_window_buffer(SIZE * 4, name="data")
        sig_buf = pld.alloc_window_buffer(pld.world_size() * S * 4, name="signal")
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(sig_buf, [NR, S], dtype=pl.INT32)
        for rd in pl.range(2):
            for r in pl.range(pld.world_size()):
                self.publish_orch(inputs[rd, r], data, device=r)
            data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, core_num=C)
            for r in pl.range(pld.world_size()):
                self.consume_orch(data, signal, outputs[rd, r], signal_outs[rd, r], device=r)
"#;

#[test]
fn host_multicore_allreduce_lanes_self_clear() {
    for (p, c, size, s) in [(2, 2, 1, 2), (2, 4, 4127, 6), (4, 2, 1041, 2), (3, 3, 700, 4)] {
        let prog = parse(
            &MULTICORE
                .replace("__SIZE__", &size.to_string())
                .replace("__S__", &s.to_string())
                .replace("__C__", &c.to_string()),
        );
        let per = rounds_of(p, 2, |r| gold::ramp(r, size));
        let flat: Vec<Vec<f64>> = per.iter().flatten().cloned().collect();
        let t = stack(DataType::FP32, &flat, &[1, size]);
        let t = pld_sim::HostTensor { shape: vec![2, p, 1, size], ..t };
        let what = format!("multicore P={p} C={c} size={size} S={s}");
        let out = run_both(&prog, p, &inputs(vec![("inputs", t)]), Schedule::Deterministic, &what);
        let got = unstack(&out.outputs["outputs"]);
        let sig = out.outputs["signal_outs"].to_f64();
        for rd in 0..2 {
            let want = gold::allreduce(&per[rd], ReduceOp::Sum, DataType::FP32);
            for r in 0..p {
                assert_eq!(&got[rd][r * size..(r + 1) * size], &want[r][..], "{what} round {rd} rank {r}");
                let cells = &sig[(rd * p + r) * p * s..(rd * p + r + 1) * p * s];
                assert!(
                    cells.iter().all(|&x| x == 0.0),
                    "{what}: signal of rank {r} not self-cleared: {cells:?}"
                );
            }
        }
    }
}

#[test]
fn host_ring_allreduce_under_100_random_schedules() {
    let prog = generic(&Generic {
        size: 256,
        in_rows: "1",
        out_rows: "1",
        rounds: 1,
        sig_cells: "(2 * (pld.world_size() - 1) + 1) * pld.world_size()",
        sig_shape: "[2 * (NR - 1) + 1, NR]",
        body: "data = pld.tensor.allreduce(stage, signal, op=pld.ReduceOp.Sum, mode=\"ring\")",
    });
    let low = lower(&prog)
        .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>()));
    let per = rounds_of(4, 1, |r| gold::ramp(r, 256));
    let flat: Vec<Vec<f64>> = per[0].clone();
    let t = stack(DataType::FP32, &flat, &[1, 256]);
    let t = pld_sim::HostTensor { shape: vec![1, 4, 1, 256], ..t };
    let inp = inputs(vec![("inputs", t)]);
    let want = gold::allreduce(&per[0], ReduceOp::Sum, DataType::FP32);
    for seed in 0..100 {
        let out = run_ok(&low, "host", 4, &inp, Schedule::Random(seed), &format!("ring seed {seed}"));
        let got = unstack(&out.outputs["outputs"]);
        let got: Vec<Vec<f64>> = got[0].chunks(256).map(<[f64]>::to_vec).collect();
        assert_ranks(&got, &want, 0.0, 0.0, &format!("ring seed {seed}"));
    }
}
