"""A ring mailbox with Set flags: each round a rank pushes its row into the next rank's box,
raises the next rank's "full" flag to the round number, waits for its own box, copies it out
and raises the previous rank's "free" flag, then waits until the next rank freed its box.

    out[r][k] = inp[(r - 1) mod P][k]    for every round k
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64
ROUNDS = 3


@pl.program
class FlagRing:
    @pl.function(type=pl.FunctionType.InCore)
    def mailbox(
        self,
        inp: pl.Tensor[[ROUNDS, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[ROUNDS, SIZE], pl.FP32]],
        box: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        flags: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ) -> pl.Tensor[[ROUNDS, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(box)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        nxt = (me + 1) % n
        prv = (me + n - 1) % n
        for rnd in pl.range(ROUNDS):
            row = pl.load(inp, [rnd, 0], [1, SIZE])
            pld.tile.remote_store(row, box, nxt, [0, 0])
            pld.system.notify(flags, nxt, [0, 0], rnd + 1, op=pld.NotifyOp.Set)
            pld.system.wait(flags, [0, 0], rnd + 1, cmp=pld.WaitCmp.Ge)
            got = pl.load(box, [0, 0], [1, SIZE])
            out = pl.store(got, [rnd, 0], out)
            pld.system.notify(flags, prv, [1, 0], rnd + 1, op=pld.NotifyOp.Set)
            pld.system.wait(flags, [1, 0], rnd + 1, cmp=pld.WaitCmp.Ge)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        inp: pl.Tensor[[ROUNDS, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[ROUNDS, SIZE], pl.FP32]],
        box: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        flags: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ):
        self.mailbox(inp, out, box, flags)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, ROUNDS, SIZE], pl.FP32],
        outputs: pl.Out[pl.Tensor[[NR, ROUNDS, SIZE], pl.FP32]],
    ):
        box_buf = pld.alloc_window_buffer(SIZE * 4, name="box")
        flag_buf = pld.alloc_window_buffer(2 * 4, name="flags")
        for r in pl.range(pld.world_size()):
            box = pld.window(box_buf, [1, SIZE], dtype=pl.FP32)
            flags = pld.window(flag_buf, [2, 1], dtype=pl.INT32)
            self.chip_orch(inputs[r], outputs[r], box, flags, device=r)
