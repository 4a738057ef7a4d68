"""Two program-building functions in one file, each with parameters of its own and no
defaults. Selecting one program (`--entry ring_host --bind hops=2`) binds only its builder;
the other is never built, so it needs no binding.

    ring_host:  outputs[r] = inputs[(r - hops) mod P]   (hops single-step passes)
    shift_host: outputs[r] = inputs[r] + bias
"""
# pld-corpus-run: --entry ring_host --bind hops=2
# pld-corpus-run: --entry ring_host --bind hops=1
# pld-corpus-run: --entry shift_host --bind bias=3
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
COLS = 32


def build_ring(hops: int):
    @pl.program
    class Ring:
        @pl.function(type=pl.FunctionType.InCore)
        def hop(
            self,
            inp: pl.Tensor[[1, COLS], pl.FP32],
            out: pl.Out[pl.Tensor[[1, COLS], pl.FP32]],
            win: pl.InOut[pld.DistributedTensor[[1, COLS], pl.FP32]],
            sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        ):
            ctx = pld.get_comm_ctx(win)
            me = pld.rank(ctx)
            n = pld.nranks(ctx)
            cur = pl.load(inp, [0, 0], [1, COLS])
            for h, (c,) in pl.range(hops, init_values=(cur,)):
                win = pl.store(c, [0, 0], win)
                pld.tensor.barrier(sig)
                nxt = pld.tile.remote_load(win, (me + n - 1) % n, [0, 0], [1, COLS])
                pld.tensor.barrier(sig)
                c2 = pl.yield_(nxt)
            out = pl.store(c2, [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def chip(
            self,
            inp: pl.Tensor[[1, COLS], pl.FP32],
            out: pl.Out[pl.Tensor[[1, COLS], pl.FP32]],
            win: pl.InOut[pld.DistributedTensor[[1, COLS], pl.FP32]],
            sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        ):
            self.hop(inp, out, win, sig)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def ring_host(self, inputs: pl.Tensor[[NR, 1, COLS], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, 1, COLS], pl.FP32]]):
            win_buf = pld.alloc_window_buffer(COLS * 4)
            sig_buf = pld.alloc_window_buffer(pld.world_size() * 4)
            for r in pl.range(pld.world_size()):
                win = pld.window(win_buf, [1, COLS], dtype=pl.FP32)
                sig = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
                self.chip(inputs[r], outputs[r], win, sig, device=r)

    return Ring


def build_shift(bias: int):
    @pl.program
    class Shift:
        @pl.function(type=pl.FunctionType.InCore)
        def add_bias(self, inp: pl.Tensor[[1, COLS], pl.FP32], out: pl.Out[pl.Tensor[[1, COLS], pl.FP32]]):
            t = pl.load(inp, [0, 0], [1, COLS])
            out = pl.store(pl.adds(t, bias * 1.0), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def chip(self, inp: pl.Tensor[[1, COLS], pl.FP32], out: pl.Out[pl.Tensor[[1, COLS], pl.FP32]]):
            self.add_bias(inp, out)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def shift_host(self, inputs: pl.Tensor[[NR, 1, COLS], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, 1, COLS], pl.FP32]]):
            for r in pl.range(pld.world_size()):
                self.chip(inputs[r], outputs[r], device=r)

    return Shift


def golden_ring_host(tensors, params):
    tensors["outputs"][:] = np.roll(tensors["inputs"], int(params["hops"]), axis=0)


def golden_shift_host(tensors, params):
    tensors["outputs"][:] = tensors["inputs"] + float(params["bias"])
