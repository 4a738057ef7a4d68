//! §1 of tests_e2e.md: collectives hand-written from primitives in InCore kernels — the ring
//! allreduce (reduce-scatter + allgather over a `[2(P-1), P]` signal with modulo rank
//! arithmetic) and the push all-to-all through `pld.tensor.put` with a Set barrier.

use pld_ir::DataType;
use pld_sim::{run, HostTensor, Inputs, Schedule, SimConfig};

fn parse(text: &str) -> pld_ir::Program {
    let _ = pld_ops::registry();
    pld_frontend::parse_str(text)
        .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>()))
}

const RING: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

P = __P__
CHUNK = __CHUNK__
SIZE = P * CHUNK

@pl.program
class Ring:
    @pl.function(type=pl.FunctionType.InCore)
    def ring_step(self, inp: pl.Tensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
                  scratch: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
                  signal: pl.InOut[pld.DistributedTensor[[2 * (P - 1), P], pl.INT32]]):
        ctx = pld.get_comm_ctx(scratch)
        me = pld.rank(ctx)
        left = (me - 1 + P) % P
        t = pl.load(inp, [0, 0], [1, SIZE])
        pl.store(t, [0, 0], scratch)
        for s in pl.range(P - 1):
            for q in pl.range(P):
                if q != me:
                    pld.system.notify(signal, q, [s, me], 1, op=pld.NotifyOp.AtomicAdd)
            for q in pl.range(P):
                if q != me:
                    pld.system.wait(signal, [s, q], 1, cmp=pld.WaitCmp.Ge)
            c = (me - s - 2 + 2 * P) % P
            recv = pld.tile.remote_load(scratch, left, [0, c * CHUNK], [1, CHUNK])
            cur = pl.load(scratch, [0, c * CHUNK], [1, CHUNK])
            acc = pl.add(cur, recv)
            pl.store(acc, [0, c * CHUNK], scratch)
        for s in pl.range(P - 1):
            for q in pl.range(P):
                if q != me:
                    pld.system.notify(signal, q, [P - 1 + s, me], 1, op=pld.NotifyOp.AtomicAdd)
            for q in pl.range(P):
                if q != me:
                    pld.system.wait(signal, [P - 1 + s, q], 1, cmp=pld.WaitCmp.Ge)
            c = (me - s - 1 + 2 * P) % P
            recv = pld.tile.remote_load(scratch, left, [0, c * CHUNK], [1, CHUNK])
            pl.store(recv, [0, c * CHUNK], scratch)
        x = pl.load(scratch, [0, 0], [1, SIZE])
        pl.store(x, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
             scratch: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[2 * (P - 1), P], pl.INT32]]):
        out = self.ring_step(inp, out, scratch, signal)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[P, 1, SIZE], pl.FP32], outputs: pl.Out[pl.Tensor[[P, 1, SIZE], pl.FP32]]):
        scratch_buf = pld.alloc_window_buffer(SIZE * 4, name="scratch")
        sig_buf = pld.alloc_window_buffer(2 * (P - 1) * P * 4, name="signal")
        for r in pl.range(P):
            scratch = pld.window(scratch_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(sig_buf, [2 * (P - 1), P], dtype=pl.INT32)
            self.chip(inputs[r], outputs[r], scratch, signal, device=r)
"#;

#[test]
fn hand_written_ring_allreduce() {
    for p in [2usize, 3, 4, 8] {
        let chunk = 256 / p;
        let size = p * chunk;
        let prog = parse(&RING.replace("__P__", &p.to_string()).replace("__CHUNK__", &chunk.to_string()));
        let per: Vec<f64> = (0..p).flat_map(|r| (0..size).map(move |i| (100 * r + i) as f64)).collect();
        let mut inp = Inputs::new();
        inp.insert("inputs".into(), HostTensor::from_f64(DataType::FP32, vec![p, 1, size], &per));
        for sched in [Schedule::Deterministic, Schedule::Random(5), Schedule::Random(6)] {
            let out = run(&prog, "host", &inp, &SimConfig { schedule: sched, ..SimConfig::ranks(p) })
                .unwrap_or_else(|e| panic!("P={p}: {e}"));
            let o = out.outputs["outputs"].to_f64();
            for r in 0..p {
                for i in 0..size {
                    let want = (p * i) as f64 + (100 * p * (p - 1) / 2) as f64;
                    assert_eq!(o[r * size + i], want, "P={p} rank {r} elem {i}");
                }
                // 2(P-1) chunks read from the left neighbour.
                assert_eq!(out.stats.remote_total(r), (2 * (p - 1) * chunk * 4) as u64, "P={p} rank {r}");
            }
        }
    }
}

const A2A_PUT: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 64
NR = pl.dynamic("NR")

@pl.program
class PutAllToAll:
    @pl.function(type=pl.FunctionType.InCore)
    def a2a_step(self, inp: pl.Tensor[[NR, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
                 data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
                 signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        for dest in pl.range(n):
            pld.tensor.put(data, dest, inp, [me, 0], [dest, 0], [1, SIZE], atomic=pld.AtomicType.None_)
        for q in pl.range(n):
            if q != me:
                pld.system.notify(signal, q, [me, 0], 1, op=pld.NotifyOp.Set)
        for q in pl.range(n):
            if q != me:
                pld.system.wait(signal, [q, 0], 1, cmp=pld.WaitCmp.Ge)
        t = pl.load(data, [0, 0], [NR, SIZE])
        pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[NR, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
             data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        out = self.a2a_step(inp, out, data, signal)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, NR, SIZE], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, NR, SIZE], pl.FP32]]):
        data_buf = pld.alloc_window_buffer(pld.world_size() * SIZE * 4, name="data")
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="signal")
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [NR, SIZE], dtype=pl.FP32)
            signal = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
            self.chip(inputs[r], outputs[r], data, signal, device=r)
