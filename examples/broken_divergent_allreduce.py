"""A deliberately broken program: a rank-divergent allreduce (the collective variant of
`broken_divergent_barrier.py`).

Rank 0 skips the allreduce, so every other rank waits forever for rank 0's credits. On
hardware this hangs until TWAIT's spin-count assert fires. Unlike a hand-written
notify/wait protocol, a collective must be reached by every rank the same number of times
and in the same order, and the compiler can see that this one is not: `pld check` rejects
the program (exit code 1, error E0106) at the allreduce, labelling the rank-dependent
condition and the `pld.rank` call the rank enters through:

    pld check examples/broken_divergent_allreduce.py
    pld explain E0106
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64


@pl.program
class DivergentAllreduce:
    @pl.function(type=pl.FunctionType.InCore)
    def step(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        data = pl.store(pl.load(inp, [0, 0], [1, SIZE]), [0, 0], data)
        # BUG: rank 0 never joins the allreduce.
        if me != 0:
            data = pld.tensor.allreduce(data, signal)
        out = pl.store(pl.load(data, [0, 0], [1, SIZE]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.step(inp, out, data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.chip_orch(inputs[r], outputs[r], data, signal, device=r)
