"""A hand-written mesh allreduce called twice on one self-clearing signal.

Each call stores the rank's row, runs a ready barrier (generation 1), sums every peer's row
with remote_load, runs a read-done barrier (generation 2) and subtracts the two credits each
cell received, so the signal is all-zero again for the next call.

    first[r] = sum over all ranks k of inp[k][0]
    second[r] = sum over all ranks k of inp[k][1]
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64


@pl.program
class BarrierTwice:
    @pl.function(type=pl.FunctionType.InCore)
    def allreduce_step(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        row = pl.load(inp, [0, 0], [1, SIZE])
        data = pl.store(row, [0, 0], data)
        for k in pl.range(1, n):
            pld.system.notify(signal, (me + k) % n, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        for k in pl.range(1, n):
            pld.system.wait(signal, [(me + k) % n, 0], 1, cmp=pld.WaitCmp.Ge)
        acc = pl.load(data, [0, 0], [1, SIZE])
        for k, (partial,) in pl.range(1, n, init_values=(acc,)):
            theirs = pld.tile.remote_load(data, (me + k) % n, [0, 0], [1, SIZE])
            summed = pl.add(partial, theirs)
            total = pl.yield_(summed)
        out = pl.store(total, [0, 0], out)
        for k in pl.range(1, n):
            pld.system.notify(signal, (me + k) % n, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        for k in pl.range(1, n):
            pld.system.wait(signal, [(me + k) % n, 0], 2, cmp=pld.WaitCmp.Ge)
        for k in pl.range(1, n):
            pld.system.notify(signal, me, [(me + k) % n, 0], -2, op=pld.NotifyOp.AtomicAdd)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        inp: pl.Tensor[[2, SIZE], pl.FP32],
        first: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        second: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.allreduce_step(inp[0:1, :], first, data, signal)
        self.allreduce_step(inp[1:2, :], second, data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, 2, SIZE], pl.FP32],
        firsts: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
        seconds: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data_buf = pld.alloc_window_buffer(SIZE * 4, name="data")
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="signal")
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.chip_orch(inputs[r], firsts[r], seconds[r], data, signal, device=r)
