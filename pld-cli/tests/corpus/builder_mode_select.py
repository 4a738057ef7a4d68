"""A program-building function picks its allreduce algorithm and the signal matrix that goes
with it in an `if`/`elif` chain, the way the reference's system tests do; `--bind mode=ring`
or `--bind mode=mesh` folds the chain (a tuple assignment per branch). The kernel stages
its input into the window with a rebinding store and reduces the rebound window in place.

    outputs[r] = sum over ranks k of (inputs[k] + 1)
"""
# pld-corpus-run: --bind mode=ring
# pld-corpus-run: --bind mode=mesh
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
COLS = 96


def build(mode: str):
    if mode == "ring":
        sig_rows, sig_cols = 2 * (NR - 1), NR
    elif mode == "mesh":
        sig_rows, sig_cols = NR, 1
    else:
        raise ValueError(f"unknown mode {mode}")

    @pl.program
    class ModeAllreduce:
        @pl.function(type=pl.FunctionType.InCore)
        def reduce_rows(
            self,
            inp: pl.Tensor[[1, COLS], pl.FP32],
            out: pl.Out[pl.Tensor[[1, COLS], pl.FP32]],
            data: pl.InOut[pld.DistributedTensor[[1, COLS], pl.FP32]],
            signal: pl.InOut[pld.DistributedTensor[[sig_rows, sig_cols], pl.INT32]],
        ):
            row = pl.load(inp, [0, 0], [1, COLS])
            data = pl.store(pl.adds(row, 1.0), [0, 0], data)
            me = pld.rank(pld.get_comm_ctx(data))
            data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, mode=mode)
            pld.tensor.get(out, me, data)

        @pl.function(type=pl.FunctionType.Orchestration)
        def chip_orch(
            self,
            inp: pl.Tensor[[1, COLS], pl.FP32],
            out: pl.Out[pl.Tensor[[1, COLS], pl.FP32]],
            data: pl.InOut[pld.DistributedTensor[[1, COLS], pl.FP32]],
            signal: pl.InOut[pld.DistributedTensor[[sig_rows, sig_cols], pl.INT32]],
        ):
            self.reduce_rows(inp, out, data, signal)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(
            self,
            inputs: pl.Tensor[[NR, 1, COLS], pl.FP32],
            outputs: pl.Out[pl.Tensor[[NR, 1, COLS], pl.FP32]],
        ):
            data_buf = pld.alloc_window_buffer(COLS * 4)
            sig_buf = pld.alloc_window_buffer(sig_rows * sig_cols * 4)
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, [1, COLS], dtype=pl.FP32)
                signal = pld.window(sig_buf, [sig_rows, sig_cols], dtype=pl.INT32)
                self.chip_orch(inputs[r], outputs[r], data, signal, device=r)

    return ModeAllreduce


def golden(tensors, params):
    total = (tensors["inputs"] + 1.0).sum(axis=0, keepdims=True)
    tensors["outputs"][:] = total
