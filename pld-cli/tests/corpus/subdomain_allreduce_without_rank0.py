"""Two comm domains in one host program: every device joins the first (a ring shift of a
[64] window declared 1-D on the host and [1, 64] in the kernels), and every device but
0 joins the second, where a host allreduce sums their rows. Ranks inside the second domain
are group-local: the kernel's `pld.rank` / `pld.nranks` count devices 1.. only. The second
domain is a static set: the builder's `nranks` (run on that many ranks) bounds a constant
`range(1, nranks)` (a part of `range(world_size())` is refused: no static device set).

    shifted[d] = x[(d + 1) % NR]                                   (every device d)
    others[d]  = sum over e >= 1 of x[e]; group rank d - 1 of NR - 1   (d >= 1; row 0 stays 0)
"""
# pld-corpus-run: --bind nranks=4
# pld-corpus-ranks: 4
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64


def build(nranks: int):
    @pl.program
    class SubdomainWithoutRank0:
        @pl.function(type=pl.FunctionType.InCore)
        def shift(
            self,
            x: pl.Tensor[[1, SIZE], pl.FP32],
            shifted: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
            win: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
            flag: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
        ):
            ctx = pld.get_comm_ctx(win)
            me = pld.rank(ctx)
            n = pld.nranks(ctx)
            win = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], win)
            pld.system.notify(flag, (me + n - 1) % n, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)
            pld.system.wait(flag, [0, 0], 1, cmp=pld.WaitCmp.Ge)
            shifted = pl.store(pld.tile.remote_load(win, (me + 1) % n, [0, 0], [1, SIZE]), [0, 0], shifted)

        @pl.function(type=pl.FunctionType.InCore)
        def stage(
            self,
            x: pl.Tensor[[1, SIZE], pl.FP32],
            data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
            rank_out: pl.Out[pl.Tensor[[1, 8], pl.INT32]],
        ):
            ctx = pld.get_comm_ctx(data)
            data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)
            rank_out = pl.tensor.write(rank_out, [0, 0], pld.rank(ctx))
            rank_out = pl.tensor.write(rank_out, [0, 1], pld.nranks(ctx))

        @pl.function(type=pl.FunctionType.InCore)
        def collect(
            self,
            data: pld.DistributedTensor[[1, SIZE], pl.FP32],
            others: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        ):
            others = pl.store(pl.load(data, [0, 0], [1, SIZE]), [0, 0], others)

        @pl.function(type=pl.FunctionType.Orchestration)
        def shift_orch(
            self,
            x: pl.Tensor[[1, SIZE], pl.FP32],
            shifted: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
            win: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
            flag: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
        ):
            self.shift(x, shifted, win, flag)

        @pl.function(type=pl.FunctionType.Orchestration)
        def stage_orch(
            self,
            x: pl.Tensor[[1, SIZE], pl.FP32],
            data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
            rank_out: pl.Out[pl.Tensor[[1, 8], pl.INT32]],
        ):
            self.stage(x, data, rank_out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def collect_orch(
            self,
            data: pld.DistributedTensor[[1, SIZE], pl.FP32],
            others: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        ):
            self.collect(data, others)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(
            self,
            x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
            shifted: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
            others: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
            group_rank: pl.Out[pl.Tensor[[NR, 1, 8], pl.INT32]],
        ):
            win_buf = pld.alloc_window_buffer([SIZE], dtype=pl.FP32)
            flag_buf = pld.alloc_window_buffer([1], dtype=pl.INT32)
            data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
            for d in pl.range(pld.world_size()):
                win = pld.window(win_buf, [SIZE], dtype=pl.FP32)
                flag = pld.window(flag_buf, [1], dtype=pl.INT32)
                self.shift_orch(x[d], shifted[d], win, flag, device=d)
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            for d in pl.range(1, nranks):
                self.stage_orch(x[d], data, group_rank[d], device=d)
            data = pld.all_reduce(data)
            for d in pl.range(1, nranks):
                self.collect_orch(data, others[d], device=d)

    return SubdomainWithoutRank0


def golden(tensors, params):
    n = params["ranks"]
    x = tensors["x"]
    total = x[1:].sum(axis=0)
    for d in range(n):
        tensors["shifted"][d] = x[(d + 1) % n]
        if d >= 1:
            tensors["others"][d] = total
            tensors["group_rank"][d, 0, 0] = d - 1
            tensors["group_rank"][d, 0, 1] = n - 1
