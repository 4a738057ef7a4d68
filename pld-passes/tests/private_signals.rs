//! SynthesizeAllReduceSignals reads each op's private-signal rule: the ergonomic calls of a
//! host orchestrator get signals of the registered shapes (`[ws]` for broadcast and
//! reduce_scatter, `[ws, 1]` for allgather and all_to_all, `[2*(n-1)+1, n]` for a ring
//! allreduce with `nranks=n`, the `[n, 1]` shape standing in the all_to_all_v signal slot),
//! and every call then lowers to its host builtin.

mod common;
use common::*;

const PROGRAM: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 16

@pl.program
class Ergo:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, x: pl.Tensor[[1, SIZE], pl.FP32], one: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
             rows: pl.Out[pld.DistributedTensor[[4, SIZE], pl.FP32]], big: pl.Out[pld.DistributedTensor[[8, SIZE], pl.FP32]],
             cnt: pl.Out[pld.DistributedTensor[[4, 1], pl.INT32]]):
        t = pl.load(x, [0, 0], [1, SIZE])
        one = pl.store(t, [0, 0], one)
        rows = pl.store(t, [0, 0], rows)
        big = pl.store(t, [0, 0], big)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[1, SIZE], pl.FP32], one: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
             rows: pl.Out[pld.DistributedTensor[[4, SIZE], pl.FP32]], big: pl.Out[pld.DistributedTensor[[8, SIZE], pl.FP32]],
             cnt: pl.Out[pld.DistributedTensor[[4, 1], pl.INT32]]):
        self.fill(x, one, rows, big, cnt)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[4, 1, SIZE], pl.FP32]):
        one_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        rows_buf = pld.alloc_window_buffer([4, SIZE], dtype=pl.FP32)
        got_buf = pld.alloc_window_buffer([4, SIZE], dtype=pl.FP32)
        big_buf = pld.alloc_window_buffer([8, SIZE], dtype=pl.FP32)
        out_buf = pld.alloc_window_buffer([8, SIZE], dtype=pl.FP32)
        cnt_buf = pld.alloc_window_buffer([4, 1], dtype=pl.INT32)
        recv_buf = pld.alloc_window_buffer([4, 1], dtype=pl.INT32)
        one = pld.window(one_buf, [1, SIZE], dtype=pl.FP32)
        rows = pld.window(rows_buf, [4, SIZE], dtype=pl.FP32)
        got = pld.window(got_buf, [4, SIZE], dtype=pl.FP32)
        big = pld.window(big_buf, [8, SIZE], dtype=pl.FP32)
        out = pld.window(out_buf, [8, SIZE], dtype=pl.FP32)
        cnt = pld.window(cnt_buf, [4, 1], dtype=pl.INT32)
        recv = pld.window(recv_buf, [4, 1], dtype=pl.INT32)
        for r in pl.range(4):
            self.chip(x[r], one, rows, big, cnt, device=r)
        one = pld.broadcast(one, root=0)
        rows = pld.reduce_scatter(rows)
        got = pld.all_gather(one, got)
        got = pld.all_to_all(rows, got)
        one = pld.all_reduce(one, mode="ring", nranks=4)
        out = pld.all_to_all_v(big, out, cnt, recv, nranks=4)
"#;

#[test]
fn each_ergonomic_call_gets_the_signal_its_rule_registers_and_lowers() {
    init();
    let mut p = pld_frontend::parse_str(PROGRAM).unwrap_or_else(|d| panic!("{d}"));
    run(&mut p, &["SynthesizeAllReduceSignals"]).unwrap_or_else(|d| panic!("{d}"));
    let t = func_text(&p, "host");
    let ws = |k: usize| format!("__allreduce_signal_world_size_{k}");
    let sig = |k: usize, shape: &str| {
        format!("__allreduce_signal_{k}: pld.DistributedTensor[[{shape}], pl.INT32] = pld.tensor.window(")
    };
    check_in_order(
        &t,
        &[
            &sig(0, &ws(0)),
            &sig(1, &ws(1)),
            &sig(2, &format!("{}, 1", ws(2))),
            &sig(3, &format!("{}, 1", ws(3))),
            &sig(4, "7, 4"),
            &sig(5, "4, 1"),
            // Rebinding gives each result a fresh name (`one_1` is the broadcast's result).
            "pld.tensor.broadcast(one, __allreduce_signal_0, root=0)",
            "pld.tensor.reduce_scatter(rows, __allreduce_signal_1)",
            "pld.tensor.allgather(one_1, got, __allreduce_signal_2)",
            "pld.tensor.all_to_all(rows_1, got_1, __allreduce_signal_3)",
            "pld.tensor.allreduce(one_1, __allreduce_signal_4, mode=\"ring\", nranks=4)",
            "pld.tensor.all_to_all_v(big, out, __allreduce_signal_5, cnt, recv)",
        ],
    );
    // Every private signal joins the comm domain and every call becomes its host builtin.
    run(&mut p, &["MaterializeCommDomainScopes", "LowerHostTensorCollectives"])
        .unwrap_or_else(|d| panic!("{d}"));
    let t = func_text(&p, "host");
    for b in ["broadcast", "reduce_scatter", "allgather", "all_to_all", "allreduce_ring", "all_to_all_v"] {
        assert!(t.contains(&format!("builtin.tensor.{b}(")), "{b}:\n{t}");
    }
}
