"""Built for the run's rank count (`def build(world_size: int)`, bound from `--ranks`): a chip
orchestrator returns its kernel's call (`return self.tile_add(a, b, f)`); the host
keeps what each dispatch returns (`out_f = self.chip_orch(...)`), hands the returned tensor
to a SubWorker callback, and the callback's result feeds a further chip pass.

    f[r] = a[r] + b[r]          (chip_orch; the dispatch's result is f[r])
    e[r] = out_f + b[r]         (a further dispatch on that result)
    g    = f * 0.5              (host callback `halve`, on the dispatches' results)
    h[r] = g[r] + a[r]          (chip pass `add_orch` on the callback's result)
"""
# pld-corpus-ranks: 2,3,4,8
# pld-corpus-run:
# pld-corpus-run: --schedule random:23
# pld-corpus-verify: --schedules 3
import pypto.language as pl
import pypto.language.distributed as pld

N = 128


def build(world_size: int):
    @pl.program
    class ResultToCallbackBuilt:
        @pl.function(type=pl.FunctionType.InCore)
        def tile_add(
            self,
            a: pl.Tensor[[1, N], pl.FP32],
            b: pl.Tensor[[1, N], pl.FP32],
            f: pl.Out[pl.Tensor[[1, N], pl.FP32]],
        ) -> pl.Tensor[[1, N], pl.FP32]:
            tile_a = pl.load(a, [0, 0], [1, N])
            tile_b = pl.load(b, [0, 0], [1, N])
            return pl.store(pl.add(tile_a, tile_b), [0, 0], f)

        @pl.function(type=pl.FunctionType.Orchestration)
        def chip_orch(
            self,
            a: pl.Tensor[[1, N], pl.FP32],
            b: pl.Tensor[[1, N], pl.FP32],
            f: pl.Out[pl.Tensor[[1, N], pl.FP32]],
        ) -> pl.Tensor[[1, N], pl.FP32]:
            return self.tile_add(a, b, f)

        @pl.function(type=pl.FunctionType.Orchestration)
        def add_orch(
            self,
            a: pl.Tensor[[1, N], pl.FP32],
            b: pl.Tensor[[1, N], pl.FP32],
            f: pl.Out[pl.Tensor[[1, N], pl.FP32]],
        ) -> pl.Tensor[[1, N], pl.FP32]:
            out_f = self.tile_add(a, b, f)
            return out_f

        @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
        def halve(
            f: pl.Tensor[[world_size, 1, N], pl.FP32],
            g: pl.Out[pl.Tensor[[world_size, 1, N], pl.FP32]],
        ) -> pl.Tensor[[world_size, 1, N], pl.FP32]:
            g[:] = f * 0.5
            return g

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(
            self,
            a: pl.Tensor[[world_size, 1, N], pl.FP32],
            b: pl.Tensor[[world_size, 1, N], pl.FP32],
            f: pl.Out[pl.Tensor[[world_size, 1, N], pl.FP32]],
            e: pl.Out[pl.Tensor[[world_size, 1, N], pl.FP32]],
            g: pl.Out[pl.Tensor[[world_size, 1, N], pl.FP32]],
            h: pl.Out[pl.Tensor[[world_size, 1, N], pl.FP32]],
        ):
            for r in pl.range(world_size):
                out_f = self.chip_orch(a[r], b[r], f[r], device=r)
                self.add_orch(out_f, b[r], e[r], device=r)
            half = self.halve(f, g)
            for r in pl.range(world_size):
                self.add_orch(half[r], a[r], h[r], device=r)

    return ResultToCallbackBuilt


def golden(tensors, params):
    a, b = tensors["a"], tensors["b"]
    tensors["f"][:] = a + b
    tensors["e"][:] = a + b + b
    tensors["g"][:] = (a + b) * 0.5
    tensors["h"][:] = (a + b) * 0.5 + a
