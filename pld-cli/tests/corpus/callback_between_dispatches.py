"""A host callback between two chip passes: the second pass reads what Python wrote.

    mid[r]  = x[r] * 2                       (chip pass 1)
    cent[r] = mid[r] - mean(mid[r])          (host callback, NumPy, per rank)
    out[r]  = cent[r] + x[r]                 (chip pass 2)
"""
# pld-corpus-run:
# pld-corpus-run: --schedule random:11
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
ROWS = 4
COLS = 32


@pl.program
class BetweenDispatches:
    @pl.function(type=pl.FunctionType.InCore)
    def double_rows(self, x: pl.Tensor[[ROWS, COLS], pl.FP32], mid: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        t = pl.load(x, [0, 0], [ROWS, COLS])
        mid = pl.store(pl.mul(t, 2.0), [0, 0], mid)
        return mid

    @pl.function(type=pl.FunctionType.InCore)
    def add_back(
        self,
        cent: pl.Tensor[[ROWS, COLS], pl.FP32],
        x: pl.Tensor[[ROWS, COLS], pl.FP32],
        out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ):
        a = pl.load(cent, [0, 0], [ROWS, COLS])
        b = pl.load(x, [0, 0], [ROWS, COLS])
        out = pl.store(pl.add(a, b), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def first_pass(self, x: pl.Tensor[[ROWS, COLS], pl.FP32], mid: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        mid = self.double_rows(x, mid)
        return mid

    @pl.function(type=pl.FunctionType.Orchestration)
    def second_pass(
        self,
        cent: pl.Tensor[[ROWS, COLS], pl.FP32],
        x: pl.Tensor[[ROWS, COLS], pl.FP32],
        out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ):
        out = self.add_back(cent, x, out)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def center(
        mid: pl.Tensor[[NR, ROWS, COLS], pl.FP32],
        cent: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP32]],
    ):
        cent[:] = mid - mid.mean(axis=(1, 2), keepdims=True)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, ROWS, COLS], pl.FP32],
        mid: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP32]],
        cent: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP32]],
        out: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP32]],
    ):
        for r in pl.range(pld.world_size()):
            self.first_pass(x[r], mid[r], device=r)
        self.center(mid, cent)
        for r in pl.range(pld.world_size()):
            self.second_pass(cent[r], x[r], out[r], device=r)


def golden(tensors, params):
    x = tensors["x"]
    mid = x * np.float32(2)
    cent = mid - mid.mean(axis=(1, 2), keepdims=True)
    tensors["mid"][:] = mid
    tensors["cent"][:] = cent
    tensors["out"][:] = cent + x
