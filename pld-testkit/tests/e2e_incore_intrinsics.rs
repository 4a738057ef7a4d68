//! §2.3–2.9 of tests_e2e.md: composite collectives inside InCore kernels (all_to_all,
//! all_to_all_v, allgather, barrier, broadcast, reduce_scatter, back-to-back calls on one
//! signal), each run as written and after the pass pipeline, against the references.

use pld_ir::{DataType, Program};
use pld_runtime_abi::ReduceOp;
use pld_sim::Schedule;
use pld_testkit::e2e::{assert_ranks, inputs, lower, parse, run_ok, stack, unstack};
use pld_testkit::reference as gold;

const KERNEL: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 64
NR = __NR__

@pl.program
class Intrinsic:
    @pl.function(type=pl.FunctionType.InCore)
    def step(self, inp: pl.Tensor[[__IR__, SIZE], pl.FP32], inp2: pl.Tensor[[__IR__, SIZE], pl.FP32],
             out: pl.Out[pl.Tensor[[__OR__, SIZE], pl.FP32]],
             data: pl.InOut[pld.DistributedTensor[[__DR__, SIZE], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]], me: pl.Scalar[pl.INDEX], peer: pl.Scalar[pl.INDEX]):
        __BODY__
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[__IR__, SIZE], pl.FP32], inp2: pl.Tensor[[__IR__, SIZE], pl.FP32],
             out: pl.Out[pl.Tensor[[__OR__, SIZE], pl.FP32]],
             data: pl.InOut[pld.DistributedTensor[[__DR__, SIZE], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]], me: pl.Scalar[pl.INDEX], peer: pl.Scalar[pl.INDEX]):
        out = self.step(inp, inp2, out, data, signal, me, peer)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, __IR__, SIZE], pl.FP32], inputs2: pl.Tensor[[NR, __IR__, SIZE], pl.FP32],
             outputs: pl.Out[pl.Tensor[[NR, __OR__, SIZE], pl.FP32]]):
        data_buf = pld.alloc_window_buffer(__DR__ * SIZE * 4, name="data")
        sig_buf = pld.alloc_window_buffer(NR * 4, name="signal")
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [__DR__, SIZE], dtype=pl.FP32)
            signal = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
            peer = (r + 1) % pld.world_size()
            self.chip(inputs[r], inputs2[r], outputs[r], data, signal, r, peer, device=r)
"#;

fn program(p: usize, ir: &str, or: &str, dr: &str, body: &str) -> String {
    KERNEL
        .replace("__NR__", &p.to_string())
        .replace("__IR__", ir)
        .replace("__OR__", or)
        .replace("__DR__", dr)
        .replace("__BODY__", body)
}

