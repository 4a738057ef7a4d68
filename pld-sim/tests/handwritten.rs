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
