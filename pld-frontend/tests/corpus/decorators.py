# Decorator forms: every function type, host orchestrator by level/role, extra keywords
# kept as attributes, and a SubWorker host callback whose Python body is not DSL.
import pypto.language as pl
import pypto.language.distributed as pld
import torch


@pl.program
class Decorators:
    @pl.function(type=pl.FunctionType.InCore, core_num=4)
    def incore(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        return x

    @pl.function(type=pl.FunctionType.AIV)
    def aiv(self, n: pl.Scalar[pl.INT32]):
        pass

    @pl.function(type=pl.FunctionType.AIC)
    def aic(self, n: pl.Scalar[pl.INT32]):
        pass

    @pl.function(level=pl.Level.CHIP, role=pl.Role.Orchestrator)
    def chip(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = self.incore(x)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def check(f: pl.Tensor[[16, 16], pl.FP32]):
        expected = torch.full((16, 16), 5.0)
        assert torch.allclose(f, expected)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[16, 16], pl.FP32]):
        for r in pl.range(pld.world_size()):
            y = self.chip(x, device=r)
            self.check(y)
