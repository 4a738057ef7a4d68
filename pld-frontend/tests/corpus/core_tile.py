# Core tile ops by their DSL names: unified pl.* names dispatching on the operand level,
# pl.tile.* spellings, keyword arguments, memory spaces and dtype attributes.
import pypto.language as pl
import pypto.language.distributed as pld

ROWS = 16
COLS = 64


@pl.jit.incore
def tile_ops(
    x: pl.Tensor[[ROWS, COLS], pl.FP32],
    y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    h: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP16]],
    s: pl.Scalar[pl.FP32],
):
    a = pl.load(x, [0, 0], [ROWS, COLS])
    b = pl.tile.load(x, offsets=[0, 0], shapes=[ROWS, COLS], target_memory=pl.MemorySpace.Vec)
    part = pl.load(x, [0, 0], [ROWS, COLS], [8, COLS])
    c = pl.add(a, b)
    d = pl.mul(c, a)
    e = pl.sub(d, b)
    f = pl.maximum(e, a)
    g = pl.adds(f, s)
    k = pl.muls(g, 2.0)
    m = pl.tile.row_sum(k)
    z = pl.full([ROWS, COLS], 0.0, dtype=pl.FP32)
    t = pl.create_tile([ROWS, COLS], dtype=pl.FP32)
    half = pl.cast(k, dtype=pl.FP16)
    v = pl.tile.read(k, [0, 0])
    pl.tile.write(z, [1, 1], v)
    y = pl.store(k, [0, 0], y)
    h = pl.tile.store(half, offsets=[0, 0], output_tensor=h)
    return y
