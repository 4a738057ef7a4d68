"""Kernels named like C++ keywords (`double`, `new`) beside one already named `double_k`: the
runtime directory renames them deterministically (`double` → `double_k2`, since `double_k` is
taken; `new` → `new_k`) in the `.pto`, the wrappers, their file names and `KERNELS`.

    y[r] = 2 x[r]      (kernel `double`)
    z[r] = y[r] + 1    (kernel `new`)
    w[r] = z[r] * 3    (kernel `double_k`)
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
N = 64


@pl.program
class KeywordKernels:
    @pl.function(type=pl.FunctionType.InCore)
    def double(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        t = pl.load(x, [0, 0], [1, N])
        y = pl.store(pl.mul(t, 2.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def new(self, y: pl.Tensor[[1, N], pl.FP32], z: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        t = pl.load(y, [0, 0], [1, N])
        z = pl.store(pl.add(t, 1.0), [0, 0], z)
        return z

    @pl.function(type=pl.FunctionType.InCore)
    def double_k(self, z: pl.Tensor[[1, N], pl.FP32], w: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        t = pl.load(z, [0, 0], [1, N])
        w = pl.store(pl.mul(t, 3.0), [0, 0], w)
        return w

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(
        self,
        x: pl.Tensor[[1, N], pl.FP32],
        y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
        z: pl.Out[pl.Tensor[[1, N], pl.FP32]],
        w: pl.Out[pl.Tensor[[1, N], pl.FP32]],
    ):
        y = self.double(x, y)
        z = self.new(y, z)
        w = self.double_k(z, w)
        return w

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, 1, N], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
        z: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
        w: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
    ):
        for r in pl.range(pld.world_size()):
            self.chip(x[r], y[r], z[r], w[r], device=r)


def golden(tensors, params):
    x = tensors["x"]
    tensors["y"][:] = x * 2
    tensors["z"][:] = x * 2 + 1
    tensors["w"][:] = (x * 2 + 1) * 3
