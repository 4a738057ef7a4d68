//! Micro programs: the flat, resumable instruction lists that protocol ops (builtin and
//! unlowered collectives, chunked TPUT/TGET) expand into.
//!
//! Guarantees: every micro instruction goes through the same window access, signal and
//! race-checking paths as the IR ops, so traffic counts and credit/race checks apply to
//! builtins exactly as to hand-written kernels; a `Notify` runs the checks every notify runs
//! (`World::check_notify`), after a GM fence when the instruction asks for one (every protocol
//! builder's notify does, publishing the data it wrote before); a `Wait` whose predicate fails leaves the
//! program counter in place so the core parks and retries; a `Charge` only adds the modeled time and signal counts of tiles a coarse step took together. Registers hold raw elements of
//! their dtype (no widening); `LoadCombine` reduces a region straight into an accumulator and
//! a combine rounds each result once, from the exact operand values, exactly as reducing the
//! decoded `f64` lanes and rounding to the combine dtype would.

use crate::report::Fault;
use crate::value::TRef;
use crate::world::Park;
use crate::world::{Access, Data, Located, Notifier, Resolved, World};
use pld_ir::Span;
use pld_runtime_abi::{NotifyOp, ReduceOp};
use std::cell::OnceCell;
use std::sync::Arc;

/// A signal cell's index, held inline: the builtin protocols address cells of signals of at
/// most two dimensions (`[NR]`, `[NR, lanes]`, ring `[rows, NR]`, `[NR, 1]` counts), and a
/// generated protocol step has two such instructions per peer, so a heap vector each was most
/// of a large-P ring's allocations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellIdx {
    dims: [i64; 2],
    len: u8,
}

impl CellIdx {
    /// The index `[a]`.
    pub fn one(a: i64) -> CellIdx {
        CellIdx { dims: [a, 0], len: 1 }
    }

    /// The index `[a, b]`.
    pub fn two(a: i64, b: i64) -> CellIdx {
        CellIdx { dims: [a, b], len: 2 }
    }

    /// The index as a slice.
    pub fn as_slice(&self) -> &[i64] {
        &self.dims[..usize::from(self.len)]
    }
}

