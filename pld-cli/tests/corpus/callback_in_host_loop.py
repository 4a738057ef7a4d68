"""A host loop alternating chip work and a host callback on one InOut state: each round the
chips add the input, then Python halves the state in place.

    acc <- (acc + x) * 0.5      ROUNDS times, for every rank's row
"""
# pld-corpus-run:
# pld-corpus-run: --schedule parallel
# pld-corpus-run: --schedule random:3
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
N = 64
ROUNDS = 3


@pl.program
class HostLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def accumulate(self, x: pl.Tensor[[1, N], pl.FP32], acc: pl.InOut[pl.Tensor[[1, N], pl.FP32]]):
        s = pl.add(pl.load(acc, [0, 0], [1, N]), pl.load(x, [0, 0], [1, N]))
        acc = pl.store(s, [0, 0], acc)
        return acc

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_round(self, x: pl.Tensor[[1, N], pl.FP32], acc: pl.InOut[pl.Tensor[[1, N], pl.FP32]]):
        acc = self.accumulate(x, acc)
        return acc

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def halve(acc: pl.InOut[pl.Tensor[[NR, 1, N], pl.FP32]]):
        acc *= 0.5

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, x: pl.Tensor[[NR, 1, N], pl.FP32], acc: pl.InOut[pl.Tensor[[NR, 1, N], pl.FP32]]):
        for it in pl.range(ROUNDS):
            for r in pl.range(pld.world_size()):
                self.chip_round(x[r], acc[r], device=r)
            self.halve(acc)


def golden(tensors, params):
    acc = tensors["acc"]
    for _ in range(ROUNDS):
        acc[:] = (acc + tensors["x"]) * np.float32(0.5)
