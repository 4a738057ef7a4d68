//! Generated compiler workloads: DSL programs made of `scale` copies of a realistic
//! distributed kernel, so compile time can be compared per statement across sizes.
//!
//! One unit (scale 1) is what a user writes for one layer's communication: an InCore kernel
//! that stages `CHUNKS` chunks (load, add, store into a window), runs a mesh allreduce on the
//! window and copies the result out in chunks; its orchestration function; and, in the one
//! host function, a dispatch of that kernel to every rank followed by a loop of host ring
//! allreduces on the same window. Scale `k` repeats the unit `k` times with fresh names: the
//! kernel count and the host function both grow linearly with `k`.
//!
//! Guarantees: [`program`] is deterministic in its arguments; names never collide across
//! units; the text parses and compiles through the whole pipeline (checked by this crate's
//! tests at scale 1 and 3).

use pld_ir::Block;

/// Chunks staged per kernel (unrolled).
pub const CHUNKS: usize = 8;
/// Elements per chunk.
pub const CHUNK: usize = 256;

/// A program of `scale` units.
pub fn program(scale: usize) -> String {
    let size = CHUNKS * CHUNK;
    let mut s = String::from(
        "import pypto.language as pl\nimport pypto.language.distributed as pld\n\nNR = pl.dynamic(\"NR\")\n\n\
         @pl.program\nclass Generated:\n",
    );
    for u in 0..scale {
        s.push_str(&kernel(u, size));
    }
    s.push_str(&format!(
        "    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n    def host(self, inputs: pl.Tensor[[NR, 1, {size}], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, 1, {size}], pl.FP32]]):\n"
    ));
    for u in 0..scale {
        s.push_str(&host_part(u, size));
    }
    s
}

fn kernel(u: usize, size: usize) -> String {
    let mut k = format!(
        "    @pl.function(type=pl.FunctionType.InCore)\n    def step_{u}(self, inp: pl.Tensor[[1, {size}], pl.FP32], out: pl.Out[pl.Tensor[[1, {size}], pl.FP32]],\n               data: pl.InOut[pld.DistributedTensor[[1, {size}], pl.FP32]],\n               signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):\n"
    );
    for c in 0..CHUNKS {
        let off = c * CHUNK;
        k.push_str(&format!(
            "        t{c} = pl.load(inp, [0, {off}], [1, {CHUNK}])\n        u{c} = pl.add(t{c}, t{c})\n        pl.store(u{c}, [0, {off}], data)\n"
        ));
    }
    k.push_str("        res = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, mode=\"mesh\")\n");
    k.push_str(&format!(
        "        for col in pl.range(0, {size}, {CHUNK}):\n            r = pl.load(res, [0, col], [1, {CHUNK}])\n            pl.store(r, [0, col], out)\n        return out\n\n"
    ));
    k.push_str(&format!(
        "    @pl.function(type=pl.FunctionType.Orchestration)\n    def chip_{u}(self, inp: pl.Tensor[[1, {size}], pl.FP32], out: pl.Out[pl.Tensor[[1, {size}], pl.FP32]],\n               data: pl.InOut[pld.DistributedTensor[[1, {size}], pl.FP32]],\n               signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):\n        out = self.step_{u}(inp, out, data, signal)\n        return out\n\n"
    ));
    k
}

fn host_part(u: usize, size: usize) -> String {
    format!(
        "        data_buf_{u} = pld.alloc_window_buffer({size} * 4, name=\"data_{u}\")\n\
         \x20       sig_buf_{u} = pld.alloc_window_buffer(pld.world_size() * 4, name=\"signal_{u}\")\n\
         \x20       ring_buf_{u} = pld.alloc_window_buffer((2 * (pld.world_size() - 1) + 1) * pld.world_size() * 4, name=\"ring_{u}\")\n\
         \x20       data_{u} = pld.window(data_buf_{u}, [1, {size}], dtype=pl.FP32)\n\
         \x20       signal_{u} = pld.window(sig_buf_{u}, [NR, 1], dtype=pl.INT32)\n\
         \x20       ring_{u} = pld.window(ring_buf_{u}, [2 * (NR - 1) + 1, NR], dtype=pl.INT32)\n\
         \x20       for r in pl.range(pld.world_size()):\n\
         \x20           self.chip_{u}(inputs[r], outputs[r], data_{u}, signal_{u}, device=r)\n\
         \x20       for it in pl.range(4):\n\
         \x20           data_{u} = pld.tensor.allreduce(data_{u}, ring_{u}, op=pld.ReduceOp.Sum, mode=\"ring\")\n"
    )
}

/// Statement nodes in `block`, nested blocks included.
pub fn stmts_in_block(block: &Block) -> usize {
    let mut n = 0;
    block.walk(&mut |_| n += 1);
    n
}
