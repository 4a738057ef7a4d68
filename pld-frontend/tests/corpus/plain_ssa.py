# Plain (non-SSA) syntax as the reference accepts it: reassigned outer values become
# loop-carried values and if results automatically.
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class PlainSsa:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = 0
        best = n
        for i in pl.range(n):
            acc = acc + i
            if i > best:
                best = i
            elif i == 3:
                best = best + 1
        k = 0
        while k < acc:
            k = k + 2
        if n > 4:
            sign = 1
        else:
            sign = -1
        return acc + best * sign + k
