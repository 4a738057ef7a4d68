# An InCore FP16 mesh allreduce of 4097 elements: one [1, 4112] chunk (the smallest
# 32-byte-aligned width covering N), ragged FP16 tail via a padded physical read span.
# DUMP-AFTER: LowerCompositeOps
# CHECK: target_2d: pld.DistributedTensor[[1, 4097], pl.FP16] = pl.tensor.view(data, [1, 4097])
# CHECK: pld.system.wait(sig, [src, 0], 1, cmp=pld.WaitCmp.Ge)
# CHECK: for col in pl.range(0, 4097, 4112):
# CHECK: valid_cols: pl.Scalar[pl.INDEX] = min(4112, 4097 - col)
# CHECK: allow_physical_tail_padding=True
# CHECK: pl.tile.set_validshape(recv_padded, 1, valid_cols)
# CHECK: pl.tile.maximum(acc_1, recv_full)
# CHECK: 2 + col // 4112, cmp=pld.WaitCmp.Ge
# CHECK: pl.tile.store(store_value, [0, col], target_2d)
# CHECK: -2, op=pld.NotifyOp.AtomicAdd
# CHECK-NOT: pld.tensor.allreduce(
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Mesh:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        data: pl.InOut[pld.DistributedTensor[[4097], pl.FP16]],
        sig: pl.InOut[pld.DistributedTensor[[4, 1], pl.INT32]],
    ):
        data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Max)
