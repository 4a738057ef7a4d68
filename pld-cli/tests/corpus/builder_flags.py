"""A builder with typed parameters and defaults: `--bind negate=True --bind scale=2.5` binds a
bool and a float, `--bind cols=32` an int; an `if`/`elif` on them picks the kernel's factor
and offset (a tuple assignment), and a conditional expression picks the tile width. Every
rank applies the affine map to its block, then the ranks sum their blocks (mesh allreduce on
a window the kernel fills with a rebinding store).

    outputs[r] = sum over ranks k of (factor * inputs[k] + offset)
    factor, offset = (-scale, 1) if negate else (scale, 0) if scale > 1 else (1, 0)
"""
# pld-corpus-run: --bind negate=True --bind scale=2.5
# pld-corpus-run: --bind scale=4.0 --bind cols=32
# pld-corpus-run: --bind negate=False
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")


def build(negate: bool = False, scale: float = 1.0, cols: int = 64):
    if negate:
        factor, offset = -scale, 1.0
    elif scale > 1:
        factor, offset = scale, 0.0
    else:
        factor, offset = 1.0, 0.0
    width = cols if cols <= 64 else 64

    @pl.program
    class Affine:
        @pl.function(type=pl.FunctionType.InCore)
        def affine_sum(
            self,
            inp: pl.Tensor[[1, width], pl.FP32],
            out: pl.Out[pl.Tensor[[1, width], pl.FP32]],
            acc: pl.InOut[pld.DistributedTensor[[1, width], pl.FP32]],
            sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        ):
            t = pl.load(inp, [0, 0], [1, width])
            t = pl.adds(pl.muls(t, factor), offset)
            acc = pl.store(t, [0, 0], acc)
            acc = pld.tensor.allreduce(acc, sig, op=pld.ReduceOp.Sum)
            pld.tensor.get(out, pld.rank(pld.get_comm_ctx(acc)), acc)

        @pl.function(type=pl.FunctionType.Orchestration)
        def chip(
            self,
            inp: pl.Tensor[[1, width], pl.FP32],
            out: pl.Out[pl.Tensor[[1, width], pl.FP32]],
            acc: pl.InOut[pld.DistributedTensor[[1, width], pl.FP32]],
            sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        ):
            self.affine_sum(inp, out, acc, sig)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, inputs: pl.Tensor[[NR, 1, width], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, 1, width], pl.FP32]]):
            acc_buf = pld.alloc_window_buffer(width * 4)
            sig_buf = pld.alloc_window_buffer(pld.world_size() * 4)
            for r in pl.range(pld.world_size()):
                acc = pld.window(acc_buf, [1, width], dtype=pl.FP32)
                sig = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
                self.chip(inputs[r], outputs[r], acc, sig, device=r)

    return Affine


def golden(tensors, params):
    negate = params.get("negate", False) in (True, "True", "true")
    scale = float(params.get("scale", 1.0))
    if negate:
        factor, offset = -scale, 1.0
    elif scale > 1:
        factor, offset = scale, 0.0
    else:
        factor, offset = 1.0, 0.0
    mapped = factor * tensors["inputs"] + offset
    tensors["outputs"][:] = mapped.sum(axis=0, keepdims=True)
