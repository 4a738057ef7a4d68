"""Reduce-scatter then broadcast with the ergonomic calls in a @pl.program class: every
rank stages an [NR, SIZE] block, `pld.reduce_scatter(block)` leaves on rank r the sum of
everyone's row r, each rank publishes that row, and `pld.broadcast(row, root=1)` sends
rank 1's row everywhere. SIZE is odd.

    shard[r]  = sum over ranks k of blocks[k][r]
    shared[r] = shard[1]                             (for every r)
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 27
# Tile rows are whole 32-byte units: 32 lanes, of which SIZE are valid.
PAD = 32


@pl.program
class ScatterThenShare:
    @pl.function(type=pl.FunctionType.InCore)
    def stage(
        self,
        blocks: pl.Tensor[[NR, SIZE], pl.FP32],
        block: pl.Out[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
    ):
        for i in pl.range(NR):
            t = pl.load(blocks, [i, 0], [1, PAD], valid_shape=[1, SIZE])
            block = pl.store(t, [i, 0], block)

    @pl.function(type=pl.FunctionType.InCore)
    def take_shard(
        self,
        block: pld.DistributedTensor[[NR, SIZE], pl.FP32],
        me: pl.Scalar[pl.INDEX],
        shard: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        row: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    ):
        t = pl.load(block, [me, 0], [1, PAD], valid_shape=[1, SIZE])
        shard = pl.store(t, [0, 0], shard)
        row = pl.store(t, [0, 0], row)

    @pl.function(type=pl.FunctionType.InCore)
    def take_shared(
        self,
        row: pld.DistributedTensor[[1, SIZE], pl.FP32],
        shared: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    ):
        t = pl.load(row, [0, 0], [1, PAD], valid_shape=[1, SIZE])
        shared = pl.store(t, [0, 0], shared)

    @pl.function(type=pl.FunctionType.Orchestration)
    def stage_orch(
        self,
        blocks: pl.Tensor[[NR, SIZE], pl.FP32],
        block: pl.Out[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
    ):
        self.stage(blocks, block)

    @pl.function(type=pl.FunctionType.Orchestration)
    def shard_orch(
        self,
        block: pld.DistributedTensor[[NR, SIZE], pl.FP32],
        me: pl.Scalar[pl.INDEX],
        shard: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        row: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    ):
        self.take_shard(block, me, shard, row)

    @pl.function(type=pl.FunctionType.Orchestration)
    def shared_orch(
        self,
        row: pld.DistributedTensor[[1, SIZE], pl.FP32],
        shared: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    ):
        self.take_shared(row, shared)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        blocks: pl.Tensor[[NR, NR, SIZE], pl.FP32],
        shard: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
        shared: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        block_buf = pld.alloc_window_buffer(pld.world_size() * SIZE * 4)
        row_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        block = pld.window(block_buf, [NR, SIZE], dtype=pl.FP32)
        row = pld.window(row_buf, [1, SIZE], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.stage_orch(blocks[r], block, device=r)
        block = pld.reduce_scatter(block, op=pld.ReduceOp.Sum)
        for r in pl.range(pld.world_size()):
            self.shard_orch(block, r, shard[r], row, device=r)
        row = pld.broadcast(row, root=1)
        for r in pl.range(pld.world_size()):
            self.shared_orch(row, shared[r], device=r)


def golden(tensors, params):
    blocks = tensors["blocks"]
    n = params["ranks"]
    sums = blocks.sum(axis=0)
    for r in range(n):
        tensors["shard"][r, 0] = sums[r]
        tensors["shared"][r, 0] = sums[1]
