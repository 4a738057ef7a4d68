"""A mixed kernel with comm work on the vector lane: a GEMM (Mat -> Left/Right -> Acc, cube
lane) and a ring handshake (notify the next rank inside split_aiv, so only the vector lane
publishes; wait for the previous rank's notify on both lanes)."""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
M = 64


@pl.program
class MixedGemmBarrier:
    @pl.function(type=pl.FunctionType.InCore)
    def gemm(
        self,
        a: pl.Tensor[[M, M], pl.FP16],
        b: pl.Tensor[[M, M], pl.FP16],
        c: pl.Out[pl.Tensor[[M, M], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        ctx = pld.get_comm_ctx(signal)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        a_mat = pl.load(a, [0, 0], [M, M], target_memory=pl.MemorySpace.Mat)
        b_mat = pl.load(b, [0, 0], [M, M], target_memory=pl.MemorySpace.Mat)
        a_l = pl.move(a_mat, target_memory=pl.MemorySpace.Left)
        b_r = pl.move(b_mat, target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(a_l, b_r)
        pl.store(acc, [0, 0], c)
        for lane in pl.split_aiv(2):
            pld.system.notify(signal, (me + 1) % n, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(signal, [(me + n - 1) % n, 0], 1, cmp=pld.WaitCmp.Ge)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        a: pl.Tensor[[M, M], pl.FP16],
        b: pl.Tensor[[M, M], pl.FP16],
        c: pl.Out[pl.Tensor[[M, M], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.gemm(a, b, c, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        a: pl.Tensor[[NR, M, M], pl.FP16],
        b: pl.Tensor[[M, M], pl.FP16],
        c: pl.Out[pl.Tensor[[NR, M, M], pl.FP32]],
    ):
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        for r in pl.range(pld.world_size()):
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.chip_orch(a[r], b, c[r], signal, device=r)
