"""Ergonomic mesh allreduce on an FP16 window of odd length: every rank publishes its row,
`pld.all_reduce(..., op=pld.ReduceOp.Max)` reduces in place (no signal written: the
compiler gives the call a private one), and every rank copies the maxima out.

    peak[r] = max over ranks k of inp[k]      (for every r)
"""
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 45
# Tile rows are whole 32-byte units: 48 lanes, of which SIZE are valid.
PAD = 48


@pl.program
class AllReduceMaxFp16:
    @pl.function(type=pl.FunctionType.InCore)
    def publish(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP16],
        data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP16]],
    ):
        row = pl.load(inp, [0, 0], [1, PAD], valid_shape=[1, SIZE])
        data = pl.store(row, [0, 0], data)

    @pl.function(type=pl.FunctionType.InCore)
    def collect(
        self,
        data: pld.DistributedTensor[[1, SIZE], pl.FP16],
        peak: pl.Out[pl.Tensor[[1, SIZE], pl.FP16]],
    ):
        row = pl.load(data, [0, 0], [1, PAD], valid_shape=[1, SIZE])
        peak = pl.store(row, [0, 0], peak)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP16],
        data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP16]],
    ):
        self.publish(inp, data)

    @pl.function(type=pl.FunctionType.Orchestration)
    def collect_orch(
        self,
        data: pld.DistributedTensor[[1, SIZE], pl.FP16],
        peak: pl.Out[pl.Tensor[[1, SIZE], pl.FP16]],
    ):
        self.collect(data, peak)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inp: pl.Tensor[[NR, 1, SIZE], pl.FP16],
        peak: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP16]],
    ):
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP16)
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP16)
        for r in pl.range(pld.world_size()):
            self.publish_orch(inp[r], data, device=r)
        data = pld.all_reduce(data, op=pld.ReduceOp.Max)
        for r in pl.range(pld.world_size()):
            self.collect_orch(data, peak[r], device=r)


def golden(tensors, params):
    inp = tensors["inp"]
    tensors["peak"][:] = inp.max(axis=0, keepdims=True)
