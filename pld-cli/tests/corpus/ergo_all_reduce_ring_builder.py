"""A ring allreduce from a program-building function: the rank count is a build-time
constant (`nranks`), as `pld.all_reduce(..., mode="ring", nranks=...)` needs for its private
[2*(nranks-1)+1, nranks] signal. Each rank adds a bias to its rows before publishing; the
sums come back through an InOut tensor that already holds a running total.

    acc[r] = acc[r] + sum over ranks k of (x[k] + BIAS)      (for every r)

Build it with `--bind nranks=N` and run it on N ranks.
"""
# pld-corpus-run: --bind nranks=4
# pld-corpus-ranks: 4
import pypto.language as pl
import pypto.language.distributed as pld

ROWS = 3
COLS = 20
# Tile rows are whole 32-byte units: 24 FP32 lanes, of which COLS are valid.
PAD = 24
BIAS = 1.5


def build_ring_sum(nranks: int):
    @pl.program
    class RingSum:
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
            x: pl.Tensor[[nranks, ROWS, COLS], pl.FP32],
            acc: pl.InOut[pl.Tensor[[nranks, ROWS, COLS], pl.FP32]],
        ):
            buf = pld.alloc_window_buffer([ROWS, COLS], dtype=pl.FP32)
            win = pld.window(buf, [ROWS, COLS], dtype=pl.FP32)
            for r in pl.range(nranks):
                self.publish_orch(x[r], win, device=r)
            win = pld.all_reduce(win, mode="ring", nranks=nranks)
            for r in pl.range(nranks):
                self.accumulate_orch(win, acc[r], device=r)

    return RingSum


def golden(tensors, params):
    total = (tensors["x"] + BIAS).sum(axis=0, keepdims=True)
    tensors["acc"][:] = tensors["acc"] + total
