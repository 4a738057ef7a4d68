//! Collective family: the `pld.tensor.*` collectives (when they reach the simulator
//! unlowered) and the host/chip `builtin.tensor.*` kernels, as protocol-faithful micro
//! programs over the same windows and signals.
//!
//! Guarantees: every collective synchronises only through the seed's self-clearing credit
//! barrier — barrier(g) = AtomicAdd +1 into my cell on every peer, then wait Ge g on every
//! peer's cell; epilogue = self AtomicAdd −N into every peer's cell — so traffic counting, the
//! race checker and the credit-leak check apply to builtins exactly as to lowered kernels.
//! Reductions combine a rank's own value first, then its peers' in rank order, as the rendered
//! kernels and the reference templates do (so, as on hardware, floating-point results may
//! differ between ranks in the last bit).
//! Data movement: reduce_scatter reduces and stores its row in UB chunks before its read-done
//! barrier (D-ops-12), and broadcast, allgather, all_to_all and all_to_all_v move their rows
//! through a stage of at most one UB chunk (D-ops-13), as their rendered kernels do; mesh
//! allreduce reads (P−1)·S per rank in the seed's 256-element tiles (block-cyclic over several
//! blocks) with a read-done barrier before each store-back; ring allreduce follows its
//! lowering step for step (segments, sub-chunks, ready and read-done barrier per sub-chunk),
//! reading 2(P−1) segments per rank. Mesh and ring take consecutive tiles (sub-chunks) of a
//! block (step) together up to the run's protocol grain, with one barrier adding all their
//! credits, and charge the merged tiles' messages, signals and latencies as the kernel's
//! (D-sim-37): outputs, traffic, counts and modeled time do not depend on the grain. all_to_all_v clamps counts to
//! [0, MAX_RECV], publishes the clamped count with a Set notify and moves exactly that many
//! rows.

use super::put_get::transfer;
use super::system::{NOTIFY, WAIT};
use super::OpCx;
use crate::micro::{CellIdx, Lazy, Micro};
use crate::register_collective;
use crate::report::Fault;
use crate::value::{Mem, TRef, Val};
use crate::world::TileWork;
use pld_ir::DataType;
use pld_runtime_abi::{NotifyOp, ReduceOp};
use std::sync::Arc;

#[derive(Clone)]
struct Proto {
    me: i64,
    n: i64,
    sig: Arc<TRef>,
    prog: Vec<Micro>,
}

impl Proto {
    fn new(cx: &OpCx<'_>, sig: &TRef) -> Result<Proto, Fault> {
        let Mem::Window { domain, .. } = sig.mem else {
            return Err(cx.err("signal must be a window-bound tensor"));
        };
        let dom = cx.world.domain(domain);
        let me = dom
            .drank(cx.rank)
            .ok_or_else(|| cx.err(format!("rank {} is not in the signal's comm domain", cx.rank)))?;
        if sig.dtype != DataType::INT32 {
            return Err(cx.err(format!("signal must be INT32, got {}", sig.dtype)));
        }
        Ok(Proto { me: me as i64, n: dom.members.len() as i64, sig: Arc::new(sig.clone()), prog: Vec::new() })
    }

    /// The cell rank `r` owns in signal row/lane `lane` (rank-1 `[NR]`, `[NR, stride]`, or ring rows).
    fn cell(&self, r: i64, lane: i64, ring_row: Option<i64>) -> CellIdx {
        match (ring_row, self.sig.shape.len()) {
            (Some(row), _) => CellIdx::two(row, r),
            (None, 1) => CellIdx::one(r),
            (None, _) => CellIdx::two(r, lane),
        }
    }

