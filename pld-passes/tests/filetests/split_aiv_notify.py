# A mixed kernel: cube matmul plus a comm phase. The notify written outside every
# split_aiv region is duplicated onto both lanes; the one inside a region runs on AIV only.
# DUMP-AFTER: ExpandMixedKernel
# CHECK: def mixed_aic(
# CHECK: pl.tile.matmul(
# CHECK: pld.system.notify(sig, 1, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)
# CHECK-NOT: pld.system.notify(sig, 2, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)
# CHECK: def mixed_aiv(
# CHECK: pld.system.notify(sig, 1, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)
# CHECK: pld.system.notify(sig, 2, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class SplitAiv:
    @pl.function(type=pl.FunctionType.InCore)
    def mixed(
        self,
        a: pl.Tile[[16, 16], pl.FP16, pl.MemorySpace.Left],
        b: pl.Tile[[16, 16], pl.FP16, pl.MemorySpace.Right],
        out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        x: pl.Tensor[[16, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        sig: pl.InOut[pld.DistributedTensor[[4, 1], pl.INT32]],
    ):
        c = pl.tile.matmul(a, b)
        out = pl.tile.store(c, [0, 0], out)
        v = pl.tile.load(x, [0, 0], [16, 16])
        y = pl.tile.store(v, [0, 0], y)
        pld.system.notify(sig, 1, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)
        for aiv_id in pl.split_aiv(2):
            pld.system.notify(sig, 2, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(sig, [1, 0], 1, cmp=pld.WaitCmp.Ge)
