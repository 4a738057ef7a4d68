"""A host callback: two chip passes, then a `role=pl.Role.SubWorker` function whose body is
ordinary Python, run by `pld run` in the system python3 after both passes finished:

    s[r] = a[r] + b[r]            (chip pass `add_orch`)
    d[r] = a[r] - b[r]            (chip pass `sub_orch`)
    f    = s + d  (= 2 a)         (host callback `combine`, torch when installed, else NumPy)

The callback gets its tensors as NumPy arrays (torch tensors when torch is importable) and
its results come back only through what it writes into its pl.Out tensors (`f[:] = ...`).
`golden` is the NumPy reference `--check-golden` compares every output with:

    pld run examples/host_callback.py --ranks 2 --check-golden
"""
import pypto.language as pl
import pypto.language.distributed as pld

try:
    import torch
except ImportError:  # the same code runs on NumPy arrays
    torch = None

NR = pl.dynamic("NR")
ROWS = 4
COLS = 64


@pl.program
class HostCallback:
    @pl.function(type=pl.FunctionType.InCore)
    def add_k(self, a: pl.Tensor[[ROWS, COLS], pl.FP32], b: pl.Tensor[[ROWS, COLS], pl.FP32],
              s: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        s = pl.store(pl.add(pl.load(a, [0, 0], [ROWS, COLS]), pl.load(b, [0, 0], [ROWS, COLS])), [0, 0], s)
        return s

    @pl.function(type=pl.FunctionType.InCore)
    def sub_k(self, a: pl.Tensor[[ROWS, COLS], pl.FP32], b: pl.Tensor[[ROWS, COLS], pl.FP32],
              d: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        d = pl.store(pl.sub(pl.load(a, [0, 0], [ROWS, COLS]), pl.load(b, [0, 0], [ROWS, COLS])), [0, 0], d)
        return d

    @pl.function(type=pl.FunctionType.Orchestration)
    def add_orch(self, a: pl.Tensor[[ROWS, COLS], pl.FP32], b: pl.Tensor[[ROWS, COLS], pl.FP32],
                 s: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        s = self.add_k(a, b, s)
        return s

    @pl.function(type=pl.FunctionType.Orchestration)
    def sub_orch(self, a: pl.Tensor[[ROWS, COLS], pl.FP32], b: pl.Tensor[[ROWS, COLS], pl.FP32],
                 d: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        d = self.sub_k(a, b, d)
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def combine(
        s: pl.Tensor[[NR, ROWS, COLS], pl.FP32],
        d: pl.Tensor[[NR, ROWS, COLS], pl.FP32],
        f: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP32]],
    ) -> pl.Tensor[[NR, ROWS, COLS], pl.FP32]:
        f[:] = torch.add(s, d) if torch is not None else s + d
        return f

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        a: pl.Tensor[[NR, ROWS, COLS], pl.FP32],
        b: pl.Tensor[[NR, ROWS, COLS], pl.FP32],
        s: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP32]],
        d: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP32]],
        f: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP32]],
    ):
        for r in pl.range(pld.world_size()):
            self.add_orch(a[r], b[r], s[r], device=r)
            self.sub_orch(a[r], b[r], d[r], device=r)
        f = self.combine(s, d, f)


def golden(tensors, params):
    a, b = tensors["a"], tensors["b"]
    tensors["s"][:] = a + b
    tensors["d"][:] = a - b
    tensors["f"][:] = (a + b) + (a - b)
