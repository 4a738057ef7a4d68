"""A host-level allreduce (`pld.tensor.allreduce` in the host function, one builtin
dispatch per rank) between a publish and a consume pass, then a host callback that turns
the reduced rows into a mean and a per-rank residual:

    total[r] = sum_k x[k]                  (publish, allreduce, consume)
    mean     = total[0] / NR               (host callback)
    resid[r] = x[r] - mean
"""
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 256


@pl.program
class HostAllreducePost:
    @pl.function(type=pl.FunctionType.InCore)
    def publish(self, x: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)
        return data

    @pl.function(type=pl.FunctionType.InCore)
    def consume(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32], total: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        total = pl.store(pl.load(data, [0, 0], [1, SIZE]), [0, 0], total)
        return total

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(self, x: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        data = self.publish(x, data)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume_orch(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32], total: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        total = self.consume(data, total)
        return total

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def residuals(
        x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        total: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        mean: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        resid: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        n = x.shape[0]
        mean[:] = total[0] / np.float32(n)
        resid[:] = x - mean

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        total: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
        mean: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        resid: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data_buf = pld.alloc_window_buffer(SIZE * 4, name="data")
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="signal")
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(sig_buf, [NR], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.publish_orch(x[r], data, device=r)
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)
        for r in pl.range(pld.world_size()):
            self.consume_orch(data, total[r], device=r)
        self.residuals(x, total, mean, resid)


def golden(tensors, params):
    x = tensors["x"]
    s = x.sum(axis=0)
    tensors["total"][:] = s
    tensors["mean"][:] = s / np.float32(params["ranks"])
    tensors["resid"][:] = x - tensors["mean"]
