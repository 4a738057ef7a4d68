"""The positive twin of `divergent_rank_parameter.py`: the host hands each device its index
(`self.chip_orch(..., r, device=r)`), the chip orchestration passes it on to the kernel,
and the kernel branches on it only to choose what it stores; the allreduce runs on every
rank, outside the branch. The host loop itself is the per-rank dispatch, not divergence.
`pld check` accepts it.

    out[0] = 2 * sum over ranks k of x[k]
    out[r] = sum over ranks k of x[k]          (r > 0)
"""
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64


@pl.program
class DeviceIndexSelectsData:
    @pl.function(type=pl.FunctionType.InCore)
    def step(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        me: pl.Scalar[pl.INT32],
    ):
        data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)
        data = pld.tensor.allreduce(data, signal)
        total = pl.load(data, [0, 0], [1, SIZE])
        if me > 0:
            out = pl.store(total, [0, 0], out)
        else:
            out = pl.store(pl.muls(total, 2.0), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        me: pl.Scalar[pl.INT32],
    ):
        self.step(x, out, data, signal, me)

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
            self.chip_orch(x[r], out[r], data, signal, r, device=r)


def golden(tensors, params):
    total = tensors["x"].sum(axis=0)
    tensors["out"][:] = total
    tensors["out"][0] = 2.0 * total
