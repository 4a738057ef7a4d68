"""Gather one transformed row per rank with `pld.all_gather(local, target)` in the @pl.jit
form (the signal is the compiler's), then every rank reads the whole [NR, SIZE] table.
SIZE is odd on purpose.

    local[r]    = x[r] * 2 - 1
    table[r][k] = local[k]           (for every r and every k)
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 19
# Tile rows are whole 32-byte units: 24 FP32 lanes, of which SIZE are valid.
PAD = 24


@pl.jit.incore
def transform(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    local: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
):
    t = pl.load(x, [0, 0], [1, PAD], valid_shape=[1, SIZE])
    t = pl.adds(pl.muls(t, 2.0), -1.0)
    local = pl.store(t, [0, 0], local)
    return local


@pl.jit.incore
def read_table(
    gathered: pld.DistributedTensor[[NR, SIZE], pl.FP32],
    table: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
):
    for k in pl.range(NR):
        row = pl.load(gathered, [k, 0], [1, PAD], valid_shape=[1, SIZE])
        table = pl.store(row, [k, 0], table)
    return table


@pl.jit
def transform_step(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    local: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
):
    transform(x, local)


@pl.jit
def read_step(
    gathered: pld.DistributedTensor[[NR, SIZE], pl.FP32],
    table: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
):
    read_table(gathered, table)


@pl.jit.host
def gather_rows(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    table: pl.Out[pl.Tensor[[NR, NR, SIZE], pl.FP32]],
):
    local_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    gathered_buf = pld.alloc_window_buffer(pld.world_size() * SIZE * 4)
    local = pld.window(local_buf, [1, SIZE], dtype=pl.FP32)
    gathered = pld.window(gathered_buf, [NR, SIZE], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        transform_step(x[r], local, device=r)
    gathered = pld.all_gather(local, gathered)
    for r in pl.range(pld.world_size()):
        read_step(gathered, table[r], device=r)


def golden(tensors, params):
    local = tensors["x"][:, 0, :] * 2.0 - 1.0
    for r in range(params["ranks"]):
        tensors["table"][r] = local
