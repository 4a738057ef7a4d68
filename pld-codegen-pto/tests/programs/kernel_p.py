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

# CHECK: // ----- kernel.pto -----
# CHECK: func.func @kernel(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: !pto.ptr<f32>, %arg3: !pto.ptr<i32>, %arg4: i32, %arg5: !pto.ptr<i64>, %arg6: !pto.ptr<i64>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
# CHECK: %sig_view = pto.make_tensor_view %arg3, shape = [%c4_index, %c1_index], strides = [%c1_index, %c4_index] {layout = #pto.layout<dn>} : !pto.tensor_view<?x?xi32>
# CHECK: %peer_idx = arith.index_cast %arg4 : i32 to index
# CHECK-NEXT: = pto.load_scalar %arg5[%c2_index] : !pto.ptr<i64> -> i64
# CHECK: pto.tstore
# CHECK-SAME: {atomicType = #pto<atomic_type atomic_add>}
# CHECK: pto.barrier <PIPE_ALL>
# CHECK-NEXT: pto.comm.tput(
# CHECK-SAME: buf(%tput_stage) : !pto.partition_tensor_view<16x64xf32>, !pto.partition_tensor_view<16x64xf32>, !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>) {atomicType = #pto<atomic_type atomic_none>}
# CHECK-NEXT: pto.barrier <PIPE_ALL>
# CHECK-NEXT: pto.cmo.cacheinvalid
# CHECK-NEXT: pto.fence.barrier_all #pto.fence_scope<gm>
# CHECK: = pto.load_scalar %arg6[%c2_index]
# CHECK: pto.barrier <PIPE_ALL>
# CHECK-NEXT: pto.comm.tnotify(%sig_peer_pview, %c1_i32 : !pto.partition_tensor_view<1x1xi32>, i32) {notifyOp = #pto<notify_op atomic_add>}
# CHECK-NEXT: %sig_local_pview = pto.partition_view %sig_view
# CHECK-NEXT: pto.comm.twait(%sig_local_pview, %c1_i32 : !pto.partition_tensor_view<1x1xi32>, i32) {cmp = #pto<wait_cmp ge>}
# CHECK-NEXT: pto.cmo.cacheinvalid all #pto.address_space<gm>
# CHECK: pto.tload ins(
# CHECK: pto.comm.tget(
# CHECK-SAME: buf(%tget_stage) :
# CHECK-NOT: atomicType
# CHECK: return
