"""Two host entries in one file, both with the allreduce intrinsic inside a kernel:

- `ring_min_host`: an FP16 ring allreduce (`mode="ring"`, signal [2*(NR-1), NR]) with
  ReduceOp.Min on an odd length, where the FP16 segment boundaries round to 16 lanes;
- `mesh_prod_host`: an FP32 mesh allreduce with ReduceOp.Prod of rows near 1, followed in
  the same kernel by a `pld.tensor.barrier` on the same signal and a read of a peer's row.

    lo[r]      = min over k of x[k]
    prod[r]    = prod over k of (1 + y[k] / 64)
    peer[r]    = prod[r]       (read back from rank (r + 1) % NR after the barrier)
"""
# pld-corpus-run: --entry ring_min_host
# pld-corpus-run: --entry mesh_prod_host
# pld-corpus-ranks: 2,3,4,8
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 77
PAD = 80  # 80 FP16 or FP32 lanes: whole 32-byte units, SIZE valid.


@pl.program
class RingMin:
    @pl.function(type=pl.FunctionType.InCore)
    def ring_min(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP16],
        lo: pl.Out[pl.Tensor[[1, SIZE], pl.FP16]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP16]],
        signal: pl.InOut[pld.DistributedTensor[[2 * (NR - 1), NR], pl.INT32]],
    ):
        data = pl.store(pl.load(x, [0, 0], [1, PAD], valid_shape=[1, SIZE]), [0, 0], data)
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Min, mode="ring")
        lo = pl.store(pl.load(data, [0, 0], [1, PAD], valid_shape=[1, SIZE]), [0, 0], lo)

    @pl.function(type=pl.FunctionType.Orchestration)
    def ring_orch(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP16],
        lo: pl.Out[pl.Tensor[[1, SIZE], pl.FP16]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP16]],
        signal: pl.InOut[pld.DistributedTensor[[2 * (NR - 1), NR], pl.INT32]],
    ):
        self.ring_min(x, lo, data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def ring_min_host(
        self,
        x: pl.Tensor[[NR, 1, SIZE], pl.FP16],
        lo: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP16]],
    ):
        ws = pld.world_size()
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP16)
        signal_buf = pld.alloc_window_buffer([2 * (ws - 1), ws], dtype=pl.INT32)
        for r in pl.range(ws):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP16)
            signal = pld.window(signal_buf, [2 * (NR - 1), NR], dtype=pl.INT32)
            self.ring_orch(x[r], lo[r], data, signal, device=r)


@pl.program
class MeshProd:
    @pl.function(type=pl.FunctionType.InCore)
    def mesh_prod(
        self,
        y: pl.Tensor[[1, SIZE], pl.FP32],
        prod: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        peer: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        near_one = pl.adds(pl.muls(pl.load(y, [0, 0], [1, PAD], valid_shape=[1, SIZE]), 1.0 / 64), 1.0)
        data = pl.store(near_one, [0, 0], data)
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Prod)
        prod = pl.store(pl.load(data, [0, 0], [1, PAD], valid_shape=[1, SIZE]), [0, 0], prod)
        signal = pld.tensor.barrier(signal)
        ctx = pld.get_comm_ctx(data)
        nxt = (pld.rank(ctx) + 1) % pld.nranks(ctx)
        theirs = pld.tile.remote_load(data, nxt, [0, 0], [1, PAD], valid_shape=[1, SIZE])
        peer = pl.store(theirs, [0, 0], peer)

    @pl.function(type=pl.FunctionType.Orchestration)
    def mesh_orch(
        self,
        y: pl.Tensor[[1, SIZE], pl.FP32],
        prod: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        peer: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.mesh_prod(y, prod, peer, data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def mesh_prod_host(
        self,
        y: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        prod: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
        peer: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.mesh_orch(y[r], prod[r], peer[r], data, signal, device=r)


def golden_ring_min_host(tensors, params):
    tensors["lo"][:] = tensors["x"].min(axis=0, keepdims=True)


def golden_mesh_prod_host(tensors, params):
    near_one = 1.0 + tensors["y"].astype(np.float64) / 64
    p = near_one.prod(axis=0, keepdims=True).astype(np.float32)
    tensors["prod"][:] = p
    tensors["peer"][:] = p