/// One micro instruction.
#[derive(Clone, Debug)]
pub enum Micro {
    /// TNOTIFY.
    Notify {
        /// Local view of the signal (shared by a protocol's instructions).
        sig: Arc<TRef>,
        /// Domain rank to notify.
        peer: i64,
        /// Cell index.
        idx: CellIdx,
        /// Value.
        value: i32,
        /// Set or AtomicAdd.
        op: NotifyOp,
        /// Fence the rank's earlier window writes first (a protocol's notify publishes the
        /// data it wrote before; without it, the notify is checked as an unfenced one).
        fence: bool,
        /// The op name its faults are reported under.
        name: &'static str,
        /// The cell, resolved at the first execution (a rank's instruction always addresses
        /// the same cell; generated segments patch only other fields).
        at: OnceCell<Resolved>,
    },
    /// TWAIT (signed).
    Wait {
        /// Local view of the signal (shared by a protocol's instructions).
        sig: Arc<TRef>,
        /// Cell index.
        idx: CellIdx,
        /// Expected value.
        expected: i32,
        /// Ge (true) or Eq.
        ge: bool,
        /// The op name its faults are reported under.
        name: &'static str,
        /// The cell, resolved at the first execution (see `Notify::at`).
        at: OnceCell<Resolved>,
    },
    /// Load a region (of the peer's copy when `peer` is set) into register `reg`.
    Load {
        /// Register.
        reg: usize,
        /// Local view.
        src: TRef,
        /// Peer, or local.
        peer: Option<i64>,
        /// Region offsets.
        offs: Vec<i64>,
        /// Region shape.
        shape: Vec<i64>,
        /// Op kind for accounting.
        op: &'static str,
        /// The view as this rank addresses it, located at the first execution (see
        /// `World::access_at`).
        at: OnceCell<Located>,
    },
    /// Store register `reg` into a region (accumulate when `atomic`).
    Store {
        /// Register.
        reg: usize,
        /// Local view.
        dst: TRef,
        /// Peer, or local.
        peer: Option<i64>,
        /// Region offsets.
        offs: Vec<i64>,
        /// Region shape.
        shape: Vec<i64>,
        /// Atomic add.
        atomic: bool,
        /// Op kind for accounting.
        op: &'static str,
        /// The view as this rank addresses it, located at the first execution (see
        /// `World::access_at`).
        at: OnceCell<Located>,
    },
    /// `reg[acc] = reduce(reg[acc], region)`, rounded to `dtype`: a load of the region (of
    /// the peer's copy when `peer` is set) combined straight into the accumulator, as
    /// `Load` into a scratch register then `Combine` would, without holding the region twice.
    LoadCombine {
        /// Accumulator register (holds the same element count as the region).
        acc: usize,
        /// Local view.
        src: TRef,
        /// Peer, or local.
        peer: Option<i64>,
        /// Region offsets.
        offs: Vec<i64>,
        /// Region shape.
        shape: Vec<i64>,
        /// Reduce op.
        rop: ReduceOp,
        /// Rounding type.
        dtype: pld_ir::DataType,
        /// Op kind for accounting.
        op: &'static str,
        /// The view as this rank addresses it, located at the first execution (see
        /// `World::access_at`).
        at: OnceCell<Located>,
    },
    /// `reg[acc] = reduce(reg[acc], reg[other])`, rounded to `dtype`.
    Combine {
        /// Accumulator register.
        acc: usize,
        /// Other register.
        other: usize,
        /// Reduce op.
        op: ReduceOp,
        /// Rounding type.
        dtype: pld_ir::DataType,
    },
    /// Charges modeled time for kernel work a protocol step stands for without running it
    /// one by one (the messages, notifies and barrier latencies of the tiles a coarse step
    /// takes together, [`crate::SimConfig::protocol_grain`]); moves no data, changes no cell.
    Charge {
        /// Tiles beyond the one the step's instructions stand for.
        tiles: u64,
        /// The kernel's work per tile.
        per: crate::world::TileWork,
    },
    /// Instructions generated when the run reaches them, one segment at a time (a long
    /// chunked protocol never exists in full): runs exactly as the concatenation of
    /// segments `0, 1, …, count - 1` in its place would.
    Lazy(Lazy),
}

/// Makes the vector it is given hold segment `i` of a [`Lazy`] run. The vector is empty or
/// holds an earlier segment of the same run, which the generator may patch in place instead
/// of building anew.
pub type SegmentFn = dyn Fn(usize, &mut Vec<Micro>) + Send + Sync;

/// A lazily generated run of micro instructions (see [`Micro::Lazy`]).
#[derive(Clone)]
pub struct Lazy {
    /// Number of segments.
    pub count: usize,
    /// Segment generator (see [`SegmentFn`]).
    pub gen: Arc<SegmentFn>,
}

impl std::fmt::Debug for Lazy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lazy({} segments)", self.count)
    }
}

/// The cell in `at`, resolved by `resolve` and kept there on first use.
fn cached(
    at: &OnceCell<Resolved>,
    resolve: impl FnOnce() -> Result<Resolved, Fault>,
) -> Result<Resolved, Fault> {
    if let Some(&r) = at.get() {
        return Ok(r);
    }
    let r = resolve()?;
    let _ = at.set(r);
    Ok(r)
}

/// A register: raw little-endian elements of `dtype` (no widening to `f64`).
#[derive(Clone, Debug)]
pub struct Reg {
    /// Element type of `bytes`.
    pub dtype: pld_ir::DataType,
    /// The elements.
    pub bytes: Vec<u8>,
}

impl Default for Reg {
    fn default() -> Reg {
        Reg { dtype: pld_ir::DataType::FP32, bytes: Vec::new() }
    }
}

impl Reg {
    fn len(&self) -> usize {
        self.bytes.len() / self.dtype.bytes().max(1) as usize
    }
}

