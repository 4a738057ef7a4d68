"""A kernel returns the window it rebound (`data = pl.store(row, offs, data); return data`),
and the chip orchestration rebinds its window to that result (`data = self.publish(inp,
data)`) before handing it to the reducing kernel: the result of a call is the window bound
to the callee's only written window parameter, so its context and its memory follow.

    outputs[r] = sum over ranks k of inputs[k]
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64


@pl.program
class KernelReturnsWindow:
    @pl.function(type=pl.FunctionType.InCore)
    def publish(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    ) -> pld.DistributedTensor[[1, SIZE], pl.FP32]:
        row = pl.load(inp, [0, 0], [1, SIZE])
        data = pl.store(row, [0, 0], data)
        return data

    @pl.function(type=pl.FunctionType.InCore)
    def reduce(
        self,
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    ):
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)
        acc = pl.load(data, [0, 0], [1, SIZE])
        out = pl.store(acc, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        data = self.publish(inp, data)
        self.reduce(data, signal, out)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data_buf = pld.alloc_window_buffer(SIZE * 4)
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.chip_orch(inputs[r], outputs[r], data, signal, device=r)


def golden(tensors, params):
    tensors["outputs"][:] = tensors["inputs"].sum(axis=0, keepdims=True)
