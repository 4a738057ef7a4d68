"""The fixed form of `divergent_if_rank.py`, in the builder form: every rank calls the
allreduce, and the rank only selects what each keeps afterwards (`if me == 0:` around
stores, no collective inside). A second allreduce (Max, which leaves the sums unchanged)
sits under `if n_ranks > 2:`, a condition on the builder's parameter that every rank
shares. `pld check` accepts it at every rank count.

    out[0] = 2 * sum over ranks k of x[k]
    out[r] = sum over ranks k of x[k]          (r > 0)
"""
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64


def build(n_ranks: int):
    @pl.program
    class RankSelectsData:
        @pl.function(type=pl.FunctionType.InCore)
        def reduce_then_select(
            self,
            x: pl.Tensor[[1, SIZE], pl.FP32],
            out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
            data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
            signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        ):
            ctx = pld.get_comm_ctx(data)
            me = pld.rank(ctx)
            data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)
            data = pld.tensor.allreduce(data, signal)
            if n_ranks > 2:
                data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Max)
            total = pl.load(data, [0, 0], [1, SIZE])
            if me == 0:
                out = pl.store(pl.muls(total, 2.0), [0, 0], out)
            else:
                out = pl.store(total, [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def chip_orch(
            self,
            x: pl.Tensor[[1, SIZE], pl.FP32],
            out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
            data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
            signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        ):
            self.reduce_then_select(x, out, data, signal)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(
            self,
            x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
            out: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
        ):
            data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
            signal_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
                signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
                self.chip_orch(x[r], out[r], data, signal, device=r)

    return RankSelectsData


def golden(tensors, params):
    total = tensors["x"].sum(axis=0)
    tensors["out"][:] = total
    tensors["out"][0] = 2.0 * total
