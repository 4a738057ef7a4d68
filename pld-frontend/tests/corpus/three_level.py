"""Three-level program in the @pl.jit form: host loop over ranks with per-rank slices of
host tensors, a per-device orchestration, and an incore kernel using a dynamic rank count."""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
ROWS = 8
COLS = 16


@pl.jit.incore
def bump(
    x: pl.Tensor[[ROWS, COLS], pl.FP32],
    y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    signal: pld.DistributedTensor[[NR, 1], pl.INT32],
    bias: pl.Scalar[pl.FP32],
):
    ctx = pld.get_comm_ctx(signal)
    me = pld.rank(ctx)
    tile = pl.load(x, [0, 0], [ROWS, COLS])
    tile = pl.adds(tile, bias)
    for peer in pl.range(pld.nranks(ctx)):
        if peer != me:
            pld.system.notify(signal, peer, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
    y = pl.store(tile, [0, 0], y)
    return y


@pl.jit
def per_device(
    x: pl.Tensor[[ROWS, COLS], pl.FP32],
    y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    signal: pld.DistributedTensor[[NR, 1], pl.INT32],
    bias: pl.Scalar[pl.FP32],
):
    return bump(x, y, signal, bias)


@pl.jit.host
def entry(
    x: pl.Tensor[[NR, ROWS, COLS], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP32]],
):
    signal_buf = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
        per_device(x[r], y[r], signal, 1.5, device=r)
