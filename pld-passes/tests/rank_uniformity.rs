//! `CheckRankUniformity` and the rank-dependence dataflow behind it: the rank flows through
//! loop-carried values and `if` results into a later condition (an error at the collective),
//! while conditions on the rank count, constants and the host's device-loop variable stay
//! clean, and a rank-dependent branch around notify/wait only is no error.

mod common;
use common::*;

/// A program whose kernel runs `body` (indented by 8 spaces) with `me`, `n`, `data` and
/// `signal` in scope, dispatched per rank by a host loop whose body is `dispatch`.
fn program(body: &str, dispatch: &str) -> String {
    format!(
        r#"import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        data: pl.InOut[pld.DistributedTensor[[1, 64], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
{body}

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(
        self,
        data: pl.InOut[pld.DistributedTensor[[1, 64], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.k(data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, 64], pl.FP32]):
        data_buf = pld.alloc_window_buffer([1, 64], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)
        data = pld.window(data_buf, [1, 64], dtype=pl.FP32)
        signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
{dispatch}
"#
    )
}

const DISPATCH: &str = "            self.chip(data, signal, device=r)";

/// The messages `CheckRankUniformity` reports for a kernel running `body`.
fn check(body: &str, dispatch: &str) -> Vec<String> {
    init();
    let text = program(body, dispatch);
    let mut p = pld_frontend::parse_str(&text).unwrap_or_else(|e| panic!("{}\n{text}", messages(&e)));
    match run(&mut p, &["CheckRankUniformity"]) {
        Ok(()) => Vec::new(),
        Err(d) => d.iter().map(|d| d.message.clone()).collect(),
    }
}

const REJECTED: &str =
    "collective `pld.tensor.allreduce` under rank-dependent control flow: ranks disagree on whether they call it";

#[test]
fn the_rank_flows_through_a_loop_carried_value_into_a_later_condition() {
    let body = "        acc = 0
        for i in pl.range(4):
            acc = acc + me
        if acc > 0:
            data = pld.tensor.allreduce(data, signal)";
    assert_eq!(check(body, DISPATCH), [REJECTED]);
}

#[test]
fn the_rank_flows_through_a_value_assigned_in_a_rank_dependent_branch() {
    let body = "        root = 0
        if me == 0:
            root = 1
        if root == 1:
            data = pld.tensor.allreduce(data, signal)";
    assert_eq!(check(body, DISPATCH), [REJECTED]);
}

#[test]
fn the_rank_count_constants_and_the_host_device_loop_are_uniform() {
    let body = "        for k in pl.range(1, n):
            data = pld.tensor.allreduce(data, signal)
        if n > 2:
            data = pld.tensor.allreduce(data, signal)
        for i in pl.range(4):
            data = pld.tensor.allreduce(data, signal)";
    assert_eq!(check(body, DISPATCH), Vec::<String>::new());
    // A host condition on the device-loop variable only chooses which devices are
    // dispatched (a comm-domain matter): the host runs once, it is not divergence.
    let some = "            if r < 8:
                self.chip(data, signal, device=r)";
    assert_eq!(check("        data = pld.tensor.allreduce(data, signal)", some), Vec::<String>::new());
}

#[test]
fn a_rank_dependent_branch_around_notify_and_wait_only_is_no_error() {
    let body = "        if me != 0:
            pld.system.notify(signal, 0, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        else:
            for k in pl.range(1, n):
                pld.system.wait(signal, [k, 0], 1, cmp=pld.WaitCmp.Ge)";
    assert_eq!(check(body, DISPATCH), Vec::<String>::new());
}

#[test]
fn each_rank_dependent_condition_of_one_collective_is_reported_once() {
    let body = "        if me == 0:
            if me == 0:
                data = pld.tensor.allreduce(data, signal)
            data = pld.tensor.allreduce(data, signal)";
    assert_eq!(check(body, DISPATCH), [REJECTED, REJECTED]);
}
