"""MoE-style token dispatch with all_to_all_v.

Every rank holds up to MAXR tokens (rows of SIZE features) for each destination rank
and a count of how many of them are real: `send_counts[r][d]`. The host calls
`pld.tensor.all_to_all_v`, which clamps each count to [0, MAXR], pushes exactly that many
rows into the destination's capacity slot, and publishes the clamped count into the
destination's `recv` window. The consumer then trims to the published counts — the rest
of each capacity slot is never written and holds undefined bytes (the simulator fills
windows with a garbage pattern, so forgetting to trim shows up immediately):

    recv_counts[r][s] = clamp(send_counts[s][r], 0, MAXR)
    tokens[r][s*MAXR + k] = inp[s][r*MAXR + k]   for k < recv_counts[r][s], else 0

Give counts outside [0, MAXR] to see the clamp (negative counts publish 0):

    pld run examples/moe_all_to_all_v.py --ranks 4
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64
MAXR = 4


@pl.program
class MoeDispatch:
    @pl.function(type=pl.FunctionType.InCore)
    def stage_step(
        self,
        inp: pl.Tensor[[NR * MAXR, SIZE], pl.FP32],
        cnt: pl.Tensor[[NR, 1], pl.INT32],
        stage: pl.Out[pld.DistributedTensor[[NR * MAXR, SIZE], pl.FP32]],
        counts: pl.Out[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        # Row by row: tiles have static shapes, the rank count is only known at run time.
        for i in pl.range(NR * MAXR):
            t = pl.load(inp, [i, 0], [1, SIZE])
            pl.store(t, [i, 0], stage)
        for d in pl.range(NR):
            c = pl.load(cnt, [d, 0], [1, 8], valid_shape=[1, 1])
            pl.store(c, [d, 0], counts)

    @pl.function(type=pl.FunctionType.InCore)
    def consume_step(
        self,
        data: pld.DistributedTensor[[NR * MAXR, SIZE], pl.FP32],
        recv: pld.DistributedTensor[[NR, 1], pl.INT32],
        tokens: pl.Out[pl.Tensor[[NR * MAXR, SIZE], pl.FP32]],
        recv_counts: pl.Out[pl.Tensor[[NR, 1], pl.INT32]],
    ):
        zero = pl.full([1, SIZE], 0.0, dtype=pl.FP32)
        for i in pl.range(NR * MAXR):
            pl.store(zero, [i, 0], tokens)
        # Mask first: copy only the rows each source actually sent.
        for src in pl.range(NR):
            n = pl.tensor.read(recv, [src, 0])
            for k in pl.range(n):
                row = pl.load(data, [src * MAXR + k, 0], [1, SIZE])
                pl.store(row, [src * MAXR + k, 0], tokens)
        for src in pl.range(NR):
            c = pl.load(recv, [src, 0], [1, 8], valid_shape=[1, 1])
            pl.store(c, [src, 0], recv_counts)

    @pl.function(type=pl.FunctionType.Orchestration)
    def stage_orch(
        self,
        inp: pl.Tensor[[NR * MAXR, SIZE], pl.FP32],
        cnt: pl.Tensor[[NR, 1], pl.INT32],
        stage: pl.Out[pld.DistributedTensor[[NR * MAXR, SIZE], pl.FP32]],
        counts: pl.Out[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.stage_step(inp, cnt, stage, counts)

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume_orch(
        self,
        data: pld.DistributedTensor[[NR * MAXR, SIZE], pl.FP32],
        recv: pld.DistributedTensor[[NR, 1], pl.INT32],
        tokens: pl.Out[pl.Tensor[[NR * MAXR, SIZE], pl.FP32]],
        recv_counts: pl.Out[pl.Tensor[[NR, 1], pl.INT32]],
    ):
        self.consume_step(data, recv, tokens, recv_counts)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, NR * MAXR, SIZE], pl.FP32],
        send_counts: pl.Tensor[[NR, NR, 1], pl.INT32],
        tokens: pl.Out[pl.Tensor[[NR, NR * MAXR, SIZE], pl.FP32]],
        recv_counts: pl.Out[pl.Tensor[[NR, NR, 1], pl.INT32]],
    ):
        in_buf = pld.alloc_window_buffer(pld.world_size() * MAXR * SIZE * 4)
        data_buf = pld.alloc_window_buffer(pld.world_size() * MAXR * SIZE * 4)
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        cnt_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        recv_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        stage = pld.window(in_buf, [NR * MAXR, SIZE], dtype=pl.FP32)
        data = pld.window(data_buf, [NR * MAXR, SIZE], dtype=pl.FP32)
        signal = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
        counts = pld.window(cnt_buf, [NR, 1], dtype=pl.INT32)
        recv = pld.window(recv_buf, [NR, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.stage_orch(inputs[r], send_counts[r], stage, counts, device=r)
        data = pld.tensor.all_to_all_v(stage, data, signal, counts, recv)
        for r in pl.range(pld.world_size()):
            self.consume_orch(data, recv, tokens[r], recv_counts[r], device=r)
