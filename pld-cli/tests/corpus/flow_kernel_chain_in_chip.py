"""Kernel results flow inside a chip orchestrator: `y = self.scale(x, y)` where the kernel
ends in `return pl.store(t, [0, 0], y)`, the next kernel takes that `y`, and the
orchestrator returns the last kernel's call; the host passes each dispatch's result on to
a second chip pass.

    y[r] = x[r] * 2
    z[r] = y[r] + 1          (chip_orch returns `self.inc(y, z)`)
    w[r] = z[r] * 2          (a further dispatch on the returned z[r])
"""
# pld-corpus-ranks: 2,3,4,8
# pld-corpus-run:
# pld-corpus-run: --schedule random:3
# pld-corpus-verify: --schedules 3
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
N = 64


@pl.program
class KernelChain:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]) -> pl.Tensor[[1, N], pl.FP32]:
        t = pl.muls(pl.load(x, [0, 0], [1, N]), 2.0)
        return pl.store(t, [0, 0], y)

    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, y: pl.Tensor[[1, N], pl.FP32], z: pl.Out[pl.Tensor[[1, N], pl.FP32]]) -> pl.Tensor[[1, N], pl.FP32]:
        t = pl.adds(pl.load(y, [0, 0], [1, N]), 1.0)
        z = pl.store(t, [0, 0], z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        x: pl.Tensor[[1, N], pl.FP32],
        y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
        z: pl.Out[pl.Tensor[[1, N], pl.FP32]],
    ) -> pl.Tensor[[1, N], pl.FP32]:
        y = self.scale(x, y)
        return self.inc(y, z)

    @pl.function(type=pl.FunctionType.Orchestration)
    def scale_orch(self, z: pl.Tensor[[1, N], pl.FP32], w: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        w = self.scale(z, w)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, 1, N], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
        z: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
        w: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
    ):
        for r in pl.range(pld.world_size()):
            zr = self.chip_orch(x[r], y[r], z[r], device=r)
            self.scale_orch(zr, w[r], device=r)


def golden(tensors, params):
    x = tensors["x"]
    tensors["y"][:] = x * 2
    tensors["z"][:] = x * 2 + 1
    tensors["w"][:] = (x * 2 + 1) * 2
