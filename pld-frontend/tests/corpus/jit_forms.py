"""The @pl.jit family at module level: host -> per-device orchestration -> incore."""
import pypto.language as pl
import pypto.language.distributed as pld

N_RANKS = 2
SIZE = 64


@pl.jit.incore
def kernel(
    data: pld.DistributedTensor[[1, SIZE], pl.FP32],
    rank: pl.Scalar[pl.INT32],
):
    ctx = pld.get_comm_ctx(data)
    me = pld.rank(ctx)
    return me + rank


@pl.jit
def per_rank(
    data: pld.DistributedTensor[[1, SIZE], pl.FP32],
    rank: pl.Scalar[pl.INT32],
):
    return kernel(data, rank)


@pl.jit.host
def host_entry():
    buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        data = pld.window(buf, [1, SIZE], dtype=pl.FP32)
        per_rank(data, r, device=r)


def golden(x):
    return x
