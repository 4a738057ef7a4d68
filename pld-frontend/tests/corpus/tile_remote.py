# Remote tile traffic: remote_load (keyword and positional, with valid_shape), tile and
# tensor remote_store, and the unified pld.remote_store dispatching on the source level.
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 64


@pl.program
class TileRemote:
    @pl.function(type=pl.FunctionType.InCore)
    def shift(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    ):
        ctx = pld.get_comm_ctx(data)
        peer = (pld.rank(ctx) + 1) % pld.nranks(ctx)
        recv = pld.tile.remote_load(data, peer=peer, offsets=[0, 0], shape=[1, SIZE])
        tail = pld.remote_load(data, peer, [0, 0], [1, SIZE], [1, 16])
        local = pl.load(x, [0, 0], [1, SIZE])
        pld.tile.remote_store(local, data, peer=peer, offsets=[0, 0])
        pld.remote_store(local, data, peer, [0, 0], atomic=pld.AtomicType.Add)
        pld.tensor.remote_store(x, data, peer=peer, offsets=[0, 0])
        pld.remote_store(x, target=data, peer=peer, offsets=[0, 0], atomic=pld.AtomicType.None_)
        y = pl.store(recv, [0, 0], y)