/// A running micro program.
#[derive(Clone, Debug)]
pub struct MicroRun {
    /// Instructions.
    pub prog: Vec<Micro>,
    /// Next instruction.
    pub pc: usize,
    /// Registers.
    pub regs: Vec<Reg>,
    /// Span of the op that expanded into it.
    pub span: Span,
    /// The segment of the [`Micro::Lazy`] at `pc` being run, and its next instruction.
    seg: Vec<Micro>,
    seg_pc: usize,
    /// The [`Micro::Lazy`] at `pc` being expanded, and its next segment.
    lazy: Option<(Lazy, usize)>,
}

/// The outcome of one micro step.
pub enum MicroStep {
    /// Ran an instruction.
    Ran,
    /// Blocked in a wait.
    Park(Park),
    /// Finished.
    Done,
}

impl MicroRun {
    /// A program ready to run.
    pub fn new(mut prog: Vec<Micro>, span: Span) -> MicroRun {
        // Every rank holds its program for the whole call: no growth slack.
        prog.shrink_to_fit();
        let mut run =
            MicroRun { prog, pc: 0, regs: Vec::new(), span, seg: Vec::new(), seg_pc: 0, lazy: None };
        run.settle();
        run
    }

    /// Moves to the next real instruction: into, through and past lazy segments.
    fn settle(&mut self) {
        loop {
            if self.seg_pc < self.seg.len() {
                return;
            }
            if let Some((lz, next)) = &mut self.lazy {
                if *next < lz.count {
                    (lz.gen)(*next, &mut self.seg);
                    self.seg.shrink_to_fit();
                    *next += 1;
                    self.seg_pc = 0;
                } else {
                    self.lazy = None;
                    self.seg = Vec::new();
                    self.seg_pc = 0;
                    self.pc += 1;
                }
                continue;
            }
            match self.prog.get(self.pc) {
                Some(Micro::Lazy(lz)) => self.lazy = Some((lz.clone(), 0)),
                _ => return,
            }
        }
    }

