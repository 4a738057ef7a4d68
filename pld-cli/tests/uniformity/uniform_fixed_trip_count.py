"""The positive twin of `divergent_trip_count.py`: the kernel allreduces its window three
times in a `for i in pl.range(ROUNDS)` loop, whose trip count every rank shares, then
passes `n - 1` barriers in `for k in pl.range(1, n)` with `n = pld.nranks(ctx)` (the rank
count, the same on every rank). `pld check` accepts it.

    out[r] = NR**(ROUNDS - 1) * sum over ranks k of x[k]
"""
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64
ROUNDS = 3


@pl.program
class FixedTripCount:
    @pl.function(type=pl.FunctionType.InCore)
    def repeat(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        ctx = pld.get_comm_ctx(data)
        n = pld.nranks(ctx)
        data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)
        for i in pl.range(ROUNDS):
            data = pld.tensor.allreduce(data, signal)
        for k in pl.range(1, n):
            signal = pld.tensor.barrier(signal)
        out = pl.store(pl.load(data, [0, 0], [1, SIZE]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.repeat(x, out, data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.chip_orch(x[r], out[r], data, signal, device=r)


def golden(tensors, params):
    n = params["ranks"]
    tensors["out"][:] = tensors["x"].sum(axis=0) * float(n) ** (ROUNDS - 1)
