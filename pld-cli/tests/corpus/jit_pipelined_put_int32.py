"""A software-pipelined ring transfer of INT32 blocks in the @pl.jit form: each rank sends
its [CHUNKS * ROWS, COLS] block to the next rank one chunk at a time with subregion
`pld.tensor.put`s at loop-variable offsets, counting each chunk in with an AtomicAdd
notify; between sends it waits (Ge) for the chunk of the same index from the previous rank,
adds 1 to it and accumulates a running column sum carried by `init_values`.

    out[r]   = x[(r - 1) % NR] + 1
    colsum[r] = sum over rows of out[r]      (one [1, COLS] row)
"""
# pld-corpus-ranks: 2,3,4,8
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
CHUNKS = 5
ROWS = 2
COLS = 8  # 8 INT32 lanes: one 32-byte tile row.


@pl.jit.incore
def pipeline(
    x: pl.Tensor[[CHUNKS * ROWS, COLS], pl.INT32],
    out: pl.Out[pl.Tensor[[CHUNKS * ROWS, COLS], pl.INT32]],
    colsum: pl.Out[pl.Tensor[[1, COLS], pl.INT32]],
    inbox: pl.InOut[pld.DistributedTensor[[CHUNKS * ROWS, COLS], pl.INT32]],
    arrived: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
):
    ctx = pld.get_comm_ctx(inbox)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    nxt = (me + 1) % n
    zero = pl.full([1, COLS], 0, dtype=pl.INT32)
    for c, (acc,) in pl.range(CHUNKS, init_values=(zero,)):
        pld.tensor.put(inbox, nxt, x, [c * ROWS, 0], [c * ROWS, 0], [ROWS, COLS], atomic=pld.AtomicType.None_)
        pld.system.notify(arrived, nxt, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(arrived, [0, 0], c + 1, cmp=pld.WaitCmp.Ge)
        acc_rows = acc
        for i, (part,) in pl.range(ROWS, init_values=(acc_rows,)):
            row = pl.adds(pl.load(inbox, [c * ROWS + i, 0], [1, COLS]), 1)
            out = pl.store(row, [c * ROWS + i, 0], out)
            part_next = pl.yield_(pl.add(part, row))
        acc_next = pl.yield_(part_next)
    colsum = pl.store(acc_next, [0, 0], colsum)
    return out


@pl.jit
def per_chip(
    x: pl.Tensor[[CHUNKS * ROWS, COLS], pl.INT32],
    out: pl.Out[pl.Tensor[[CHUNKS * ROWS, COLS], pl.INT32]],
    colsum: pl.Out[pl.Tensor[[1, COLS], pl.INT32]],
    inbox: pl.InOut[pld.DistributedTensor[[CHUNKS * ROWS, COLS], pl.INT32]],
    arrived: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
):
    pipeline(x, out, colsum, inbox, arrived)


@pl.jit.host
def ring_pipeline(
    x: pl.Tensor[[NR, CHUNKS * ROWS, COLS], pl.INT32],
    out: pl.Out[pl.Tensor[[NR, CHUNKS * ROWS, COLS], pl.INT32]],
    colsum: pl.Out[pl.Tensor[[NR, 1, COLS], pl.INT32]],
):
    inbox_buf = pld.alloc_window_buffer([CHUNKS * ROWS, COLS], dtype=pl.INT32)
    arrived_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        inbox = pld.window(inbox_buf, [CHUNKS * ROWS, COLS], dtype=pl.INT32)
        arrived = pld.window(arrived_buf, [1, 1], dtype=pl.INT32)
        per_chip(x[r], out[r], colsum[r], inbox, arrived, device=r)


def golden(tensors, params):
    n = params["ranks"]
    x = tensors["x"].astype(np.int64)
    for r in range(n):
        got = x[(r - 1) % n] + 1
        tensors["out"][r] = got
        tensors["colsum"][r, 0] = got.sum(axis=0)
