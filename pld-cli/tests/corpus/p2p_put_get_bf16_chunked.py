"""A BF16 block travels round the ring in chunks: each rank pushes its [ROWS, COLS] block
into the next rank's inbox with one `pld.tensor.put` staged through a [2, 32] ping-pong
stage (`chunk_rows`, `chunk_cols`, `pipeline=True`), raises the next rank's flag, waits for
its own, doubles what arrived and keeps it in its window; then it pulls the doubled block of
the rank before it with a chunked `pld.tensor.get` (`chunk_rows=3`: the last chunk of rows is
ragged) into a plain output. ROWS is odd.

    got[r]    = 2 * x[(r - 1) % NR]
    pulled[r] = 2 * x[(r - 2) % NR]
"""
# pld-corpus-ranks: 2,3,4,8
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
ROWS = 7
COLS = 64


@pl.program
class ChunkedBf16Ring:
    @pl.function(type=pl.FunctionType.InCore)
    def pass_on(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.BF16],
        got: pl.Out[pl.Tensor[[ROWS, COLS], pl.BF16]],
        inbox: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.BF16]],
        keep: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.BF16]],
        flags: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ):
        ctx = pld.get_comm_ctx(inbox)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        nxt = (me + 1) % n
        prv = (me + n - 1) % n
        pld.tensor.put(inbox, nxt, x, atomic=pld.AtomicType.None_, chunk_rows=2, chunk_cols=32, pipeline=True)
        pld.system.notify(flags, nxt, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(flags, [0, 0], 1, cmp=pld.WaitCmp.Ge)
        for i in pl.range(ROWS):
            row = pl.load(inbox, [i, 0], [1, COLS])
            twice = pl.add(row, row)
            keep = pl.store(twice, [i, 0], keep)
            got = pl.store(twice, [i, 0], got)
        # The rank after me may now read what I keep.
        pld.system.notify(flags, nxt, [1, 0], 1, op=pld.NotifyOp.Set)
        pld.system.wait(flags, [1, 0], 1, cmp=pld.WaitCmp.Eq)

    @pl.function(type=pl.FunctionType.InCore)
    def pull_back(
        self,
        keep: pld.DistributedTensor[[ROWS, COLS], pl.BF16],
        pulled: pl.Out[pl.Tensor[[ROWS, COLS], pl.BF16]],
    ):
        ctx = pld.get_comm_ctx(keep)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        pld.tensor.get(pulled, (me + n - 1) % n, keep, chunk_rows=3, chunk_cols=COLS)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.BF16],
        got: pl.Out[pl.Tensor[[ROWS, COLS], pl.BF16]],
        pulled: pl.Out[pl.Tensor[[ROWS, COLS], pl.BF16]],
        inbox: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.BF16]],
        keep: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.BF16]],
        flags: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ):
        self.pass_on(x, got, inbox, keep, flags)
        self.pull_back(keep, pulled)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, ROWS, COLS], pl.BF16],
        got: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.BF16]],
        pulled: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.BF16]],
    ):
        inbox_buf = pld.alloc_window_buffer([ROWS, COLS], dtype=pl.BF16)
        keep_buf = pld.alloc_window_buffer([ROWS, COLS], dtype=pl.BF16)
        flags_buf = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            inbox = pld.window(inbox_buf, [ROWS, COLS], dtype=pl.BF16)
            keep = pld.window(keep_buf, [ROWS, COLS], dtype=pl.BF16)
            flags = pld.window(flags_buf, [2, 1], dtype=pl.INT32)
            self.chip_orch(x[r], got[r], pulled[r], inbox, keep, flags, device=r)


def golden(tensors, params):
    n = params["ranks"]
    x = tensors["x"].astype(np.float32)
    for r in range(n):
        tensors["got"][r] = 2 * x[(r - 1) % n]
        tensors["pulled"][r] = 2 * x[(r - 2) % n]