    /// Puts the rows `shape` of `src` at `src_offs` into peer `dest`'s `dst` at `dst_offs`,
    /// through a stage of one row of at most one UB chunk (the row-push kernels' stage).
    #[allow(clippy::too_many_arguments)]
    fn put_rows(
        &mut self,
        dst: &TRef,
        dst_offs: &[i64],
        src: &TRef,
        src_offs: &[i64],
        shape: &[i64],
        dest: i64,
        name: &'static str,
    ) {
        let cols = shape.last().copied().unwrap_or(1);
        let stage = pld_runtime_abi::ub_stage(1, cols, dst.dtype.bytes() as i64);
        self.prog.extend(transfer(dst, dst_offs, src, src_offs, shape, dest, stage, true, false, name));
    }

    /// Closes the protocol with barrier generation `g` (lane 0) and its epilogue.
    fn closed(mut self, g: i32) -> Result<Vec<Micro>, Fault> {
        // One reservation for the barrier's and the epilogue's instructions (a `Micro` is a few
        // hundred bytes: growing a row-push program by pushes reallocated it for each).
        self.prog.reserve_exact(3 * (self.n - 1).max(0) as usize);
        self.barrier(g, 0, None);
        self.epilogue(g, 0, None);
        Ok(self.prog)
    }

    fn barrier(&mut self, g: i32, lane: i64, ring_row: Option<i64>) {
        self.barrier_by(g, lane, ring_row, 1);
    }

    /// Barrier generation `g` reached in one step from `g - count`: `count` credits into my
    /// cell on every peer, then a wait for `g` on every peer's cell.
    fn barrier_by(&mut self, g: i32, lane: i64, ring_row: Option<i64>, count: i32) {
        for peer in (0..self.n).filter(|&p| p != self.me) {
            let idx = self.cell(self.me, lane, ring_row);
            self.prog.push(Micro::Notify {
                sig: Arc::clone(&self.sig),
                peer,
                idx,
                value: count,
                op: NotifyOp::AtomicAdd,
                fence: true,
                name: NOTIFY,
                at: Default::default(),
            });
        }
        for src in (0..self.n).filter(|&p| p != self.me) {
            let idx = self.cell(src, lane, ring_row);
            self.prog.push(Micro::Wait {
                sig: Arc::clone(&self.sig),
                idx,
                expected: g,
                ge: true,
                name: WAIT,
                at: Default::default(),
            });
        }
    }

    fn epilogue(&mut self, credits: i32, lane: i64, ring_row: Option<i64>) {
        for src in (0..self.n).filter(|&p| p != self.me) {
            let idx = self.cell(src, lane, ring_row);
            self.prog.push(Micro::Notify {
                sig: Arc::clone(&self.sig),
                peer: self.me,
                idx,
                value: -credits,
                op: NotifyOp::AtomicAdd,
                fence: true,
                name: NOTIFY,
                at: Default::default(),
            });
        }
    }

    /// Charges the `tiles - 1` kernel tiles of work `per` that a protocol step takes together
    /// beyond the one its instructions stand for ([`Micro::Charge`]).
    fn stands_for(&mut self, tiles: i64, per: TileWork) {
        let extra = (tiles - 1).max(0) as u64;
        if extra > 0 && per != TileWork::default() {
            self.prog.push(Micro::Charge { tiles: extra, per });
        }
    }

    /// `acc = reduce over ranks of region (offs, shape) of `data``, in the order the rendered
    /// kernel (and the reference template) combines them: my own region loaded into register 0,
    /// then each peer's combined into it in rank order. Floating-point results may therefore
    /// differ in the last bit between ranks, as they do on hardware.
    fn reduce_into(&mut self, data: &TRef, offs: &[i64], shape: &[i64], op: ReduceOp, op_name: &'static str) {
        self.prog.push(Micro::Load {
            at: Default::default(),
            reg: 0,
            src: data.clone(),
            peer: None,
            offs: offs.to_vec(),
            shape: shape.to_vec(),
            op: op_name,
        });
        for q in (0..self.n).filter(|&q| q != self.me) {
            self.prog.push(combine_region(data, Some(q), offs, shape, op, op_name));
        }
    }
}