    /// Executes the next instruction on global rank `g`, in kernel (lane) `who` of mixed-kernel
    /// `group` (if it is one).
    pub fn step(
        &mut self,
        world: &mut World,
        g: usize,
        who: &str,
        group: Option<&str>,
    ) -> Result<MicroStep, Fault> {
        let MicroRun { prog, pc, regs, span, seg, seg_pc, .. } = self;
        let in_seg = *seg_pc < seg.len();
        let ins = if in_seg {
            &seg[*seg_pc]
        } else {
            match prog.get(*pc) {
                Some(i) => i,
                None => return Ok(MicroStep::Done),
            }
        };
        let span = *span;
        let need = match ins {
            Micro::Load { reg, .. } | Micro::Store { reg, .. } => reg + 1,
            Micro::LoadCombine { acc, .. } => acc + 1,
            Micro::Combine { acc, other, .. } => acc.max(other) + 1,
            _ => 0,
        };
        if regs.len() < need {
            regs.resize(need, Reg::default());
        }
        match ins {
            Micro::Notify { sig, peer, idx, value, op, fence, name, at } => {
                if *fence {
                    world.fence(g);
                }
                // The checks every notify runs, before its cell is resolved (as the op's).
                let checked = world.check_notify(Notifier { g, who, group, span, op: name })?;
                let r = cached(at, || world.cell_addr(g, sig, Some(*peer), idx.as_slice(), span, name))?;
                world.notify_cell(checked, r, *value, *op)?;
            }
            Micro::Wait { sig, idx, expected, ge, name, at } => {
                let r = cached(at, || world.cell_addr(g, sig, None, idx.as_slice(), span, name))?;
                if let Some(p) = world.wait_cell(g, r, *expected, *ge, span, who)? {
                    return Ok(MicroStep::Park(p));
                }
            }
            Micro::Load { reg, src, peer, offs, shape, op, at } => {
                let a = Access { g, view: src, peer: *peer, offs, shape, span, op, who };
                let r = &mut regs[*reg];
                r.dtype = src.dtype;
                r.bytes.clear();
                world.access_at(at, &a, Data::ReadBytes(&mut r.bytes))?;
            }
            Micro::LoadCombine { acc, src, peer, offs, shape, rop, dtype, op, at } => {
                let a = Access { g, view: src, peer: *peer, offs, shape, span, op, who };
                let r = &mut regs[*acc];
                let n: i64 = shape.iter().map(|&d| d.max(0)).product();
                if r.len() as i64 != n {
                    return Err(Fault::runtime(span, format!("{who}: reduce of {} and {n} lanes", r.len())));
                }
                if r.dtype == *dtype {
                    world.access_at(
                        at,
                        &a,
                        Data::ReadReduce { acc: &mut r.bytes, acc_dt: *dtype, rop: *rop },
                    )?;
                } else {
                    let mut tmp = Vec::new();
                    world.access_at(at, &a, Data::ReadBytes(&mut tmp))?;
                    combine_into(r, *dtype, src.dtype, &tmp, *rop);
                }
            }
            Micro::Store { reg, dst, peer, offs, shape, atomic, op, at } => {
                let a = Access { g, view: dst, peer: *peer, offs, shape, span, op, who };
                let r = &regs[*reg];
                let data = match (*atomic, r.dtype == dst.dtype) {
                    (true, _) => Data::AtomicBytes(&r.bytes, r.dtype),
                    (false, true) => Data::WriteBytes(&r.bytes),
                    // A converting store: element by element, as `World::write_bytes` does.
                    (false, false) => {
                        world.write_bytes(&a, &r.bytes, r.dtype, false)?;
                        return self.advance(in_seg);
                    }
                };
                world.access_at(at, &a, data)?;
            }
            // `settle` has expanded it; nothing to run at its own position.
            Micro::Lazy(_) => {}
            Micro::Charge { tiles, per } => world.charge_tiles(g, *tiles, per),
            Micro::Combine { acc, other, op, dtype } => {
                if acc == other {
                    let a = &mut regs[*acc];
                    let (copy, cdt) = (a.bytes.clone(), a.dtype);
                    combine_into(a, *dtype, cdt, &copy, *op);
                } else {
                    let (a, o) = if acc < other {
                        let (x, y) = regs.split_at_mut(*other);
                        (&mut x[*acc], &y[0])
                    } else {
                        let (x, y) = regs.split_at_mut(*acc);
                        (&mut y[0], &x[*other])
                    };
                    if a.len() != o.len() {
                        return Err(Fault::runtime(
                            span,
                            format!("{who}: reduce of {} and {} lanes", a.len(), o.len()),
                        ));
                    }
                    combine_into(a, *dtype, o.dtype, &o.bytes, *op);
                }
            }
        }
        self.advance(in_seg)
    }

    /// Moves past the instruction just run (in the current segment or the program).
    fn advance(&mut self, in_seg: bool) -> Result<MicroStep, Fault> {
        if in_seg {
            self.seg_pc += 1;
        } else {
            self.pc += 1;
        }
        self.settle();
        let more = self.seg_pc < self.seg.len() || self.pc < self.prog.len();
        Ok(if more { MicroStep::Ran } else { MicroStep::Done })
    }
}

