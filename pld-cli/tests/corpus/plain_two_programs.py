"""Two program units in one file, each with its own host entry and its own golden
(`golden_<entry>`): one adds the two inputs per rank, the other multiplies them.
"""
# pld-corpus-run: --program AddUnit
# pld-corpus-run: --program MulUnit
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
N = 48


@pl.program
class AddUnit:
    @pl.function(type=pl.FunctionType.InCore)
    def add_k(self, a: pl.Tensor[[1, N], pl.FP32], b: pl.Tensor[[1, N], pl.FP32], c: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        c = pl.store(pl.add(pl.load(a, [0, 0], [1, N]), pl.load(b, [0, 0], [1, N])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def add_chip(self, a: pl.Tensor[[1, N], pl.FP32], b: pl.Tensor[[1, N], pl.FP32], c: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        c = self.add_k(a, b, c)
        return c

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def add_host(self, a: pl.Tensor[[NR, 1, N], pl.FP32], b: pl.Tensor[[NR, 1, N], pl.FP32], c: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.add_chip(a[r], b[r], c[r], device=r)


@pl.program
class MulUnit:
    @pl.function(type=pl.FunctionType.InCore)
    def mul_k(self, a: pl.Tensor[[1, N], pl.FP32], b: pl.Tensor[[1, N], pl.FP32], c: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        c = pl.store(pl.mul(pl.load(a, [0, 0], [1, N]), pl.load(b, [0, 0], [1, N])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def mul_chip(self, a: pl.Tensor[[1, N], pl.FP32], b: pl.Tensor[[1, N], pl.FP32], c: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        c = self.mul_k(a, b, c)
        return c

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def mul_host(self, a: pl.Tensor[[NR, 1, N], pl.FP32], b: pl.Tensor[[NR, 1, N], pl.FP32], c: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.mul_chip(a[r], b[r], c[r], device=r)


def golden_add_host(tensors, params):
    tensors["c"][:] = tensors["a"] + tensors["b"]


def golden_mul_host(tensors, params):
    tensors["c"][:] = tensors["a"] * tensors["b"]
