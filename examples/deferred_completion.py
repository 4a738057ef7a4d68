"""Deferred completion: `defer_wait` waiters that release their core, and task ids.

Each rank submits WAITERS waiter tasks before the task that publishes to its peer. A waiter
registers `signal[0, 0] >= 1` with `pld.system.defer_wait` and retires at once, so its core
is free again; its task id (`as wait_tid`) completes only when the counter is ready. Each
consumer is gated by an ordinary `deps=[wait_tid]` edge and copies the payload the previous
rank pushed into this rank's window. Inside `pl.manual_scope()` those explicit edges are the
only ones: the publisher, submitted last, stays independent of the waiters and can run.

With a blocking `pld.system.wait` instead, WAITERS waiting kernels occupy every core before
the publisher is reached, and the run deadlocks (try it: replace `defer_wait` by `wait` and
run with `--cores 4`).

    outputs[r][slot] = inputs[(r - 1) mod P][0]   for every slot

Run it:

    pld run examples/deferred_completion.py --ranks 2
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
WAITERS = 8
WIDTH = 8  # 1x8 INT32 is the smallest 32-byte vector tile.


@pl.program
class DeferredCompletion:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        inp: pl.Tensor[[1, WIDTH], pl.INT32],
        out: pl.Out[pl.Tensor[[WAITERS, WIDTH], pl.INT32]],
        payload: pl.InOut[pld.DistributedTensor[[1, WIDTH], pl.INT32]],
        signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
        peer: pl.Scalar[pl.INT32],
    ) -> pl.Tensor[[WAITERS, WIDTH], pl.INT32]:
        # Manual mode: the only waiter -> consumer edges are the explicit task-id ones.
        with pl.manual_scope():
            for slot in pl.range(WAITERS):
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="deferred_wait") as wait_tid:
                    pld.system.defer_wait(signal=signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)

                with pl.at(level=pl.Level.CORE_GROUP, name_hint="consumer", deps=[wait_tid]):
                    received = pl.load(payload, [0, 0], [1, WIDTH])
                    out = pl.store(received, [slot, 0], out)

            # Submitted last on purpose: it can only run because the waiters gave their
            # cores back.
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="publisher"):
                row = pl.load(inp, [0, 0], [1, WIDTH])
                pld.tile.remote_store(row, target=payload, peer=peer, offsets=[0, 0])
                pld.system.notify(target=signal, peer=peer, offsets=[0, 0], value=1, op=pld.NotifyOp.Set)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, 1, WIDTH], pl.INT32],
        outputs: pl.Out[pl.Tensor[[NR, WAITERS, WIDTH], pl.INT32]],
    ) -> pl.Tensor[[NR, WAITERS, WIDTH], pl.INT32]:
        payload_buf = pld.alloc_window_buffer(WIDTH * pl.INT32.get_byte())
        signal_buf = pld.alloc_window_buffer(pl.INT32.get_byte())
        for rank in pl.range(pld.world_size()):
            payload = pld.window(payload_buf, [1, WIDTH], dtype=pl.INT32)
            signal = pld.window(signal_buf, [1, 1], dtype=pl.INT32)
            self.chip_orch(inputs[rank], outputs[rank], payload, signal, (rank + 1) % pld.world_size(), device=rank)
        return outputs
