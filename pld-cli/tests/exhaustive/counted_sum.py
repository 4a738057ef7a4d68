"""Both ranks add their row into rank 0's INT32 accumulator with an atomic put and count
themselves in on rank 0's counter; rank 0 zeroes the accumulator first and releases rank 1,
then waits for both counts and reads the sum. The two atomic adds land in either order: two
traces with one outcome.

    outputs[0] = inputs[0] + inputs[1]; outputs[1] is not written (zero)
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
C = 8


@pl.program
class CountedSum:
    @pl.function(type=pl.FunctionType.InCore)
    def add_in(
        self,
        inp: pl.Tensor[[1, C], pl.INT32],
        out: pl.Out[pl.Tensor[[1, C], pl.INT32]],
        acc: pl.InOut[pld.DistributedTensor[[1, C], pl.INT32]],
        signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ) -> pl.Tensor[[1, C], pl.INT32]:
        ctx = pld.get_comm_ctx(acc)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        if me == 0:
            zero = pl.full([1, C], 0, dtype=pl.INT32)
            acc = pl.store(zero, [0, 0], acc)
            for q in pl.range(1, n):
                pld.system.notify(signal, q, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)
        else:
            pld.system.wait(signal, [0, 0], 1, cmp=pld.WaitCmp.Ge)
        pld.tensor.put(acc, 0, inp, atomic=pld.AtomicType.Add)
        pld.system.notify(signal, 0, [1, 0], 1, op=pld.NotifyOp.AtomicAdd)
        if me == 0:
            pld.system.wait(signal, [1, 0], n, cmp=pld.WaitCmp.Ge)
            total = pl.load(acc, [0, 0], [1, C])
            out = pl.store(total, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        inp: pl.Tensor[[1, C], pl.INT32],
        out: pl.Out[pl.Tensor[[1, C], pl.INT32]],
        acc: pl.InOut[pld.DistributedTensor[[1, C], pl.INT32]],
        signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ):
        self.add_in(inp, out, acc, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, 1, C], pl.INT32],
        outputs: pl.Out[pl.Tensor[[NR, 1, C], pl.INT32]],
    ):
        acc_buf = pld.alloc_window_buffer(C * 4, name="acc")
        signal_buf = pld.alloc_window_buffer(2 * 4, name="signal")
        for r in pl.range(pld.world_size()):
            acc = pld.window(acc_buf, [1, C], dtype=pl.INT32)
            signal = pld.window(signal_buf, [2, 1], dtype=pl.INT32)
            self.chip_orch(inputs[r], outputs[r], acc, signal, device=r)


def golden(tensors, params):
    x = tensors["inputs"]
    tensors["outputs"][:] = 0
    tensors["outputs"][0] = x.sum(axis=0)
