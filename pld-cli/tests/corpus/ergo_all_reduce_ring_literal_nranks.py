"""A ring allreduce with a literal rank count, as the reference's users write it:
`pld.all_reduce(win, mode="ring", nranks=4)` — its private [2*(4-1)+1, 4] signal is laid out
for four ranks, so the program runs on exactly four (on 2 or 3 ranks the call is an error that
names both counts). Each rank adds a bias to its rows before publishing; the sums come back
through an InOut tensor that already holds a running total.

    acc[r] = acc[r] + sum over ranks k of (x[k] + BIAS)      (for every r)
"""
# pld-corpus-ranks: 4
# pld-corpus-run:
# pld-corpus-run: --schedule random:21
# pld-corpus-verify: --schedules 3
import pypto.language as pl
import pypto.language.distributed as pld

ROWS = 3
COLS = 20
# Tile rows are whole 32-byte units: 24 FP32 lanes, of which COLS are valid.
PAD = 24
BIAS = 1.5
NR = pl.dynamic("NR")


@pl.program
class RingSumFour:
    @pl.function(type=pl.FunctionType.InCore)
    def publish(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.FP32],
        win: pl.Out[pld.DistributedTensor[[ROWS, COLS], pl.FP32]],
    ):
        t = pl.load(x, [0, 0], [ROWS, PAD], valid_shape=[ROWS, COLS])
        t = pl.adds(t, BIAS)
        win = pl.store(t, [0, 0], win)

    @pl.function(type=pl.FunctionType.InCore)
    def accumulate(
        self,
        win: pld.DistributedTensor[[ROWS, COLS], pl.FP32],
        acc: pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ):
        total = pl.load(win, [0, 0], [ROWS, PAD], valid_shape=[ROWS, COLS])
        before = pl.load(acc, [0, 0], [ROWS, PAD], valid_shape=[ROWS, COLS])
        acc = pl.store(pl.add(before, total), [0, 0], acc)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.FP32],
        win: pl.Out[pld.DistributedTensor[[ROWS, COLS], pl.FP32]],
    ):
        self.publish(x, win)

    @pl.function(type=pl.FunctionType.Orchestration)
    def accumulate_orch(
        self,
        win: pld.DistributedTensor[[ROWS, COLS], pl.FP32],
        acc: pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ):
        self.accumulate(win, acc)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, ROWS, COLS], pl.FP32],
        acc: pl.InOut[pl.Tensor[[NR, ROWS, COLS], pl.FP32]],
    ):
        buf = pld.alloc_window_buffer([ROWS, COLS], dtype=pl.FP32)
        win = pld.window(buf, [ROWS, COLS], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.publish_orch(x[r], win, device=r)
        win = pld.all_reduce(win, mode="ring", nranks=4)
        for r in pl.range(pld.world_size()):
            self.accumulate_orch(win, acc[r], device=r)

def golden(tensors, params):
    total = (tensors["x"] + BIAS).sum(axis=0, keepdims=True)
    tensors["acc"][:] = tensors["acc"] + total