/// Runs as written and lowered; returns both per-rank outputs.
fn run_both(
    text: &str,
    p: usize,
    first: &[Vec<f64>],
    second: &[Vec<f64>],
    in_shape: &[usize],
    what: &str,
) -> Vec<Vec<Vec<f64>>> {
    let direct = parse(text);
    let low: Program = match lower(&direct) {
        Ok(p) => p,
        Err(d) => {
            panic!("{what}: pipeline failed: {:?}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>())
        }
    };
    let inp = inputs(vec![
        ("inputs", stack(DataType::FP32, first, in_shape)),
        ("inputs2", stack(DataType::FP32, second, in_shape)),
    ]);
    let mut res = Vec::new();
    for (prog, level) in [(&direct, "direct"), (&low, "lowered")] {
        for sched in [Schedule::Deterministic, Schedule::Random(7)] {
            // Lowered programs carry the pipeline's fences: check them too.
            let cfg = pld_sim::SimConfig {
                schedule: sched,
                check_fences: level == "lowered",
                ..pld_sim::SimConfig::ranks(p)
            };
            let out = pld_sim::run(prog, "host", &inp, &cfg)
                .unwrap_or_else(|e| panic!("{what} {level} {sched:?}: {e}"));
            res.push(unstack(&out.outputs["outputs"]));
        }
    }
    res
}

fn a2a_input(p: usize, r: usize, off: f64) -> Vec<f64> {
    (0..p).flat_map(|d| (0..64).map(move |j| off + (1000 * r + 100 * d + j) as f64)).collect()
}

const COPY_OUT: &str = "t = pl.load(res, [0, 0], [NR, SIZE])\n        pl.store(t, [0, 0], out)";

#[test]
fn incore_all_to_all_and_allgather() {
    for p in [2, 3, 4, 8] {
        let first: Vec<Vec<f64>> = (0..p).map(|r| a2a_input(p, r, 0.0)).collect();
        let body = format!("res = pld.tensor.all_to_all(inp, data, signal)\n        {COPY_OUT}");
        for got in run_both(
            &program(p, "NR", "NR", "NR", &body),
            p,
            &first,
            &first,
            &[p, 64],
            &format!("all_to_all P={p}"),
        ) {
            assert_ranks(&got, &gold::all_to_all(&first, 64), 0.0, 0.0, &format!("all_to_all P={p}"));
        }
        let first: Vec<Vec<f64>> = (0..p).map(|r| gold::ramp(r, 64)).collect();
        let body = format!("res = pld.tensor.allgather(inp, data, signal)\n        {COPY_OUT}");
        for got in run_both(
            &program(p, "1", "NR", "NR", &body),
            p,
            &first,
            &first,
            &[1, 64],
            &format!("allgather P={p}"),
        ) {
            assert_ranks(&got, &gold::allgather(&first), 0.0, 0.0, &format!("allgather P={p}"));
        }
    }
}

#[test]
fn incore_collectives_over_rows_longer_than_one_ub_chunk() {
    // D-ops-12/13 as the interpreter runs them: reduce_scatter's row in UB chunks (two and a
    // tail), and allgather / broadcast staging their put/get through a stage smaller than the
    // transfer, as written and lowered, under det and random schedules.
    let size = 2 * (pld_runtime_abi::UB_CHUNK_BYTES / 4) as usize + 5;
    let long = |text: String| {
        let t = text.replace("SIZE = 64\n", &format!("SIZE = {size}\n"));
        assert!(t.contains(&format!("SIZE = {size}\n")), "{t}");
        t
    };
    let p = 3;
    let first: Vec<Vec<f64>> =
        (0..p).map(|r| (0..p * size).map(|i| (100 * r + i % 991) as f64).collect()).collect();
    let body = "t = pl.load(inp, [0, 0], [NR, SIZE])\n        pl.store(t, [0, 0], data)\n        res = pld.tensor.reduce_scatter(data, signal, op=pld.ReduceOp.Sum)\n        x = pl.load(res, [me, 0], [1, SIZE])\n        pl.store(x, [0, 0], out)";
    for got in
        run_both(&long(program(p, "NR", "1", "NR", body)), p, &first, &first, &[p, size], "reduce_scatter")
    {
        assert_ranks(
            &got,
            &gold::reduce_scatter(&first, ReduceOp::Sum, DataType::FP32),
            0.0,
            0.0,
            "reduce_scatter",
        );
    }
    let first: Vec<Vec<f64>> = (0..p).map(|r| gold::ramp(r, size)).collect();
    let body = format!("res = pld.tensor.allgather(inp, data, signal)\n        {COPY_OUT}");
    for got in run_both(&long(program(p, "1", "NR", "NR", &body)), p, &first, &first, &[1, size], "allgather")
    {
        assert_ranks(&got, &gold::allgather(&first), 0.0, 0.0, "allgather");
    }
    let body = "if me == 0:\n            t = pl.load(inp, [0, 0], [1, SIZE])\n            pl.store(t, [0, 0], data)\n        res = pld.tensor.broadcast(data, signal, root=0)\n        x = pl.load(res, [0, 0], [1, SIZE])\n        pl.store(x, [0, 0], out)";
    for got in run_both(&long(program(p, "1", "1", "1", body)), p, &first, &first, &[1, size], "broadcast") {
        assert_ranks(&got, &gold::broadcast(&first, 0), 0.0, 0.0, "broadcast");
    }
}

#[test]
fn incore_barrier_broadcast_reduce_scatter() {
    for p in [2, 3, 4, 8] {
        let first: Vec<Vec<f64>> = (0..p).map(|r| gold::ramp(r, 64)).collect();
        // Barrier then read the next rank's window (peer swap for P=2).
        let body = "t = pl.load(inp, [0, 0], [1, SIZE])\n        pl.store(t, [0, 0], data)\n        s2 = pld.tensor.barrier(signal)\n        x = pld.tile.remote_load(data, peer, [0, 0], [1, SIZE])\n        pl.store(x, [0, 0], out)";
        for got in
            run_both(&program(p, "1", "1", "1", body), p, &first, &first, &[1, 64], &format!("barrier P={p}"))
        {
            assert_ranks(&got, &gold::ring_pull(&first), 0.0, 0.0, &format!("barrier P={p}"));
        }
        let body = "if me == 0:\n            t = pl.load(inp, [0, 0], [1, SIZE])\n            pl.store(t, [0, 0], data)\n        res = pld.tensor.broadcast(data, signal, root=0)\n        x = pl.load(res, [0, 0], [1, SIZE])\n        pl.store(x, [0, 0], out)";
        for got in run_both(
            &program(p, "1", "1", "1", body),
            p,
            &first,
            &first,
            &[1, 64],
            &format!("broadcast P={p}"),
        ) {
            assert_ranks(&got, &gold::broadcast(&first, 0), 0.0, 0.0, &format!("broadcast P={p}"));
        }
        let first: Vec<Vec<f64>> =
            (0..p).map(|r| (0..p * 64).map(|i| (100 * r + i) as f64).collect()).collect();
        let body = "t = pl.load(inp, [0, 0], [NR, SIZE])\n        pl.store(t, [0, 0], data)\n        res = pld.tensor.reduce_scatter(data, signal, op=pld.ReduceOp.Sum)\n        x = pl.load(res, [me, 0], [1, SIZE])\n        pl.store(x, [0, 0], out)";
        for got in run_both(
            &program(p, "NR", "1", "NR", body),
            p,
            &first,
            &first,
            &[p, 64],
            &format!("reduce_scatter P={p}"),
        ) {
            assert_ranks(
                &got,
                &gold::reduce_scatter(&first, ReduceOp::Sum, DataType::FP32),
                0.0,
                0.0,
                &format!("reduce_scatter P={p}"),
            );
        }
    }
}

#[test]
fn incore_signal_reuse_back_to_back() {
    for p in [2, 4] {
        // all_to_all twice, bracketed by barriers, on one signal.
        let first: Vec<Vec<f64>> = (0..p).map(|r| a2a_input(p, r, 0.0)).collect();
        let second: Vec<Vec<f64>> = (0..p).map(|r| a2a_input(p, r, 100000.0)).collect();
        let body = format!(
            "s0 = pld.tensor.barrier(signal)\n        r1 = pld.tensor.all_to_all(inp, data, signal)\n        s1 = pld.tensor.barrier(signal)\n        res = pld.tensor.all_to_all(inp2, data, signal)\n        s2 = pld.tensor.barrier(signal)\n        {COPY_OUT}"
        );
        for got in run_both(
            &program(p, "NR", "NR", "NR", &body),
            p,
            &first,
            &second,
            &[p, 64],
            &format!("all_to_all x2 P={p}"),
        ) {
            assert_ranks(&got, &gold::all_to_all(&second, 64), 0.0, 0.0, &format!("all_to_all x2 P={p}"));
        }
        // allgather twice.
        let first: Vec<Vec<f64>> = (0..p).map(|r| gold::ramp(r, 64)).collect();
        let second: Vec<Vec<f64>> = first.iter().map(|v| v.iter().map(|x| x + 100000.0).collect()).collect();
        let body = format!("r1 = pld.tensor.allgather(inp, data, signal)\n        res = pld.tensor.allgather(inp2, data, signal)\n        {COPY_OUT}");
        for got in run_both(
            &program(p, "1", "NR", "NR", &body),
            p,
            &first,
            &second,
            &[1, 64],
            &format!("allgather x2 P={p}"),
        ) {
            assert_ranks(&got, &gold::allgather(&second), 0.0, 0.0, &format!("allgather x2 P={p}"));
        }
        // reduce_scatter twice: re-stage the second input over the first result.
        let first: Vec<Vec<f64>> =
            (0..p).map(|r| (0..p * 64).map(|i| (100 * r + i) as f64).collect()).collect();
        let second: Vec<Vec<f64>> = first.iter().map(|v| v.iter().map(|x| x + 100000.0).collect()).collect();
        let body = "t = pl.load(inp, [0, 0], [NR, SIZE])\n        pl.store(t, [0, 0], data)\n        r1 = pld.tensor.reduce_scatter(data, signal, op=pld.ReduceOp.Sum)\n        t2 = pl.load(inp2, [0, 0], [NR, SIZE])\n        pl.store(t2, [0, 0], r1)\n        res = pld.tensor.reduce_scatter(r1, signal, op=pld.ReduceOp.Sum)\n        x = pl.load(res, [me, 0], [1, SIZE])\n        pl.store(x, [0, 0], out)";
        for got in run_both(
            &program(p, "NR", "1", "NR", body),
            p,
            &first,
            &second,
            &[p, 64],
            &format!("reduce_scatter x2 P={p}"),
        ) {
            assert_ranks(
                &got,
                &gold::reduce_scatter(&second, ReduceOp::Sum, DataType::FP32),
                0.0,
                0.0,
                &format!("reduce_scatter x2 P={p}"),
            );
        }
    }
}

const A2AV: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 64
MAXR = 4
NR = __NR__
TOTAL = NR * MAXR

@pl.program
class A2AV:
    @pl.function(type=pl.FunctionType.InCore)
    def step(self, inp: pl.Tensor[[TOTAL, SIZE], pl.FP32], counts: pl.Tensor[[NR, 1], pl.INT32],
             out: pl.Out[pl.Tensor[[TOTAL, SIZE], pl.FP32]], recv_out: pl.Out[pl.Tensor[[NR, 1], pl.INT32]],
             data: pl.InOut[pld.DistributedTensor[[TOTAL, SIZE], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
             recv: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        res = pld.tensor.all_to_all_v(inp, data, signal, counts, recv)
        t = pl.load(res, [0, 0], [TOTAL, SIZE])
        pl.store(t, [0, 0], out)
        c = pl.load(recv, [0, 0], [NR, 1])
        pl.store(c, [0, 0], recv_out)
        return out, recv_out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[TOTAL, SIZE], pl.FP32], counts: pl.Tensor[[NR, 1], pl.INT32],
             out: pl.Out[pl.Tensor[[TOTAL, SIZE], pl.FP32]], recv_out: pl.Out[pl.Tensor[[NR, 1], pl.INT32]],
             data: pl.InOut[pld.DistributedTensor[[TOTAL, SIZE], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
             recv: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        out, recv_out = self.step(inp, counts, out, recv_out, data, signal, recv)
        return out, recv_out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, TOTAL, SIZE], pl.FP32], send_counts: pl.Tensor[[NR, NR, 1], pl.INT32],
             outputs: pl.Out[pl.Tensor[[NR, TOTAL, SIZE], pl.FP32]], recv_outs: pl.Out[pl.Tensor[[NR, NR, 1], pl.INT32]]):
        data_buf = pld.alloc_window_buffer(TOTAL * SIZE * 4, name="data")
        sig_buf = pld.alloc_window_buffer(NR * 4, name="signal")
        recv_buf = pld.alloc_window_buffer(NR * 4, name="recv_counts")
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [TOTAL, SIZE], dtype=pl.FP32)
            signal = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
            recv = pld.window(recv_buf, [NR, 1], dtype=pl.INT32)
            self.chip(inputs[r], send_counts[r], outputs[r], recv_outs[r], data, signal, recv, device=r)
"#;

#[test]
fn incore_all_to_all_v_direct_and_lowered_with_negative_counts() {
    const MAXR: usize = 4;
    for p in [2, 3, 4, 8] {
        let direct = parse(&A2AV.replace("__NR__", &p.to_string()));
        let low = lower(&direct).unwrap_or_else(|d| {
            panic!("a2av pipeline: {:?}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>())
        });
        let per: Vec<Vec<f64>> = (0..p)
            .map(|r| {
                (0..p * MAXR)
                    .flat_map(|row| {
                        (0..64)
                            .map(move |j| (1000 * r + 100 * (row / MAXR) + 10 * (row % MAXR) + j % 10) as f64)
                    })
                    .collect()
            })
            .collect();
        let count_sets: Vec<Vec<Vec<i64>>> = vec![
            (0..p).map(|_| (0..p).map(|d| (p - d) as i64).collect()).collect(),
            (0..p).map(|r| (0..p).map(|d| [-3, 0, 4, 9][(r + d) % 4]).collect()).collect(),
        ];
        for cnt in count_sets {
            let cnt_f: Vec<Vec<f64>> = cnt.iter().map(|c| c.iter().map(|&x| x as f64).collect()).collect();
            let inp = inputs(vec![
                ("inputs", stack(DataType::FP32, &per, &[p * MAXR, 64])),
                ("send_counts", stack(DataType::INT32, &cnt_f, &[p, 1])),
            ]);
            let want = gold::all_to_all_v(&per, &cnt, MAXR, 64);
            for (prog, level) in [(&direct, "direct"), (&low, "lowered")] {
                let what = format!("a2av {level} P={p} counts {cnt:?}");
                // `step` loads the whole capacity block, rows past the counts included: an
                // uninitialised read (a fault by default); with `allow_uninit_reads` it is a
                // warning and the test checks what was written.
                match pld_sim::run(prog, "host", &inp, &pld_sim::SimConfig::ranks(p)) {
                    Err(pld_sim::SimError::Fault(r)) => {
                        assert_eq!(r.kind, pld_sim::ReportKind::UninitRead, "{what}: {r}")
                    }
                    other => {
                        panic!("{what}: expected an uninitialised read, got {:?}", other.map(|o| o.warnings))
                    }
                }
                let cfg = pld_sim::SimConfig { allow_uninit_reads: true, ..pld_sim::SimConfig::ranks(p) };
                let out = pld_sim::run(prog, "host", &inp, &cfg).unwrap_or_else(|e| panic!("{what}: {e}"));
                let got = unstack(&out.outputs["outputs"]);
                let recv = unstack(&out.outputs["recv_outs"]);
                for r in 0..p {
                    let rc: Vec<i64> = recv[r].iter().map(|&x| x as i64).collect();
                    assert_eq!(rc, want[r].0, "{what}: recv_counts rank {r} (a negative count publishes 0)");
                    for (i, w) in want[r].1.iter().enumerate() {
                        if let Some(v) = w {
                            assert_eq!(got[r][i], *v, "{what}: rank {r} element {i}");
                        }
                    }
                    let rows: i64 = (0..p).filter(|&d| d != r).map(|d| cnt[r][d].clamp(0, MAXR as i64)).sum();
                    let moved: u64 = out
                        .stats
                        .remote_bytes
                        .iter()
                        .filter(|((k, op), _)| *k == r && (op.contains("put") || op.contains("all_to_all_v")))
                        .map(|(_, b)| b)
                        .sum();
                    assert_eq!(
                        moved,
                        rows as u64 * 64 * 4,
                        "{what}: rank {r} pushed exactly the clamped rows; {:?}",
                        out.stats.remote_bytes
                    );
                }
            }
        }
    }
}

/// (body, input rows, output rows, data rows, inputs, input shape, expected outputs).
type Case<'a> = (String, &'a str, &'a str, &'a str, &'a Vec<Vec<f64>>, Vec<usize>, Vec<Vec<f64>>);

#[test]
fn lowered_intrinsics_under_100_random_schedules() {
    let p = 4;
    let ramp: Vec<Vec<f64>> = (0..p).map(|r| gold::ramp(r, 64)).collect();
    let rows: Vec<Vec<f64>> = (0..p).map(|r| (0..p * 64).map(|i| (100 * r + i) as f64).collect()).collect();
    let a2a: Vec<Vec<f64>> = (0..p).map(|r| a2a_input(p, r, 0.0)).collect();
    let cases: Vec<Case<'_>> = vec![
        (format!("res = pld.tensor.all_to_all(inp, data, signal)\n        {COPY_OUT}"), "NR", "NR", "NR", &a2a, vec![p, 64], gold::all_to_all(&a2a, 64)),
        (format!("res = pld.tensor.allgather(inp, data, signal)\n        {COPY_OUT}"), "1", "NR", "NR", &ramp, vec![1, 64], gold::allgather(&ramp)),
        (
            "if me == 0:\n            t = pl.load(inp, [0, 0], [1, SIZE])\n            pl.store(t, [0, 0], data)\n        res = pld.tensor.broadcast(data, signal, root=0)\n        x = pl.load(res, [0, 0], [1, SIZE])\n        pl.store(x, [0, 0], out)".to_string(),
            "1", "1", "1", &ramp, vec![1, 64], gold::broadcast(&ramp, 0),
        ),
        (
            "t = pl.load(inp, [0, 0], [NR, SIZE])\n        pl.store(t, [0, 0], data)\n        res = pld.tensor.reduce_scatter(data, signal, op=pld.ReduceOp.Sum)\n        x = pl.load(res, [me, 0], [1, SIZE])\n        pl.store(x, [0, 0], out)".to_string(),
            "NR", "1", "NR", &rows, vec![p, 64], gold::reduce_scatter(&rows, ReduceOp::Sum, DataType::FP32),
        ),
        (
            "t = pl.load(inp, [0, 0], [1, SIZE])\n        pl.store(t, [0, 0], data)\n        s2 = pld.tensor.barrier(signal)\n        x = pld.tile.remote_load(data, peer, [0, 0], [1, SIZE])\n        pl.store(x, [0, 0], out)".to_string(),
            "1", "1", "1", &ramp, vec![1, 64], gold::ring_pull(&ramp),
        ),
    ];
    for (body, ir, or, dr, first, shape, want) in cases {
        let low = lower(&parse(&program(p, ir, or, dr, &body)))
            .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>()));
        let inp = inputs(vec![
            ("inputs", stack(DataType::FP32, first, &shape)),
            ("inputs2", stack(DataType::FP32, first, &shape)),
        ]);
        for seed in 0..100 {
            let out = run_ok(&low, "host", p, &inp, Schedule::Random(seed), &format!("{body} seed {seed}"));
            assert_ranks(&unstack(&out.outputs["outputs"]), &want, 0.0, 0.0, &format!("{body} seed {seed}"));
        }
    }
}
