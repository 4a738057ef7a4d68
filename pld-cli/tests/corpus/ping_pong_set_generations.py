"""Ping-pong between rank pairs (0-1, 2-3, ...) for ROUNDS rounds, synchronised by Set
notifies carrying a generation number (round k publishes k + 1, the partner waits Eq k + 1:
no credit counting, no reset). The even rank of a pair sends its value, the odd one adds 1
and sends it back, the even one adds 1 again; each role carries its value through
`pl.range(..., init_values=...)`. Even rank counts only.

    out[2p]     = x[2p] + 2 * ROUNDS
    out[2p + 1] = x[2p] + 2 * ROUNDS - 1
"""
# pld-corpus-ranks: 2,4,8
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 40
ROUNDS = 4


@pl.program
class PingPong:
    @pl.function(type=pl.FunctionType.InCore)
    def rally(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        inbox: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        gen: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    ):
        ctx = pld.get_comm_ctx(inbox)
        me = pld.rank(ctx)
        partner = me + 1 - 2 * (me % 2)
        start = pl.load(x, [0, 0], [1, SIZE])
        if me % 2 == 0:
            for k, (v,) in pl.range(ROUNDS, init_values=(start,)):
                pld.tile.remote_store(v, inbox, partner, [0, 0])
                pld.system.notify(gen, partner, [0, 0], k + 1, op=pld.NotifyOp.Set)
                pld.system.wait(gen, [0, 0], k + 1, cmp=pld.WaitCmp.Eq)
                back = pl.adds(pl.load(inbox, [0, 0], [1, SIZE]), 1.0)
                v_next = pl.yield_(back)
            out = pl.store(v_next, [0, 0], out)
        else:
            for k, (w,) in pl.range(ROUNDS, init_values=(start,)):
                pld.system.wait(gen, [0, 0], k + 1, cmp=pld.WaitCmp.Eq)
                reply = pl.adds(pl.load(inbox, [0, 0], [1, SIZE]), 1.0)
                pld.tile.remote_store(reply, inbox, partner, [0, 0])
                pld.system.notify(gen, partner, [0, 0], k + 1, op=pld.NotifyOp.Set)
                w_next = pl.yield_(reply)
            out = pl.store(w_next, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        inbox: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        gen: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    ):
        self.rally(x, out, inbox, gen)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, x: pl.Tensor[[NR, 1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
        inbox_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        gen_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            inbox = pld.window(inbox_buf, [1, SIZE], dtype=pl.FP32)
            gen = pld.window(gen_buf, [1, 1], dtype=pl.INT32)
            self.chip_orch(x[r], out[r], inbox, gen, device=r)


def golden(tensors, params):
    n = params["ranks"]
    x = tensors["x"].astype(np.float64)
    for p in range(0, n, 2):
        tensors["out"][p] = x[p] + 2 * ROUNDS
        tensors["out"][p + 1] = x[p] + 2 * ROUNDS - 1
