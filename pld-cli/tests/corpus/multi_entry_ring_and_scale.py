"""Two host entries in one file, each its own program: `host_ring` passes every rank's
block to the next rank through a window (store, barrier, remote load), `host_scale` scales
locally. `pld run FILE --entry host_ring` (or `--entry host_scale`) selects the program;
the kernels each host reaches go with it.

    host_ring:  outputs[r] = inputs[(r - 1) mod P]
    host_scale: outputs[r] = 0.5 * inputs[r] - 2
"""
# pld-corpus-run: --entry host_ring
# pld-corpus-run: --entry host_scale
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
ROWS = 2
COLS = 64


@pl.jit.incore
def pass_right(
    inp: pl.Tensor[[ROWS, COLS], pl.FP32],
    out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    win: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.FP32]],
    sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    block = pl.load(inp, [0, 0], [ROWS, COLS])
    win = pl.store(block, [0, 0], win)
    ctx = pld.get_comm_ctx(win)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    pld.tensor.barrier(sig)
    left = pld.tile.remote_load(win, (me + n - 1) % n, [0, 0], [ROWS, COLS])
    out = pl.store(left, [0, 0], out)


@pl.jit.incore
def scale(inp: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    t = pl.load(inp, [0, 0], [ROWS, COLS])
    t = pl.muls(t, 0.5)
    t = pl.adds(t, -2.0)
    out = pl.store(t, [0, 0], out)


@pl.jit
def chip_ring(
    inp: pl.Tensor[[ROWS, COLS], pl.FP32],
    out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    win: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.FP32]],
    sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    pass_right(inp, out, win, sig)


@pl.jit
def chip_scale(inp: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    scale(inp, out)


@pl.jit.host
def host_ring(
    inputs: pl.Tensor[[NR, ROWS, COLS], pl.FP32],
    outputs: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP32]],
):
    win_buf = pld.alloc_window_buffer(ROWS * COLS * 4)
    sig_buf = pld.alloc_window_buffer(pld.world_size() * 4)
    for r in pl.range(pld.world_size()):
        win = pld.window(win_buf, [ROWS, COLS], dtype=pl.FP32)
        sig = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
        chip_ring(inputs[r], outputs[r], win, sig, device=r)


@pl.jit.host
def host_scale(
    inputs: pl.Tensor[[NR, ROWS, COLS], pl.FP32],
    outputs: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP32]],
):
    for r in pl.range(pld.world_size()):
        chip_scale(inputs[r], outputs[r], device=r)


def golden_host_ring(tensors, params):
    tensors["outputs"][:] = np.roll(tensors["inputs"], 1, axis=0)


def golden_host_scale(tensors, params):
    tensors["outputs"][:] = 0.5 * tensors["inputs"] - 2.0
