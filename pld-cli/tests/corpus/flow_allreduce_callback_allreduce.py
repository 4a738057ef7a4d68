"""Results flow through host collectives and a callback, and the collective repeats: each
rank publishes into a window (the chip orchestrator returns its kernel's call), a signal-less
allreduce sums it, a consume pass copies it out, a SubWorker callback doubles that on the host,
each rank publishes the callback's result into the same window, and a second allreduce of the
same window sums again.

    s[r] = sum_k x[k]
    g    = 2 * s                       (host callback)
    h[r] = sum_k g[k] = NR * 2 * sum_k x[k]
"""
# pld-corpus-ranks: 2,3,4,8
# pld-corpus-run:
# pld-corpus-run: --schedule random:37
# pld-corpus-verify: --schedules 3
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
N = 64


@pl.program
class ReduceCallbackReduce:
    @pl.function(type=pl.FunctionType.InCore)
    def publish(
        self,
        x: pl.Tensor[[1, N], pl.FP32],
        win: pl.Out[pld.DistributedTensor[[1, N], pl.FP32]],
    ) -> pld.DistributedTensor[[1, N], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [1, N]), [0, 0], win)

    @pl.function(type=pl.FunctionType.InCore)
    def consume(
        self,
        win: pld.DistributedTensor[[1, N], pl.FP32],
        out: pl.Out[pl.Tensor[[1, N], pl.FP32]],
    ) -> pl.Tensor[[1, N], pl.FP32]:
        return pl.store(pl.load(win, [0, 0], [1, N]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(
        self,
        x: pl.Tensor[[1, N], pl.FP32],
        win: pl.Out[pld.DistributedTensor[[1, N], pl.FP32]],
    ) -> pld.DistributedTensor[[1, N], pl.FP32]:
        return self.publish(x, win)

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume_orch(
        self,
        win: pld.DistributedTensor[[1, N], pl.FP32],
        out: pl.Out[pl.Tensor[[1, N], pl.FP32]],
    ) -> pl.Tensor[[1, N], pl.FP32]:
        return self.consume(win, out)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def double(
        s: pl.Tensor[[NR, 1, N], pl.FP32],
        g: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
    ) -> pl.Tensor[[NR, 1, N], pl.FP32]:
        g[:] = s * 2
        return g

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, 1, N], pl.FP32],
        s: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
        g: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
        h: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
    ):
        buf = pld.alloc_window_buffer(N * 4)
        win = pld.window(buf, [1, N], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            win = self.publish_orch(x[r], win, device=r)
        win = pld.tensor.allreduce(win, op=pld.ReduceOp.Sum)
        for r in pl.range(pld.world_size()):
            self.consume_orch(win, s[r], device=r)
        doubled = self.double(s, g)
        for r in pl.range(pld.world_size()):
            win = self.publish_orch(doubled[r], win, device=r)
        win = pld.tensor.allreduce(win, op=pld.ReduceOp.Sum)
        for r in pl.range(pld.world_size()):
            self.consume_orch(win, h[r], device=r)


def golden(tensors, params):
    x = tensors["x"]
    n = x.shape[0]
    s = x.sum(axis=0, keepdims=True)
    tensors["s"][:] = s
    tensors["g"][:] = 2 * s
    tensors["h"][:] = n * 2 * s