/// One kernel barrier among `peers + 1` ranks, per rank: a notify to and a wait on every peer,
/// one landing latency and one blocking poll.
fn barrier_work(peers: u64) -> TileWork {
    TileWork { msgs: 1, notifies: peers, waits: peers, polls: 1, rounds: 1 }
}

/// A packed `[1, numel]` view of a contiguous tensor.
fn flat(cx: &OpCx<'_>, t: &TRef) -> Result<TRef, Fault> {
    if t.strides != TRef::packed_strides(&t.shape) {
        return Err(cx.err("collective data must be a packed (contiguous) tensor"));
    }
    let n = t.numel();
    Ok(TRef { shape: [1, n][..].into(), strides: [n, 1][..].into(), ..t.clone() })
}

fn reduce_op(cx: &OpCx<'_>) -> Result<ReduceOp, Fault> {
    ReduceOp::from_i64(cx.attr_int("op").unwrap_or(0)).map_err(|e| cx.err(e.to_string()))
}

fn sig_arg<'v>(cx: &OpCx<'_>, args: &'v [Val], i: usize) -> Result<&'v TRef, Fault> {
    match args.get(i) {
        Some(Val::Tensor(t)) => Ok(t),
        _ => Err(cx.err("needs an explicit signal (run the pipeline to synthesize one)")),
    }
}

