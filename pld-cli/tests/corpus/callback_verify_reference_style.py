"""The reference's habit: a SubWorker `verify` callback checks the chips' result on the host
(torch when it is installed, NumPy otherwise) and raises if it is wrong.

    f[r] = a[r] + b[r]     (chip), verified on the host against the same sum
"""
import pypto.language as pl
import pypto.language.distributed as pld

try:
    import torch
except ImportError:
    torch = None
import numpy as np

NR = pl.dynamic("NR")
N = 128


@pl.program
class VerifyOnHost:
    @pl.function(type=pl.FunctionType.InCore)
    def tile_add(
        self,
        a: pl.Tensor[[1, N], pl.FP32],
        b: pl.Tensor[[1, N], pl.FP32],
        f: pl.Out[pl.Tensor[[1, N], pl.FP32]],
    ) -> pl.Tensor[[1, N], pl.FP32]:
        tile_a = pl.load(a, [0, 0], [1, N])
        tile_b = pl.load(b, [0, 0], [1, N])
        out_f = pl.store(pl.add(tile_a, tile_b), [0, 0], f)
        return out_f

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        a: pl.Tensor[[1, N], pl.FP32],
        b: pl.Tensor[[1, N], pl.FP32],
        f: pl.Out[pl.Tensor[[1, N], pl.FP32]],
    ) -> pl.Tensor[[1, N], pl.FP32]:
        out_f = self.tile_add(a, b, f)
        return out_f

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def verify(
        a: pl.Tensor[[NR, 1, N], pl.FP32],
        b: pl.Tensor[[NR, 1, N], pl.FP32],
        f: pl.Tensor[[NR, 1, N], pl.FP32],
    ):
        if torch is not None:
            ok = torch.allclose(f, a + b, rtol=1e-5, atol=1e-5)
            worst = float((f - (a + b)).abs().max())
        else:
            ok = np.allclose(f, a + b, rtol=1e-5, atol=1e-5)
            worst = float(np.abs(f - (a + b)).max())
        if not ok:
            raise AssertionError(f"SubWorker verify failed: max error {worst}")

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        a: pl.Tensor[[NR, 1, N], pl.FP32],
        b: pl.Tensor[[NR, 1, N], pl.FP32],
        f: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
    ):
        for r in pl.range(pld.world_size()):
            self.chip_orch(a[r], b[r], f[r], device=r)
        self.verify(a, b, f)


def golden(tensors, params):
    tensors["f"][:] = tensors["a"] + tensors["b"]
