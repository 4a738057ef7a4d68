# On-core scalar arrays (pl.array): creation (positional and keyword dtype, annotated), element
# reads and writes, writes carried through pl.range loops and if/else, explicit op spellings,
# and a histogram of an index tensor written out with pl.write.
import pypto.language as pl

E = 4
T = 6


@pl.program
class Arrays:
    @pl.function(type=pl.FunctionType.InCore)
    def histogram(
        self,
        idx: pl.Tensor[[T, 2], pl.INT32],
        out: pl.Out[pl.Tensor[[E, 1], pl.INT32]],
        base: pl.Scalar[pl.INT32],
    ) -> pl.Tensor[[E, 1], pl.INT32]:
        counts = pl.array.create(E, pl.INT32)
        for e in pl.range(E):
            counts[e] = 0
        for t in pl.range(T):
            for k in pl.range(2):
                eid = pl.read(idx, [t, k])
                cur = counts[eid]
                counts[eid] = cur + 1
        for e in pl.range(E):
            c = counts[e]
            if c > base:
                counts[e] = c - base
            else:
                counts[e] = pl.const(0, pl.INT32)
        for e in pl.range(E):
            pl.write(out, [e, 0], counts[e])
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def spellings(self, x: pl.Tensor[[16], pl.INT32]) -> pl.Tensor[[16], pl.INT32]:
        arr: pl.Array[8, pl.INT64] = pl.array.create(8, dtype=pl.INT64)
        arr: pl.Array[8, pl.INT64] = pl.array.update_element(arr, 0, 7)
        v0: pl.Scalar[pl.INT64] = pl.array.get_element(arr, 0)
        for i in pl.range(8):
            arr[i] = i
        flags = pl.array.create(2, pl.BOOL)
        flags[1] = True
        f = flags[1]
        if f:
            arr[7] = v0 + arr[1]
        return x
