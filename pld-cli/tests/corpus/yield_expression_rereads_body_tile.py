"""A running multiply-accumulate whose update is one nested yield expression: each rank walks
the rows of its block, and the carried row becomes `acc * row + row`, computed in the
`pl.yield_` itself, so the expression reads the row it loaded in the loop body twice.

    out[r] = fold over rows i of x[r]: acc = acc * x[r, i] + x[r, i]   (acc starts at 1)
"""
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
ROWS = 4
COLS = 16


@pl.jit.incore
def mac_rows(x: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[1, COLS], pl.FP32]]):
    one = pl.full([1, COLS], 1.0, dtype=pl.FP32)
    for i, (acc,) in pl.range(ROWS, init_values=(one,)):
        row = pl.load(x, [i, 0], [1, COLS])
        acc_next = pl.yield_(pl.add(pl.mul(acc, row), row))
    out = pl.store(acc_next, [0, 0], out)
    return out


@pl.jit
def per_chip(x: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[1, COLS], pl.FP32]]):
    mac_rows(x, out)


@pl.jit.host
def mac_host(x: pl.Tensor[[NR, ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[NR, 1, COLS], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        per_chip(x[r], out[r], device=r)


def golden(tensors, params):
    x = tensors["x"]
    acc = np.ones_like(tensors["out"])
    for i in range(ROWS):
        acc = acc * x[:, i : i + 1, :] + x[:, i : i + 1, :]
    tensors["out"][:] = acc
