"""Half-precision tensors across the host-callback boundary: FP16 crosses as NumPy float16,
BF16 (which NumPy lacks) as float32 values rounded back to BF16 on the way in.

    h[r] = a[r] + a[r]               (chip, FP16)
    g[r] = b[r] * 2                  (chip, BF16)
    hs   = h * 0.25  (FP16)          (host callback)
    gs   = g + 1     (BF16)          (host callback)
"""
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
ROWS = 2
COLS = 64


@pl.program
class HalfPrecision:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(
        self,
        a: pl.Tensor[[ROWS, COLS], pl.FP16],
        b: pl.Tensor[[ROWS, COLS], pl.BF16],
        h: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP16]],
        g: pl.Out[pl.Tensor[[ROWS, COLS], pl.BF16]],
    ):
        ta = pl.load(a, [0, 0], [ROWS, COLS])
        h = pl.store(pl.add(ta, ta), [0, 0], h)
        tb = pl.load(b, [0, 0], [ROWS, COLS])
        g = pl.store(pl.mul(tb, 2.0), [0, 0], g)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(
        self,
        a: pl.Tensor[[ROWS, COLS], pl.FP16],
        b: pl.Tensor[[ROWS, COLS], pl.BF16],
        h: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP16]],
        g: pl.Out[pl.Tensor[[ROWS, COLS], pl.BF16]],
    ):
        self.twice(a, b, h, g)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def rescale(
        h: pl.Tensor[[NR, ROWS, COLS], pl.FP16],
        g: pl.Tensor[[NR, ROWS, COLS], pl.BF16],
        hs: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP16]],
        gs: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.BF16]],
    ):
        assert h.dtype == np.float16 and g.dtype == np.float32
        hs[:] = h * np.float16(0.25)
        gs[:] = g + 1

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        a: pl.Tensor[[NR, ROWS, COLS], pl.FP16],
        b: pl.Tensor[[NR, ROWS, COLS], pl.BF16],
        h: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP16]],
        g: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.BF16]],
        hs: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP16]],
        gs: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.BF16]],
    ):
        for r in pl.range(pld.world_size()):
            self.chip(a[r], b[r], h[r], g[r], device=r)
        self.rescale(h, g, hs, gs)


def golden(tensors, params):
    a, b = tensors["a"], tensors["b"]
    tensors["h"][:] = a + a
    tensors["g"][:] = b * 2
    tensors["hs"][:] = (a + a) * np.float16(0.25)
    tensors["gs"][:] = b * 2 + 1
