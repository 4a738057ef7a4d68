"""Iterated host collectives on one explicit signal: ITERS rounds of "every rank updates
its row, the host allreduces (Sum) the rows, then broadcasts rank 1's normalised copy".

Inside a host `for` the allreduce needs an explicit signal (the self-clearing protocol
makes each call a closed cycle, so one rank-1 [NR] signal, the form the host broadcast
builtin takes, serves every iteration and all three collectives: the broadcast is followed
by a barrier before the next round writes the root's row again). After round i every rank holds the same row y_i:

    y_0      = 0
    s_i[r]   = y_{i-1} + x[r] * (i + 1)          (per rank)
    y_i      = (sum over r of s_i[r]) / NR       (allreduce, then scaled on rank 1, broadcast)
    out[r]   = y_ITERS
"""
# pld-corpus-run:
# pld-corpus-run: --builtins lowered
# pld-corpus-run: --schedule pct:3
# pld-corpus-ranks: 2,3,4,8
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 300  # more than one 256-element builtin chunk, ragged
PAD = 304
ITERS = 3


@pl.program
class LoopedAllreduceBroadcast:
    @pl.function(type=pl.FunctionType.InCore)
    def zero(self, data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        z = pl.tile.set_validshape(pl.full([1, PAD], 0.0, dtype=pl.FP32), 1, SIZE)
        data = pl.store(z, [0, 0], data)

    @pl.function(type=pl.FunctionType.InCore)
    def update(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP32],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        step: pl.Scalar[pl.INT32],
    ):
        y = pl.load(data, [0, 0], [1, PAD], valid_shape=[1, SIZE])
        mine = pl.load(x, [0, 0], [1, PAD], valid_shape=[1, SIZE])
        data = pl.store(pl.add(y, pl.muls(mine, step + 1)), [0, 0], data)

    @pl.function(type=pl.FunctionType.InCore)
    def normalise(self, data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]], scale: pl.Scalar[pl.FP32]):
        y = pl.load(data, [0, 0], [1, PAD], valid_shape=[1, SIZE])
        data = pl.store(pl.muls(y, scale), [0, 0], data)

    @pl.function(type=pl.FunctionType.InCore)
    def copy_out(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        out = pl.store(pl.load(data, [0, 0], [1, PAD], valid_shape=[1, SIZE]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def zero_orch(self, data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        self.zero(data)

    @pl.function(type=pl.FunctionType.Orchestration)
    def update_orch(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP32],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        step: pl.Scalar[pl.INT32],
    ):
        self.update(x, data, step)

    @pl.function(type=pl.FunctionType.Orchestration)
    def normalise_orch(self, data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]], scale: pl.Scalar[pl.FP32]):
        self.normalise(data, scale)

    @pl.function(type=pl.FunctionType.Orchestration)
    def copy_orch(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        self.copy_out(data, out)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([pld.world_size()], dtype=pl.INT32)
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(signal_buf, [NR], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.zero_orch(data, device=r)
        for i in pl.range(ITERS):
            for r in pl.range(pld.world_size()):
                self.update_orch(x[r], data, i, device=r)
            data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)
            self.normalise_orch(data, 1.0 / pld.world_size(), device=1)
            data = pld.tensor.broadcast(data, signal, root=1)
            # The broadcast has no read-done barrier: without this one, rank 1's next update
            # overwrites its row while a peer may still be pulling it (the simulator reports
            # that race).
            signal = pld.tensor.barrier(signal)
        for r in pl.range(pld.world_size()):
            self.copy_orch(data, out[r], device=r)


def golden(tensors, params):
    n = params["ranks"]
    x = tensors["x"][:, 0, :].astype(np.float64)
    y = np.zeros(SIZE)
    for i in range(ITERS):
        y = (y * n + x.sum(axis=0) * (i + 1)) / n
    tensors["out"][:] = y.astype(np.float32)
