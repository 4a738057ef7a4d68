# The host all_to_all_v program of pld-testkit's tests: each rank stages NR × MAXR capacity
# rows and its send counts into windows, the host runs one all_to_all_v, and each rank copies
# out what it received (the whole capacity block) and its receive counts. Tests substitute
# the rank count for NR and may resize SIZE / MAXR.
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 19
MAXR = 3
NR = pl.dynamic("NR")

@pl.program
class HostA2AV:
    @pl.function(type=pl.FunctionType.InCore)
    def stage_step(self, inp: pl.Tensor[[NR * MAXR, SIZE], pl.FP32], cnt: pl.Tensor[[NR, 1], pl.INT32],
                   stage: pl.Out[pld.DistributedTensor[[NR * MAXR, SIZE], pl.FP32]],
                   counts: pl.Out[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        t = pl.load(inp, [0, 0], [NR * MAXR, SIZE])
        pl.store(t, [0, 0], stage)
        c = pl.load(cnt, [0, 0], [NR, 1])
        pl.store(c, [0, 0], counts)
        return stage

    @pl.function(type=pl.FunctionType.InCore)
    def consume_step(self, data: pld.DistributedTensor[[NR * MAXR, SIZE], pl.FP32], recv: pld.DistributedTensor[[NR, 1], pl.INT32],
                     out: pl.Out[pl.Tensor[[NR * MAXR, SIZE], pl.FP32]], recv_out: pl.Out[pl.Tensor[[NR, 1], pl.INT32]]):
        t = pl.load(data, [0, 0], [NR * MAXR, SIZE])
        pl.store(t, [0, 0], out)
        c = pl.load(recv, [0, 0], [NR, 1])
        pl.store(c, [0, 0], recv_out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def stage_orch(self, inp: pl.Tensor[[NR * MAXR, SIZE], pl.FP32], cnt: pl.Tensor[[NR, 1], pl.INT32],
                   stage: pl.Out[pld.DistributedTensor[[NR * MAXR, SIZE], pl.FP32]],
                   counts: pl.Out[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        stage = self.stage_step(inp, cnt, stage, counts)
        return stage

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume_orch(self, data: pld.DistributedTensor[[NR * MAXR, SIZE], pl.FP32], recv: pld.DistributedTensor[[NR, 1], pl.INT32],
                     out: pl.Out[pl.Tensor[[NR * MAXR, SIZE], pl.FP32]], recv_out: pl.Out[pl.Tensor[[NR, 1], pl.INT32]]):
        out = self.consume_step(data, recv, out, recv_out)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, NR * MAXR, SIZE], pl.FP32], send_counts: pl.Tensor[[NR, NR, 1], pl.INT32],
             outputs: pl.Out[pl.Tensor[[NR, NR * MAXR, SIZE], pl.FP32]], recv_out: pl.Out[pl.Tensor[[NR, NR, 1], pl.INT32]]):
        in_buf = pld.alloc_window_buffer(pld.world_size() * MAXR * SIZE * 4, name="input")
        data_buf = pld.alloc_window_buffer(pld.world_size() * MAXR * SIZE * 4, name="data")
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="signal")
        cnt_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="counts")
        recv_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="recv")
        stage = pld.window(in_buf, [NR * MAXR, SIZE], dtype=pl.FP32)
        data = pld.window(data_buf, [NR * MAXR, SIZE], dtype=pl.FP32)
        signal = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
        counts = pld.window(cnt_buf, [NR, 1], dtype=pl.INT32)
        recv = pld.window(recv_buf, [NR, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.stage_orch(inputs[r], send_counts[r], stage, counts, device=r)
        data = pld.tensor.all_to_all_v(stage, data, signal, counts, recv)
        for r in pl.range(pld.world_size()):
            self.consume_orch(data, recv, outputs[r], recv_out[r], device=r)
