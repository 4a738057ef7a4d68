"""Quickstart: a mesh allreduce written by hand with notify / wait / remote_load.

Every rank stores its input row into a symmetric window, joins a credit barrier
(an AtomicAdd notify to every peer, then a Ge wait on every peer's cell), and pulls
each peer's row with remote_load, accumulating as it goes:

    out[r] = sum over all ranks k of inp[k]      (for every r)

Run it on four simulated ranks:

    pld run examples/quickstart_allreduce.py --ranks 4
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 256


@pl.program
class Quickstart:
    @pl.function(type=pl.FunctionType.InCore)
    def reduce_step(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        # Publish this rank's row in its own slice of the window.
        row = pl.load(inp, [0, 0], [1, SIZE])
        data = pl.store(row, [0, 0], data)
        # Barrier: +1 into my cell on every peer, then wait for every peer's +1 in mine.
        for k in pl.range(1, n):
            peer = (me + k) % n
            pld.system.notify(signal, peer, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        for k in pl.range(1, n):
            src = (me + k) % n
            pld.system.wait(signal, [src, 0], 1, cmp=pld.WaitCmp.Ge)
        # Pull every peer's row and accumulate.
        acc = pl.load(data, [0, 0], [1, SIZE])
        for k, (partial,) in pl.range(1, n, init_values=(acc,)):
            peer = (me + k) % n
            theirs = pld.tile.remote_load(data, peer, [0, 0], [1, SIZE])
            summed = pl.add(partial, theirs)
            total = pl.yield_(summed)
        out = pl.store(total, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.reduce_step(inp, out, data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data_buf = pld.alloc_window_buffer(SIZE * 4)
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.chip_orch(inputs[r], outputs[r], data, signal, device=r)
