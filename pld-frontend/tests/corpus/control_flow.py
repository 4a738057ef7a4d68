# Control flow: loops with and without carried values, while loops (both forms), if/else
# with and without yields, nested scopes, scalar arithmetic and comparisons.
import pypto.language as pl
import pypto.language.distributed as pld

N = 8


@pl.program
class ControlFlow:
    @pl.function(type=pl.FunctionType.InCore)
    def loops(self, n: pl.Scalar[pl.INDEX], flag: pl.Scalar[pl.BOOL]) -> pl.Scalar[pl.INDEX]:
        for i in pl.range(N):
            t = i * 2
        for i, (acc, other) in pl.range(1, n, 2, init_values=(0, n)):
            nxt = acc + i
            acc_out, other_out = pl.yield_(nxt, other - 1)
        for j in pl.parallel(0, 4):
            u = j
        for j in pl.unroll(4):
            v = j + 1
        k = 0
        while k < n:
            k2 = k + 1
        for (c,) in pl.while_(init_values=(0,)):
            pl.cond(c < 10)
            c_out = pl.yield_(c + 1)
        if acc_out > 3 and flag:
            r = pl.yield_(acc_out)
        else:
            r = pl.yield_(other_out)
        if not flag:
            z = 1
        elif r == 2:
            z = 2
        else:
            z = 3
        q = r
        q = q + 1
        q += 2
        return q // 2 - (q % 3) * -1
