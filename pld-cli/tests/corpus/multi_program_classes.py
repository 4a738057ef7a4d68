"""Two `@pl.program` classes in one file, the reference's way of shipping a collective and
its companion: `MeshSum` reduces every rank's row with a mesh allreduce on a window rebound
by `pl.store`; `RootBroadcast` broadcasts rank 0's row. `--entry sum_host` and
`--entry bcast_host` pick the class whose host function is named (`--program MeshSum` /
`--program RootBroadcast` work too); `pld check` checks both.

    sum_host:   outputs[r] = sum over ranks k of inputs[k]
    bcast_host: outputs[r] = 2 * inputs[0]
"""
# pld-corpus-run: --entry sum_host
# pld-corpus-run: --entry bcast_host
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
COLS = 128


@pl.program
class MeshSum:
    @pl.function(type=pl.FunctionType.InCore)
    def reduce(
        self,
        inp: pl.Tensor[[1, COLS], pl.FP32],
        out: pl.Out[pl.Tensor[[1, COLS], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, COLS], pl.FP32]],
        sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        data = pl.store(pl.load(inp, [0, 0], [1, COLS]), [0, 0], data)
        data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Sum)
        me = pld.rank(pld.get_comm_ctx(data))
        pld.tensor.get(out, me, data)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(
        self,
        inp: pl.Tensor[[1, COLS], pl.FP32],
        out: pl.Out[pl.Tensor[[1, COLS], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, COLS], pl.FP32]],
        sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.reduce(inp, out, data, sig)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def sum_host(self, inputs: pl.Tensor[[NR, 1, COLS], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, 1, COLS], pl.FP32]]):
        data_buf = pld.alloc_window_buffer(COLS * 4)
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, COLS], dtype=pl.FP32)
            sig = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
            self.chip(inputs[r], outputs[r], data, sig, device=r)


@pl.program
class RootBroadcast:
    @pl.function(type=pl.FunctionType.InCore)
    def bcast(
        self,
        inp: pl.Tensor[[1, COLS], pl.FP32],
        out: pl.Out[pl.Tensor[[1, COLS], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, COLS], pl.FP32]],
        sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        row = pl.load(inp, [0, 0], [1, COLS])
        data = pl.store(pl.add(row, row), [0, 0], data)
        data = pld.tensor.broadcast(data, sig, root=0)
        me = pld.rank(pld.get_comm_ctx(data))
        pld.tensor.get(out, me, data)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(
        self,
        inp: pl.Tensor[[1, COLS], pl.FP32],
        out: pl.Out[pl.Tensor[[1, COLS], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, COLS], pl.FP32]],
        sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.bcast(inp, out, data, sig)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def bcast_host(self, inputs: pl.Tensor[[NR, 1, COLS], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, 1, COLS], pl.FP32]]):
        data_buf = pld.alloc_window_buffer(COLS * 4)
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, COLS], dtype=pl.FP32)
            sig = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
            self.chip(inputs[r], outputs[r], data, sig, device=r)


def golden_sum_host(tensors, params):
    tensors["outputs"][:] = tensors["inputs"].sum(axis=0, keepdims=True)


def golden_bcast_host(tensors, params):
    tensors["outputs"][:] = 2.0 * tensors["inputs"][0:1]
