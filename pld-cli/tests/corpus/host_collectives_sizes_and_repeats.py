"""Host collectives at several shapes, several times: two windows of different sizes are
each published by a chip pass (its kernel's call returned), allreduced twice without
signals (each call gets its own), broadcast from rank 0, and read back by a consume pass.

    out_s[r] = NR * sum_k a[k]            (two allreduces of [1, 64]: the second sums NR copies)
    out_b[r] = sum_k b[k]                 (one allreduce of [4, 128], then a broadcast)
"""
# pld-corpus-ranks: 2,3,4,8
# pld-corpus-run:
# pld-corpus-run: --schedule random:13
# pld-corpus-verify: --schedules 3
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
S = 64
B = 128


@pl.program
class SizesAndRepeats:
    @pl.function(type=pl.FunctionType.InCore)
    def publish(
        self,
        a: pl.Tensor[[1, S], pl.FP32],
        b: pl.Tensor[[4, B], pl.FP32],
        small: pl.Out[pld.DistributedTensor[[1, S], pl.FP32]],
        big: pl.Out[pld.DistributedTensor[[4, B], pl.FP32]],
    ):
        small = pl.store(pl.load(a, [0, 0], [1, S]), [0, 0], small)
        big = pl.store(pl.load(b, [0, 0], [4, B]), [0, 0], big)

    @pl.function(type=pl.FunctionType.InCore)
    def consume(
        self,
        small: pld.DistributedTensor[[1, S], pl.FP32],
        big: pld.DistributedTensor[[4, B], pl.FP32],
        out_s: pl.Out[pl.Tensor[[1, S], pl.FP32]],
        out_b: pl.Out[pl.Tensor[[4, B], pl.FP32]],
    ):
        out_s = pl.store(pl.load(small, [0, 0], [1, S]), [0, 0], out_s)
        out_b = pl.store(pl.load(big, [0, 0], [4, B]), [0, 0], out_b)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(
        self,
        a: pl.Tensor[[1, S], pl.FP32],
        b: pl.Tensor[[4, B], pl.FP32],
        small: pl.Out[pld.DistributedTensor[[1, S], pl.FP32]],
        big: pl.Out[pld.DistributedTensor[[4, B], pl.FP32]],
    ):
        self.publish(a, b, small, big)

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume_orch(
        self,
        small: pld.DistributedTensor[[1, S], pl.FP32],
        big: pld.DistributedTensor[[4, B], pl.FP32],
        out_s: pl.Out[pl.Tensor[[1, S], pl.FP32]],
        out_b: pl.Out[pl.Tensor[[4, B], pl.FP32]],
    ):
        self.consume(small, big, out_s, out_b)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        a: pl.Tensor[[NR, 1, S], pl.FP32],
        b: pl.Tensor[[NR, 4, B], pl.FP32],
        out_s: pl.Out[pl.Tensor[[NR, 1, S], pl.FP32]],
        out_b: pl.Out[pl.Tensor[[NR, 4, B], pl.FP32]],
    ):
        small_buf = pld.alloc_window_buffer(S * 4)
        big_buf = pld.alloc_window_buffer(4 * B * 4)
        small = pld.window(small_buf, [1, S], dtype=pl.FP32)
        big = pld.window(big_buf, [4, B], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.publish_orch(a[r], b[r], small, big, device=r)
        small = pld.tensor.allreduce(small, op=pld.ReduceOp.Sum)
        big = pld.tensor.allreduce(big, op=pld.ReduceOp.Sum)
        small = pld.tensor.allreduce(small, op=pld.ReduceOp.Sum)
        big = pld.tensor.broadcast(big, root=0)
        for r in pl.range(pld.world_size()):
            self.consume_orch(small, big, out_s[r], out_b[r], device=r)


def golden(tensors, params):
    a, b = tensors["a"], tensors["b"]
    n = a.shape[0]
    tensors["out_s"][:] = n * a.sum(axis=0, keepdims=True)
    tensors["out_b"][:] = b.sum(axis=0, keepdims=True)
