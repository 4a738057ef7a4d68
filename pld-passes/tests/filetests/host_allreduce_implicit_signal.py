# A host allreduce without a signal: a private [world_size, 1] INT32 signal is synthesized,
# joins the data's comm domain, and the call becomes one builtin dispatch per rank.
# DUMP-AFTER: LowerHostTensorCollectives
# CHECK: with pld.comm_domain(name="comm_d0", devices=[], windows=["__allreduce_signal_buf_0", "data_buf"]):
# CHECK: __allreduce_signal_0: pld.DistributedTensor[[__allreduce_signal_world_size_0, 1], pl.INT32, "window_buffer=__allreduce_signal_buf_0"]
# CHECK: for r_1 in pl.range(0, world_size):
# CHECK: builtin.tensor.allreduce(data, __allreduce_signal_0, op=pld.ReduceOp.Sum, dtype=pl.FP32, core_num=1, device=r_1)
# CHECK-NOT: pld.tensor.allreduce(
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 64


@pl.program
class HostAllreduce:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        pass

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self):
        data_buf = pld.alloc_window_buffer(SIZE * 4)
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.chip_orch(data, device=r)
        data = pld.tensor.allreduce(data)
