"""A ring exchange whose wait asks for two credits where one notify arrives: every rank
blocks on a cell its previous rank wrote, a deadlock whose report names that writer."""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 128


@pl.program
class RingShortOfCredit:
    @pl.function(type=pl.FunctionType.InCore)
    def exchange(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        pushed: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        pulled: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        stage: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        inbox: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        ctx = pld.get_comm_ctx(inbox)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        nxt = (me + 1) % n
        prv = (me + n - 1) % n
        # Keep a copy of my row in my own window so the previous rank can get it later.
        pld.tensor.put(stage, me, inp, atomic=pld.AtomicType.None_)
        # Push my row straight from host memory into the next rank's inbox.
        pld.tensor.put(inbox, nxt, inp, atomic=pld.AtomicType.None_)
        pld.system.notify(signal, nxt, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        # Bug: one notify arrives but the wait asks for two credits.
        pld.system.wait(signal, [prv, 0], 2, cmp=pld.WaitCmp.Ge)
        got = pl.load(inbox, [0, 0], [1, SIZE])
        pushed = pl.store(got, [0, 0], pushed)
        # Pull the previous rank's staged row into a plain output tensor.
        pld.tensor.get(pulled, prv, stage)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        pushed: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        pulled: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        stage: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        inbox: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.exchange(inp, pushed, pulled, stage, inbox, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        pushed: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
        pulled: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        stage_buf = pld.alloc_window_buffer(SIZE * 4)
        inbox_buf = pld.alloc_window_buffer(SIZE * 4)
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        for r in pl.range(pld.world_size()):
            stage = pld.window(stage_buf, [1, SIZE], dtype=pl.FP32)
            inbox = pld.window(inbox_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.chip_orch(inputs[r], pushed[r], pulled[r], stage, inbox, signal, device=r)
