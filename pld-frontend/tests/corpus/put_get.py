# One-sided bulk traffic: tensor put / get with offsets, shapes, chunking and atomics.
import pypto.language as pl
import pypto.language.distributed as pld

ROWS = 8
COLS = 64


@pl.program
class PutGet:
    @pl.function(type=pl.FunctionType.InCore)
    def exchange(
        self,
        src: pl.Tensor[[ROWS, COLS], pl.FP32],
        dst: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
        win: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.FP32]],
    ):
        ctx = pld.get_comm_ctx(win)
        peer = (pld.rank(ctx) + 1) % pld.nranks(ctx)
        pld.tensor.put(win, peer, src, atomic=pld.AtomicType.None_)
        pld.tensor.put(win, peer, src, [0, 0], [0, 0], [4, COLS], atomic=pld.AtomicType.Add, chunk_rows=2)
        pld.tensor.get(dst, peer, win)
        pld.tensor.get(dst=dst, peer=peer, src=win, dst_offsets=[4, 0], src_offsets=[0, 0], shape=[4, COLS], chunk_rows=2, chunk_cols=32, pipeline=True)
