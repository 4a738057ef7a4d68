"""Host-orchestrator collectives: allreduce (multi-core), broadcast, reduce_scatter,
allgather and all_to_all, each called directly in the host function.

LowerHostTensorCollectives turns every call into one `builtin.tensor.*` dispatch per
rank. A publish kernel first stores each rank's input rows into a window; after the
collectives a consume kernel copies the windows out. One `[NR]` signal serves every
collective after the allreduce, one after the other: the credit barrier clears itself
at the end of each call. With `inp[r]` the `[NR, SIZE]` input of rank r:

    summed[r]    = sum_k inp[k][0]                    (allreduce, 2 AIV blocks per rank)
    root_row[r]  = inp[0][0]                          (broadcast from rank 0)
    scattered[r] = sum_k inp[k][r]                    (reduce_scatter: row r)
    gathered[r]  = [inp[0][0], ..., inp[NR-1][0]]     (allgather of every rank's row 0)
    exchanged[r] = [inp[0][r], ..., inp[NR-1][r]]     (all_to_all)

Run it:

    pld run examples/host_collectives.py --ranks 4
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 96


@pl.program
class HostCollectives:
    @pl.function(type=pl.FunctionType.InCore)
    def publish(
        self,
        inp: pl.Tensor[[NR, SIZE], pl.FP32],
        rows: pl.Out[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
        row0: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        bcast: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        stage: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    ):
        # Row by row: tiles have static shapes, the rank count is only known at run time.
        for i in pl.range(NR):
            row = pl.load(inp, [i, 0], [1, SIZE])
            pl.store(row, [i, 0], rows)
        first = pl.load(inp, [0, 0], [1, SIZE])
        pl.store(first, [0, 0], row0)
        pl.store(first, [0, 0], bcast)
        pl.store(first, [0, 0], stage)

    @pl.function(type=pl.FunctionType.InCore)
    def consume(
        self,
        row0: pld.DistributedTensor[[1, SIZE], pl.FP32],
        bcast: pld.DistributedTensor[[1, SIZE], pl.FP32],
        rows: pld.DistributedTensor[[NR, SIZE], pl.FP32],
        gathered_win: pld.DistributedTensor[[NR, SIZE], pl.FP32],
        exchanged_win: pld.DistributedTensor[[NR, SIZE], pl.FP32],
        me: pl.Scalar[pl.INDEX],
        summed: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        root_row: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        scattered: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        gathered: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
        exchanged: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
    ):
        a = pl.load(row0, [0, 0], [1, SIZE])
        pl.store(a, [0, 0], summed)
        b = pl.load(bcast, [0, 0], [1, SIZE])
        pl.store(b, [0, 0], root_row)
        c = pl.load(rows, [me, 0], [1, SIZE])
        pl.store(c, [0, 0], scattered)
        for i in pl.range(NR):
            g = pl.load(gathered_win, [i, 0], [1, SIZE])
            pl.store(g, [i, 0], gathered)
            x = pl.load(exchanged_win, [i, 0], [1, SIZE])
            pl.store(x, [i, 0], exchanged)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(
        self,
        inp: pl.Tensor[[NR, SIZE], pl.FP32],
        rows: pl.Out[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
        row0: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        bcast: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        stage: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    ):
        self.publish(inp, rows, row0, bcast, stage)

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume_orch(
        self,
        row0: pld.DistributedTensor[[1, SIZE], pl.FP32],
        bcast: pld.DistributedTensor[[1, SIZE], pl.FP32],
        rows: pld.DistributedTensor[[NR, SIZE], pl.FP32],
        gathered_win: pld.DistributedTensor[[NR, SIZE], pl.FP32],
        exchanged_win: pld.DistributedTensor[[NR, SIZE], pl.FP32],
        me: pl.Scalar[pl.INDEX],
        summed: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        root_row: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        scattered: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        gathered: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
        exchanged: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
    ):
        self.consume(row0, bcast, rows, gathered_win, exchanged_win, me, summed, root_row, scattered, gathered, exchanged)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, NR, SIZE], pl.FP32],
        summed: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
        root_row: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
        scattered: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
        gathered: pl.Out[pl.Tensor[[NR, NR, SIZE], pl.FP32]],
        exchanged: pl.Out[pl.Tensor[[NR, NR, SIZE], pl.FP32]],
    ):
        rows_buf = pld.alloc_window_buffer(pld.world_size() * SIZE * 4)
        row0_buf = pld.alloc_window_buffer(SIZE * 4)
        bcast_buf = pld.alloc_window_buffer(SIZE * 4)
        stage_buf = pld.alloc_window_buffer(SIZE * 4)
        gathered_buf = pld.alloc_window_buffer(pld.world_size() * SIZE * 4)
        exchanged_buf = pld.alloc_window_buffer(pld.world_size() * SIZE * 4)
        ar_sig_buf = pld.alloc_window_buffer(pld.world_size() * 2 * 4)
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        rows = pld.window(rows_buf, [NR, SIZE], dtype=pl.FP32)
        row0 = pld.window(row0_buf, [1, SIZE], dtype=pl.FP32)
        bcast = pld.window(bcast_buf, [1, SIZE], dtype=pl.FP32)
        stage = pld.window(stage_buf, [1, SIZE], dtype=pl.FP32)
        gathered_win = pld.window(gathered_buf, [NR, SIZE], dtype=pl.FP32)
        exchanged_win = pld.window(exchanged_buf, [NR, SIZE], dtype=pl.FP32)
        ar_signal = pld.window(ar_sig_buf, [NR, 2], dtype=pl.INT32)
        signal = pld.window(sig_buf, [NR], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.publish_orch(inputs[r], rows, row0, bcast, stage, device=r)
        # Every rank's row 0, summed; two AIV blocks per rank share the work.
        row0 = pld.tensor.allreduce(row0, ar_signal, op=pld.ReduceOp.Sum, core_num=2)
        bcast = pld.tensor.broadcast(bcast, signal, root=0)
        gathered_win = pld.tensor.allgather(stage, gathered_win, signal)
        exchanged_win = pld.tensor.all_to_all(rows, exchanged_win, signal)
        rows = pld.tensor.reduce_scatter(rows, signal, op=pld.ReduceOp.Sum)
        for r in pl.range(pld.world_size()):
            self.consume_orch(
                row0, bcast, rows, gathered_win, exchanged_win, r,
                summed[r], root_row[r], scattered[r], gathered[r], exchanged[r], device=r,
            )
