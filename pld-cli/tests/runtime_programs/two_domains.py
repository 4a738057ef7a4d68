"""Runtime-directory coverage: two comm domains. Every rank joins an allreduce over one window
pair; ranks 0 and 1 also sum their rows over a second pair of windows that only they map, so
the host opens a nested domain with `workers=[0, 1]`, each with its own ordering tokens.

    out[r]  = sum over all ranks k of inp[k]
    pair[r] = inp[0] + inp[1]        (r in {0, 1}; pair[r] = 0 elsewhere)
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64


@pl.program
class TwoDomains:
    @pl.function(type=pl.FunctionType.InCore)
    def reduce_all(
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
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def reduce_pair(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        peer = 1 - me
        row = pl.load(inp, [0, 0], [1, SIZE])
        data = pl.store(row, [0, 0], data)
        pld.system.notify(signal, peer, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(signal, [peer, 0], 1, cmp=pld.WaitCmp.Ge)
        mine = pl.load(data, [0, 0], [1, SIZE])
        theirs = pld.tile.remote_load(data, peer, [0, 0], [1, SIZE])
        summed = pl.add(mine, theirs)
        out = pl.store(summed, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def all_orch(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.reduce_all(inp, out, data, signal)

    @pl.function(type=pl.FunctionType.Orchestration)
    def pair_orch(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ):
        self.reduce_pair(inp, out, data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
        pair: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data_buf = pld.alloc_window_buffer(SIZE * 4)
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        pair_buf = pld.alloc_window_buffer(SIZE * 4)
        pair_sig = pld.alloc_window_buffer(2 * 4)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.all_orch(inputs[r], outputs[r], data, signal, device=r)
        for r in pl.range(0, 2):
            pdata = pld.window(pair_buf, [1, SIZE], dtype=pl.FP32)
            psig = pld.window(pair_sig, [2, 1], dtype=pl.INT32)
            self.pair_orch(inputs[r], pair[r], pdata, psig, device=r)


def golden(tensors, params):
    inp = tensors["inputs"]
    tensors["outputs"][:] = inp.sum(axis=0, keepdims=True)
    tensors["pair"][:] = 0
    tensors["pair"][0:2] = inp[0] + inp[1]
