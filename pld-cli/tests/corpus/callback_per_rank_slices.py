"""A host callback called once per rank inside the host loop, on that rank's slices of the
host tensors and with the rank as a scalar:

    mid[r] = x[r] + 1                 (chip on device r)
    out[r] = mid[r] * (r + 1)         (host callback on mid[r], out[r], r)
"""
# pld-corpus-ranks: 2,3
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
N = 40


@pl.program
class PerRank:
    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, x: pl.Tensor[[1, N], pl.FP32], mid: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        mid = pl.store(pl.add(pl.load(x, [0, 0], [1, N]), 1.0), [0, 0], mid)
        return mid

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[1, N], pl.FP32], mid: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        mid = self.inc(x, mid)
        return mid

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def tag(mid: pl.Tensor[[1, N], pl.FP32], rank: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        out[:] = mid * (rank + 1)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, 1, N], pl.FP32],
        mid: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
        out: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
    ):
        for r in pl.range(pld.world_size()):
            self.chip(x[r], mid[r], device=r)
            self.tag(mid[r], r, out[r])


def golden(tensors, params):
    x = tensors["x"]
    tensors["mid"][:] = x + 1
    for r in range(params["ranks"]):
        tensors["out"][r] = (x[r] + 1) * (r + 1)
