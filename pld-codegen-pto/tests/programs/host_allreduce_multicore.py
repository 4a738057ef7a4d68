# seed "Host multi-core AllReduce": core_num=4 over a ragged 1041-element FP32 window with an
# explicit [world_size, 4] signal (block b uses signal column b).
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 1041
NR = pl.dynamic("NR")


@pl.program
class HostAllreduceMulticore:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self,
             inp: pl.Tensor[[1, SIZE], pl.FP32],
             data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        t = pl.load(inp, [0, 0], [1, 1048], valid_shape=[1, SIZE])
        data = pl.store(t, [0, 0], data)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self,
                  inp: pl.Tensor[[1, SIZE], pl.FP32],
                  data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        self.fill(inp, data)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32]):
        data_buf = pld.alloc_window_buffer(SIZE * 4)
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4 * 4)
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(signal_buf, [pld.world_size(), 4], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.chip_orch(inputs[r], data, device=r)
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, core_num=4)
