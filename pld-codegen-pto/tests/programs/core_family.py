# File test, core tile family: loads/stores through partition views, a ragged valid shape,
# elementwise and scalar arithmetic, atomicType only on an atomic-add store.
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class CoreFamily:
    @pl.function(type=pl.FunctionType.InCore)
    def core(self,
             x: pl.Tensor[[1, 256], pl.FP32],
             y: pl.Out[pl.Tensor[[1, 256], pl.FP32]],
             z: pl.Out[pl.Tensor[[1, 256], pl.FP32]]):
        a = pl.load(x, [0, 0], [1, 256], [1, 17])
        b = pl.load(x, [0, 0], [1, 256])
        c = pl.add(b, b)
        d = pl.muls(c, 0.5)
        y = pl.store(a, [0, 0], y)
        z = pl.store(d, [0, 0], z, atomic=pld.AtomicType.Add)

# CHECK: // ----- core.pto -----
# CHECK-NEXT: module attributes {pto.target_arch = "a2a3"} {
# CHECK-NEXT: func.func @core(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: !pto.ptr<f32>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
# CHECK: %a = pto.alloc_tile addr = %c0_i64 valid_row = %c1_index valid_col = %c17_index : !pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=256
# CHECK-NEXT: %x_pview = pto.partition_view %x_view, offsets = [%c0_index, %c0_index], sizes = [%c1_index, %c17_index] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<1x17xf32>
# CHECK-NEXT: pto.tload ins(%x_pview : !pto.partition_tensor_view<1x17xf32>) outs(%a :
# CHECK: pto.tadd ins(%b, %b :
# CHECK: pto.tmuls ins(%c, %c5p0en1_f32 :
# CHECK: pto.tstore ins(%a :
# CHECK-SAME: outs(%y_pview : !pto.partition_tensor_view<1x17xf32>)
# CHECK-NOT: atomicType
# CHECK: pto.tstore ins(%d :
# CHECK-SAME: outs(%z_pview : !pto.partition_tensor_view<1x256xf32>) {atomicType = #pto<atomic_type atomic_add>}
# CHECK: return
