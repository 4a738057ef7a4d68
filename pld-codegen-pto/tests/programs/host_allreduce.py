# codegen.md §5.5: a host allreduce after a chip dispatch loop, lowered to a builtin dispatch.
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 64


@pl.program
class HostAllreduce:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self,
             inp: pl.Tensor[[1, SIZE], pl.FP32],
             data: pl.InOut[pld.DistributedTensor[[SIZE], pl.FP32]]):
        t = pl.load(inp, [0, 0], [1, SIZE])
        d2 = pl.view(data, [1, SIZE])
        d2 = pl.store(t, [0, 0], d2)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self,
                  inp: pl.Tensor[[1, SIZE], pl.FP32],
                  data: pl.InOut[pld.DistributedTensor[[SIZE], pl.FP32]]):
        self.fill(inp, data)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, inputs: pl.Tensor[[4, 1, SIZE], pl.FP32]):
        data_buf = pld.alloc_window_buffer(SIZE * 4)
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        data = pld.window(data_buf, [SIZE], dtype=pl.FP32)
        signal = pld.window(signal_buf, [pld.world_size()], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.chip_orch(inputs[r], data, device=r)
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, core_num=1)
