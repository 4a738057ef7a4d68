"""Tile-level and tensor-level remote_store.

Each rank pushes into the next rank's window twice:
- the tile form (`pld.tile.remote_store`) pushes a loaded tile into the left half of the
  peer's row;
- the tensor form (`pld.tensor.remote_store`) pushes a computed tensor-level value
  (`inp * 2`) into the right half; ConvertTensorToTileOps lowers it 1:1 to the tile form.
Then the rank signals the peer and waits for its own window to be filled:

    out[r][:, :HALF] = inp[(r - 1) mod P][:, :HALF]
    out[r][:, HALF:] = 2 * inp[(r - 1) mod P][:, HALF:]

Run it:

    pld run examples/remote_store.py --ranks 3
"""
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
ROWS = 4
HALF = 32


@pl.program
class RemoteStore:
    @pl.function(type=pl.FunctionType.InCore)
    def push(
        self,
        inp: pl.Tensor[[ROWS, 2 * HALF], pl.FP32],
        out: pl.Out[pl.Tensor[[ROWS, 2 * HALF], pl.FP32]],
        win: pl.InOut[pld.DistributedTensor[[ROWS, 2 * HALF], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        ctx = pld.get_comm_ctx(win)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        nxt = (me + 1) % n
        prv = (me + n - 1) % n
        left = pl.load(inp, [0, 0], [ROWS, HALF])
        pld.tile.remote_store(left, win, nxt, [0, 0])
        right = pl.tensor.slice(inp, [ROWS, HALF], [0, HALF])
        doubled = pl.tensor.muls(right, 2.0)
        pld.tensor.remote_store(doubled, win, nxt, [0, HALF])
        pld.system.notify(signal, nxt, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(signal, [prv, 0], 1, cmp=pld.WaitCmp.Ge)
        got = pl.load(win, [0, 0], [ROWS, 2 * HALF])
        pl.store(got, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        inp: pl.Tensor[[ROWS, 2 * HALF], pl.FP32],
        out: pl.Out[pl.Tensor[[ROWS, 2 * HALF], pl.FP32]],
        win: pl.InOut[pld.DistributedTensor[[ROWS, 2 * HALF], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.push(inp, out, win, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, ROWS, 2 * HALF], pl.FP32],
        outputs: pl.Out[pl.Tensor[[NR, ROWS, 2 * HALF], pl.FP32]],
    ):
        win_buf = pld.alloc_window_buffer(ROWS * 2 * HALF * 4)
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        for r in pl.range(pld.world_size()):
            win = pld.window(win_buf, [ROWS, 2 * HALF], dtype=pl.FP32)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.chip_orch(inputs[r], outputs[r], win, signal, device=r)
