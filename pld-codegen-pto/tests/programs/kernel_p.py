# codegen.md §2: every comm op in one InCore kernel.
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self,
               x: pl.Tensor[[16, 64], pl.FP32],
               y: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
               win: pld.DistributedTensor[[16, 64], pl.FP32],
               sig: pld.DistributedTensor[[4, 1], pl.INT32],
               peer: pl.Scalar[pl.INT32]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64])
        pld.tile.remote_store(t, target=win, peer=peer, offsets=[0, 0], atomic=pld.AtomicType.Add)
        pld.tensor.put(win, peer=peer, src=x, atomic=pld.AtomicType.None_)
        pld.system.notify(sig, peer=peer, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(sig, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
        r = pld.tile.remote_load(win, peer=peer, offsets=[0, 0], shape=[16, 64])
        y = pl.store(r, [0, 0], y)
        pld.tensor.get(y, peer=peer, src=win)
        return y
