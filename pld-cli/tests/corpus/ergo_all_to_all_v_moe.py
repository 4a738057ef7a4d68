"""MoE token dispatch with the ergonomic `pld.all_to_all_v(..., nranks=N)`: every rank has
up to MAXR tokens for each destination plus a count of the real ones; the call clamps each
count to [0, MAXR], pushes that many rows to the destination's slot and publishes the
clamped count there. The rank count is a build-time constant (`--bind nranks=N`, run on N
ranks) because the private [N, 1] signal and MAX_RECV are compile-time shapes. Receivers
keep only the rows that arrived and scale them by 0.5. SIZE is odd.

    recv_counts[r][s]       = clamp(send_counts[s][r], 0, MAXR)
    tokens[r][s*MAXR + k]   = inp[s][r*MAXR + k] * 0.5    for k < recv_counts[r][s], else 0
"""
# pld-corpus-run: --bind nranks=4
# pld-corpus-ranks: 4
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 21
# Tile rows are whole 32-byte units: 24 FP32 lanes, of which SIZE are valid.
PAD = 24
MAXR = 3


def build_dispatch(nranks: int):
    @pl.program
    class TokenDispatch:
        @pl.function(type=pl.FunctionType.InCore)
        def stage_step(
            self,
            inp: pl.Tensor[[nranks * MAXR, SIZE], pl.FP32],
            cnt: pl.Tensor[[nranks, 1], pl.INT32],
            stage: pl.Out[pld.DistributedTensor[[nranks * MAXR, SIZE], pl.FP32]],
            counts: pl.Out[pld.DistributedTensor[[nranks, 1], pl.INT32]],
        ):
            for i in pl.range(nranks * MAXR):
                t = pl.load(inp, [i, 0], [1, PAD], valid_shape=[1, SIZE])
                stage = pl.store(t, [i, 0], stage)
            # A [nranks, 1] INT32 column is narrower than a 32-byte tile row: copy it element-wise.
            for s in pl.range(nranks):
                counts = pl.tensor.write(counts, [s, 0], pl.tensor.read(cnt, [s, 0]))

        @pl.function(type=pl.FunctionType.InCore)
        def consume_step(
            self,
            data: pld.DistributedTensor[[nranks * MAXR, SIZE], pl.FP32],
            recv: pld.DistributedTensor[[nranks, 1], pl.INT32],
            tokens: pl.Out[pl.Tensor[[nranks * MAXR, SIZE], pl.FP32]],
            recv_counts: pl.Out[pl.Tensor[[nranks, 1], pl.INT32]],
        ):
            zero = pl.tile.set_validshape(pl.full([1, PAD], 0.0, dtype=pl.FP32), 1, SIZE)
            for i in pl.range(nranks * MAXR):
                tokens = pl.store(zero, [i, 0], tokens)
            for src in pl.range(nranks):
                n = pl.tensor.read(recv, [src, 0])
                for k in pl.range(n):
                    row = pl.load(data, [src * MAXR + k, 0], [1, PAD], valid_shape=[1, SIZE])
                    tokens = pl.store(pl.muls(row, 0.5), [src * MAXR + k, 0], tokens)
            for s in pl.range(nranks):
                recv_counts = pl.tensor.write(recv_counts, [s, 0], pl.tensor.read(recv, [s, 0]))

        @pl.function(type=pl.FunctionType.Orchestration)
        def stage_orch(
            self,
            inp: pl.Tensor[[nranks * MAXR, SIZE], pl.FP32],
            cnt: pl.Tensor[[nranks, 1], pl.INT32],
            stage: pl.Out[pld.DistributedTensor[[nranks * MAXR, SIZE], pl.FP32]],
            counts: pl.Out[pld.DistributedTensor[[nranks, 1], pl.INT32]],
        ):
            self.stage_step(inp, cnt, stage, counts)

        @pl.function(type=pl.FunctionType.Orchestration)
        def consume_orch(
            self,
            data: pld.DistributedTensor[[nranks * MAXR, SIZE], pl.FP32],
            recv: pld.DistributedTensor[[nranks, 1], pl.INT32],
            tokens: pl.Out[pl.Tensor[[nranks * MAXR, SIZE], pl.FP32]],
            recv_counts: pl.Out[pl.Tensor[[nranks, 1], pl.INT32]],
        ):
            self.consume_step(data, recv, tokens, recv_counts)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(
            self,
            inputs: pl.Tensor[[nranks, nranks * MAXR, SIZE], pl.FP32],
            send_counts: pl.Tensor[[nranks, nranks, 1], pl.INT32],
            tokens: pl.Out[pl.Tensor[[nranks, nranks * MAXR, SIZE], pl.FP32]],
            recv_counts: pl.Out[pl.Tensor[[nranks, nranks, 1], pl.INT32]],
        ):
            stage_buf = pld.alloc_window_buffer([nranks * MAXR, SIZE], dtype=pl.FP32)
            data_buf = pld.alloc_window_buffer([nranks * MAXR, SIZE], dtype=pl.FP32)
            counts_buf = pld.alloc_window_buffer([nranks, 1], dtype=pl.INT32)
            recv_buf = pld.alloc_window_buffer([nranks, 1], dtype=pl.INT32)
            stage = pld.window(stage_buf, [nranks * MAXR, SIZE], dtype=pl.FP32)
            data = pld.window(data_buf, [nranks * MAXR, SIZE], dtype=pl.FP32)
            counts = pld.window(counts_buf, [nranks, 1], dtype=pl.INT32)
            recv = pld.window(recv_buf, [nranks, 1], dtype=pl.INT32)
            for r in pl.range(nranks):
                self.stage_orch(inputs[r], send_counts[r], stage, counts, device=r)
            data = pld.all_to_all_v(stage, data, counts, recv, nranks=nranks)
            for r in pl.range(nranks):
                self.consume_orch(data, recv, tokens[r], recv_counts[r], device=r)

    return TokenDispatch


def golden(tensors, params):
    n = params["nranks"]
    inp = tensors["inputs"]
    sent = np.clip(tensors["send_counts"][:, :, 0], 0, MAXR)
    tokens = np.zeros_like(tensors["tokens"])
    for r in range(n):
        for s in range(n):
            k = int(sent[s, r])
            tokens[r, s * MAXR:s * MAXR + k] = inp[s, r * MAXR:r * MAXR + k] * 0.5
            tensors["recv_counts"][r, s, 0] = k
    tensors["tokens"][:] = tokens
