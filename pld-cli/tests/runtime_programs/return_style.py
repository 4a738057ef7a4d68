"""A return-style host: it creates its result tensor and returns it instead of writing an Out
parameter. The runtime returns results only through Out parameters, so the directory lists
`ys` as an extra trailing Out parameter (`num_return_types` 1) and `_alloc_intermediates` never
replaces the caller's tensor.

    ys[r] = 2 xs[r]
"""
# pld-corpus-ranks: 2
import pypto.language as pl
import pypto.language.distributed as pld

N = 32


@pl.program
class ReturnStyle:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        t = pl.load(x, [0, 0], [1, N])
        y = pl.store(pl.add(t, t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def step(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        self.twice(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, xs: pl.Tensor[[2, 1, N], pl.FP32]) -> pl.Tensor[[2, 1, N], pl.FP32]:
        ys = pl.create_tensor([2, 1, N], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.step(xs[r], ys[r], device=r)
        return ys
