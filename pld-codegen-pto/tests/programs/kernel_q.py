# codegen.md Appendix A: ping-pong atomic put, dynamic get, rank/nranks, notify in a loop.
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Q:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel2(self,
                dst: pld.DistributedTensor[[16, 64], pl.FP16],
                src: pld.DistributedTensor[[16, 64], pl.FP16],
                sig: pld.DistributedTensor[[8, 8], pl.INT32],
                peer: pl.Scalar[pl.INT32],
                n: pl.Scalar[pl.INT32]):
        ctx = pld.get_comm_ctx(sig)
        me = pld.rank(ctx)
        nr = pld.nranks(ctx)
        pld.tensor.put(dst, peer, src, atomic=pld.AtomicType.Add, chunk_rows=4, chunk_cols=32, pipeline=True)
        pld.tensor.get(dst, peer, src, dst_offsets=[0, 0], src_offsets=[0, 0], shape=[n, 64], chunk_rows=4, chunk_cols=32)
        for step in pl.range(4):
            pld.system.notify(sig, peer, [me, 0], value=step + 1, op=pld.NotifyOp.Set)
        pld.system.wait(sig, [nr - 1, 0], expected=1, cmp=pld.WaitCmp.Eq)

# CHECK: func.func @kernel2(%arg0: !pto.ptr<f16>, %arg1: !pto.ptr<f16>, %arg2: !pto.ptr<i32>, %arg3: i32, %arg4: i32, %arg5: !pto.ptr<i64>, %arg6: !pto.ptr<i64>, %arg7: !pto.ptr<i64>)
# CHECK: %tput_stage_ping = pto.alloc_tile
# CHECK-SAME: rows=4, cols=32
# CHECK-NEXT: %tput_stage_pong = pto.alloc_tile
# CHECK-SAME: rows=4, cols=32
# CHECK: pto.comm.tput(%dst_peer_pview, %src_local_pview, buf(%tput_stage_ping, %tput_stage_pong) : !pto.partition_tensor_view<16x64xf16>, !pto.partition_tensor_view<16x64xf16>
# CHECK-SAME: {atomicType = #pto<atomic_type atomic_add>}
# CHECK: %tget_stage = pto.alloc_tile
# CHECK: %dst_local_pview = pto.partition_view %dst_view
# CHECK-SAME: -> !pto.partition_tensor_view<?x64xf16>
# CHECK: pto.comm.tget(%dst_local_pview, %src_peer_pview, buf(%tget_stage) : !pto.partition_tensor_view<?x64xf16>, !pto.partition_tensor_view<?x64xf16>
# CHECK: scf.for
# CHECK: pto.comm.tnotify(
# CHECK-SAME: i32) {notifyOp = #pto<notify_op set>}
# CHECK: pto.comm.twait(
# CHECK-SAME: {cmp = #pto<wait_cmp eq>}
