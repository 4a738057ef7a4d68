"""Rank 0 stores x and returns early; every other rank stores 2*x and returns at the end.
Every path returns `out`, so the early return becomes a structured `if` that yields it.
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64


@pl.program
class EarlyReturn:
    @pl.function(type=pl.FunctionType.InCore)
    def step(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    ):
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        t = pl.load(x, [0, 0], [1, SIZE])
        if me == 0:
            out = pl.store(t, [0, 0], out)
            return out
        out = pl.store(pl.add(t, t), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    ):
        self.step(x, out, data)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            self.chip_orch(x[r], out[r], data, device=r)


def golden(tensors, params):
    x = tensors["x"]
    out = 2 * x
    out[0] = x[0]
    tensors["out"][:] = out
