# Core tensor ops: create, view, slice, reshape, assemble, element read/write, subscripts
# (integer indexing, slices) and subscript assignment.
import pypto.language as pl
import pypto.language.distributed as pld

N = 4
ROWS = 8
COLS = 32


@pl.program
class CoreTensor:
    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(
        self,
        x: pl.Tensor[[N, ROWS, COLS], pl.FP32],
        o: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
        w: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.FP32]],
    ):
        row = x[1]
        block = x[0:2, :, 0:16]
        part = pl.tensor.slice(o, [4, COLS], [0, 0])
        flat = pl.reshape(row, [ROWS * COLS])
        made = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
        v = pl.read(o, [0, 1])
        pl.write(o, [1, 0], v)
        e = x[2, 3, 4]
        o[0:4, :] = part
        w = pl.assemble(w, made, [0, 0])
        w[:, 0:16] = block[0, :, :]
