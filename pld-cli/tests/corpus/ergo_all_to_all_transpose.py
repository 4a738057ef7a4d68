"""A distributed block transpose with `pld.all_to_all(input, target)` in the @pl.jit form:
rank r sends row d of its [NR, SIZE] block to rank d, and receives everyone's row r. The
kernel offsets every value by the sender's rank first, so the received table shows who
sent what. SIZE is odd.

    sent[r][d]     = blocks[r][d] + r
    received[r][k] = sent[k][r]              (row k came from rank k)
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 13
# Tile rows are whole 32-byte units: 16 lanes, of which SIZE are valid.
PAD = 16


@pl.jit.incore
def stage(
    block: pl.Tensor[[NR, SIZE], pl.FP32],
    sender: pl.Scalar[pl.FP32],
    outbox: pl.Out[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
):
    for d in pl.range(NR):
        t = pl.load(block, [d, 0], [1, PAD], valid_shape=[1, SIZE])
        t = pl.adds(t, sender)
        outbox = pl.store(t, [d, 0], outbox)
    return outbox


@pl.jit.incore
def unpack(
    inbox: pld.DistributedTensor[[NR, SIZE], pl.FP32],
    received: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
):
    for k in pl.range(NR):
        t = pl.load(inbox, [k, 0], [1, PAD], valid_shape=[1, SIZE])
        received = pl.store(t, [k, 0], received)
    return received


@pl.jit
def stage_step(
    block: pl.Tensor[[NR, SIZE], pl.FP32],
    sender: pl.Scalar[pl.FP32],
    outbox: pl.Out[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
):
    stage(block, sender, outbox)


@pl.jit
def unpack_step(
    inbox: pld.DistributedTensor[[NR, SIZE], pl.FP32],
    received: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
):
    unpack(inbox, received)


@pl.jit.host
def transpose(
    blocks: pl.Tensor[[NR, NR, SIZE], pl.FP32],
    received: pl.Out[pl.Tensor[[NR, NR, SIZE], pl.FP32]],
):
    out_buf = pld.alloc_window_buffer(pld.world_size() * SIZE * 4)
    in_buf = pld.alloc_window_buffer(pld.world_size() * SIZE * 4)
    outbox = pld.window(out_buf, [NR, SIZE], dtype=pl.FP32)
    inbox = pld.window(in_buf, [NR, SIZE], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        stage_step(blocks[r], pl.cast(r, pl.FP32), outbox, device=r)
    inbox = pld.all_to_all(outbox, inbox)
    for r in pl.range(pld.world_size()):
        unpack_step(inbox, received[r], device=r)


def golden(tensors, params):
    blocks = tensors["blocks"]
    n = params["ranks"]
    for r in range(n):
        for k in range(n):
            tensors["received"][r, k] = blocks[k, r] + k
