"""Three collectives written in the chip orchestration (the CHIP rail, one AIV task each of
the rank's own pipeline), chained on one self-clearing signal, on an odd FP16 length:

1. every rank stages its row and `pld.tensor.allreduce(..., op=Max)` leaves the maxima;
2. `pld.tensor.allgather` collects every rank's input row (on this rail the input is the
   plain tensor, as in an InCore kernel) into a [NR, SIZE] window;
3. `pld.tensor.reduce_scatter` (Sum) over the gathered block leaves row r, summed over the
   NR identical copies, on rank r; a kernel subtracts the peak from it.

    peak[r]   = max_k x[k]
    spread[r] = NR * x[r] - peak
"""
# pld-corpus-ranks: 2,3,4
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 45
PAD = 48  # 48 FP16 lanes, SIZE valid.


@pl.program
class ChipCollectiveChain:
    @pl.function(type=pl.FunctionType.InCore)
    def stage(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP16],
        data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP16]],
    ):
        data = pl.store(pl.load(x, [0, 0], [1, PAD], valid_shape=[1, SIZE]), [0, 0], data)

    @pl.function(type=pl.FunctionType.InCore)
    def take_row(
        self,
        data: pld.DistributedTensor[[1, SIZE], pl.FP16],
        block: pld.DistributedTensor[[NR, SIZE], pl.FP16],
        peak: pl.Out[pl.Tensor[[1, SIZE], pl.FP16]],
        spread: pl.Out[pl.Tensor[[1, SIZE], pl.FP16]],
    ):
        ctx = pld.get_comm_ctx(block)
        me = pld.rank(ctx)
        top = pl.load(data, [0, 0], [1, PAD], valid_shape=[1, SIZE])
        peak = pl.store(top, [0, 0], peak)
        row = pl.load(block, [me, 0], [1, PAD], valid_shape=[1, SIZE])
        spread = pl.store(pl.sub(row, top), [0, 0], spread)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP16],
        peak: pl.Out[pl.Tensor[[1, SIZE], pl.FP16]],
        spread: pl.Out[pl.Tensor[[1, SIZE], pl.FP16]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP16]],
        block: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP16]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.stage(x, data)
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Max)
        block = pld.tensor.allgather(x, block, signal)
        block = pld.tensor.reduce_scatter(block, signal, op=pld.ReduceOp.Sum)
        self.take_row(data, block, peak, spread)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, 1, SIZE], pl.FP16],
        peak: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP16]],
        spread: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP16]],
    ):
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP16)
        block_buf = pld.alloc_window_buffer([pld.world_size(), SIZE], dtype=pl.FP16)
        signal_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP16)
            block = pld.window(block_buf, [NR, SIZE], dtype=pl.FP16)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.chip_orch(x[r], peak[r], spread[r], data, block, signal, device=r)


def golden(tensors, params):
    n = params["ranks"]
    x = tensors["x"].astype(np.float32)
    top = x.max(axis=0)
    tensors["peak"][:] = top.astype(np.float16)
    total = (x * n).astype(np.float16).astype(np.float32)
    tensors["spread"][:] = (total - top).astype(np.float16)
