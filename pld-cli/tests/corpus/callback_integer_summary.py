"""A host callback producing integer results from the chips' floats: per row, the index of
the largest value and the count of positive values (compared exactly).

    y[r]        = x[r] * 3 - 1           (chip)
    top[r, i]   = argmax(y[r, i, :])     (host, INT32)
    npos[r, i]  = #(y[r, i, :] > 0)      (host, INT32)
"""
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
ROWS = 8
COLS = 16


@pl.program
class IntegerSummary:
    @pl.function(type=pl.FunctionType.InCore)
    def affine(self, x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        t = pl.load(x, [0, 0], [ROWS, COLS])
        u = pl.sub(pl.mul(t, 3.0), 1.0)
        y = pl.store(u, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        y = self.affine(x, y)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def summarize(
        y: pl.Tensor[[NR, ROWS, COLS], pl.FP32],
        top: pl.Out[pl.Tensor[[NR, ROWS], pl.INT32]],
        npos: pl.Out[pl.Tensor[[NR, ROWS], pl.INT32]],
    ):
        y = np.asarray(y)
        top[:] = np.argmax(y, axis=-1)
        npos[:] = (y > 0).sum(axis=-1)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, ROWS, COLS], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP32]],
        top: pl.Out[pl.Tensor[[NR, ROWS], pl.INT32]],
        npos: pl.Out[pl.Tensor[[NR, ROWS], pl.INT32]],
    ):
        for r in pl.range(pld.world_size()):
            self.chip(x[r], y[r], device=r)
        self.summarize(y, top, npos)


def golden(tensors, params):
    y = tensors["x"] * np.float32(3) - np.float32(1)
    tensors["y"][:] = y
    tensors["top"][:] = np.argmax(y, axis=-1)
    tensors["npos"][:] = (y > 0).sum(axis=-1)
