"""Mesh and ring allreduce intrinsics inside an InCore kernel.

`pld.tensor.allreduce` written in a kernel is expanded by LowerCompositeOps into
remote_load / add / store chunks synchronised by the self-clearing credit barrier.
Mesh mode uses a `[NR, 1]` signal, ring mode (reduce-scatter + allgather) a
`[2 * (NR - 1), NR]` signal. SIZE is deliberately odd, so the last UB chunk is a ragged
tail carried by `valid_shape`:

    mesh[r] = sum_k inp[k]            ring[r] = sum_k inp[k]

Run it:

    pld run examples/allreduce_intrinsics.py --ranks 4
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 4097


@pl.program
class AllreduceIntrinsics:
    @pl.function(type=pl.FunctionType.InCore)
    def mesh_step(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        # Stage my input into my own window slice, reduce in place, read the result back.
        pld.tensor.put(data, me, inp, atomic=pld.AtomicType.None_)
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, mode="mesh")
        pld.tensor.get(out, me, data)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def ring_step(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[2 * (NR - 1), NR], pl.INT32]],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        # Stage my input into my own window slice, reduce in place, read the result back.
        pld.tensor.put(data, me, inp, atomic=pld.AtomicType.None_)
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, mode="ring")
        pld.tensor.get(out, me, data)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        mesh_out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        ring_out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        mesh_data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        ring_data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        mesh_signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        ring_signal: pl.InOut[pld.DistributedTensor[[2 * (NR - 1), NR], pl.INT32]],
    ):
        self.mesh_step(inp, mesh_out, mesh_data, mesh_signal)
        self.ring_step(inp, ring_out, ring_data, ring_signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        mesh_out: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
        ring_out: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        mesh_buf = pld.alloc_window_buffer(SIZE * 4)
        ring_buf = pld.alloc_window_buffer(SIZE * 4)
        mesh_sig_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        ring_sig_buf = pld.alloc_window_buffer(2 * (pld.world_size() - 1) * pld.world_size() * 4)
        for r in pl.range(pld.world_size()):
            mesh_data = pld.window(mesh_buf, [1, SIZE], dtype=pl.FP32)
            ring_data = pld.window(ring_buf, [1, SIZE], dtype=pl.FP32)
            mesh_signal = pld.window(mesh_sig_buf, [NR, 1], dtype=pl.INT32)
            ring_signal = pld.window(ring_sig_buf, [2 * (NR - 1), NR], dtype=pl.INT32)
            self.chip_orch(
                inputs[r], mesh_out[r], ring_out[r], mesh_data, ring_data, mesh_signal, ring_signal, device=r
            )
