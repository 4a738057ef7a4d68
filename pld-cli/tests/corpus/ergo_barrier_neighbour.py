"""Publish, `pld.barrier`, then pull from the next rank: the barrier takes the caller's own
INT32 signal (it has no data window to inherit comm-domain coverage from), the same signal
the publishing dispatch carries, and rebinds it (`signal = pld.barrier(signal)`). FP16 rows
of odd length.

    out[r] = inp[(r + 1) % NR] * 3
"""
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 35
# Tile rows are whole 32-byte units: 48 lanes, of which SIZE are valid.
PAD = 48


@pl.program
class NeighbourPull:
    @pl.function(type=pl.FunctionType.InCore)
    def publish(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP16],
        mailbox: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP16]],
        signal: pl.InOut[pld.DistributedTensor[[NR], pl.INT32]],
    ):
        row = pl.load(inp, [0, 0], [1, PAD], valid_shape=[1, SIZE])
        mailbox = pl.store(row, [0, 0], mailbox)

    @pl.function(type=pl.FunctionType.InCore)
    def pull(
        self,
        mailbox: pld.DistributedTensor[[1, SIZE], pl.FP16],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP16]],
    ):
        ctx = pld.get_comm_ctx(mailbox)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        theirs = pld.tile.remote_load(mailbox, (me + 1) % n, [0, 0], [1, PAD], valid_shape=[1, SIZE])
        out = pl.store(pl.muls(theirs, 3.0), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP16],
        mailbox: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP16]],
        signal: pl.InOut[pld.DistributedTensor[[NR], pl.INT32]],
    ):
        self.publish(inp, mailbox, signal)

    @pl.function(type=pl.FunctionType.Orchestration)
    def pull_orch(
        self,
        mailbox: pld.DistributedTensor[[1, SIZE], pl.FP16],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP16]],
    ):
        self.pull(mailbox, out)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inp: pl.Tensor[[NR, 1, SIZE], pl.FP16],
        out: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP16]],
    ):
        mailbox_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP16)
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        mailbox = pld.window(mailbox_buf, [1, SIZE], dtype=pl.FP16)
        signal = pld.window(signal_buf, [NR], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.publish_orch(inp[r], mailbox, signal, device=r)
        signal = pld.barrier(signal)
        for r in pl.range(pld.world_size()):
            self.pull_orch(mailbox, out[r], device=r)


def golden(tensors, params):
    inp = tensors["inp"].astype(np.float32)
    tensors["out"][:] = np.roll(inp, -1, axis=0) * 3.0
