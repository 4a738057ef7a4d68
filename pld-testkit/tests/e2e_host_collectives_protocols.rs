//! §3 of tests_e2e.md, continued: host-orchestrator all_to_all_v (counts, clamping, traffic),
//! the barrier's peer swap over two rounds, multi-core allreduce lanes that clear themselves and
//! the ring allreduce under 100 random schedules, each compared with the golden references.

mod common;
use common::*;
use pld_ir::DataType;
use pld_runtime_abi::ReduceOp;
use pld_sim::Schedule;
use pld_testkit::e2e::{assert_ranks, inputs, lower, parse, run_ok, stack, unstack};
use pld_testkit::reference as gold;

/// `tests/programs/host_all_to_all_v.py` at `p` ranks, with 4 capacity rows of 64 elements.
fn a2av_program(p: usize) -> String {
    include_str!("programs/host_all_to_all_v.py")
        .replace("SIZE = 19", "SIZE = 64")
        .replace("MAXR = 3", "MAXR = 4")
        .replace("pl.dynamic(\"NR\")", &p.to_string())
}

fn check_a2av(p: usize, counts: &dyn Fn(usize, usize) -> i64, schedule: Schedule) {
    const SIZE: usize = 64;
    const MAXR: usize = 4;
    let prog = parse(&a2av_program(p));
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
