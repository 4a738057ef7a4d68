# Window family: allocation (both overloads), views, world size and the comm context.
import pypto.language as pl
import pypto.language.distributed as pld

N_RANKS = 4
SIZE = 256


@pl.program
class WindowFamily:
    @pl.function(type=pl.FunctionType.InCore)
    def ranks(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32]) -> pl.Scalar[pl.INT32]:
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.system.nranks(ctx)
        peer = (me + 1) % n
        return peer

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        self.ranks(data)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        by_bytes = pld.alloc_window_buffer(SIZE * pl.FP32.get_byte())
        by_shape = pld.tensor.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        named = pld.alloc_window_buffer(64, name="explicit_name")
        ws = pld.world_size()
        for r in pl.range(ws):
            data = pld.window(by_bytes, [1, SIZE], dtype=pl.FP32)
            other = pld.tensor.window(by_shape, shape=[1, SIZE], dtype=pl.FP32)
            self.chip(data, device=r)
            self.chip(other, device=r)
