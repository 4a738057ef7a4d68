# InCore collectives lowered by LowerCompositeOps: mesh allreduce (Max), barrier, allgather, broadcast.
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")

@pl.program
class AR:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, data: pl.InOut[pld.DistributedTensor[[1, 100], pl.FP32]], sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Max)
        pld.tensor.barrier(sig)

    @pl.function(type=pl.FunctionType.InCore)
    def k2(self, t: pl.InOut[pld.DistributedTensor[[4, 64], pl.FP32]], inp: pl.Tensor[[1, 64], pl.FP32], sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        t = pld.tensor.allgather(inp, t, sig)
        t = pld.tensor.broadcast(t, sig, root=0)
