"""A size-sweepable mesh allreduce, nccl-tests style: the builder's `count` is the number of
FP32 elements each rank contributes (`pld run ... --sweep count=64:1K:x2` runs it at every
size; `--bind count=N` at one). Each rank publishes its row into a window, the ranks sum
the windows, and every rank copies the result out.

    summed[r] = sum over ranks k of x[k]        ([1, count] window, mesh)
"""
# pld-corpus-ranks: 2,3,4
# pld-corpus-run:
# pld-corpus-run: --bind count=512
import pypto.language as pl
import pypto.language.distributed as pld


def build(nranks: int, count: int = 256):
    @pl.program
    class SweepAllreduce:
        @pl.function(type=pl.FunctionType.InCore)
        def publish(
            self,
            x: pl.Tensor[[1, count], pl.FP32],
            win: pl.Out[pld.DistributedTensor[[1, count], pl.FP32]],
        ) -> pld.DistributedTensor[[1, count], pl.FP32]:
            return pl.store(pl.load(x, [0, 0], [1, count]), [0, 0], win)

        @pl.function(type=pl.FunctionType.InCore)
        def consume(
            self,
            win: pld.DistributedTensor[[1, count], pl.FP32],
            summed: pl.Out[pl.Tensor[[1, count], pl.FP32]],
        ) -> pl.Tensor[[1, count], pl.FP32]:
            return pl.store(pl.load(win, [0, 0], [1, count]), [0, 0], summed)

        @pl.function(type=pl.FunctionType.Orchestration)
        def publish_orch(
            self,
            x: pl.Tensor[[1, count], pl.FP32],
            win: pl.Out[pld.DistributedTensor[[1, count], pl.FP32]],
        ) -> pld.DistributedTensor[[1, count], pl.FP32]:
            return self.publish(x, win)

        @pl.function(type=pl.FunctionType.Orchestration)
        def consume_orch(
            self,
            win: pld.DistributedTensor[[1, count], pl.FP32],
            summed: pl.Out[pl.Tensor[[1, count], pl.FP32]],
        ) -> pl.Tensor[[1, count], pl.FP32]:
            return self.consume(win, summed)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(
            self,
            x: pl.Tensor[[nranks, 1, count], pl.FP32],
            summed: pl.Out[pl.Tensor[[nranks, 1, count], pl.FP32]],
        ):
            buf = pld.alloc_window_buffer(count * 4)
            win = pld.window(buf, [1, count], dtype=pl.FP32)
            for r in pl.range(pld.world_size()):
                win = self.publish_orch(x[r], win, device=r)
            win = pld.all_reduce(win)
            for r in pl.range(pld.world_size()):
                self.consume_orch(win, summed[r], device=r)

    return SweepAllreduce


def golden(tensors, params):
    tensors["summed"][:] = tensors["x"].sum(axis=0, keepdims=True)
