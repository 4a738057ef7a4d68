"""Window results flow at every level: a publish kernel returns its store into the window, the
chip orchestrator returns that call, and the host rebinds the window to each dispatch's result;
the host then takes a signal-less Max allreduce, broadcasts from rank 1 (twice, the second a
repeat on the result of the first), sums a second, smaller window, and a consume kernel whose
call the chip orchestrator returns writes both out.

    big[r]   = 1 + max over ranks k of x[k]          ([2, 96] window)
    small[r] = sum over ranks k of y[k]              ([1, 32] window)
"""
# pld-corpus-ranks: 2,3,4,8
# pld-corpus-run:
# pld-corpus-run: --schedule random:29
# pld-corpus-verify: --schedules 3
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
B = 96
S = 32


@pl.program
class WindowReturns:
    @pl.function(type=pl.FunctionType.InCore)
    def publish(
        self,
        x: pl.Tensor[[2, B], pl.FP32],
        y: pl.Tensor[[1, S], pl.FP32],
        wb: pl.Out[pld.DistributedTensor[[2, B], pl.FP32]],
        ws: pl.Out[pld.DistributedTensor[[1, S], pl.FP32]],
    ) -> pld.DistributedTensor[[2, B], pl.FP32]:
        ws = pl.store(pl.load(y, [0, 0], [1, S]), [0, 0], ws)
        return pl.store(pl.load(x, [0, 0], [2, B]), [0, 0], wb)

    @pl.function(type=pl.FunctionType.InCore)
    def consume(
        self,
        wb: pld.DistributedTensor[[2, B], pl.FP32],
        ws: pld.DistributedTensor[[1, S], pl.FP32],
        big: pl.Out[pl.Tensor[[2, B], pl.FP32]],
        small: pl.Out[pl.Tensor[[1, S], pl.FP32]],
    ) -> pl.Tensor[[1, S], pl.FP32]:
        big = pl.store(pl.adds(pl.load(wb, [0, 0], [2, B]), 1.0), [0, 0], big)
        return pl.store(pl.load(ws, [0, 0], [1, S]), [0, 0], small)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(
        self,
        x: pl.Tensor[[2, B], pl.FP32],
        y: pl.Tensor[[1, S], pl.FP32],
        wb: pl.Out[pld.DistributedTensor[[2, B], pl.FP32]],
        ws: pl.Out[pld.DistributedTensor[[1, S], pl.FP32]],
    ) -> pld.DistributedTensor[[2, B], pl.FP32]:
        return self.publish(x, y, wb, ws)

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume_orch(
        self,
        wb: pld.DistributedTensor[[2, B], pl.FP32],
        ws: pld.DistributedTensor[[1, S], pl.FP32],
        big: pl.Out[pl.Tensor[[2, B], pl.FP32]],
        small: pl.Out[pl.Tensor[[1, S], pl.FP32]],
    ) -> pl.Tensor[[1, S], pl.FP32]:
        return self.consume(wb, ws, big, small)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, 2, B], pl.FP32],
        y: pl.Tensor[[NR, 1, S], pl.FP32],
        big: pl.Out[pl.Tensor[[NR, 2, B], pl.FP32]],
        small: pl.Out[pl.Tensor[[NR, 1, S], pl.FP32]],
    ):
        b_buf = pld.alloc_window_buffer(2 * B * 4)
        s_buf = pld.alloc_window_buffer(S * 4)
        wb = pld.window(b_buf, [2, B], dtype=pl.FP32)
        ws = pld.window(s_buf, [1, S], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            wb = self.publish_orch(x[r], y[r], wb, ws, device=r)
        wb = pld.tensor.allreduce(wb, op=pld.ReduceOp.Max)
        wb = pld.tensor.broadcast(wb, root=1)
        wb = pld.tensor.broadcast(wb, root=1)
        ws = pld.tensor.allreduce(ws, op=pld.ReduceOp.Sum)
        for r in pl.range(pld.world_size()):
            self.consume_orch(wb, ws, big[r], small[r], device=r)


def golden(tensors, params):
    x, y = tensors["x"], tensors["y"]
    tensors["big"][:] = 1.0 + x.max(axis=0, keepdims=True)
    tensors["small"][:] = y.sum(axis=0, keepdims=True)
