# codegen.md Appendix A: ping-pong atomic put, dynamic get, rank/nranks, notify in a loop.
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Q:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel2(self,
                dst: pld.DistributedTensor[[16, 64], pl.FP16],
                src: pld.DistributedTensor[[16, 64], pl.FP16],
                sig: pld.DistributedTensor[[8, 8], pl.INT32],
                peer: pl.Scalar[pl.INT32],
                n: pl.Scalar[pl.INT32]):
        ctx = pld.get_comm_ctx(sig)
        me = pld.rank(ctx)
        nr = pld.nranks(ctx)
        pld.tensor.put(dst, peer, src, atomic=pld.AtomicType.Add, chunk_rows=4, chunk_cols=32, pipeline=True)
        pld.tensor.get(dst, peer, src, dst_offsets=[0, 0], src_offsets=[0, 0], shape=[n, 64], chunk_rows=4, chunk_cols=32)
        for step in pl.range(4):
            pld.system.notify(sig, peer, [me, 0], value=step + 1, op=pld.NotifyOp.Set)
        pld.system.wait(sig, [nr - 1, 0], expected=1, cmp=pld.WaitCmp.Eq)
