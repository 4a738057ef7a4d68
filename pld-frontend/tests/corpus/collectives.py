# Collectives at chip level and on the host, with reduce ops, ring mode and roots.
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 256


@pl.program
class Collectives:
    @pl.function(type=pl.FunctionType.InCore)
    def chip(
        self,
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        ring_signal: pl.InOut[pld.DistributedTensor[[2 * (NR - 1), NR], pl.INT32]],
    ):
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)
        data = pld.tensor.allreduce(data, ring_signal, op=pld.ReduceOp.Max, mode="ring")
        signal = pld.tensor.barrier(signal)
        data = pld.tensor.broadcast(data, signal, root=0)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Prod, core_num=2)
        data = pld.tensor.reduce_scatter(data, signal, op=pld.ReduceOp.Sum)
