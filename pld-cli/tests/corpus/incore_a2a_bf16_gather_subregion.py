"""BF16 personalised exchange in a kernel, then a gather to rank 0 with runtime-offset
subregion puts, then everyone pulls the gathered table back.

1. `pld.tensor.all_to_all(inp, recv, signal)` (the InCore composite: a plain [NR, SIZE]
   input): row s of rank r's `recv` is row r of rank s's input;
2. rank r doubles row (r + 1) % NR of what it received and `pld.tensor.put`s that one row
   into row r of rank 0's table (`dst_offsets=[me, 0]`, `src_offsets=[(me + 1) % n, 0]`,
   `shape=[1, SIZE]`, all runtime), then counts itself in at rank 0 (AtomicAdd);
3. rank 0 waits for NR arrivals (Ge) and Sets everyone's ready flag; each rank then
   `pld.tensor.get`s rank 0's whole table into a plain output.

SIZE is not a multiple of 16 BF16 lanes.

    table[r][q] = 2 * inp[(q + 1) % NR][q]      (for every r)
"""
# pld-corpus-ranks: 2,3,4,8
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 40
PAD = 48  # 48 BF16 lanes: whole 32-byte units, SIZE valid.


@pl.program
class A2ABf16Gather:
    @pl.function(type=pl.FunctionType.InCore)
    def exchange_and_gather(
        self,
        inp: pl.Tensor[[NR, SIZE], pl.BF16],
        table_out: pl.Out[pl.Tensor[[NR, SIZE], pl.BF16]],
        recv: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.BF16]],
        dbl: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.BF16]],
        table: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.BF16]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        flags: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ):
        ctx = pld.get_comm_ctx(recv)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        recv = pld.tensor.all_to_all(inp, recv, signal)
        src_row = (me + 1) % n
        row = pl.load(recv, [src_row, 0], [1, PAD], valid_shape=[1, SIZE])
        dbl = pl.store(pl.add(row, row), [src_row, 0], dbl)
        pld.tensor.put(table, 0, dbl, [me, 0], [src_row, 0], [1, SIZE], atomic=pld.AtomicType.None_)
        pld.system.notify(flags, 0, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)
        if me == 0:
            pld.system.wait(flags, [0, 0], n, cmp=pld.WaitCmp.Ge)
            for q in pl.range(n):
                pld.system.notify(flags, q, [1, 0], 1, op=pld.NotifyOp.Set)
        pld.system.wait(flags, [1, 0], 1, cmp=pld.WaitCmp.Eq)
        # NR is dynamic: the staging tile is bounded by a static chunk of rows.
        pld.tensor.get(table_out, 0, table, chunk_rows=2, chunk_cols=SIZE)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        inp: pl.Tensor[[NR, SIZE], pl.BF16],
        table_out: pl.Out[pl.Tensor[[NR, SIZE], pl.BF16]],
        recv: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.BF16]],
        dbl: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.BF16]],
        table: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.BF16]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        flags: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ):
        self.exchange_and_gather(inp, table_out, recv, dbl, table, signal, flags)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inp: pl.Tensor[[NR, NR, SIZE], pl.BF16],
        table_out: pl.Out[pl.Tensor[[NR, NR, SIZE], pl.BF16]],
    ):
        ws = pld.world_size()
        recv_buf = pld.alloc_window_buffer([ws, SIZE], dtype=pl.BF16)
        dbl_buf = pld.alloc_window_buffer([ws, SIZE], dtype=pl.BF16)
        table_buf = pld.alloc_window_buffer([ws, SIZE], dtype=pl.BF16)
        signal_buf = pld.alloc_window_buffer([ws, 1], dtype=pl.INT32)
        flags_buf = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
        for r in pl.range(ws):
            recv = pld.window(recv_buf, [NR, SIZE], dtype=pl.BF16)
            dbl = pld.window(dbl_buf, [NR, SIZE], dtype=pl.BF16)
            table = pld.window(table_buf, [NR, SIZE], dtype=pl.BF16)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            flags = pld.window(flags_buf, [2, 1], dtype=pl.INT32)
            self.chip_orch(inp[r], table_out[r], recv, dbl, table, signal, flags, device=r)


def golden(tensors, params):
    n = params["ranks"]
    inp = tensors["inp"].astype(np.float32)
    table = np.stack([2 * inp[(q + 1) % n, q] for q in range(n)])
    tensors["table_out"][:] = table
