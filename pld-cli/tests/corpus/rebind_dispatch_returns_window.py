"""The reference's host idiom: a dispatch returns the window its chip function filled
(`data = self.publish_orch(inputs[r], data, device=r)`), the host rebinds it through an
allreduce and a broadcast, and a consume kernel adds 1 to what the window holds.

    outputs[r] = 1 + sum over ranks k of inputs[k]
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64


@pl.program
class DispatchReturnsWindow:
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
    def consume(
        self,
        data: pld.DistributedTensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    ):
        me = pld.rank(pld.get_comm_ctx(data))
        t = pl.load(data, [0, 0], [1, SIZE])
        t = pl.adds(t, 1.0)
        out = pl.store(t, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(self, inp: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]) -> pld.DistributedTensor[[1, SIZE], pl.FP32]:
        data = self.publish(inp, data)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume_orch(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        self.consume(data, out)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data_buf = pld.alloc_window_buffer(SIZE * 4)
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        sig = pld.window(sig_buf, [NR], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            data = self.publish_orch(inputs[r], data, device=r)
        data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Sum)
        data = pld.tensor.broadcast(data, sig, root=1)
        for r in pl.range(pld.world_size()):
            self.consume_orch(data, outputs[r], device=r)


def golden(tensors, params):
    tensors["outputs"][:] = 1.0 + tensors["inputs"].sum(axis=0, keepdims=True)
