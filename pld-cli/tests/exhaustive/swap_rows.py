"""Two ranks swap their rows: each pushes its row into the other's box, raises the other's
flag, waits for its own flag and copies its box out. Small enough for `pld verify
--exhaustive-naive` to run every interleaving (the exhaustive tests compare the reduction
against it).

    out[r] = inp[1 - r]
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 8


@pl.program
class SwapRows:
    @pl.function(type=pl.FunctionType.InCore)
    def swap(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        box: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        flag: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(box)
        me = pld.rank(ctx)
        other = (me + 1) % pld.nranks(ctx)
        row = pl.load(inp, [0, 0], [1, SIZE])
        pld.tile.remote_store(row, box, other, [0, 0])
        pld.system.notify(flag, other, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(flag, [0, 0], 1, cmp=pld.WaitCmp.Ge)
        got = pl.load(box, [0, 0], [1, SIZE])
        out = pl.store(got, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        box: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        flag: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    ):
        self.swap(inp, out, box, flag)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        box_buf = pld.alloc_window_buffer(SIZE * 4, name="box")
        flag_buf = pld.alloc_window_buffer(4, name="flag")
        for r in pl.range(pld.world_size()):
            box = pld.window(box_buf, [1, SIZE], dtype=pl.FP32)
            flag = pld.window(flag_buf, [1, 1], dtype=pl.INT32)
            self.chip_orch(inputs[r], outputs[r], box, flag, device=r)


def golden(tensors, params):
    x = tensors["inputs"]
    tensors["outputs"][:] = x[[1, 0]]
