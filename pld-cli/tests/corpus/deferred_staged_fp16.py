"""Deferred completion over a rising counter, built by a Python builder.

Each rank publishes STAGES FP16 rows into the next rank's inbox, one at a time, bumping the
next rank's counter with an AtomicAdd notify after each row. Before the publisher is
submitted, the rank submits one `pld.system.defer_wait` waiter per stage (`counter >= k + 1`,
WaitCmp.Ge) and a consumer gated by that waiter's task id, which scales row k by k + 1. The
waiters retire at once and give their cores back, so the publisher, submitted last in the
manual scope, finds a core even with `--cores 2`.

    out[r][k] = x[(r - 1) % NR][k] * (k + 1)
"""
# pld-corpus-run: --bind stages=4
# pld-corpus-run: --bind stages=6 --cores 2
# pld-corpus-ranks: 2,3,4
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
WIDTH = 16  # 16 FP16 lanes: one 32-byte tile row.


def build(stages: int):
    @pl.program
    class StagedDeferred:
        @pl.function(type=pl.FunctionType.Orchestration)
        def chip_orch(
            self,
            x: pl.Tensor[[stages, WIDTH], pl.FP16],
            out: pl.Out[pl.Tensor[[stages, WIDTH], pl.FP16]],
            inbox: pl.InOut[pld.DistributedTensor[[stages, WIDTH], pl.FP16]],
            counter: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
            nxt: pl.Scalar[pl.INT32],
        ):
            with pl.manual_scope():
                for k in pl.range(stages):
                    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage_wait") as wait_tid:
                        pld.system.defer_wait(counter, [0, 0], k + 1, cmp=pld.WaitCmp.Ge)
                    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage_use", deps=[wait_tid]):
                        row = pl.load(inbox, [k, 0], [1, WIDTH])
                        out = pl.store(pl.muls(row, k + 1), [k, 0], out)
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="publisher"):
                    for k in pl.range(stages):
                        row = pl.load(x, [k, 0], [1, WIDTH])
                        pld.tile.remote_store(row, inbox, nxt, [k, 0])
                        pld.system.notify(counter, nxt, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)
            return out

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(
            self,
            x: pl.Tensor[[NR, stages, WIDTH], pl.FP16],
            out: pl.Out[pl.Tensor[[NR, stages, WIDTH], pl.FP16]],
        ):
            inbox_buf = pld.alloc_window_buffer([stages, WIDTH], dtype=pl.FP16)
            counter_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                inbox = pld.window(inbox_buf, [stages, WIDTH], dtype=pl.FP16)
                counter = pld.window(counter_buf, [1, 1], dtype=pl.INT32)
                self.chip_orch(x[r], out[r], inbox, counter, (r + 1) % pld.world_size(), device=r)

    return StagedDeferred


def golden(tensors, params):
    n = params["ranks"]
    k = params["stages"]
    x = tensors["x"].astype(np.float32)
    scale = np.arange(1, k + 1, dtype=np.float32)[:, None]
    for r in range(n):
        tensors["out"][r] = (x[(r - 1) % n] * scale).astype(np.float16)
