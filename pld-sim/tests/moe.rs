//! §5.1 at reduced size: expert-parallel MoE dispatch, local expert and combine, chained as
//! three kernels by the chip orchestrator. Every token of rank r goes to expert rank
//! `(r + t) mod P` through a subregion put with runtime offsets, counts are published with
//! AtomicAdd notifies (self included), the expert scales its rows by `(rank + 1)` and the
//! combine puts them back to the source's routed buffer; mesh barriers separate the phases.

use pld_ir::DataType;
use pld_sim::{run, HostTensor, Inputs, Schedule, SimConfig};

const MOE: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

T = 8
D = 64
P = __P__

@pl.program
class Moe:
    @pl.function(type=pl.FunctionType.InCore)
    def dispatch_step(self, x: pl.Tensor[[T, D], pl.FP32], recv_x: pl.InOut[pld.DistributedTensor[[P * T, D], pl.FP32]],
                      pub_counts: pl.InOut[pld.DistributedTensor[[P, 1], pl.INT32]],
                      data_done: pl.InOut[pld.DistributedTensor[[P, 1], pl.INT32]], me: pl.Scalar[pl.INDEX]):
        for t in pl.range(T):
            d = (me + t) % P
            pld.tensor.put(recv_x, d, x, [me * T + t, 0], [t, 0], [1, D], atomic=pld.AtomicType.None_)
            pld.system.notify(pub_counts, d, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        for q in pl.range(P):
            if q != me:
                pld.system.notify(data_done, q, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        for q in pl.range(P):
            if q != me:
                pld.system.wait(data_done, [q, 0], 1, cmp=pld.WaitCmp.Ge)
        return recv_x

    @pl.function(type=pl.FunctionType.InCore)
    def expert_step(self, recv_x: pld.DistributedTensor[[P * T, D], pl.FP32], pub_counts: pld.DistributedTensor[[P, 1], pl.INT32],
                    recv_y: pl.Out[pl.Tensor[[P * T, D], pl.FP32]], cnt_out: pl.Out[pl.Tensor[[P, 1], pl.INT32]],
                    me: pl.Scalar[pl.INDEX]):
        for s in pl.range(P):
            for t in pl.range(T):
                if (s + t) % P == me:
                    row = pl.load(recv_x, [s * T + t, 0], [1, D])
                    y = pl.muls(row, me + 1)
                    pl.store(y, [s * T + t, 0], recv_y)
        c = pl.load(pub_counts, [0, 0], [P, 1])
        pl.store(c, [0, 0], cnt_out)
        return recv_y

    @pl.function(type=pl.FunctionType.InCore)
    def combine_step(self, recv_y: pl.Tensor[[P * T, D], pl.FP32], routed: pl.InOut[pld.DistributedTensor[[T, D], pl.FP32]],
                     combine_done: pl.InOut[pld.DistributedTensor[[P, 1], pl.INT32]], me: pl.Scalar[pl.INDEX]):
        for s in pl.range(P):
            for t in pl.range(T):
                if (s + t) % P == me:
                    pld.tensor.put(routed, s, recv_y, [t, 0], [s * T + t, 0], [1, D], atomic=pld.AtomicType.None_)
        for q in pl.range(P):
            if q != me:
                pld.system.notify(combine_done, q, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        for q in pl.range(P):
            if q != me:
                pld.system.wait(combine_done, [q, 0], 1, cmp=pld.WaitCmp.Ge)
        return routed

    @pl.function(type=pl.FunctionType.InCore)
    def out_step(self, routed: pld.DistributedTensor[[T, D], pl.FP32], out: pl.Out[pl.Tensor[[T, D], pl.FP32]]):
        r = pl.load(routed, [0, 0], [T, D])
        pl.store(r, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[T, D], pl.FP32], recv_y: pl.Out[pl.Tensor[[P * T, D], pl.FP32]], cnt_out: pl.Out[pl.Tensor[[P, 1], pl.INT32]],
             out: pl.Out[pl.Tensor[[T, D], pl.FP32]],
             recv_x: pl.InOut[pld.DistributedTensor[[P * T, D], pl.FP32]], pub_counts: pl.InOut[pld.DistributedTensor[[P, 1], pl.INT32]],
             data_done: pl.InOut[pld.DistributedTensor[[P, 1], pl.INT32]], routed: pl.InOut[pld.DistributedTensor[[T, D], pl.FP32]],
             combine_done: pl.InOut[pld.DistributedTensor[[P, 1], pl.INT32]], me: pl.Scalar[pl.INDEX]):
        recv_x = self.dispatch_step(x, recv_x, pub_counts, data_done, me)
        recv_y = self.expert_step(recv_x, pub_counts, recv_y, cnt_out, me)
        routed = self.combine_step(recv_y, routed, combine_done, me)
        out = self.out_step(routed, out)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[P, T, D], pl.FP32], recv_y: pl.Out[pl.Tensor[[P, P * T, D], pl.FP32]],
             cnt_out: pl.Out[pl.Tensor[[P, P, 1], pl.INT32]], out: pl.Out[pl.Tensor[[P, T, D], pl.FP32]]):
        recv_x_buf = pld.alloc_window_buffer(P * T * D * 4, name="recv_x")
        pub_buf = pld.alloc_window_buffer(P * 4, name="pub_counts")
        dd_buf = pld.alloc_window_buffer(P * 4, name="data_done")
        routed_buf = pld.alloc_window_buffer(T * D * 4, name="routed_y_buf")
        cd_buf = pld.alloc_window_buffer(P * 4, name="combine_done")
        for r in pl.range(P):
            recv_x = pld.window(recv_x_buf, [P * T, D], dtype=pl.FP32)
            pub_counts = pld.window(pub_buf, [P, 1], dtype=pl.INT32)
            data_done = pld.window(dd_buf, [P, 1], dtype=pl.INT32)
            routed = pld.window(routed_buf, [T, D], dtype=pl.FP32)
            combine_done = pld.window(cd_buf, [P, 1], dtype=pl.INT32)
            self.chip(x[r], recv_y[r], cnt_out[r], out[r], recv_x, pub_counts, data_done, routed, combine_done, r, device=r)
