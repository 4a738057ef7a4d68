"""A host callback with scalar parameters of three kinds and a module helper, for the
runtime directory's `sub_workers/` module: the callback reads a host input directly, so a run
of `run.py` shows its result without any kernel running.

    y[r] = x[r]                          (chip)
    z    = shift(x, k) * s + flag       (host callback `scale`, k = -2, s = 0.25, flag = True)
"""
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
N = 64
OFFSET = 0.5


def shift(v, k):
    return np.asarray(v) * np.float32(k) + np.float32(OFFSET)


@pl.program
class CallbackScalars:
    @pl.function(type=pl.FunctionType.InCore)
    def copy_k(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        t = pl.load(x, [0, 0], [1, N])
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        y = self.copy_k(x, y)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def scale(
        x: pl.Tensor[[NR, 1, N], pl.FP32],
        k: pl.Scalar[pl.INT32],
        s: pl.Scalar[pl.FP32],
        flag: pl.Scalar[pl.BOOL],
        z: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
    ):
        z[:] = shift(x, k) * np.float32(s) + np.float32(flag)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, 1, N], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
        z: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
    ):
        for r in pl.range(pld.world_size()):
            self.chip(x[r], y[r], device=r)
        self.scale(x, -2, 0.25, True, z)


def golden(tensors, params):
    x = tensors["x"]
    tensors["y"][:] = x
    tensors["z"][:] = shift(x, -2) * np.float32(0.25) + np.float32(1)