fn allreduce(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Vec<Micro>, Fault> {
    let mode = cx.call.attr("mode").and_then(|a| a.as_str()).unwrap_or("mesh").to_string();
    if mode == "ring" || cx.name().ends_with("_ring") {
        return allreduce_ring(cx, args);
    }
    let data = flat(cx, cx.tensor(args, 0)?)?;
    let sig = sig_arg(cx, args, 1)?.clone();
    let op = reduce_op(cx)?;
    let cores = cx.attr_int("core_num").unwrap_or(1).max(1);
    let mut p = Proto::new(cx, &sig)?;
    let stride = if sig.shape.len() >= 2 { sig.shape[1] } else { 1 };
    let s = data.shape[1];
    // The seed's host-builtin tile, as the rendered builtin kernel (with several blocks,
    // blocks own tiles block-cyclically); an InCore/chip allreduce works in its lowering's
    // UB chunks.
    let chunk = if cx.name().starts_with("builtin.") {
        pld_runtime_abi::BUILTIN_MESH_TILE
    } else {
        mesh_chunk(data.dtype, s)
    };
    let grain = tiles_per_step(cx.world.protocol_grain(), chunk, data.dtype);
    // Blocks run one after another on the rank: a valid interleaving of the SPMD grid,
    // since every rank runs them in the same order.
    // Steps are generated when the run reaches them (`Micro::Lazy`): a 16 MiB payload is
    // thousands of tiles, too many to hold at once at the finest grain.
    for b in 0..cores.min(stride) {
        let plan = MeshBlock::new(&data, chunk, cores, b, grain);
        p.barrier(1, b, None);
        let tiles = plan.tiles;
        let name = "builtin.tensor.allreduce";
        p.prog.push(lazy(&p, plan.steps(), move |i, q| {
            let st = plan.step(i);
            q.reduce_into(&st.view, &st.offs, &st.shape, op, name);
            // Per tile taken together: the peers' combines and the read-done barrier.
            let peers = (q.n - 1) as u64;
            q.stands_for(st.count, TileWork { msgs: peers + 1, ..barrier_work(peers) });
            q.barrier_by(2 + st.last as i32, b, None, st.count as i32);
            q.prog.push(store_region(&st.view, &st.offs, &st.shape, name));
        }));
        p.epilogue(1 + tiles as i32, b, None);
    }
    Ok(p.prog)
}

/// Tiles of `chunk` elements of `dtype` one protocol step moves at grain `grain_bytes`
/// ([`crate::SimConfig::protocol_grain`]): at least one.
fn tiles_per_step(grain_bytes: u64, chunk: i64, dtype: DataType) -> i64 {
    let tile_bytes = (chunk.max(1) * dtype.bytes().max(1) as i64) as u64;
    (grain_bytes / tile_bytes).max(1) as i64
}

/// The tiles block `b` of a mesh allreduce owns (tiles `b, b + C, b + 2C, …` of `chunk`
/// elements; the last tile of the data may be shorter), cut into protocol steps of `grain`
/// tiles: step `i` holds the block's full tiles `i·grain ..` as one region of a view whose
/// rows are the block's tiles, and a short last tile is a step of its own.
#[derive(Clone)]
struct MeshBlock {
    data: TRef,
    rows: TRef,
    chunk: i64,
    cores: i64,
    b: i64,
    grain: i64,
    /// Tiles the block owns.
    tiles: i64,
    /// Of them, full ones (all but a short last tile of the data).
    full: i64,
}

/// One protocol step of a [`MeshBlock`].
struct MeshStep {
    view: TRef,
    offs: [i64; 2],
    shape: [i64; 2],
    /// Block-order index of its last tile.
    last: i64,
    /// Tiles in it.
    count: i64,
}

impl MeshBlock {
    fn new(data: &TRef, chunk: i64, cores: i64, b: i64, grain: i64) -> MeshBlock {
        let s = data.shape[1];
        let nchunks = (s + chunk - 1) / chunk;
        let count_upto = |n: i64| if n > b { (n - b + cores - 1) / cores } else { 0 };
        let tiles = count_upto(nchunks);
        let full = count_upto(s / chunk);
        let eb = data.dtype.bytes().max(1);
        let rows = TRef {
            base: data.base + (b * chunk) as u64 * eb,
            shape: [full, chunk][..].into(),
            strides: [cores * chunk, 1][..].into(),
            ..data.clone()
        };
        MeshBlock { data: data.clone(), rows, chunk, cores, b, grain, tiles, full }
    }

    fn steps(&self) -> usize {
        let full_steps = (self.full + self.grain - 1) / self.grain;
        (full_steps + self.tiles - self.full) as usize
    }

    fn step(&self, i: usize) -> MeshStep {
        let first = i as i64 * self.grain;
        if first < self.full {
            let count = self.grain.min(self.full - first);
            return MeshStep {
                view: self.rows.clone(),
                offs: [first, 0],
                shape: [count, self.chunk],
                last: first + count - 1,
                count,
            };
        }
        // The data's short last tile, block-order index `full`.
        let off = (self.b + self.full * self.cores) * self.chunk;
        MeshStep {
            view: self.data.clone(),
            offs: [0, off],
            shape: [1, self.data.shape[1] - off],
            last: self.full,
            count: 1,
        }
    }
}

/// The InCore mesh lowering's chunk (`mesh_chunk_cols`): one UB chunk, or for a shorter
/// stream its length rounded up to 32 bytes.
fn mesh_chunk(dtype: DataType, s: i64) -> i64 {
    let eb = dtype.bytes().max(1) as i64;
    let chunk = pld_runtime_abi::UB_CHUNK_BYTES / eb;
    let align = (32 / eb).max(1);
    if s > 0 && s < chunk {
        (s + align - 1) / align * align
    } else {
        chunk
    }
}

/// Ring segment boundaries, as the ring lowering computes them (`ring_boundary`): balanced
/// `floor(i·S/N)` for FP32; for FP16 `min(S, ceil(i·S / 16N)·16)`, so every interior boundary
/// is a multiple of 16 elements (32 bytes).
pub fn ring_bounds(s: i64, n: i64, dtype: DataType) -> Vec<i64> {
    (0..=n)
        .map(|i| {
            if dtype.bytes() == 2 {
                let den = n * 16;
                ((i * s + den - 1) / den * 16).min(s)
            } else {
                i * s / n
            }
        })
        .collect()
}

/// The ring lowering's sub-chunk: the longest segment (`ceil(S/N)`, +15 for FP16, at most
/// `S`) rounded up to 32 bytes when it is below one UB chunk, else one UB chunk.
fn ring_chunk(s: i64, n: i64, dtype: DataType) -> (i64, i64) {
    let eb = dtype.bytes().max(1) as i64;
    let chunk_elems = pld_runtime_abi::UB_CHUNK_BYTES / eb;
    let align = (32 / eb).max(1);
    let mut max_seg = (s + n - 1) / n;
    if eb == 2 {
        max_seg = (max_seg + 15).min(s);
    }
    let chunk = if max_seg > 0 && max_seg < chunk_elems {
        (max_seg + align - 1) / align * align
    } else {
        chunk_elems
    };
    (max_seg, chunk)
}

/// The ring allreduce, step for step as its lowering (and the builtin kernel built from it):
/// reduce-scatter step `s` (signal row `s`) adds left's segment `me − s − 2` into mine,
/// allgather step `s` (row `N − 1 + s`) copies left's segment `me − s − 1`; every step walks
/// the longest segment's sub-chunks, each between a ready barrier (`2k + 1`) and a read-done
/// barrier (`2k + 2`) on the step's row, moving only the part inside this rank's segment; each
/// row's epilogue returns its `2·⌈max_seg / chunk⌉` credits. The host builtin's extra last row
/// is one more barrier after them (the kernel's return barrier).
fn allreduce_ring(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Vec<Micro>, Fault> {
    let data = flat(cx, cx.tensor(args, 0)?)?;
    let sig = sig_arg(cx, args, 1)?.clone();
    let op = reduce_op(cx)?;
    let mut p = Proto::new(cx, &sig)?;
    let (me, n) = (p.me, p.n);
    if n == 1 {
        return Ok(Vec::new());
    }
    let rows_needed = 2 * (n - 1) + 1;
    if sig.shape.len() != 2 || sig.shape[0] < rows_needed - 1 || sig.shape[1] < n {
        return Err(cx.err(format!(
            "ring signal must be [2(NR-1)+1, NR] = [{rows_needed}, {n}], got {:?}",
            sig.shape
        )));
    }
    if sig.shape[1] != n {
        // A ring signal is laid out for one rank count (`nranks=`), which must be the domain's.
        return Err(cx
            .err(format!(
                "ring allreduce: its signal is laid out for {} ranks ([2(NR-1)+1, NR] with NR = {}, e.g. from `nranks={}`), but it runs on a comm domain of {n} ranks",
                sig.shape[1], sig.shape[1], sig.shape[1]
            ))
            .note(format!("`nranks=` of a ring allreduce is the rank count it runs on: use nranks={n} here, or run on {} ranks", sig.shape[1])));
    }
    let has_return_row = sig.shape[0] >= rows_needed;
    let size = data.shape[1];
    let bounds = ring_bounds(size, n, data.dtype);
    let (max_seg, chunk) = ring_chunk(size, n, data.dtype);
    let subs = (max_seg + chunk - 1) / chunk;
    let per_step = tiles_per_step(cx.world.protocol_grain(), chunk, data.dtype);
    let left = (me - 1).rem_euclid(n);
    let name = "builtin.tensor.allreduce_ring";
    // Steps are generated when the run reaches them (`Micro::Lazy`): with full barriers per
    // step a rank's whole program is O(P²) instructions, held by every rank at once.
    let steps = 2 * (n - 1);
    p.prog.push(lazy(&p, steps as usize, move |step, q| {
        let step = step as i64;
        let gather = step >= n - 1;
        let seg = if gather { me - (step - (n - 1)) - 1 } else { me - step - 2 }.rem_euclid(n) as usize;
        let (start, len) = (bounds[seg], bounds[seg + 1] - bounds[seg]);
        // Sub-chunks `k0 .. k0 + m` in one protocol step: their ready barriers as one
        // (`2(k0 + m) − 1` reached from `2·k0`), their contiguous part of the segment moved
        // at once, then the last read-done barrier.
        for k0 in (0..subs).step_by(per_step as usize) {
            let m = per_step.min(subs - k0);
            let (ready, done) = (2 * (k0 + m) as i32 - 1, 2 * (k0 + m) as i32);
            q.barrier_by(ready, 0, Some(step), 2 * m as i32 - 1);
            let sub = k0 * chunk;
            let active = sub < len;
            let (col, valid) = (start + sub, (m * chunk).min(len - sub));
            if active && gather {
                q.prog.push(load_row(&data, left, col, valid, name));
            } else if active {
                // My own part first, then left's partial combined into it, as the kernel does.
                q.prog.push(Micro::Load {
                    at: Default::default(),
                    reg: 0,
                    src: data.clone(),
                    peer: None,
                    offs: vec![0, col],
                    shape: vec![1, valid],
                    op: name,
                });
                q.prog.push(combine_region(&data, Some(left), &[0, col], &[1, valid], op, name));
            }
            // Per sub-chunk taken together: its two barriers and (when it has data) its load.
            let with_data = ((len - sub + chunk - 1) / chunk).clamp(0, m);
            let peers = (q.n - 1) as u64;
            let b = barrier_work(peers);
            let two = TileWork { msgs: 2, notifies: 2 * b.notifies, waits: 2 * b.waits, polls: 2, rounds: 2 };
            q.stands_for(m, two);
            q.stands_for(with_data, TileWork { msgs: 1, ..TileWork::default() });
            q.barrier(done, 0, Some(step));
            if active {
                q.prog.push(store_local(&data, 0, col, valid, name));
            }
        }
    }));
    let credits = (2 * subs) as i32;
    p.prog.push(lazy(&p, steps as usize, move |row, q| q.epilogue(credits, 0, Some(row as i64))));
    if has_return_row {
        p.barrier(1, 0, Some(steps));
        p.epilogue(1, 0, Some(steps));
    }
    Ok(p.prog)
}

/// A load of `[0, off .. off + len)` of `peer`'s copy of `data` into register 0.
fn load_row(data: &TRef, peer: i64, off: i64, len: i64, op: &'static str) -> Micro {
    Micro::Load {
        reg: 0,
        src: data.clone(),
        peer: Some(peer),
        offs: vec![0, off],
        shape: vec![1, len],
        op,
        at: Default::default(),
    }
}

/// Register 0 combined (`rop`, in `data`'s dtype) with region `offs`/`shape` of `peer`'s copy
/// of `data` (my own when `None`).
fn combine_region(
    data: &TRef,
    peer: Option<i64>,
    offs: &[i64],
    shape: &[i64],
    rop: ReduceOp,
    op: &'static str,
) -> Micro {
    Micro::LoadCombine {
        acc: 0,
        src: data.clone(),
        peer,
        offs: offs.to_vec(),
        shape: shape.to_vec(),
        rop,
        dtype: data.dtype,
        op,
        at: Default::default(),
    }
}

/// A plain store of register 0 into `[row, off .. off + len)` of my own `data`.
fn store_local(data: &TRef, row: i64, off: i64, len: i64, op: &'static str) -> Micro {
    store_region(data, &[row, off], &[1, len], op)
}

/// A plain store of register 0 into region `offs`/`shape` of my own `data`.
fn store_region(data: &TRef, offs: &[i64], shape: &[i64], op: &'static str) -> Micro {
    Micro::Store {
        at: Default::default(),
        reg: 0,
        dst: data.clone(),
        peer: None,
        offs: offs.to_vec(),
        shape: shape.to_vec(),
        atomic: false,
        op,
    }
}

/// `count` segments generated when the run reaches them, segment `i` being what `body(i, q)`
/// appends to an empty program of a protocol like `p`'s.
fn lazy(p: &Proto, count: usize, body: impl Fn(usize, &mut Proto) + Send + Sync + 'static) -> Micro {
    let (me, n, sig) = (p.me, p.n, p.sig.clone());
    let gen = move |i: usize, out: &mut Vec<Micro>| {
        out.clear();
        let mut q = Proto { me, n, sig: sig.clone(), prog: std::mem::take(out) };
        body(i, &mut q);
        *out = q.prog;
    };
    Micro::Lazy(Lazy { count, gen: Arc::new(gen) })
}

fn barrier(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Vec<Micro>, Fault> {
    let sig = cx.tensor(args, 0)?.clone();
    Proto::new(cx, &sig)?.closed(1)
}

fn broadcast(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Vec<Micro>, Fault> {
    let data = cx.tensor(args, 0)?.clone();
    let sig = cx.tensor(args, 1)?.clone();
    let root = cx.attr_int("root").unwrap_or(0);
    let mut p = Proto::new(cx, &sig)?;
    if root < 0 || root >= p.n {
        return Err(cx.err(format!("root {root} is not a rank in [0, {})", p.n)));
    }
    p.barrier(1, 0, None);
    // Every rank pulls the root's slice, the root included (its self-get leaves every byte
    // unchanged; D-sim-2), as the kernel does.
    {
        let zeros = vec![0i64; data.shape.len()];
        // Through the rendered kernel's UB-bounded stage (D-ops-13).
        let cols = data.shape.last().copied().unwrap_or(1).max(1);
        let rows = data.shape.iter().rev().skip(1).product::<i64>();
        let stage = pld_runtime_abi::ub_stage(rows, cols, data.dtype.bytes() as i64);
        p.prog.extend(transfer(
            &data,
            &zeros,
            &data,
            &zeros,
            &data.shape,
            root,
            stage,
            false,
            false,
            "builtin.tensor.broadcast",
        ));
    }
    // As the kernel (the InCore lowering, which the builtin kernel is): one ready barrier;
    // the root does not wait for its peers' pulls.
    p.epilogue(1, 0, None);
    Ok(p.prog)
}

fn reduce_scatter(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Vec<Micro>, Fault> {
    let data = cx.tensor(args, 0)?.clone();
    let sig = cx.tensor(args, 1)?.clone();
    let op = reduce_op(cx)?;
    if data.shape.len() != 2 {
        return Err(cx.err(format!("target must be 2-D [NR, SIZE], got {:?}", data.shape)));
    }
    let mut p = Proto::new(cx, &sig)?;
    if data.shape[0] != p.n {
        return Err(cx.err(format!("target has {} rows for {} ranks", data.shape[0], p.n)));
    }
    let size = data.shape[1];
    let me = p.me;
    let name = "builtin.tensor.reduce_scatter";
    // As the rendered kernel (D-ops-12): row `me` in UB chunks, each reduced and stored before
    // the next, then the read-done barrier.
    let chunk = pld_runtime_abi::UB_CHUNK_BYTES / data.dtype.bytes().max(1) as i64;
    p.barrier(1, 0, None);
    let chunks = (size.max(0) + chunk - 1) / chunk;
    p.prog.push(lazy(&p, chunks as usize, move |i, q| {
        let off = i as i64 * chunk;
        let len = chunk.min(size - off);
        q.reduce_into(&data, &[me, off], &[1, len], op, name);
        q.prog.push(store_local(&data, me, off, len, name));
    }));
    p.closed(2)
}

/// The row-push collectives: every rank writes a row of its input into row `me` of every
/// peer's target (itself included), through a stage of at most one UB chunk, then one
/// barrier. allgather sends input row 0 to everyone; all_to_all sends input row `dest` to
/// rank `dest`.
fn row_push(
    cx: &mut OpCx<'_>,
    args: &[Val],
    per_dest_row: bool,
    name: &'static str,
) -> Result<Vec<Micro>, Fault> {
    let input = cx.tensor(args, 0)?.clone();
    let target = cx.tensor(args, 1)?.clone();
    let sig = cx.tensor(args, 2)?.clone();
    let mut p = Proto::new(cx, &sig)?;
    let size = *target.shape.last().unwrap_or(&1);
    let me = p.me;
    // A load and a store per destination when a row fits one stage (more grow as usual).
    p.prog.reserve(2 * p.n as usize);
    for dest in 0..p.n {
        let src_row = if per_dest_row { dest } else { 0 };
        p.put_rows(&target, &[me, 0], &input, &[src_row, 0], &[1, size], dest, name);
    }
    p.closed(1)
}

fn allgather(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Vec<Micro>, Fault> {
    row_push(cx, args, false, "builtin.tensor.allgather")
}

fn all_to_all(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Vec<Micro>, Fault> {
    row_push(cx, args, true, "builtin.tensor.all_to_all")
}

fn all_to_all_v(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Vec<Micro>, Fault> {
    let input = cx.tensor(args, 0)?.clone();
    let target = cx.tensor(args, 1)?.clone();
    let sig = cx.tensor(args, 2)?.clone();
    let counts = cx.tensor(args, 3)?.clone();
    let recv = cx.tensor(args, 4)?.clone();
    let mut p = Proto::new(cx, &sig)?;
    let n = p.n;
    let me = p.me;
    if target.shape.len() != 2 || target.shape[0] % n != 0 {
        return Err(cx.err(format!("target {:?} is not [NR*MAX_RECV, SIZE] for {n} ranks", target.shape)));
    }
    let max_recv = target.shape[0] / n;
    let size = target.shape[1];
    let name = "builtin.tensor.all_to_all_v";
    let recv_sig = Arc::new(recv.clone());
    for dest in 0..n {
        let idx: Vec<i64> = if counts.shape.len() == 1 { vec![dest] } else { vec![dest, 0] };
        let ones = vec![1i64; idx.len()];
        let raw = cx.world.read(&cx.access(&counts, None, &idx, &ones, name))?;
        let c = (raw.first().copied().unwrap_or(0.0) as i64).clamp(0, max_recv);
        p.prog.push(Micro::Notify {
            sig: Arc::clone(&recv_sig),
            peer: dest,
            idx: CellIdx::two(me, 0),
            value: c as i32,
            op: NotifyOp::Set,
            fence: true,
            name: NOTIFY,
            at: Default::default(),
        });
        if c > 0 {
            p.put_rows(&target, &[me * max_recv, 0], &input, &[dest * max_recv, 0], &[c, size], dest, name);
        }
    }
    p.closed(1)
}

register_collective!("pld.tensor.allreduce", 0, allreduce);
register_collective!("builtin.tensor.allreduce", 0, allreduce);
register_collective!("builtin.tensor.allreduce_ring", 0, allreduce_ring);
register_collective!("pld.tensor.barrier", 0, barrier);
register_collective!("builtin.tensor.barrier", 0, barrier);
register_collective!("pld.tensor.broadcast", 0, broadcast);
register_collective!("builtin.tensor.broadcast", 0, broadcast);
register_collective!("pld.tensor.reduce_scatter", 0, reduce_scatter);
register_collective!("builtin.tensor.reduce_scatter", 0, reduce_scatter);
register_collective!("pld.tensor.allgather", 1, allgather);
register_collective!("builtin.tensor.allgather", 1, allgather);
register_collective!("pld.tensor.all_to_all", 1, all_to_all);
register_collective!("builtin.tensor.all_to_all", 1, all_to_all);
register_collective!("pld.tensor.all_to_all_v", 1, all_to_all_v);
register_collective!("builtin.tensor.all_to_all_v", 1, all_to_all_v);