"#;

#[test]
fn hand_written_all_to_all_via_put() {
    let prog = parse(A2A_PUT);
    for p in [2usize, 3, 4, 8] {
        let per: Vec<f64> = (0..p)
            .flat_map(|r| (0..p).flat_map(move |d| (0..64).map(move |j| (1000 * r + 100 * d + j) as f64)))
            .collect();
        let mut inp = Inputs::new();
        inp.insert("inputs".into(), HostTensor::from_f64(DataType::FP32, vec![p, p, 64], &per));
        for sched in [Schedule::Deterministic, Schedule::Random(11)] {
            let out = run(&prog, "host", &inp, &SimConfig { schedule: sched, ..SimConfig::ranks(p) })
                .unwrap_or_else(|e| panic!("P={p}: {e}"));
            let o = out.outputs["outputs"].to_f64();
            for r in 0..p {
                for s in 0..p {
                    for j in 0..64 {
                        assert_eq!(
                            o[(r * p + s) * 64 + j],
                            (1000 * s + 100 * r + j) as f64,
                            "P={p} rank {r} row {s}"
                        );
                    }
                }
                assert_eq!(out.stats.remote_of(r, "pld.tensor.put"), ((p - 1) * 64 * 4) as u64);
            }
        }
    }
}

const PRIM: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 64
NR = pl.dynamic("NR")

@pl.program
class Prim:
    @pl.function(type=pl.FunctionType.InCore)
    def step(self, inp: pl.Tensor[[1, __IN__], pl.FP32], out: pl.Out[pl.Tensor[[1, __OUT__], pl.FP32]],
             scratch: pl.InOut[pld.DistributedTensor[[1, __SCR__], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]], root: pl.Scalar[pl.INDEX]):
        ctx = pld.get_comm_ctx(scratch)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
__STAGE__
        for q in pl.range(n):
            if q != me:
                pld.system.notify(signal, q, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        for q in pl.range(n):
            if q != me:
                pld.system.wait(signal, [q, 0], 1, cmp=pld.WaitCmp.Ge)
__BODY__
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[1, __IN__], pl.FP32], out: pl.Out[pl.Tensor[[1, __OUT__], pl.FP32]],
             scratch: pl.InOut[pld.DistributedTensor[[1, __SCR__], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]], root: pl.Scalar[pl.INDEX]):
        out = self.step(inp, out, scratch, signal, root)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, 1, __IN__], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, 1, __OUT__], pl.FP32]]):
        scratch_buf = pld.alloc_window_buffer(__SCR__ * 4, name="scratch")
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="signal")
        for r in pl.range(pld.world_size()):
            scratch = pld.window(scratch_buf, [1, __SCR__], dtype=pl.FP32)
            signal = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
            self.chip(inputs[r], outputs[r], scratch, signal, 0, device=r)
