"""A builder whose rank count comes from `--ranks` (`def build(nranks: int)`): a ring
allreduce (`pld.all_reduce(..., mode="ring", nranks=nranks)`) of one window and a mesh
allreduce of a window of another size, each published by a kernel whose call the chip
orchestrator returns; a consume pass returns its kernel's call too.

    ring[r] = sum over ranks k of x[k]        ([2, 48] window, ring)
    mesh[r] = sum over ranks k of z[k]        ([1, 160] window, mesh)
"""
# pld-corpus-ranks: 2,3,4,8
# pld-corpus-run:
# pld-corpus-run: --schedule random:31
# pld-corpus-verify: --schedules 3
import pypto.language as pl
import pypto.language.distributed as pld

R = 48
M = 160


def build(nranks: int):
    @pl.program
    class RingAndMesh:
        @pl.function(type=pl.FunctionType.InCore)
        def publish(
            self,
            x: pl.Tensor[[2, R], pl.FP32],
            z: pl.Tensor[[1, M], pl.FP32],
            wr: pl.Out[pld.DistributedTensor[[2, R], pl.FP32]],
            wm: pl.Out[pld.DistributedTensor[[1, M], pl.FP32]],
        ) -> pld.DistributedTensor[[1, M], pl.FP32]:
            wr = pl.store(pl.load(x, [0, 0], [2, R]), [0, 0], wr)
            return pl.store(pl.load(z, [0, 0], [1, M]), [0, 0], wm)

        @pl.function(type=pl.FunctionType.InCore)
        def consume(
            self,
            wr: pld.DistributedTensor[[2, R], pl.FP32],
            wm: pld.DistributedTensor[[1, M], pl.FP32],
            ring: pl.Out[pl.Tensor[[2, R], pl.FP32]],
            mesh: pl.Out[pl.Tensor[[1, M], pl.FP32]],
        ) -> pl.Tensor[[2, R], pl.FP32]:
            mesh = pl.store(pl.load(wm, [0, 0], [1, M]), [0, 0], mesh)
            return pl.store(pl.load(wr, [0, 0], [2, R]), [0, 0], ring)

        @pl.function(type=pl.FunctionType.Orchestration)
        def publish_orch(
            self,
            x: pl.Tensor[[2, R], pl.FP32],
            z: pl.Tensor[[1, M], pl.FP32],
            wr: pl.Out[pld.DistributedTensor[[2, R], pl.FP32]],
            wm: pl.Out[pld.DistributedTensor[[1, M], pl.FP32]],
        ) -> pld.DistributedTensor[[1, M], pl.FP32]:
            return self.publish(x, z, wr, wm)

        @pl.function(type=pl.FunctionType.Orchestration)
        def consume_orch(
            self,
            wr: pld.DistributedTensor[[2, R], pl.FP32],
            wm: pld.DistributedTensor[[1, M], pl.FP32],
            ring: pl.Out[pl.Tensor[[2, R], pl.FP32]],
            mesh: pl.Out[pl.Tensor[[1, M], pl.FP32]],
        ) -> pl.Tensor[[2, R], pl.FP32]:
            return self.consume(wr, wm, ring, mesh)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(
            self,
            x: pl.Tensor[[nranks, 2, R], pl.FP32],
            z: pl.Tensor[[nranks, 1, M], pl.FP32],
            ring: pl.Out[pl.Tensor[[nranks, 2, R], pl.FP32]],
            mesh: pl.Out[pl.Tensor[[nranks, 1, M], pl.FP32]],
        ):
            r_buf = pld.alloc_window_buffer(2 * R * 4)
            m_buf = pld.alloc_window_buffer(M * 4)
            wr = pld.window(r_buf, [2, R], dtype=pl.FP32)
            wm = pld.window(m_buf, [1, M], dtype=pl.FP32)
            for r in pl.range(pld.world_size()):
                wm = self.publish_orch(x[r], z[r], wr, wm, device=r)
            wr = pld.all_reduce(wr, mode="ring", nranks=nranks)
            wm = pld.all_reduce(wm)
            for r in pl.range(pld.world_size()):
                self.consume_orch(wr, wm, ring[r], mesh[r], device=r)

    return RingAndMesh


def golden(tensors, params):
    tensors["ring"][:] = tensors["x"].sum(axis=0, keepdims=True)
    tensors["mesh"][:] = tensors["z"].sum(axis=0, keepdims=True)
