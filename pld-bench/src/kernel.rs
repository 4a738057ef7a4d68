//! A kernel the simulator interprets op by op: a mesh allreduce written by hand in the DSL
//! (`pl.load` / `pl.store` into a window, a credit barrier of `notify` / `wait`, then
//! `pld.tile.remote_load` + `pl.add` of every peer's tile), as users write their own kernels.
//! The collective benchmarks run builtin protocols (micro programs); this one measures the
//! general interpreter: tile values, elementwise ops, loads and stores through the DSL.
//!
//! Guarantees: [`HandAllreduce::text`] is a complete DSL program with entry `host` whose
//! `outputs[r]` is the elementwise sum over ranks of `inputs[r]` ([`HandAllreduce::inputs`] and
//! [`HandAllreduce::expected`] give both); every rank stores its `SIZE` elements once, reads
//! `(P-1)·SIZE` elements remotely and `SIZE` locally.

use pld_sim::{HostTensor, Inputs};

/// A hand-written mesh allreduce of `size` FP32 elements per rank over `p` ranks, in tiles of
/// `tile` elements (`size` a multiple of `tile`).
#[derive(Clone, Copy, Debug)]
pub struct HandAllreduce {
    /// Rank count.
    pub p: usize,
    /// Elements per rank.
    pub size: usize,
    /// Elements per tile.
    pub tile: usize,
}

impl HandAllreduce {
    /// The DSL program.
    pub fn text(&self) -> String {
        let (size, tile) = (self.size, self.tile);
        format!(
            r#"import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = {size}
T = {tile}


@pl.program
class HandAllreduce:
    @pl.function(type=pl.FunctionType.InCore)
    def reduce_step(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        for col in pl.range(0, SIZE, T):
            row = pl.load(inp, [0, col], [1, T])
            data = pl.store(row, [0, col], data)
        for k in pl.range(1, n):
            peer = (me + k) % n
            pld.system.notify(signal, peer, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        for k in pl.range(1, n):
            src = (me + k) % n
            pld.system.wait(signal, [src, 0], 1, cmp=pld.WaitCmp.Ge)
        for col in pl.range(0, SIZE, T):
            acc = pl.load(data, [0, col], [1, T])
            for k, (partial,) in pl.range(1, n, init_values=(acc,)):
                peer = (me + k) % n
                theirs = pld.tile.remote_load(data, peer, [0, col], [1, T])
                summed = pl.add(partial, theirs)
                total = pl.yield_(summed)
            out = pl.store(total, [0, col], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.reduce_step(inp, out, data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(
        self,
        inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data_buf = pld.alloc_window_buffer(SIZE * 4)
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.chip_orch(inputs[r], outputs[r], data, signal, device=r)
"#
        )
    }

    /// Input `inputs[r][i] = (r + 1) + (i mod 7)` (exact in FP32 and in any order of summing).
    fn value(r: usize, i: usize) -> f64 {
        (r + 1) as f64 + (i % 7) as f64
    }

    /// The host inputs.
    pub fn inputs(&self) -> Inputs {
        let vals: Vec<f64> =
            (0..self.p).flat_map(|r| (0..self.size).map(move |i| Self::value(r, i))).collect();
        let mut m = Inputs::new();
        m.insert(
            "inputs".into(),
            HostTensor::from_f64(pld_ir::DataType::FP32, vec![self.p, 1, self.size], &vals),
        );
        m
    }

    /// The outputs the program must produce: every rank gets the sum over ranks.
    pub fn expected(&self) -> HostTensor {
        let sum: Vec<f64> = (0..self.size).map(|i| (0..self.p).map(|r| Self::value(r, i)).sum()).collect();
        let all: Vec<f64> = (0..self.p).flat_map(|_| sum.iter().copied()).collect();
        HostTensor::from_f64(pld_ir::DataType::FP32, vec![self.p, 1, self.size], &all)
    }

    /// What the run must hold: each rank's data and signal windows plus the host inputs and
    /// outputs.
    pub fn must_hold(&self) -> u64 {
        let (p, s) = (self.p as u64, self.size as u64 * 4);
        p * (s + 4 * p) + 2 * p * s
    }
}
