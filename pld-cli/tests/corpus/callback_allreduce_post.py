"""A mesh allreduce on the chips, then a host callback (SubWorker) that post-processes the
sums in torch style — `torch.from_numpy` wrapping when torch is there, NumPy otherwise:

    summed[r] = sum_k inp[k]          (every rank r)
    scaled[r] = summed[r] * 0.5 + r
"""
import pypto.language as pl
import pypto.language.distributed as pld

try:
    import torch
except ImportError:
    torch = None
import numpy as np

NR = pl.dynamic("NR")
SIZE = 128
SCALE = 0.5


@pl.program
class AllreducePost:
    @pl.function(type=pl.FunctionType.InCore)
    def reduce_step(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        row = pl.load(inp, [0, 0], [1, SIZE])
        data = pl.store(row, [0, 0], data)
        for k in pl.range(1, n):
            pld.system.notify(signal, (me + k) % n, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        for k in pl.range(1, n):
            pld.system.wait(signal, [(me + k) % n, 0], 1, cmp=pld.WaitCmp.Ge)
        acc = pl.load(data, [0, 0], [1, SIZE])
        for k, (partial,) in pl.range(1, n, init_values=(acc,)):
            theirs = pld.tile.remote_load(data, (me + k) % n, [0, 0], [1, SIZE])
            summed = pl.add(partial, theirs)
            total = pl.yield_(summed)
        out = pl.store(total, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.reduce_step(inp, out, data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def post(
        summed: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        scaled: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ) -> pl.Tensor[[NR, 1, SIZE], pl.FP32]:
        if torch is not None:
            ranks = torch.arange(summed.shape[0], dtype=torch.float32).reshape(-1, 1, 1)
            scaled[:] = summed * SCALE + ranks
        else:
            ranks = np.arange(summed.shape[0], dtype=np.float32).reshape(-1, 1, 1)
            scaled[:] = summed * SCALE + ranks
        return scaled

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inp: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        summed: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
        scaled: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data_buf = pld.alloc_window_buffer(SIZE * 4)
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.chip_orch(inp[r], summed[r], data, signal, device=r)
        scaled = self.post(summed, scaled)


def golden(tensors, params):
    total = tensors["inp"].sum(axis=0)
    n = params["ranks"]
    for r in range(n):
        tensors["summed"][r] = total
        tensors["scaled"][r] = total * SCALE + r
