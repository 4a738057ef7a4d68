"""A builder bound from `--ranks` (`def build(n_ranks: int)`, no `--bind`): the chip
orchestrator returns its kernel's call (the window it filled), the host keeps that result and
allreduces it; a second window of another size is allreduced twice; a consume kernel returns
its store and the chip orchestrator returns that call.

    out_a[r] = sum_k a[k]                 ([1, 64] window, one allreduce)
    out_b[r] = n_ranks * sum_k b[k]       ([2, 128] window, two allreduces)
"""
# pld-corpus-ranks: 2,3,4,8
# pld-corpus-run:
# pld-corpus-run: --schedule random:17
# pld-corpus-verify: --schedules 3
import pypto.language as pl
import pypto.language.distributed as pld

S = 64
B = 128


def build(n_ranks: int):
    @pl.program
    class PublishTwice:
        @pl.function(type=pl.FunctionType.InCore)
        def publish(
            self,
            a: pl.Tensor[[1, S], pl.FP32],
            win: pl.Out[pld.DistributedTensor[[1, S], pl.FP32]],
        ) -> pld.DistributedTensor[[1, S], pl.FP32]:
            return pl.store(pl.load(a, [0, 0], [1, S]), [0, 0], win)

        @pl.function(type=pl.FunctionType.InCore)
        def publish_b(
            self,
            b: pl.Tensor[[2, B], pl.FP32],
            win: pl.Out[pld.DistributedTensor[[2, B], pl.FP32]],
        ) -> pld.DistributedTensor[[2, B], pl.FP32]:
            return pl.store(pl.load(b, [0, 0], [2, B]), [0, 0], win)

        @pl.function(type=pl.FunctionType.InCore)
        def consume(
            self,
            wa: pld.DistributedTensor[[1, S], pl.FP32],
            wb: pld.DistributedTensor[[2, B], pl.FP32],
            out_a: pl.Out[pl.Tensor[[1, S], pl.FP32]],
            out_b: pl.Out[pl.Tensor[[2, B], pl.FP32]],
        ) -> pl.Tensor[[2, B], pl.FP32]:
            out_a = pl.store(pl.load(wa, [0, 0], [1, S]), [0, 0], out_a)
            return pl.store(pl.load(wb, [0, 0], [2, B]), [0, 0], out_b)

        @pl.function(type=pl.FunctionType.Orchestration)
        def publish_orch(
            self,
            a: pl.Tensor[[1, S], pl.FP32],
            b: pl.Tensor[[2, B], pl.FP32],
            wa: pl.Out[pld.DistributedTensor[[1, S], pl.FP32]],
            wb: pl.Out[pld.DistributedTensor[[2, B], pl.FP32]],
        ) -> pld.DistributedTensor[[1, S], pl.FP32]:
            wb = self.publish_b(b, wb)
            return self.publish(a, wa)

        @pl.function(type=pl.FunctionType.Orchestration)
        def consume_orch(
            self,
            wa: pld.DistributedTensor[[1, S], pl.FP32],
            wb: pld.DistributedTensor[[2, B], pl.FP32],
            out_a: pl.Out[pl.Tensor[[1, S], pl.FP32]],
            out_b: pl.Out[pl.Tensor[[2, B], pl.FP32]],
        ) -> pl.Tensor[[2, B], pl.FP32]:
            return self.consume(wa, wb, out_a, out_b)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(
            self,
            a: pl.Tensor[[n_ranks, 1, S], pl.FP32],
            b: pl.Tensor[[n_ranks, 2, B], pl.FP32],
            out_a: pl.Out[pl.Tensor[[n_ranks, 1, S], pl.FP32]],
            out_b: pl.Out[pl.Tensor[[n_ranks, 2, B], pl.FP32]],
        ):
            a_buf = pld.alloc_window_buffer(S * 4)
            b_buf = pld.alloc_window_buffer(2 * B * 4)
            wa = pld.window(a_buf, [1, S], dtype=pl.FP32)
            wb = pld.window(b_buf, [2, B], dtype=pl.FP32)
            for r in pl.range(n_ranks):
                wa = self.publish_orch(a[r], b[r], wa, wb, device=r)
            wa = pld.tensor.allreduce(wa, op=pld.ReduceOp.Sum)
            wb = pld.tensor.allreduce(wb, op=pld.ReduceOp.Sum)
            wb = pld.tensor.allreduce(wb, op=pld.ReduceOp.Sum)
            for r in pl.range(n_ranks):
                self.consume_orch(wa, wb, out_a[r], out_b[r], device=r)

    return PublishTwice


def golden(tensors, params):
    a, b = tensors["a"], tensors["b"]
    n = a.shape[0]
    tensors["out_a"][:] = a.sum(axis=0, keepdims=True)
    tensors["out_b"][:] = n * b.sum(axis=0, keepdims=True)
