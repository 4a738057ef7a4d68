# The seed: "host-orchestrator user code may omit signal outside for and while loops". A
# signal-less host collective inside a loop is refused at the call, saying why and the fix, in
# the words the user wrote (`pld.all_reduce`; D-ops-canon-2).
# ERROR: pld.all_reduce without a signal inside a `for`/`while` loop
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 64


@pl.program
class LoopAllreduce:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        pass

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self):
        data_buf = pld.alloc_window_buffer(SIZE * 4)
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        for step in pl.range(3):
            for r in pl.range(pld.world_size()):
                self.chip_orch(data, device=r)
            data = pld.all_reduce(data, op=pld.ReduceOp.Sum)
