"""Runtime-directory coverage: a two-block kernel with a synchronous start, a chip
orchestrator with a loop, a branch and a computed scalar argument, and a host that dispatches
without any comm domain (no ordering token, scalars only)."""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")


@pl.program
class LaunchSpecs:
    @pl.function(type=pl.FunctionType.InCore, core_num=2, sync_start=True)
    def copy_row(
        self,
        x: pl.Tensor[[1, 64], pl.FP32],
        y: pl.Out[pl.Tensor[[1, 64], pl.FP32]],
        tag: pl.Scalar[pl.INT32],
    ) -> pl.Tensor[[1, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [1, 64])
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        x: pl.Tensor[[1, 64], pl.FP32],
        y: pl.Out[pl.Tensor[[1, 64], pl.FP32]],
        n: pl.Scalar[pl.INT32],
    ):
        for i in pl.range(2):
            if n > 1:
                self.copy_row(x, y, n + i)
            else:
                self.copy_row(x, y, 7)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        xs: pl.Tensor[[NR, 1, 64], pl.FP32],
        ys: pl.Out[pl.Tensor[[NR, 1, 64], pl.FP32]],
    ):
        for r in pl.range(pld.world_size()):
            self.chip_orch(xs[r], ys[r], r * 2, device=r)
