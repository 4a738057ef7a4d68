"""Each rank publishes its block in a window, joins a Set-notify handshake with its ring
neighbours, and reads the block of the rank after it:

    out[r] = x[(r + 1) % NR]
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
ROWS = 2
COLS = 64


@pl.program
class RingShift:
    @pl.function(type=pl.FunctionType.InCore)
    def shift(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.FP32],
        out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
        win: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.FP32]],
        ready: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    ):
        ctx = pld.get_comm_ctx(win)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        nxt = (me + 1) % n
        prev = (me + n - 1) % n
        win = pl.store(pl.load(x, [0, 0], [ROWS, COLS]), [0, 0], win)
        # Tell the rank before me that my block is there; wait for the rank after me.
        pld.system.notify(ready, prev, [0, 0], 1, op=pld.NotifyOp.Set)
        pld.system.wait(ready, [0, 0], 1, cmp=pld.WaitCmp.Eq)
        theirs = pld.tile.remote_load(win, nxt, [0, 0], [ROWS, COLS])
        out = pl.store(theirs, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.FP32],
        out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
        win: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.FP32]],
        ready: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    ):
        self.shift(x, out, win, ready)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, x: pl.Tensor[[NR, ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP32]]):
        win_buf = pld.alloc_window_buffer(ROWS * COLS * 4)
        ready_buf = pld.alloc_window_buffer(4)
        for r in pl.range(pld.world_size()):
            win = pld.window(win_buf, [ROWS, COLS], dtype=pl.FP32)
            ready = pld.window(ready_buf, [1, 1], dtype=pl.INT32)
            self.chip(x[r], out[r], win, ready, device=r)


def golden(tensors, params):
    n = params["ranks"]
    x = tensors["x"]
    for r in range(n):
        tensors["out"][r] = x[(r + 1) % n]
