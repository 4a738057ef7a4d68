"""INT32 reduce-to-root with atomic pushes, then a fan-out from the root.

The root (the last rank, handed in by the host) stores its own block into its accumulator
and opens the gate with a Set notify to every peer; each peer waits on its gate, pushes its
block into the root's accumulator with `pld.tile.remote_store(..., atomic=Add)` and counts
itself in with an AtomicAdd notify. The root waits until all NR - 1 peers have counted in,
then `pld.remote_store`s the total (a tile: the dispatching form picks the tile op) (plus one per rank) into every peer's result
window and Sets their done flag to NR; everyone waits for done == NR (Eq) and copies out.

    total[r] = sum over ranks k of x[k] + NR     (for every r)
"""
# pld-corpus-ranks: 2,3,4,8
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
ROWS = 3
COLS = 8  # 8 INT32 lanes: one 32-byte tile row.


@pl.program
class AtomicReduceToRoot:
    @pl.function(type=pl.FunctionType.InCore)
    def reduce_and_fan_out(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.INT32],
        total: pl.Out[pl.Tensor[[ROWS, COLS], pl.INT32]],
        acc: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.INT32]],
        result: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.INT32]],
        flags: pl.InOut[pld.DistributedTensor[[3, 1], pl.INT32]],
        root: pl.Scalar[pl.INT32],
    ):
        ctx = pld.get_comm_ctx(acc)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        mine = pl.load(x, [0, 0], [ROWS, COLS])
        if me == root:
            acc = pl.store(mine, [0, 0], acc)
            for peer in pl.range(n):
                if peer != root:
                    pld.system.notify(flags, peer, [0, 0], 1, op=pld.NotifyOp.Set)
            pld.system.wait(flags, [1, 0], n - 1, cmp=pld.WaitCmp.Ge)
            summed = pl.load(acc, [0, 0], [ROWS, COLS])
            bumped = pl.adds(summed, n)
            result = pl.store(bumped, [0, 0], result)
            for peer in pl.range(n):
                if peer != root:
                    pld.remote_store(bumped, result, peer, [0, 0])
                    pld.system.notify(flags, peer, [2, 0], n, op=pld.NotifyOp.Set)
        else:
            pld.system.wait(flags, [0, 0], 1, cmp=pld.WaitCmp.Eq)
            pld.tile.remote_store(mine, acc, root, [0, 0], atomic=pld.AtomicType.Add)
            pld.system.notify(flags, root, [1, 0], 1, op=pld.NotifyOp.AtomicAdd)
            pld.system.wait(flags, [2, 0], n, cmp=pld.WaitCmp.Eq)
        out = pl.load(result, [0, 0], [ROWS, COLS])
        total = pl.store(out, [0, 0], total)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.INT32],
        total: pl.Out[pl.Tensor[[ROWS, COLS], pl.INT32]],
        acc: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.INT32]],
        result: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.INT32]],
        flags: pl.InOut[pld.DistributedTensor[[3, 1], pl.INT32]],
        root: pl.Scalar[pl.INT32],
    ):
        self.reduce_and_fan_out(x, total, acc, result, flags, root)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, ROWS, COLS], pl.INT32],
        total: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.INT32]],
    ):
        acc_buf = pld.alloc_window_buffer(ROWS * COLS * pl.INT32.get_byte())
        result_buf = pld.alloc_window_buffer(ROWS * COLS * pl.INT32.get_byte())
        flags_buf = pld.alloc_window_buffer(3 * pl.INT32.get_byte())
        root = pld.world_size() - 1
        for r in pl.range(pld.world_size()):
            acc = pld.window(acc_buf, [ROWS, COLS], dtype=pl.INT32)
            result = pld.window(result_buf, [ROWS, COLS], dtype=pl.INT32)
            flags = pld.window(flags_buf, [3, 1], dtype=pl.INT32)
            self.chip_orch(x[r], total[r], acc, result, flags, root, device=r)


def golden(tensors, params):
    n = params["ranks"]
    x = tensors["x"].astype(np.int64)
    tensors["total"][:] = (x.sum(axis=0) + n).astype(np.int32)
