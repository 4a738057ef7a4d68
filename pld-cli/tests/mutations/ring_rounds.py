"""A ring exchange over ROUNDS rounds through one window row per rank.

Each round a rank stores its row into its own window, tells the next rank it is ready, waits
for the previous rank's row, pulls it, and then runs a read-done barrier so nobody overwrites a
row a peer is still reading. Both counters are self-clearing: the epilogue subtracts the
ROUNDS credits each cell received.

    out[r][k] = inp[(r - 1) mod P][k]    for every round k
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64
ROUNDS = 3


@pl.program
class RingRounds:
    @pl.function(type=pl.FunctionType.InCore)
    def rounds(
        self,
        inp: pl.Tensor[[ROUNDS, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[ROUNDS, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 2], pl.INT32]],
    ) -> pl.Tensor[[ROUNDS, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        nxt = (me + 1) % n
        prv = (me + n - 1) % n
        for rnd in pl.range(ROUNDS):
            row = pl.load(inp, [rnd, 0], [1, SIZE])
            data = pl.store(row, [0, 0], data)
            pld.system.notify(signal, nxt, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
            pld.system.wait(signal, [prv, 0], rnd + 1, cmp=pld.WaitCmp.Ge)
            theirs = pld.tile.remote_load(data, prv, [0, 0], [1, SIZE])
            out = pl.store(theirs, [rnd, 0], out)
            pld.system.notify(signal, prv, [me, 1], 1, op=pld.NotifyOp.AtomicAdd)
            pld.system.wait(signal, [nxt, 1], rnd + 1, cmp=pld.WaitCmp.Ge)
        pld.system.notify(signal, me, [prv, 0], -ROUNDS, op=pld.NotifyOp.AtomicAdd)
        pld.system.notify(signal, me, [nxt, 1], -ROUNDS, op=pld.NotifyOp.AtomicAdd)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        inp: pl.Tensor[[ROUNDS, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[ROUNDS, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 2], pl.INT32]],
    ):
        self.rounds(inp, out, data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, ROUNDS, SIZE], pl.FP32],
        outputs: pl.Out[pl.Tensor[[NR, ROUNDS, SIZE], pl.FP32]],
    ):
        data_buf = pld.alloc_window_buffer(SIZE * 4, name="data")
        signal_buf = pld.alloc_window_buffer(2 * pld.world_size() * 4, name="signal")
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [NR, 2], dtype=pl.INT32)
            self.chip_orch(inputs[r], outputs[r], data, signal, device=r)
