"""The rank reaches a kernel as a parameter: the host hands each device its index
(`self.chip_orch(..., r, device=r)`), the chip orchestration passes it on, and the kernel
allreduces only `if me > 0:`. `pld check` rejects it at the collective (E0106), labelling
the condition and the argument the rank is passed in through.
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64


@pl.program
class RankParameter:
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
        if me > 0:
            data = pld.tensor.allreduce(data, signal)
        out = pl.store(pl.load(data, [0, 0], [1, SIZE]), [0, 0], out)

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
