"""A host callback that calls a plain helper function of the module and uses module
constants; the chips' reduction result is normalised on the host.

    s[r]   = row sums of x[r]             (chip: tile.row_sum)
    out[r] = rms_normalise(s[r], EPS)     (host helper)
"""
import math

import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
ROWS = 8
COLS = 16
EPS = 1e-3


def rms_normalise(v, eps):
    v = np.asarray(v, dtype=np.float32)
    return v / np.float32(math.sqrt(float((v * v).mean()) + eps))


@pl.program
class Helpers:
    @pl.function(type=pl.FunctionType.InCore)
    def row_sums(self, x: pl.Tensor[[ROWS, COLS], pl.FP32], s: pl.Out[pl.Tensor[[ROWS, 1], pl.FP32]]):
        t = pl.load(x, [0, 0], [ROWS, COLS])
        tmp = pl.tile.create([ROWS, COLS], dtype=pl.FP32)
        r = pl.tile.row_sum(t, tmp)
        s = pl.store(r, [0, 0], s)
        return s

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[ROWS, COLS], pl.FP32], s: pl.Out[pl.Tensor[[ROWS, 1], pl.FP32]]):
        s = self.row_sums(x, s)
        return s

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def normalise(s: pl.Tensor[[NR, ROWS, 1], pl.FP32], out: pl.Out[pl.Tensor[[NR, ROWS, 1], pl.FP32]]):
        for r in range(s.shape[0]):
            out[r] = rms_normalise(s[r], EPS)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, ROWS, COLS], pl.FP32],
        s: pl.Out[pl.Tensor[[NR, ROWS, 1], pl.FP32]],
        out: pl.Out[pl.Tensor[[NR, ROWS, 1], pl.FP32]],
    ):
        for r in pl.range(pld.world_size()):
            self.chip(x[r], s[r], device=r)
        self.normalise(s, out)


def golden(tensors, params):
    s = tensors["x"].sum(axis=-1, keepdims=True, dtype=np.float32)
    tensors["s"][:] = s
    for r in range(params["ranks"]):
        tensors["out"][r] = rms_normalise(s[r], EPS)
