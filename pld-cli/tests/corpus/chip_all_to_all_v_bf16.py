"""all_to_all_v written in the chip orchestration (the CHIP rail: one AIV task of the
rank's own pipeline) on BF16 rows with a dynamic rank count: the input rows and the send
counts come straight from host tensors (plain, as the InCore composite takes them), the
counts are the rank's own input shifted into [-1, MAXR + 1] by a staging kernel, and a
consumer kernel gated by ordinary data dependencies keeps only the rows that arrived,
negated. SIZE is not a multiple of 16 BF16 lanes.

    recv[r][s]            = clamp(cnt[s][r] - BIAS, 0, MAXR)
    rows[r][s*MAXR + k]   = -x[s][r*MAXR + k]     for k < recv[r][s], else 0
"""
# pld-corpus-ranks: 2,3,4,8
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
MAXR = 3
SIZE = 24
PAD = 32  # 32 BF16 lanes: one 64-byte row, SIZE valid.
BIAS = 5


@pl.program
class ChipAllToAllV:
    @pl.function(type=pl.FunctionType.InCore)
    def shift_counts(
        self,
        cnt: pl.Tensor[[NR, 1], pl.INT32],
        send: pl.Out[pl.Tensor[[NR, 1], pl.INT32]],
    ):
        for d in pl.range(NR):
            send = pl.tensor.write(send, [d, 0], pl.tensor.read(cnt, [d, 0]) - BIAS)

    @pl.function(type=pl.FunctionType.InCore)
    def keep_arrived(
        self,
        inbox: pld.DistributedTensor[[NR * MAXR, SIZE], pl.BF16],
        recv: pld.DistributedTensor[[NR, 1], pl.INT32],
        rows: pl.Out[pl.Tensor[[NR * MAXR, SIZE], pl.BF16]],
        got: pl.Out[pl.Tensor[[NR, 1], pl.INT32]],
    ):
        zero = pl.tile.set_validshape(pl.full([1, PAD], 0.0, dtype=pl.BF16), 1, SIZE)
        for i in pl.range(NR * MAXR):
            rows = pl.store(zero, [i, 0], rows)
        for s in pl.range(NR):
            k_s = pl.tensor.read(recv, [s, 0])
            got = pl.tensor.write(got, [s, 0], k_s)
            for k in pl.range(k_s):
                row = pl.load(inbox, [s * MAXR + k, 0], [1, PAD], valid_shape=[1, SIZE])
                rows = pl.store(pl.muls(row, -1.0), [s * MAXR + k, 0], rows)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        x: pl.Tensor[[NR * MAXR, SIZE], pl.BF16],
        cnt: pl.Tensor[[NR, 1], pl.INT32],
        send: pl.Out[pl.Tensor[[NR, 1], pl.INT32]],
        rows: pl.Out[pl.Tensor[[NR * MAXR, SIZE], pl.BF16]],
        got: pl.Out[pl.Tensor[[NR, 1], pl.INT32]],
        inbox: pl.InOut[pld.DistributedTensor[[NR * MAXR, SIZE], pl.BF16]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        recv: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.shift_counts(cnt, send)
        inbox = pld.tensor.all_to_all_v(x, inbox, signal, send, recv)
        self.keep_arrived(inbox, recv, rows, got)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, NR * MAXR, SIZE], pl.BF16],
        cnt: pl.Tensor[[NR, NR, 1], pl.INT32],
        send: pl.Out[pl.Tensor[[NR, NR, 1], pl.INT32]],
        rows: pl.Out[pl.Tensor[[NR, NR * MAXR, SIZE], pl.BF16]],
        got: pl.Out[pl.Tensor[[NR, NR, 1], pl.INT32]],
    ):
        ws = pld.world_size()
        inbox_buf = pld.alloc_window_buffer([ws * MAXR, SIZE], dtype=pl.BF16)
        signal_buf = pld.alloc_window_buffer([ws, 1], dtype=pl.INT32)
        recv_buf = pld.alloc_window_buffer([ws, 1], dtype=pl.INT32)
        for r in pl.range(ws):
            inbox = pld.window(inbox_buf, [NR * MAXR, SIZE], dtype=pl.BF16)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            recv = pld.window(recv_buf, [NR, 1], dtype=pl.INT32)
            self.chip_orch(x[r], cnt[r], send[r], rows[r], got[r], inbox, signal, recv, device=r)


def golden(tensors, params):
    n = params["ranks"]
    x = tensors["x"].astype(np.float32)
    shifted = tensors["cnt"][:, :, 0].astype(np.int64) - BIAS
    tensors["send"][:, :, 0] = shifted
    rows = np.zeros((n, n * MAXR, SIZE), dtype=np.float32)
    for r in range(n):
        for s in range(n):
            k = int(np.clip(shifted[s, r], 0, MAXR))
            tensors["got"][r, s, 0] = k
            rows[r, s * MAXR:s * MAXR + k] = -x[s, r * MAXR:r * MAXR + k]
    tensors["rows"][:] = rows
