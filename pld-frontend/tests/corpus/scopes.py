# Scopes: pl.at (InCore and hierarchy regions), pl.split_aiv lanes, pl.spmd blocks.
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Scopes:
    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, n: pl.Scalar[pl.INDEX]):
        with pl.at(level=pl.Level.CORE_GROUP):
            a = n + 1
        b = a * 2
        with pl.at(level=pl.Level.HOST, role=pl.Role.Orchestrator):
            c = b
        with pl.spmd(4):
            d = c + 1

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, n: pl.Scalar[pl.INDEX]):
        for lane in pl.split_aiv(2):
            x = lane + n
        for _ in pl.split_aiv(2, core_num=2):
            y = n
        z = x + y