"#;

fn prim(
    p: usize,
    inn: &str,
    out: &str,
    scr: &str,
    stage: &str,
    body: &str,
    per: &[Vec<f64>],
) -> Vec<Vec<f64>> {
    let text = PRIM
        .replace("__IN__", inn)
        .replace("__OUT__", out)
        .replace("__SCR__", scr)
        .replace("__STAGE__", stage)
        .replace("__BODY__", body);
    let prog = parse(&text);
    let n = per[0].len();
    let mut inp = Inputs::new();
    inp.insert("inputs".into(), HostTensor::from_f64(DataType::FP32, vec![p, 1, n], &per.concat()));
    let mut res = Vec::new();
    for sched in [Schedule::Deterministic, Schedule::Random(21), Schedule::Parallel] {
        let o = run(&prog, "host", &inp, &SimConfig { schedule: sched, ..SimConfig::ranks(p) })
            .unwrap_or_else(|e| panic!("P={p} {sched:?}: {e}"));
        let v = o.outputs["outputs"].to_f64();
        let got: Vec<Vec<f64>> = v.chunks(v.len() / p).map(<[f64]>::to_vec).collect();
        if !res.is_empty() {
            assert_eq!(got, res, "P={p} {sched:?} differs");
        }
        res = got;
    }
    res
}

#[test]
fn hand_written_allgather_broadcast_reduce_scatter() {
    for p in [2usize, 3, 4, 8] {
        let ramp: Vec<Vec<f64>> = (0..p).map(|r| (0..64).map(|i| (100 * r + i) as f64).collect()).collect();
        let store = "        t = pl.load(inp, [0, 0], [1, SIZE])\n        pl.store(t, [0, 0], scratch)";
        // 1.3 allgather: every rank reads every window (its own included).
        let body = "        for q in pl.range(n):\n            x = pld.tile.remote_load(scratch, q, [0, 0], [1, SIZE])\n            pl.store(x, [0, q * SIZE], out)";
        let got = prim(p, "SIZE", "NR * SIZE", "SIZE", store, body, &ramp);
        for g in &got {
            assert_eq!(g, &ramp.concat(), "allgather P={p}");
        }
        // 1.5 broadcast from root 0: only the root stages; everyone reads the root.
        let stage = "        if me == root:\n            t = pl.load(inp, [0, 0], [1, SIZE])\n            pl.store(t, [0, 0], scratch)";
        let body = "        x = pld.tile.remote_load(scratch, root, [0, 0], [1, SIZE])\n        pl.store(x, [0, 0], out)";
        let got = prim(p, "SIZE", "SIZE", "SIZE", stage, body, &ramp);
        for (r, g) in got.iter().enumerate() {
            assert_eq!(g, &ramp[0], "broadcast P={p} rank {r}");
            if r > 0 {
                assert_ne!(g, &ramp[r]);
            }
        }
        // 1.6 reduce-scatter: rank r sums chunk r of every rank.
        let rows: Vec<Vec<f64>> =
            (0..p).map(|r| (0..p * 64).map(|i| (100 * r + i) as f64).collect()).collect();
        let stage = "        t = pl.load(inp, [0, 0], [1, NR * SIZE])\n        pl.store(t, [0, 0], scratch)";
        let body = "        acc0 = pl.load(scratch, [0, me * SIZE], [1, SIZE])\n        for q, (acc,) in pl.range(n, init_values=(acc0,)):\n            if q != me:\n                x = pld.tile.remote_load(scratch, q, [0, me * SIZE], [1, SIZE])\n                s = pl.add(acc, x)\n                nxt = pl.yield_(s)\n            else:\n                nxt = pl.yield_(acc)\n            acc_out = pl.yield_(nxt)\n        pl.store(acc_out, [0, 0], out)";
        let got = prim(p, "NR * SIZE", "SIZE", "NR * SIZE", stage, body, &rows);
        for (r, g) in got.iter().enumerate() {
            let want: Vec<f64> =
                (0..64).map(|j| (0..p).map(|k| (100 * k + r * 64 + j) as f64).sum()).collect();
            assert_eq!(g, &want, "reduce_scatter P={p} rank {r}");
        }
    }
}
