"""A ring allgather written by hand in the @pl.jit form, with a loop-carried running sum
and window slices.

Every rank puts its row into slot `me` of its [NR, SIZE] ring window. In step k (k = 0 ..
NR-2) it forwards slot (me - k) to the next rank with `pld.tile.remote_store`, bumps the
next rank's step counter (AtomicAdd) and waits until its own counter reaches k + 1 (Ge);
the row that arrived (slot me - k - 1) is added to a running sum carried by
`pl.range(..., init_values=...)`. At the end the kernel copies the whole ring window out
through a subscript slice (`table[:, 0:SIZE] = ring[:, 0:SIZE]`), and a second kernel reads
a single row of the window through a `pl.tensor.slice` view. SIZE is odd.

    table[r]   = x[0 .. NR-1]
    running[r] = sum over k of x[k]
    mine[r]    = x[(r + 1) % NR]          (row r + 1 of r's window, read through a view)
"""
# pld-corpus-ranks: 2,3,4,8
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 27
PAD = 32  # 32 FP32 lanes, SIZE valid.


@pl.jit.incore
def ring_gather(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    ring: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
    steps: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    table: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
    running: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
):
    ctx = pld.get_comm_ctx(ring)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    nxt = (me + 1) % n
    mine = pl.load(x, [0, 0], [1, PAD], valid_shape=[1, SIZE])
    ring = pl.store(mine, [me, 0], ring)
    for k, (acc,) in pl.range(n - 1, init_values=(mine,)):
        slot = (me + n - k) % n
        row = pl.load(ring, [slot, 0], [1, PAD], valid_shape=[1, SIZE])
        pld.tile.remote_store(row, ring, nxt, [slot, 0])
        pld.system.notify(steps, nxt, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(steps, [0, 0], k + 1, cmp=pld.WaitCmp.Ge)
        arrived = pl.load(ring, [(slot + n - 1) % n, 0], [1, PAD], valid_shape=[1, SIZE])
        acc_next = pl.yield_(pl.add(acc, arrived))
    running = pl.store(acc_next, [0, 0], running)
    table[:, 0:SIZE] = ring[:, 0:SIZE]
    return table


@pl.jit.incore
def read_next_row(
    ring: pld.DistributedTensor[[NR, SIZE], pl.FP32],
    mine: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
):
    ctx = pld.get_comm_ctx(ring)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    view = pl.tensor.slice(ring, [1, SIZE], [(me + 1) % n, 0])
    mine = pl.store(pl.load(view, [0, 0], [1, PAD], valid_shape=[1, SIZE]), [0, 0], mine)
    return mine


@pl.jit
def chip_step(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    ring: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
    steps: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    table: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
    running: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    mine: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
):
    ring_gather(x, ring, steps, table, running)
    read_next_row(ring, mine)


@pl.jit.host
def ring_allgather(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    table: pl.Out[pl.Tensor[[NR, NR, SIZE], pl.FP32]],
    running: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    mine: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
):
    ring_buf = pld.alloc_window_buffer([pld.world_size(), SIZE], dtype=pl.FP32)
    steps_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        ring = pld.window(ring_buf, [NR, SIZE], dtype=pl.FP32)
        steps = pld.window(steps_buf, [1, 1], dtype=pl.INT32)
        chip_step(x[r], ring, steps, table[r], running[r], mine[r], device=r)


def golden(tensors, params):
    n = params["ranks"]
    x = tensors["x"][:, 0, :]
    for r in range(n):
        tensors["table"][r] = x
        tensors["running"][r] = x.sum(axis=0)
        tensors["mine"][r] = x[(r + 1) % n]
