"""A deliberately broken program: a rank-divergent barrier.

Rank 0 skips the barrier's notify, so every other rank waits forever for rank 0's
credit. On hardware this hangs until TWAIT's spin-count assert fires; on the simulator
`pld run` stops with a deadlock report (exit code 3) naming every parked core, the cell
it waits on, the predicate, the cell's current value and the source line:

    pld run examples/broken_divergent_barrier.py --ranks 2
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64


@pl.program
class DivergentBarrier:
    @pl.function(type=pl.FunctionType.InCore)
    def step(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(signal)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        # BUG: rank 0 never announces its arrival.
        if me != 0:
            for k in pl.range(1, n):
                peer = (me + k) % n
                pld.system.notify(signal, peer, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        for k in pl.range(1, n):
            src = (me + k) % n
            pld.system.wait(signal, [src, 0], 1, cmp=pld.WaitCmp.Ge)
        row = pl.load(inp, [0, 0], [1, SIZE])
        out = pl.store(row, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.step(inp, out, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        for r in pl.range(pld.world_size()):
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.chip_orch(inputs[r], outputs[r], signal, device=r)
