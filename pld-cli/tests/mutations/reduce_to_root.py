"""Reduce-to-root with atomic pushes into a never-zeroed INT32 window.

The root (rank 0) clears its accumulator with a store of zeros and releases every other rank
with a "cleared" notify; each rank then pushes its row into the root's accumulator with
`pld.tensor.put(..., atomic=Add)` and counts itself in. The root waits for every count, reads
the sum and clears its count cell (a self-clearing epilogue). An integer window is not zero
until something writes it, and the clear is what orders the pushes: without the "cleared" wait
the root's store of zeros (often onto bytes that already read as zero) races the pushes.

    outputs[0] = sum over ranks k of inputs[k]      (the root's row; the others copy theirs)
"""
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
C = 16


@pl.program
class ReduceToRoot:
    @pl.function(type=pl.FunctionType.InCore)
    def reduce(
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
            pld.system.notify(signal, 0, [1, 0], -n, op=pld.NotifyOp.AtomicAdd)
        else:
            row = pl.load(inp, [0, 0], [1, C])
            out = pl.store(row, [0, 0], out)
            pld.system.notify(signal, me, [0, 0], -1, op=pld.NotifyOp.AtomicAdd)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        inp: pl.Tensor[[1, C], pl.INT32],
        out: pl.Out[pl.Tensor[[1, C], pl.INT32]],
        acc: pl.InOut[pld.DistributedTensor[[1, C], pl.INT32]],
        signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ):
        self.reduce(inp, out, acc, signal)

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
    tensors["outputs"][:] = x
    tensors["outputs"][0] = x.sum(axis=0)
