"""Host multi-core allreduce on FP16, built by a Python builder: `core_num` AIV blocks per
rank split the 256-element tiles of an odd-length row block-cyclically, on an explicit
[NR, STRIDE] signal wider than core_num (the extra lanes stay unused). Min, then Sum of
the minima scaled by 1/NR, chained on the same signal.

    lo[r]   = min over k of x[k]
    mean[r] = (sum over k of (min over j of x[j])) / NR  = lo   (within FP16 rounding)
"""
# pld-corpus-run: --bind cores=2
# pld-corpus-run: --bind cores=3 --builtins lowered
# pld-corpus-run: --bind cores=4 --schedule random:5
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 777
PAD = 784  # 784 FP16 lanes: whole 32-byte units, SIZE valid.
STRIDE = 4


def build(cores: int):
    @pl.program
    class MulticoreFp16:
        @pl.function(type=pl.FunctionType.InCore)
        def stage(self, x: pl.Tensor[[1, SIZE], pl.FP16], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP16]]):
            data = pl.store(pl.load(x, [0, 0], [1, PAD], valid_shape=[1, SIZE]), [0, 0], data)

        @pl.function(type=pl.FunctionType.InCore)
        def keep_and_scale(
            self,
            data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP16]],
            lo: pl.Out[pl.Tensor[[1, SIZE], pl.FP16]],
            scale: pl.Scalar[pl.FP32],
        ):
            row = pl.load(data, [0, 0], [1, PAD], valid_shape=[1, SIZE])
            lo = pl.store(row, [0, 0], lo)
            data = pl.store(pl.muls(row, scale), [0, 0], data)

        @pl.function(type=pl.FunctionType.InCore)
        def copy_out(self, data: pld.DistributedTensor[[1, SIZE], pl.FP16], mean: pl.Out[pl.Tensor[[1, SIZE], pl.FP16]]):
            mean = pl.store(pl.load(data, [0, 0], [1, PAD], valid_shape=[1, SIZE]), [0, 0], mean)

        @pl.function(type=pl.FunctionType.Orchestration)
        def stage_orch(self, x: pl.Tensor[[1, SIZE], pl.FP16], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP16]]):
            self.stage(x, data)

        @pl.function(type=pl.FunctionType.Orchestration)
        def scale_orch(
            self,
            data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP16]],
            lo: pl.Out[pl.Tensor[[1, SIZE], pl.FP16]],
            scale: pl.Scalar[pl.FP32],
        ):
            self.keep_and_scale(data, lo, scale)

        @pl.function(type=pl.FunctionType.Orchestration)
        def copy_orch(self, data: pld.DistributedTensor[[1, SIZE], pl.FP16], mean: pl.Out[pl.Tensor[[1, SIZE], pl.FP16]]):
            self.copy_out(data, mean)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(
            self,
            x: pl.Tensor[[NR, 1, SIZE], pl.FP16],
            lo: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP16]],
            mean: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP16]],
        ):
            data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP16)
            signal_buf = pld.alloc_window_buffer([pld.world_size(), STRIDE], dtype=pl.INT32)
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP16)
            signal = pld.window(signal_buf, [NR, STRIDE], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                self.stage_orch(x[r], data, device=r)
            data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Min, core_num=cores)
            for r in pl.range(pld.world_size()):
                self.scale_orch(data, lo[r], 1.0 / pld.world_size(), device=r)
            data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, core_num=cores)
            for r in pl.range(pld.world_size()):
                self.copy_orch(data, mean[r], device=r)

    return MulticoreFp16


def golden(tensors, params):
    n = params["ranks"]
    lo = tensors["x"].astype(np.float32).min(axis=0, keepdims=True)
    tensors["lo"][:] = lo.astype(np.float16)
    part = (lo.astype(np.float16).astype(np.float32) * np.float32(1.0 / n)).astype(np.float16)
    tensors["mean"][:] = (part.astype(np.float32) * n).astype(np.float16)
