"""A program-building function whose bound parameter, and a local computed from it, the
host callback uses too (a builder's parameters and locals are visible to the functions it
defines, callbacks included).

    y[r]   = x[r] + ROW_BIAS                  (chip)
    out[r] = y[r] * factor + shift            (host callback; shift = 1 if factor > 0 else -1)
"""
# pld-corpus-run: --bind factor=3
# pld-corpus-run: --bind factor=-2
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
N = 32
ROW_BIAS = 0.25


def build(factor: int):
    if factor > 0:
        shift = 1.0
    else:
        shift = -1.0

    @pl.program
    class Scaled:
        @pl.function(type=pl.FunctionType.InCore)
        def bias(self, x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]]):
            t = pl.load(x, [0, 0], [2, N])
            y = pl.store(pl.add(t, ROW_BIAS), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def chip(self, x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]]):
            y = self.bias(x, y)
            return y

        @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
        def scale(y: pl.Tensor[[NR, 2, N], pl.FP32], out: pl.Out[pl.Tensor[[NR, 2, N], pl.FP32]]):
            out[:] = y * factor + shift

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(
            self,
            x: pl.Tensor[[NR, 2, N], pl.FP32],
            y: pl.Out[pl.Tensor[[NR, 2, N], pl.FP32]],
            out: pl.Out[pl.Tensor[[NR, 2, N], pl.FP32]],
        ):
            for r in pl.range(pld.world_size()):
                self.chip(x[r], y[r], device=r)
            self.scale(y, out)

    return Scaled


def golden(tensors, params):
    y = tensors["x"] + ROW_BIAS
    tensors["y"][:] = y
    shift = 1.0 if params["factor"] > 0 else -1.0
    tensors["out"][:] = y * params["factor"] + shift
