"""Two host entries in @pl.jit form: each host with the functions it reaches is its own
program; a kernel nobody calls from a host belongs to no program."""
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 64


@pl.jit.incore
def fill(data: pld.DistributedTensor[[1, SIZE], pl.FP32]):
    ctx = pld.get_comm_ctx(data)
    return pld.rank(ctx)


@pl.jit.incore
def ping(signal: pld.DistributedTensor[[2, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(signal)
    me = pld.rank(ctx)
    pld.system.notify(signal, (me + 1) % 2, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)


@pl.jit
def chip_fill(data: pld.DistributedTensor[[1, SIZE], pl.FP32]):
    return fill(data)


@pl.jit.incore
def unused(n: pl.Scalar[pl.INT32]):
    return n


@pl.jit.host
def host_fill():
    buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        data = pld.window(buf, [1, SIZE], dtype=pl.FP32)
        chip_fill(data, device=r)


@pl.jit.host
def host_ping():
    buf = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        signal = pld.window(buf, [2, 1], dtype=pl.INT32)
        ping(signal, device=r)
