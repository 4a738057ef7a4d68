# Every annotation form: tensors (subscript and legacy call form), directions, windows,
# tiles with memory space and valid shape, scalars, tuples, contexts, return annotations.
import pypto.language as pl
import pypto.language.distributed as pld

R = 16


@pl.program
class Annotations:
    @pl.function(type=pl.FunctionType.InCore)
    def kinds(
        self,
        t: pl.Tensor[[R, 64], pl.FP32],
        legacy: pl.Tensor((R, 64), pl.BF16),
        o: pl.Out[pl.Tensor[[R, 64], pl.FP32]],
        io: pl.InOut[pld.DistributedTensor[[R, 64], pl.FP32]],
        nz: pld.DistributedTensor[[64], pl.FP32, pl.NZ],
        view: pl.Tensor[[R, 64], pl.FP32, pl.TensorView(stride=[128, 1], valid_shape=[8, 64])],
        marked: pld.DistributedTensor[[256], pl.FP32, "window_buffer=wbuf"],
        tile: pl.Tile[[R, 64], pl.FP32, pl.MemorySpace.Vec],
        part: pl.Tile[[R, 64], pl.FP16, pl.MemorySpace.Mat, pl.TileView(valid_shape=[8, 64])],
        bare: pl.Tile[[R, 64], pl.FP32],
        s: pl.Scalar[pl.INT32],
        f: pl.Scalar[pl.FP32],
        ctx: pld.CommCtx,
    ) -> pl.Tensor[[R, 64], pl.FP32]:
        return o

    @pl.function(type=pl.FunctionType.AIV)
    def pair(self, a: pl.Scalar[pl.INT64], b: pl.Scalar[pl.INT64]) -> tuple[pl.Scalar[pl.INT64], pl.Scalar[pl.INT64]]:
        return a + b, a - b

    @pl.function(type=pl.FunctionType.AIC)
    def use_pair(self, a: pl.Scalar[pl.INT64]) -> pl.Scalar[pl.INT64]:
        x, y = self.pair(a, a)
        return x * y

    @pl.function(type=pl.FunctionType.Opaque)
    def opaque(self, p: pl.Tuple[pl.Scalar[pl.INT32], pl.Scalar[pl.FP32]]):
        pass

    @pl.function
    def bare_decorator(self, n: pl.Scalar[pl.INDEX]):
        m: pl.Scalar[pl.INDEX] = n + 1
        return
