"""Runtime-directory coverage: a host-level temporary (`pl.create_tensor`) written by one chip
dispatch and read by the next, hoisted into `_alloc_intermediates` as a shared tensor."""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")


@pl.program
class HostIntermediate:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(
        self,
        x: pl.Tensor[[1, 32], pl.FP32],
        y: pl.Out[pl.Tensor[[1, 32], pl.FP32]],
    ) -> pl.Tensor[[1, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [1, 32])
        d = pl.add(t, t)
        y = pl.store(d, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def step(self, x: pl.Tensor[[1, 32], pl.FP32], y: pl.Out[pl.Tensor[[1, 32], pl.FP32]]):
        self.twice(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        xs: pl.Tensor[[NR, 1, 32], pl.FP32],
        ys: pl.Out[pl.Tensor[[NR, 1, 32], pl.FP32]],
    ):
        tmp = pl.create_tensor([NR, 1, 32], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.step(xs[r], tmp[r], device=r)
        for r in pl.range(pld.world_size()):
            self.step(tmp[r], ys[r], device=r)