/// `a[i] = round(dtype, reduce(op, a[i], src[i]))` with `src` raw elements of `src_dt`;
/// the register holds `dtype` elements afterwards (each result rounded once, from the exact
/// values of both operands).
fn combine_into(a: &mut Reg, dtype: pld_ir::DataType, src_dt: pld_ir::DataType, src: &[u8], op: ReduceOp) {
    if a.dtype == dtype {
        crate::world::reduce_bytes(dtype, &mut a.bytes, src_dt, src, op);
        return;
    }
    let (ae, se, de) =
        (a.dtype.bytes().max(1) as usize, src_dt.bytes().max(1) as usize, dtype.bytes().max(1) as usize);
    let mut out = vec![0u8; a.len() * de];
    for ((x, y), d) in a.bytes.chunks_exact(ae).zip(src.chunks_exact(se)).zip(out.chunks_exact_mut(de)) {
        let v = crate::elem::reduce(op, crate::elem::decode(a.dtype, x), crate::elem::decode(src_dt, y));
        crate::elem::encode(dtype, v, d);
    }
    a.bytes = out;
    a.dtype = dtype;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Mem;
    use pld_ir::DataType;

    /// A 1-rank world with an 8-element FP32 buffer holding 0..8 and its view.
    fn world1() -> (World, TRef) {
        let vals: Vec<f64> = (0..8).map(f64::from).collect();
        world_of(DataType::FP32, 1, &vals)
    }

    /// Segment `i`: element `i` += element `i + 4`.
    fn segment(v: &TRef, i: usize, out: &mut Vec<Micro>) {
        let i = i as i64;
        let ld = |reg, off| Micro::Load {
            at: Default::default(),
            reg,
            src: v.clone(),
            peer: None,
            offs: vec![0, off],
            shape: vec![1, 1],
            op: "t",
        };
        out.push(ld(0, i));
        out.push(ld(1, i + 4));
        out.push(Micro::Combine { acc: 0, other: 1, op: ReduceOp::Sum, dtype: DataType::FP32 });
        out.push(Micro::Store {
            at: Default::default(),
            reg: 0,
            dst: v.clone(),
            peer: None,
            offs: vec![0, i],
            shape: vec![1, 1],
            atomic: false,
            op: "t",
        });
    }

    fn run(prog: Vec<Micro>, w: &mut World) -> Vec<bool> {
        let mut r = MicroRun::new(prog, Span::DUMMY);
        let mut ran = Vec::new();
        loop {
            match r.step(w, 0, "t", None).expect("step") {
                MicroStep::Ran => ran.push(true),
                MicroStep::Done => return ran,
                MicroStep::Park(_) => panic!("no waits here"),
            }
        }
    }

    /// A load of `v` at `offs`/`shape` into register 0.
    fn load(v: &TRef, offs: [i64; 2], shape: [i64; 2]) -> Micro {
        Micro::Load {
            reg: 0,
            src: v.clone(),
            peer: None,
            offs: offs.to_vec(),
            shape: shape.to_vec(),
            op: "t",
            at: Default::default(),
        }
    }

    #[test]
    fn a_located_access_reads_and_faults_as_the_full_path() {
        let vals: Vec<f64> = (0..16).map(f64::from).collect();
        let (mut w, v) = world_of(DataType::FP32, 2, &vals);
        // One run, a strided 2x3 block (not one run: full path), and one past the view.
        for (offs, shape) in [([1, 2], [1, 5]), ([0, 1], [2, 3]), ([1, 4], [1, 5])] {
            let mut full = Vec::new();
            let want = w.read_bytes_into(&Access::of(0, &v, None, &offs, &shape, "t"), &mut full);
            let mut r = MicroRun::new(vec![load(&v, [0, 0], [1, 1])], Span::DUMMY);
            // The first execution locates the view; the patched region then uses the cache.
            assert!(matches!(r.step(&mut w, 0, "t", None), Ok(MicroStep::Done)));
            if let Micro::Load { offs: o, shape: s, .. } = &mut r.prog[0] {
                (*o, *s) = (offs.to_vec(), shape.to_vec());
            }
            r.pc = 0;
            let got = r.step(&mut w, 0, "t", None).map(|_| r.regs[0].bytes.clone());
            match (want, got) {
                (Ok(()), Ok(bytes)) => assert_eq!(bytes, full, "{offs:?} {shape:?}"),
                (Err(a), Err(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}")),
                (a, b) => panic!("{offs:?} {shape:?}: full path {a:?}, located {:?}", b.map(|_| ())),
            }
        }
    }

    #[test]
    fn lazy_segments_run_as_their_concatenation() {
        let (mut wf, v) = world1();
        let mut flat = Vec::new();
        for i in 0..4 {
            segment(&v, i, &mut flat);
        }
        let flat_steps = run(flat, &mut wf);
        let (mut wl, v2) = world1();
        let vv = v2.clone();
        let lazy = vec![
            Micro::Lazy(Lazy { count: 0, gen: Arc::new(|_, _| {}) }),
            Micro::Lazy(Lazy {
                count: 4,
                gen: Arc::new(move |i, out| {
                    out.clear();
                    segment(&vv, i, out)
                }),
            }),
            Micro::Lazy(Lazy { count: 0, gen: Arc::new(|_, _| {}) }),
        ];
        let lazy_steps = run(lazy, &mut wl);
        assert_eq!(flat_steps.len(), 15, "16 instructions: 15 Ran then Done");
        assert_eq!(lazy_steps, flat_steps);
        let read =
            |w: &mut World, v: &TRef| w.read(&Access::of(0, v, None, &[0, 0], &[1, 8], "t")).expect("read");
        let got = read(&mut wl, &v2);
        assert_eq!(got, read(&mut wf, &v));
        assert_eq!(got, vec![4.0, 6.0, 8.0, 10.0, 4.0, 5.0, 6.0, 7.0]);
    }

    /// A 1-rank world with a `[rows, 8]` buffer of `dt` holding `vals` and its view.
    fn world_of(dt: DataType, rows: i64, vals: &[f64]) -> (World, TRef) {
        let mut w = World::new(1);
        let d = w.add_domain(vec![0]);
        let a = w.alloc(d, "buf", rows as u64 * 8 * dt.bytes());
        w.finalize().expect("finalize");
        let v = TRef {
            mem: Mem::Window { domain: d, alloc: a },
            owner: 0,
            base: 0,
            shape: vec![rows, 8].into(),
            strides: vec![8, 1].into(),
            dtype: dt,
        };
        w.write(&Access::of(0, &v, None, &[0, 0], &[rows, 8], "init"), vals, false).expect("init");
        (w, v)
    }

    /// Row 0 = reduce(row 0, row 1) through `combine` (two loads, or one load and a fused
    /// load-combine), stored back; returns row 0 as read afterwards.
    fn reduce_rows(dt: DataType, vals: &[f64], op: ReduceOp, fused: bool) -> Vec<f64> {
        let (mut w, v) = world_of(dt, 2, vals);
        let ld = |reg, row| Micro::Load {
            at: Default::default(),
            reg,
            src: v.clone(),
            peer: None,
            offs: vec![row, 0],
            shape: vec![1, 8],
            op: "t",
        };
        let mut prog = vec![ld(0, 0)];
        if fused {
            prog.push(Micro::LoadCombine {
                at: Default::default(),
                acc: 0,
                src: v.clone(),
                peer: None,
                offs: vec![1, 0],
                shape: vec![1, 8],
                rop: op,
                dtype: dt,
                op: "t",
            });
        } else {
            prog.push(ld(1, 1));
            prog.push(Micro::Combine { acc: 0, other: 1, op, dtype: dt });
        }
        prog.push(Micro::Store {
            at: Default::default(),
            reg: 0,
            dst: v.clone(),
            peer: None,
            offs: vec![0, 0],
            shape: vec![1, 8],
            atomic: false,
            op: "t",
        });
        run(prog, &mut w);
        w.read(&Access::of(0, &v, None, &[0, 0], &[1, 8], "t")).expect("read")
    }

    #[test]
    fn raw_registers_reduce_as_rounded_f64_lanes() {
        // Values that round differently in FP16/FP32, a NaN and signed zeros.
        let a = [1.0 / 3.0, 65504.0, -0.0, 1e-3, 2049.0, f64::NAN, 7.25, -1e30];
        let b = [2.0 / 3.0, 16.0, 0.0, 3e-3, 1.0, 1.0, -7.25, 1e30];
        let vals: Vec<f64> = a.iter().chain(&b).copied().collect();
        for dt in [DataType::FP32, DataType::FP16, DataType::BF16, DataType::INT32] {
            for op in [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod] {
                // The reference: the decoded lanes reduced in f64 and rounded once to `dt`.
                let want: Vec<f64> = a
                    .iter()
                    .zip(&b)
                    .map(|(&x, &y)| {
                        let (x, y) = (crate::elem::round(dt, x), crate::elem::round(dt, y));
                        crate::elem::round(dt, crate::elem::reduce(op, x, y))
                    })
                    .collect();
                for fused in [false, true] {
                    let got = reduce_rows(dt, &vals, op, fused);
                    let same = got
                        .iter()
                        .zip(&want)
                        .all(|(g, w)| g.to_bits() == w.to_bits() || g.is_nan() && w.is_nan());
                    assert!(same, "{dt} {op:?} fused={fused}: {got:?} != {want:?}");
                }
            }
        }
    }
}
