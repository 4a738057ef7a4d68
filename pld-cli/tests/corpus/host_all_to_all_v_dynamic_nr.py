"""Host all_to_all_v with a dynamic rank count, then a host allreduce of what arrived.

NR is dynamic: the windows are sized from `pld.world_size()` and MAX_RECV is the target's
rows over the rank count. Every rank stages up to MAXR rows per destination plus a count
(its input count minus BIAS, which may be negative or past MAXR: the call clamps it to [0, MAXR]); after
`pld.tensor.all_to_all_v` each receiver trims to the counts it got, sums the rows that
arrived into one row, and `pld.tensor.allreduce` adds those row sums over all ranks.
SIZE is odd.

    recv[r][s]  = clamp(cnt[s][r] - BIAS, 0, MAXR)
    total[r]    = sum over s, d, k < recv[d][s] of x[s][d*MAXR + k]
"""
# pld-corpus-run:
# pld-corpus-run: --builtins lowered
# pld-corpus-run: --schedule random:7
# pld-corpus-ranks: 2,3,4,8
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
MAXR = 2
SIZE = 13
PAD = 16  # 16 FP32 lanes: two 32-byte units, SIZE valid.
# The generated counts are small positives; shifted by BIAS some go negative, some past MAXR.
BIAS = 6


@pl.program
class DynamicAllToAllV:
    @pl.function(type=pl.FunctionType.InCore)
    def stage(
        self,
        x: pl.Tensor[[NR * MAXR, SIZE], pl.FP32],
        cnt: pl.Tensor[[NR, 1], pl.INT32],
        send: pl.Out[pld.DistributedTensor[[NR * MAXR, SIZE], pl.FP32]],
        counts: pl.Out[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        ctx = pld.get_comm_ctx(send)
        n = pld.nranks(ctx)
        for i in pl.range(n * MAXR):
            send = pl.store(pl.load(x, [i, 0], [1, PAD], valid_shape=[1, SIZE]), [i, 0], send)
        for d in pl.range(n):
            counts = pl.tensor.write(counts, [d, 0], pl.tensor.read(cnt, [d, 0]) - BIAS)

    @pl.function(type=pl.FunctionType.InCore)
    def sum_arrivals(
        self,
        inbox: pld.DistributedTensor[[NR * MAXR, SIZE], pl.FP32],
        recv: pld.DistributedTensor[[NR, 1], pl.INT32],
        got: pl.Out[pl.Tensor[[NR, 1], pl.INT32]],
        acc: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    ):
        ctx = pld.get_comm_ctx(inbox)
        n = pld.nranks(ctx)
        row = pl.tile.set_validshape(pl.full([1, PAD], 0.0, dtype=pl.FP32), 1, SIZE)
        for s in pl.range(n):
            k_s = pl.tensor.read(recv, [s, 0])
            got = pl.tensor.write(got, [s, 0], k_s)
            for k in pl.range(k_s):
                arrived = pl.load(inbox, [s * MAXR + k, 0], [1, PAD], valid_shape=[1, SIZE])
                row = pl.add(row, arrived)
        acc = pl.store(row, [0, 0], acc)

    @pl.function(type=pl.FunctionType.InCore)
    def copy_total(
        self,
        acc: pld.DistributedTensor[[1, SIZE], pl.FP32],
        total: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    ):
        total = pl.store(pl.load(acc, [0, 0], [1, PAD], valid_shape=[1, SIZE]), [0, 0], total)

    @pl.function(type=pl.FunctionType.Orchestration)
    def stage_orch(
        self,
        x: pl.Tensor[[NR * MAXR, SIZE], pl.FP32],
        cnt: pl.Tensor[[NR, 1], pl.INT32],
        send: pl.Out[pld.DistributedTensor[[NR * MAXR, SIZE], pl.FP32]],
        counts: pl.Out[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.stage(x, cnt, send, counts)

    @pl.function(type=pl.FunctionType.Orchestration)
    def sum_orch(
        self,
        inbox: pld.DistributedTensor[[NR * MAXR, SIZE], pl.FP32],
        recv: pld.DistributedTensor[[NR, 1], pl.INT32],
        got: pl.Out[pl.Tensor[[NR, 1], pl.INT32]],
        acc: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    ):
        self.sum_arrivals(inbox, recv, got, acc)

    @pl.function(type=pl.FunctionType.Orchestration)
    def total_orch(
        self,
        acc: pld.DistributedTensor[[1, SIZE], pl.FP32],
        total: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    ):
        self.copy_total(acc, total)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, NR * MAXR, SIZE], pl.FP32],
        cnt: pl.Tensor[[NR, NR, 1], pl.INT32],
        recv_counts: pl.Out[pl.Tensor[[NR, NR, 1], pl.INT32]],
        total: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        ws = pld.world_size()
        send_buf = pld.alloc_window_buffer([ws * MAXR, SIZE], dtype=pl.FP32)
        inbox_buf = pld.alloc_window_buffer([ws * MAXR, SIZE], dtype=pl.FP32)
        counts_buf = pld.alloc_window_buffer([ws, 1], dtype=pl.INT32)
        recv_buf = pld.alloc_window_buffer([ws, 1], dtype=pl.INT32)
        signal_buf = pld.alloc_window_buffer([ws, 1], dtype=pl.INT32)
        acc_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        send = pld.window(send_buf, [NR * MAXR, SIZE], dtype=pl.FP32)
        inbox = pld.window(inbox_buf, [NR * MAXR, SIZE], dtype=pl.FP32)
        counts = pld.window(counts_buf, [NR, 1], dtype=pl.INT32)
        recv = pld.window(recv_buf, [NR, 1], dtype=pl.INT32)
        signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
        acc = pld.window(acc_buf, [1, SIZE], dtype=pl.FP32)
        for r in pl.range(ws):
            self.stage_orch(x[r], cnt[r], send, counts, device=r)
        inbox = pld.tensor.all_to_all_v(send, inbox, signal, counts, recv)
        for r in pl.range(ws):
            self.sum_orch(inbox, recv, recv_counts[r], acc, device=r)
        acc = pld.tensor.allreduce(acc, signal, op=pld.ReduceOp.Sum)
        for r in pl.range(ws):
            self.total_orch(acc, total[r], device=r)


def golden(tensors, params):
    n = params["ranks"]
    x = tensors["x"].astype(np.float64)
    sent = np.clip(tensors["cnt"][:, :, 0].astype(np.int64) - BIAS, 0, MAXR)
    row = np.zeros(SIZE)
    for s in range(n):
        for d in range(n):
            k = int(sent[s, d])
            tensors["recv_counts"][d, s, 0] = k
            row += x[s, d * MAXR:d * MAXR + k].sum(axis=0)
    tensors["total"][:] = row.astype(np.float32)
