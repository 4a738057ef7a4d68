# A chunked, pipelined put: two distinct Vec staging tiles (ping/pong) sized by the chunk
# attrs, only `atomic` forwarded to the tile op; an atomic-add destination is read and written.
# DUMP-AFTER: ConvertTensorToTileOps
# CHECK: dst: pl.InOut[pld.DistributedTensor[[64, 256], pl.FP32]]
# CHECK: tput_stage_ping: pl.Tile[[8, 128], pl.FP32, pl.MemorySpace.Vec] = pl.tile.create([8, 128]
# CHECK: tput_stage_pong: pl.Tile[[8, 128], pl.FP32, pl.MemorySpace.Vec] = pl.tile.create([8, 128]
# CHECK: pld.tile.put(dst, 1, src, tput_stage_ping, tput_stage_pong, atomic=pld.AtomicType.Add)
# CHECK-NOT: chunk_rows
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Put:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        dst: pld.DistributedTensor[[64, 256], pl.FP32],
        src: pl.Tensor[[64, 256], pl.FP32],
    ):
        pld.tensor.put(dst, 1, src, atomic=pld.AtomicType.Add, chunk_rows=8, chunk_cols=128, pipeline=True)
