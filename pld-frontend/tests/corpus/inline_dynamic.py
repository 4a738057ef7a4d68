"""A pl.dynamic symbol written inline in annotations is declared by the printed program."""
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class Inline:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[pl.dynamic("NR"), 8], pl.FP32], y: pl.Out[pl.Tensor[[pl.dynamic("NR"), 8], pl.FP32]]):
        t = pl.load(x, [0, 0], [1, 8])
        pl.store(t, [0, 0], y)