"#;

#[test]
fn moe_dispatch_expert_combine_reduced() {
    let _ = pld_ops::registry();
    for p in [2usize, 3, 4, 8] {
        let prog = pld_frontend::parse_str(&MOE.replace("__P__", &p.to_string()))
            .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>()));
        let x: Vec<f64> = (0..p)
            .flat_map(|r| (0..8).flat_map(move |t| (0..64).map(move |d| (100 * r + 10 * t + d) as f64)))
            .collect();
        let mut inp = Inputs::new();
        inp.insert("x".into(), HostTensor::from_f64(DataType::FP32, vec![p, 8, 64], &x));
        for sched in [Schedule::Deterministic, Schedule::Random(4), Schedule::Parallel] {
            let out = run(&prog, "host", &inp, &SimConfig { schedule: sched, ..SimConfig::ranks(p) })
                .unwrap_or_else(|e| panic!("P={p} {sched:?}: {e}"));
            let o = out.outputs["out"].to_f64();
            let cnt = out.outputs["cnt_out"].to_f64();
            for r in 0..p {
                for t in 0..8 {
                    let scale = ((r + t) % p + 1) as f64;
                    for d in 0..64 {
                        assert_eq!(
                            o[(r * 8 + t) * 64 + d],
                            x[(r * 8 + t) * 64 + d] * scale,
                            "P={p} {sched:?} rank {r} token {t}"
                        );
                    }
                }
                for s in 0..p {
                    let want = (0..8).filter(|t| (s + t) % p == r).count() as f64;
                    assert_eq!(cnt[r * p + s], want, "P={p} counts of rank {r} from {s}");
                }
            }
            // Every token crosses twice unless it stays on its own rank.
            for r in 0..p {
                let remote_tokens = (0..8).filter(|t| (r + t) % p != r).count() as u64;
                assert_eq!(
                    out.stats.remote_of(r, "pld.tensor.put"),
                    2 * remote_tokens * 64 * 4,
                    "P={p} rank {r} traffic"
                );
            }
        }
    }
}
