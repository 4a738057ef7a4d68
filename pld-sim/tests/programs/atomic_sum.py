import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
C = 8


@pl.program
class AtomicSum:
    @pl.function(type=pl.FunctionType.InCore)
    def accumulate(self, inp: pl.Tensor[[1, C], pl.FP32], out: pl.Out[pl.Tensor[[1, C], pl.FP32]],
                   dst: pl.InOut[pld.DistributedTensor[[1, C], pl.FP32]],
                   signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]]) -> pl.Tensor[[1, C], pl.FP32]:
        ctx = pld.get_comm_ctx(dst)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        if me == 0:
            zero = pl.full([1, C], 0.0, dtype=pl.FP32)
            pl.store(zero, [0, 0], dst)
            for q in pl.range(1, n):
                pld.system.notify(signal, q, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)
        else:
            pld.system.wait(signal, [0, 0], 1, cmp=pld.WaitCmp.Ge)
        pld.tensor.put(dst, 0, inp, atomic=pld.AtomicType.Add)
        pld.system.notify(signal, 0, [1, 0], 1, op=pld.NotifyOp.AtomicAdd)
        if me == 0:
            pld.system.wait(signal, [1, 0], n, cmp=pld.WaitCmp.Ge)
            total = pl.load(dst, [0, 0], [1, C])
            pl.store(total, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, inp: pl.Tensor[[1, C], pl.FP32], out: pl.Out[pl.Tensor[[1, C], pl.FP32]],
                  dst: pl.InOut[pld.DistributedTensor[[1, C], pl.FP32]],
                  signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]]):
        self.accumulate(inp, out, dst, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, inputs: pl.Tensor[[NR, 1, C], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, 1, C], pl.FP32]]):
        dst_buf = pld.alloc_window_buffer(C * 4, name="dst")
        signal_buf = pld.alloc_window_buffer(2 * 4, name="signal")
        for r in pl.range(pld.world_size()):
            dst = pld.window(dst_buf, [1, C], dtype=pl.FP32)
            signal = pld.window(signal_buf, [2, 1], dtype=pl.INT32)
            self.chip_orch(inputs[r], outputs[r], dst, signal, device=r)
