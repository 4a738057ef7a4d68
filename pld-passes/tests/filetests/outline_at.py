# A pl.at(CORE_GROUP) region in a chip orchestration is outlined into an InCore kernel,
# which is then placed (pure vector work: AIV).
# DUMP-AFTER: OutlineIncoreScopes
# CHECK: def orch(
# CHECK: self.orch_incore_0(x, y)
# CHECK: @pl.function(type=pl.FunctionType.InCore)
# CHECK: def orch_incore_0(self, x: pl.Tensor[[8, 8], pl.FP32], y: pl.Tensor[[8, 8], pl.FP32]):
# CHECK: pl.tile.load(x, [0, 0], [8, 8])
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Outline:
    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            v = pl.tile.load(x, [0, 0], [8, 8])
            w = pl.tile.adds(v, 1.0)
            pl.tile.store(w, [0, 0], y)
