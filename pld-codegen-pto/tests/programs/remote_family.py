# File test, tile_remote + window families: rank/nranks from the ctx slot, remote_load of a
# ragged tail, remote_store with and without atomic add, each through the inline peer offset.
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class RemoteFamily:
    @pl.function(type=pl.FunctionType.InCore)
    def remote(self,
               x: pl.Tensor[[1, 64], pl.FP32],
               y: pl.Out[pl.Tensor[[1, 64], pl.FP32]],
               win: pl.InOut[pld.DistributedTensor[[1, 64], pl.FP32]]):
        ctx = pld.get_comm_ctx(win)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        nxt = (me + 1) % n
        t = pl.load(x, [0, 0], [1, 64])
        pld.tile.remote_store(t, win, nxt, [0, 0], atomic=pld.AtomicType.Add)
        pld.tile.remote_store(t, win, nxt, [0, 0])
        r = pld.tile.remote_load(win, nxt, [0, 0], [1, 64], [1, 17])
        y = pl.store(r, [0, 0], y)

# CHECK: func.func @remote(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: !pto.ptr<f32>, %arg3: !pto.ptr<i64>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
# CHECK: = pto.load_scalar %arg3[%c2_index] : !pto.ptr<i64> -> i64
# CHECK-NEXT: %me = arith.trunci
# CHECK: arith.shrui
# CHECK-SAME: %c32_i64 : i64
# CHECK-NEXT: %n = arith.trunci
# CHECK: arith.remsi
# CHECK: = pto.load_scalar %arg3[%c2_index]
# CHECK: pto.addptr %arg2,
# CHECK-NEXT: pto.make_tensor_view
# CHECK-NEXT: %win_peer_pview = pto.partition_view
# CHECK-NEXT: pto.tstore ins(%t
# CHECK-SAME: {atomicType = #pto<atomic_type atomic_add>}
# CHECK-NEXT: pto.cmo.cacheinvalid %win_peer_pview single_cache_line
# CHECK-NEXT: pto.fence.barrier_all #pto.fence_scope<gm>
# CHECK: pto.addptr %arg2,
# CHECK: pto.tstore ins(%t
# CHECK-NOT: atomicType
# CHECK: pto.cmo.cacheinvalid
# CHECK: valid_row = %c1_index valid_col = %c17_index
# CHECK: pto.addptr %arg2,
# CHECK: sizes = [%c1_index, %c17_index] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<1x17xf32>
# CHECK-NEXT: pto.tload
# CHECK: "kind": "comm_ctx",
# CHECK-NEXT: "pairs": "win"
