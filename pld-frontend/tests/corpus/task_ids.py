# Task ids: a manual scope, `pl.at(...) as tid`, `deps=[...]` on scopes, and a direct task
# submit `self.k(..., deps=[...])` whose last result is the new task's id.
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class TaskIds:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        t = pl.load(x, [0, 0], [8, 8])
        u = pl.mul(t, t)
        y = pl.store(u, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(
        self,
        x: pl.Tensor[[8, 8], pl.FP32],
        y: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
        z: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    ) -> pl.Tensor[[8, 8], pl.FP32]:
        with pl.manual_scope():
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="waiter") as ready:
                pld.system.defer_wait(signal, [0, 0], 1, cmp=pld.WaitCmp.Ge)
            y, first = self.scale(x, y, deps=[ready])
            with pl.at(level=pl.Level.CORE_GROUP, deps=[ready, first]) as second:
                t = pl.load(y, [0, 0], [8, 8])
                z = pl.store(t, [0, 0], z)
            with pl.at(level=pl.Level.CORE_GROUP, deps=[second]):
                t2 = pl.load(z, [0, 0], [8, 8])
                z = pl.store(t2, [0, 0], z)
        return z
