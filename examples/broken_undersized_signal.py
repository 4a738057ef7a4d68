"""A deliberately broken program: a barrier whose signal was sized for two ranks.

The signal window has one cell per rank, but its buffer and windows are written in numbers
(`2 * 4` bytes, shape `[2, 1]`) instead of the rank count. It runs on two ranks; on more,
`pld run` stops at the first signal cell past the second (exit code 3) with a `help:` at the
allocation giving the size in the rank count:

    pld run examples/broken_undersized_signal.py --ranks 4
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64


@pl.program
class UndersizedSignal:
    @pl.function(type=pl.FunctionType.InCore)
    def step(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(signal)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
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
        signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ):
        self.step(inp, out, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        # BUG: sized for two ranks (`pld.world_size() * 4` and `[NR, 1]` would fit any count).
        signal_buf = pld.alloc_window_buffer(2 * 4)
        for r in pl.range(pld.world_size()):
            signal = pld.window(signal_buf, [2, 1], dtype=pl.INT32)
            self.chip_orch(inputs[r], outputs[r], signal, device=r)
