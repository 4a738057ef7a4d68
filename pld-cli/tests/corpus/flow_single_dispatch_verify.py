"""The reference's dependency idiom on one chip: `out_f = self.chip_orch(a, b, f)` (a
comm-less dispatch, no `device=`), then a SubWorker `verify` callback takes `out_f` itself,
and a further dispatch takes it too.

    f = a + b           (chip_orch, returning its kernel's call)
    verify(out_f)       (raises unless out_f == a + b)
    g = out_f + a       (a further dispatch on the returned tensor)
"""
# pld-corpus-ranks: 2,3,4,8
# pld-corpus-run:
# pld-corpus-run: --schedule random:9
# pld-corpus-verify: --schedules 3
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

N = 64


@pl.program
class SingleDispatchVerify:
    @pl.function(type=pl.FunctionType.InCore)
    def tile_add(
        self,
        a: pl.Tensor[[4, N], pl.FP32],
        b: pl.Tensor[[4, N], pl.FP32],
        f: pl.Out[pl.Tensor[[4, N], pl.FP32]],
    ) -> pl.Tensor[[4, N], pl.FP32]:
        t = pl.add(pl.load(a, [0, 0], [4, N]), pl.load(b, [0, 0], [4, N]))
        return pl.store(t, [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        a: pl.Tensor[[4, N], pl.FP32],
        b: pl.Tensor[[4, N], pl.FP32],
        f: pl.Out[pl.Tensor[[4, N], pl.FP32]],
    ) -> pl.Tensor[[4, N], pl.FP32]:
        return self.tile_add(a, b, f)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def verify(a: pl.Tensor[[4, N], pl.FP32], b: pl.Tensor[[4, N], pl.FP32], f: pl.Tensor[[4, N], pl.FP32]):
        if not np.allclose(np.asarray(f), np.asarray(a) + np.asarray(b), rtol=1e-5, atol=1e-5):
            raise AssertionError("SubWorker verify failed: out_f is not a + b")

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        a: pl.Tensor[[4, N], pl.FP32],
        b: pl.Tensor[[4, N], pl.FP32],
        f: pl.Out[pl.Tensor[[4, N], pl.FP32]],
        g: pl.Out[pl.Tensor[[4, N], pl.FP32]],
    ):
        out_f = self.chip_orch(a, b, f)
        self.verify(a, b, out_f)
        self.chip_orch(out_f, a, g)


def golden(tensors, params):
    a, b = tensors["a"], tensors["b"]
    tensors["f"][:] = a + b
    tensors["g"][:] = a + b + a
