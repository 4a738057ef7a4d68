"""remote_store into a rank-3 FP16 window: a 2-D push lands on the inner two dims of the
peer's [2, ROWS, COLS] slice. Each rank pushes its tile into slot 0 of the next rank
(`pld.tile.remote_store`) and a tensor-level computed value (`pl.tensor.add(x, x)`, pushed
with `pld.tensor.remote_store`) into slot 1 of the previous rank, then joins a two-credit
handshake (AtomicAdd from both neighbours, Ge 2) and copies both slots out.

    out[r][0] = x[(r - 1) % NR]
    out[r][1] = 2 * x[(r + 1) % NR]
"""
# pld-corpus-ranks: 2,3,4,8
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
ROWS = 3
COLS = 32


@pl.program
class RemoteStoreNd:
    @pl.function(type=pl.FunctionType.InCore)
    def push_both(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.FP16],
        out: pl.Out[pl.Tensor[[2, ROWS, COLS], pl.FP16]],
        slots: pl.InOut[pld.DistributedTensor[[2, ROWS, COLS], pl.FP16]],
        credits: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    ):
        ctx = pld.get_comm_ctx(slots)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        nxt = (me + 1) % n
        prv = (me + n - 1) % n
        tile = pl.load(x, [0, 0], [ROWS, COLS])
        pld.tile.remote_store(tile, slots, nxt, [0, 0, 0])
        pld.tensor.remote_store(pl.tensor.add(x, x), slots, prv, [1, 0, 0])
        pld.system.notify(credits, nxt, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)
        pld.system.notify(credits, prv, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(credits, [0, 0], 2, cmp=pld.WaitCmp.Ge)
        for s in pl.range(2):
            out = pl.store(pl.load(slots, [s, 0, 0], [1, ROWS, COLS]), [s, 0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.FP16],
        out: pl.Out[pl.Tensor[[2, ROWS, COLS], pl.FP16]],
        slots: pl.InOut[pld.DistributedTensor[[2, ROWS, COLS], pl.FP16]],
        credits: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    ):
        self.push_both(x, out, slots, credits)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, ROWS, COLS], pl.FP16],
        out: pl.Out[pl.Tensor[[NR, 2, ROWS, COLS], pl.FP16]],
    ):
        slots_buf = pld.alloc_window_buffer([2, ROWS, COLS], dtype=pl.FP16)
        credits_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            slots = pld.window(slots_buf, [2, ROWS, COLS], dtype=pl.FP16)
            credits = pld.window(credits_buf, [1, 1], dtype=pl.INT32)
            self.chip_orch(x[r], out[r], slots, credits, device=r)


def golden(tensors, params):
    n = params["ranks"]
    x = tensors["x"].astype(np.float32)
    for r in range(n):
        tensors["out"][r, 0] = x[(r - 1) % n]
        tensors["out"][r, 1] = 2 * x[(r + 1) % n]
