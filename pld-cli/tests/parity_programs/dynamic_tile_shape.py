"""Rejected by `pld check` (and so by `pld run`, before it simulates anything): the kernel
loads a tile whose physical shape is the dynamic row count M; a tile's shape must be static
(use a static tile and `valid_shape`, or loop over static tiles)."""
import pypto.language as pl
import pypto.language.distributed as pld

M = pl.dynamic("M")


@pl.program
class DynamicTile:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[M, 64], pl.FP32], y: pl.Out[pl.Tensor[[M, 64], pl.FP32]]) -> pl.Tensor[[M, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [M, 64])
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[M, 64], pl.FP32], y: pl.Out[pl.Tensor[[M, 64], pl.FP32]]):
        self.copy(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[M, 64], pl.FP32], y: pl.Out[pl.Tensor[[M, 64], pl.FP32]]):
        self.chip(x, y, device=0)
