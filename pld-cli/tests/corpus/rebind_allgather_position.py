"""The written window is not the first operand: `gathered = pld.tensor.allgather(row, gathered,
sig)` writes its second argument and returns it, so the rebound `gathered` is still the window
(its context answers `pld.rank`), and a local store rebinds it once more.  Row k of every
rank's result is rank k's input; each rank then adds 1 to its own row:

    outputs[r][k] = inputs[k] + (1 if k == r else 0)
"""
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
COLS = 48


@pl.jit.incore
def gather_rows(
    inp: pl.Tensor[[1, COLS], pl.FP32],
    out: pl.Out[pl.Tensor[[NR, COLS], pl.FP32]],
    gathered: pl.InOut[pld.DistributedTensor[[NR, COLS], pl.FP32]],
    sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    gathered = pld.tensor.allgather(inp, gathered, sig)
    me = pld.rank(pld.get_comm_ctx(gathered))
    mine = pl.load(gathered, [me, 0], [1, COLS])
    gathered = pl.store(pl.adds(mine, 1.0), [me, 0], gathered)
    pld.tensor.get(out, me, gathered, chunk_rows=1)


@pl.jit
def chip_gather(
    inp: pl.Tensor[[1, COLS], pl.FP32],
    out: pl.Out[pl.Tensor[[NR, COLS], pl.FP32]],
    gathered: pl.InOut[pld.DistributedTensor[[NR, COLS], pl.FP32]],
    sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    gather_rows(inp, out, gathered, sig)


@pl.jit.host
def host_gather(
    inputs: pl.Tensor[[NR, 1, COLS], pl.FP32],
    outputs: pl.Out[pl.Tensor[[NR, NR, COLS], pl.FP32]],
):
    gathered_buf = pld.alloc_window_buffer(pld.world_size() * COLS * 4)
    sig_buf = pld.alloc_window_buffer(pld.world_size() * 4)
    for r in pl.range(pld.world_size()):
        gathered = pld.window(gathered_buf, [NR, COLS], dtype=pl.FP32)
        sig = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
        chip_gather(inputs[r], outputs[r], gathered, sig, device=r)


def golden(tensors, params):
    rows = tensors["inputs"][:, 0, :]
    n = params["ranks"]
    tensors["outputs"][:] = rows[np.newaxis, :, :]
    for r in range(n):
        tensors["outputs"][r, r, :] += 1.0
