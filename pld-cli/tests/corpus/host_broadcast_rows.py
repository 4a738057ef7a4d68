"""Host broadcast of a whole [NR, SIZE] block whose row count is the rank count: every rank
writes its own block, `pld.tensor.broadcast(block, sig, root=2 % nranks)` copies the root's
block into everyone's window, and a consume kernel reads it back row by row. The signal's
shape is written as `[pld.world_size()]`, and SIZE is odd (rows padded to 32 lanes).

    outputs[r] = inputs[root]      (for every r)
"""
# pld-corpus-run:
# pld-corpus-run: --builtins lowered
# pld-corpus-run: --schedule random:11
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 75
PAD = 80
ROOT = 1


@pl.program
class BroadcastRows:
    @pl.function(type=pl.FunctionType.InCore)
    def publish(
        self,
        inp: pl.Tensor[[NR, SIZE], pl.FP32],
        block: pl.Out[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
    ):
        for i in pl.range(NR):
            row = pl.load(inp, [i, 0], [1, PAD], valid_shape=[1, SIZE])
            block = pl.store(row, [i, 0], block)

    @pl.function(type=pl.FunctionType.InCore)
    def consume(
        self,
        block: pld.DistributedTensor[[NR, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
    ):
        for i in pl.range(NR):
            row = pl.load(block, [i, 0], [1, PAD], valid_shape=[1, SIZE])
            out = pl.store(row, [i, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(
        self,
        inp: pl.Tensor[[NR, SIZE], pl.FP32],
        block: pl.Out[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
    ):
        self.publish(inp, block)

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume_orch(
        self,
        block: pld.DistributedTensor[[NR, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
    ):
        self.consume(block, out)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, NR, SIZE], pl.FP32],
        outputs: pl.Out[pl.Tensor[[NR, NR, SIZE], pl.FP32]],
    ):
        block_buf = pld.alloc_window_buffer(pld.world_size() * SIZE * 4)
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        block = pld.window(block_buf, [NR, SIZE], dtype=pl.FP32)
        sig = pld.window(sig_buf, [pld.world_size()], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.publish_orch(inputs[r], block, device=r)
        block = pld.tensor.broadcast(block, sig, root=ROOT)
        for r in pl.range(pld.world_size()):
            self.consume_orch(block, outputs[r], device=r)


def golden(tensors, params):
    tensors["outputs"][:] = tensors["inputs"][ROOT]
