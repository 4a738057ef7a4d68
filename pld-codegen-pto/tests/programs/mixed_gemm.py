"""tests_e2e.md §6.3 as ONE kernel: a zero tile stored into a comm window (the anchor,
vector work) and a GEMM through Mat -> Left/Right -> Acc (cube work). ExpandMixedKernel
splits it into gemm_aic + gemm_aiv; codegen writes both into gemm.pto."""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
M = 64


@pl.program
class MixedGemm:
    @pl.function(type=pl.FunctionType.InCore)
    def gemm(
        self,
        a: pl.Tensor[[M, M], pl.FP16],
        b: pl.Tensor[[M, M], pl.FP16],
        c: pl.Out[pl.Tensor[[M, M], pl.FP32]],
        scratch: pl.InOut[pld.DistributedTensor[[1, 8], pl.INT32]],
    ):
        z = pl.full([1, 8], dtype=pl.INT32, value=0)
        pl.store(z, [0, 0], scratch)
        a_mat = pl.load(a, [0, 0], [M, M], target_memory=pl.MemorySpace.Mat)
        b_mat = pl.load(b, [0, 0], [M, M], target_memory=pl.MemorySpace.Mat)
        a_l = pl.move(a_mat, target_memory=pl.MemorySpace.Left)
        b_r = pl.move(b_mat, target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(a_l, b_r)
        pl.store(acc, [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        a: pl.Tensor[[M, M], pl.FP16],
        b: pl.Tensor[[M, M], pl.FP16],
        c: pl.Out[pl.Tensor[[M, M], pl.FP32]],
        scratch: pl.InOut[pld.DistributedTensor[[1, 8], pl.INT32]],
    ):
        self.gemm(a, b, c, scratch)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        a: pl.Tensor[[NR, M, M], pl.FP16],
        b: pl.Tensor[[M, M], pl.FP16],
        c: pl.Out[pl.Tensor[[NR, M, M], pl.FP32]],
    ):
        scratch_buf = pld.alloc_window_buffer(8 * 4)
        for r in pl.range(pld.world_size()):
            scratch = pld.window(scratch_buf, [1, 8], dtype=pl.INT32)
            self.chip_orch(a[r], b, c[r], scratch, device=r)
