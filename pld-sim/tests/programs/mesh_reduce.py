import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 256
NR = pl.dynamic("NR")

@pl.program
class Mesh:
    @pl.function(type=pl.FunctionType.InCore)
    def reduce_step(self, inp: pl.Tensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
                    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
                    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        t = pl.load(inp, [0, 0], [1, SIZE])
        pl.store(t, [0, 0], data)
        for peer in pl.range(n):
            if peer != me:
                pld.system.notify(signal, peer, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        for src in pl.range(n):
            if src != me:
                pld.system.wait(signal, [src, 0], 1, cmp=pld.WaitCmp.Ge)
        acc0 = pl.load(data, [0, 0], [1, SIZE])
        for peer, (acc,) in pl.range(n, init_values=(acc0,)):
            if peer != me:
                r = pld.tile.remote_load(data, peer, [0, 0], [1, SIZE])
                s = pl.add(acc, r)
                nxt = pl.yield_(s)
            else:
                nxt = pl.yield_(acc)
            acc_out = pl.yield_(nxt)
        pl.store(acc_out, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
             data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        out = self.reduce_step(inp, out, data, signal)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
        data_buf = pld.alloc_window_buffer(SIZE * 4, name="data")
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="signal")
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
            self.chip(inputs[r], outputs[r], data, signal, device=r)
