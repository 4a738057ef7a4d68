//! Core family: the non-distributed tile ops the programs need (load/store, create/full,
//! elementwise, reductions, tile views, casts, scalar read/write, matmul, fences); the
//! tensor-level ops are in [`super::tensor`].
//!
//! Guarantees: tiles hold their lanes in their dtype's bytes; element ops compute on lanes
//! decoded to `f64` and round to the tile dtype after every op; loads and stores move the
//! bytes as they are; loads fill lanes outside the valid region with zero; stores write exactly the
//! valid region.

use super::{Flow, OpCx};
use crate::elem;
use crate::report::Fault;
use crate::value::{Dims, Tile, Val};
use crate::{register_noop_semantics, register_owning_semantics, register_semantics};
use pld_ir::DataType;
use std::sync::Arc;

fn dims_usize(cx: &OpCx<'_>, v: &[i64]) -> Result<Vec<usize>, Fault> {
    v.iter().map(|&x| usize::try_from(x).map_err(|_| cx.err(format!("negative extent {x}")))).collect()
}

/// A tile's physical shape, its element count checked ([`crate::limits::tile_lanes`]).
fn tile_dims(cx: &OpCx<'_>, v: &[i64]) -> Result<Vec<usize>, Fault> {
    let dims = dims_usize(cx, v)?;
    crate::limits::tile_lanes(&dims, cx.world.tile_cap()).map_err(|m| cx.err(m))?;
    Ok(dims)
}

/// The region shape a tile's valid part covers when stored into a tensor of rank `rank`.
pub fn tile_region(t: &Tile, rank: usize) -> Dims {
    let (vr, vc) = match t.valid.len() {
        0 => (1, 1),
        1 => (1, t.valid[0]),
        n if n == rank => return t.valid.iter().map(|&x| x as i64).collect(),
        _ => Tile::rows_cols(&t.valid),
    };
    let mut r: Dims = smallvec::smallvec![1i64; rank.saturating_sub(2)];
    if rank >= 2 {
        r.push(vr as i64);
    }
    r.push(vc as i64);
    r
}

/// The valid lanes of a tile as raw dtype bytes, row-major.
pub fn valid_bytes(t: &Tile) -> std::borrow::Cow<'_, [u8]> {
    let eb = Tile::lane_bytes(t.dtype);
    let (pr, pc) = Tile::rows_cols(&t.shape);
    let (vr, vc) = Tile::rows_cols(&t.valid);
    if vc >= pc && vr >= pr {
        // Fully valid: the lanes are the tile's own, in order.
        return std::borrow::Cow::Borrowed(&t.data[..(pr * pc * eb).min(t.data.len())]);
    }
    let mut out = Vec::with_capacity(vr * vc * eb);
    for r in 0..vr {
        out.extend_from_slice(&t.data[r * pc * eb..(r * pc + vc.min(pc)) * eb]);
    }
    std::borrow::Cow::Owned(out)
}

/// A tile of physical `shape` whose valid region `valid` holds `bytes` (raw `dtype` elements,
/// row-major); lanes missing from `bytes` stay zero. A fully valid tile takes `bytes` as its
/// data.
pub fn tile_from(dtype: DataType, shape: Vec<usize>, valid: Vec<usize>, bytes: Vec<u8>) -> Tile {
    let eb = Tile::lane_bytes(dtype);
    let n: usize = shape.iter().product();
    if valid == shape && bytes.len() == n * eb {
        return Tile { dtype, shape, valid, data: bytes };
    }
    let mut t = Tile::zeros(dtype, shape);
    let (_, pc) = Tile::rows_cols(&t.shape);
    let (vr, vc) = Tile::rows_cols(&valid);
    for r in 0..vr {
        let (src, dst) = (r * vc * eb, r * pc * eb);
        let n = (vc.min(pc) * eb).min(bytes.len().saturating_sub(src)).min(t.data.len().saturating_sub(dst));
        if n == 0 {
            break;
        }
        t.data[dst..dst + n].copy_from_slice(&bytes[src..src + n]);
    }
    t.valid = valid;
    t
}

/// Checks a valid region fits its physical tile shape.
pub fn check_valid(cx: &OpCx<'_>, shape: &[i64], valid: &[i64]) -> Result<(), Fault> {
    if shape.len() != valid.len() || shape.iter().zip(valid).any(|(s, v)| *v < 0 || v > s) {
        return Err(cx.err(format!("valid shape {valid:?} does not fit the tile shape {shape:?}")));
    }
    Ok(())
}

fn tile_load(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let t = cx.tensor(args, 0)?.clone();
    let offs = cx.ints(args, 1)?;
    let shape = cx.ints(args, 2)?;
    let valid = if args.len() > 3 { cx.ints(args, 3)? } else { shape.clone() };
    check_valid(cx, &shape, &valid)?;
    let dims = tile_dims(cx, &shape)?;
    let mut bytes = Vec::new();
    cx.world.read_bytes_into(&cx.access(&t, None, &offs, &valid, "tile.load"), &mut bytes)?;
    let tile = tile_from(t.dtype, dims, dims_usize(cx, &valid)?, bytes);
    Ok(Flow::Val(Val::Tile(Arc::new(tile))))
}

/// Owning: the stored-to tensor is the call's value, so it is moved out of the arguments
/// rather than copied (a store in a loop copies no view per iteration).
fn tile_store(cx: &mut OpCx<'_>, args: &mut [Val]) -> Result<Flow, Fault> {
    let tile = Arc::clone(cx.tile(args, 0)?);
    let offs = cx.dims(args, 1)?;
    cx.tensor(args, 2)?;
    let Some(Val::Tensor(t)) = args.get_mut(2).map(|a| std::mem::replace(a, Val::Unit)) else {
        return Err(cx.err("argument 2 must be a tensor"));
    };
    let atomic = cx.attr_int("atomic").unwrap_or(0) == 1;
    let region = tile_region(&tile, t.shape.len());
    let bytes = valid_bytes(&tile);
    cx.world.write_bytes(&cx.access(&t, None, &offs, &region, "tile.store"), &bytes, tile.dtype, atomic)?;
    Ok(Flow::Val(Val::Tensor(t)))
}

pub(super) fn dtype_attr(cx: &OpCx<'_>) -> DataType {
    cx.call.attr("dtype").and_then(|a| a.as_dtype()).unwrap_or(DataType::FP32)
}

fn tile_create(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let shape = tile_dims(cx, &cx.ints(args, 0)?)?;
    Ok(Flow::Val(Val::Tile(Arc::new(Tile::zeros(dtype_attr(cx), shape)))))
}

fn tile_full(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let shape = tile_dims(cx, &cx.ints(args, 0)?)?;
    let v = cx.float(args, 1)?;
    let dt = dtype_attr(cx);
    let mut one = vec![0u8; Tile::lane_bytes(dt)];
    elem::encode(dt, v, &mut one);
    let lanes: usize = shape.iter().product();
    // `repeat` copies in doubling blocks: a 4 KiB tile is a dozen copies, not 1,024.
    let data = one.repeat(lanes);
    Ok(Flow::Val(Val::Tile(Arc::new(Tile { dtype: dt, valid: shape.clone(), shape, data }))))
}

/// The elementwise binary ops, chosen once per op call (not per lane).
#[derive(Clone, Copy)]
pub(super) enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
}

impl Bin {
    /// The op of `tile.add` / `tile.adds` / `tensor.add` …, by the last segment of its name.
    pub(super) fn of(name: &str) -> Bin {
        match name.rsplit('.').next().unwrap_or("") {
            "add" | "adds" => Bin::Add,
            "sub" | "subs" => Bin::Sub,
            "mul" | "muls" => Bin::Mul,
            "div" | "divs" => Bin::Div,
            "maximum" => Bin::Max,
            _ => Bin::Min,
        }
    }

    /// `x op y` for every lane `x` of `xs`, `y` the next of `ys` (NaN-propagating max/min).
    pub(super) fn zip(self, xs: &[f64], ys: impl Iterator<Item = f64>) -> Vec<f64> {
        fn each(xs: &[f64], ys: impl Iterator<Item = f64>, f: impl Fn(f64, f64) -> f64) -> Vec<f64> {
            xs.iter().zip(ys).map(|(&x, y)| f(x, y)).collect()
        }
        let nan = |a: f64, b: f64| a.is_nan() || b.is_nan();
        match self {
            Bin::Add => each(xs, ys, |a, b| a + b),
            Bin::Sub => each(xs, ys, |a, b| a - b),
            Bin::Mul => each(xs, ys, |a, b| a * b),
            Bin::Div => each(xs, ys, |a, b| a / b),
            Bin::Max => each(xs, ys, |a, b| if nan(a, b) { f64::NAN } else { a.max(b) }),
            Bin::Min => each(xs, ys, |a, b| if nan(a, b) { f64::NAN } else { a.min(b) }),
        }
    }

    /// `x op y` on `f32` lanes (NaN-propagating max/min).
    #[inline]
    fn f32(self, x: f32, y: f32) -> f32 {
        match self {
            Bin::Add => x + y,
            Bin::Sub => x - y,
            Bin::Mul => x * y,
            Bin::Div => x / y,
            Bin::Max if x.is_nan() || y.is_nan() => f32::NAN,
            Bin::Min if x.is_nan() || y.is_nan() => f32::NAN,
            Bin::Max => x.max(y),
            Bin::Min => x.min(y),
        }
    }

    /// Whether `a op y` computes in `f32` (see [`Bin::lanewise`]).
    fn fast(a: &Tile, b: Option<&Tile>, s: f64) -> bool {
        let f32_scalar = f64::from(s as f32) == s;
        a.dtype == DataType::FP32 && b.map_or(f32_scalar, |b| b.dtype == DataType::FP32)
    }

    /// `a op y` lane by lane into a tile of `a`'s shape, valid region and dtype, `y` the lanes
    /// of `b` or the scalar `s`. FP32 operands (a scalar exactly an `f32`) compute in `f32`:
    /// one `f32` operation rounds as the `f64` one rounded to `f32` does (53 ≥ 2·24 + 2), and
    /// max/min are exact, so the lanes are those of the `f64` path.
    fn lanewise(self, a: &Tile, b: Option<&Tile>, s: f64) -> Tile {
        if !Self::fast(a, b, s) {
            let ys = b.map(|b| b.lanes());
            let data = match &ys {
                Some(ys) => self.zip(&a.lanes(), ys.iter().copied()),
                None => self.zip(&a.lanes(), std::iter::repeat(s)),
            };
            return a.with_lanes(&data);
        }
        let (shape, valid) = (a.shape.clone(), a.valid.clone());
        let mut out = Tile { dtype: a.dtype, shape, valid, data: vec![0; a.data.len()] };
        let xs = a.data.chunks_exact(4);
        match b {
            Some(b) => {
                for ((o, x), y) in out.data.chunks_exact_mut(4).zip(xs).zip(b.data.chunks_exact(4)) {
                    o.copy_from_slice(&self.f32(lane(x), lane(y)).to_le_bytes());
                }
            }
            None => {
                let y = s as f32;
                for (o, x) in out.data.chunks_exact_mut(4).zip(xs) {
                    o.copy_from_slice(&self.f32(lane(x), y).to_le_bytes());
                }
            }
        }
        out
    }

    /// [`Bin::lanewise`] written over `a`'s own lanes (the same bytes, no second tile).
    fn into_left(self, a: &mut Tile, b: Option<&Tile>, s: f64) {
        if !Self::fast(a, b, s) {
            let data = match b {
                Some(b) => self.zip(&a.lanes(), b.lanes().into_iter()),
                None => self.zip(&a.lanes(), std::iter::repeat(s)),
            };
            crate::elem::encode_all(a.dtype, &data, &mut a.data);
            return;
        }
        match b {
            Some(b) => {
                for (x, y) in a.data.chunks_exact_mut(4).zip(b.data.chunks_exact(4)) {
                    let v = self.f32(lane(x), lane(y));
                    x.copy_from_slice(&v.to_le_bytes());
                }
            }
            None => {
                let y = s as f32;
                for x in a.data.chunks_exact_mut(4) {
                    let v = self.f32(lane(x), y);
                    x.copy_from_slice(&v.to_le_bytes());
                }
            }
        }
    }

    /// [`Bin::lanewise`] of `a` and `b` written over `b`'s own lanes, which takes `a`'s shape
    /// and valid region (`b` has `a`'s dtype and lane count).
    fn into_right(self, a: &Tile, b: &mut Tile) {
        if !Self::fast(a, Some(b), 0.0) {
            let data = self.zip(&a.lanes(), b.lanes().into_iter());
            crate::elem::encode_all(a.dtype, &data, &mut b.data);
        } else {
            for (x, y) in a.data.chunks_exact(4).zip(b.data.chunks_exact_mut(4)) {
                let v = self.f32(lane(x), lane(y));
                y.copy_from_slice(&v.to_le_bytes());
            }
        }
        b.shape.clone_from(&a.shape);
        b.valid.clone_from(&a.valid);
    }
}

/// An FP32 lane's value.
#[inline]
fn lane(b: &[u8]) -> f32 {
    f32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// Argument `i` as a tile held nowhere else (moved in at its last use), taken out of `args`.
fn owned(args: &mut [Val], i: usize) -> Option<Tile> {
    let slot = args.get_mut(i)?;
    let Val::Tile(t) = slot else { return None };
    if Arc::strong_count(t) != 1 {
        return None;
    }
    let Val::Tile(t) = std::mem::replace(slot, Val::Unit) else { return None };
    Arc::try_unwrap(t).ok()
}

/// `tile.add` and the other tile–tile ops: the result takes the storage of an operand moved in
/// at its last use when it can (the left one, or the right one of the same dtype and shape),
/// so a running sum needs no third tile.
fn tile_binary(cx: &mut OpCx<'_>, args: &mut [Val]) -> Result<Flow, Fault> {
    let (a, b) = (cx.tile(args, 0)?, cx.tile(args, 1)?);
    if a.len() != b.len() {
        return Err(cx.err(format!("tiles of shapes {:?} and {:?}", a.shape, b.shape)));
    }
    let op = Bin::of(cx.name());
    let right_fits = a.dtype == b.dtype && a.shape == b.shape;
    if let Some(mut a) = owned(args, 0) {
        op.into_left(&mut a, Some(cx.tile(args, 1)?), 0.0);
        return Ok(Flow::Val(Val::Tile(Arc::new(a))));
    }
    if let Some(mut b) = right_fits.then(|| owned(args, 1)).flatten() {
        op.into_right(cx.tile(args, 0)?, &mut b);
        return Ok(Flow::Val(Val::Tile(Arc::new(b))));
    }
    let (a, b) = (cx.tile(args, 0)?, cx.tile(args, 1)?);
    Ok(Flow::Val(Val::Tile(Arc::new(op.lanewise(a, Some(b), 0.0)))))
}

/// `tile.adds` and the other tile–scalar ops: the result takes the tile's storage when it
/// was moved in at its last use.
fn tile_scalar(cx: &mut OpCx<'_>, args: &mut [Val]) -> Result<Flow, Fault> {
    cx.tile(args, 0)?;
    let s = cx.float(args, 1)?;
    let op = Bin::of(cx.name());
    if let Some(mut a) = owned(args, 0) {
        op.into_left(&mut a, None, s);
        return Ok(Flow::Val(Val::Tile(Arc::new(a))));
    }
    Ok(Flow::Val(Val::Tile(Arc::new(op.lanewise(cx.tile(args, 0)?, None, s)))))
}

fn tile_cast(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let a = cx.tile(args, 0)?;
    let dt = dtype_attr(cx);
    crate::world::check_dtype(dt, cx.span, "tile.cast")?;
    let mut out = Tile::from_lanes(dt, a.shape.clone(), &a.lanes());
    out.valid = a.valid.clone();
    Ok(Flow::Val(Val::Tile(Arc::new(out))))
}

/// `scalar.cast(value, dtype=…)`: round to the target type; float → int rounds to nearest
/// (the only mode the op accepts is `"round"`), integers saturate to the target's range.
fn scalar_cast(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let v = cx.float(args, 0)?;
    let dt = dtype_attr(cx);
    let v = if dt.is_int() { v.round() } else { v };
    Ok(Flow::Val(scalar_of(dt, elem::round(dt, v))))
}

fn tile_identity(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    Ok(Flow::Val(Val::Tile(cx.tile(args, 0)?.clone())))
}

fn tile_fillpad(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let a = cx.tile(args, 0)?;
    let v = cx.float(args, 1)?;
    let mut out = (**a).clone();
    let (pr, pc) = Tile::rows_cols(&out.shape);
    let (vr, vc) = Tile::rows_cols(&out.valid);
    for r in 0..pr {
        for c in 0..pc {
            if r >= vr || c >= vc {
                out.set(r * pc + c, v);
            }
        }
    }
    out.valid = out.shape.clone();
    Ok(Flow::Val(Val::Tile(Arc::new(out))))
}

fn tile_set_validshape(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let a = cx.tile(args, 0)?;
    let r = cx.int(args, 1)?;
    let c = cx.int(args, 2)?;
    let mut out = (**a).clone();
    let (pr, pc) = Tile::rows_cols(&out.shape);
    if r < 0 || c < 0 || r as usize > pr || c as usize > pc {
        return Err(cx.err(format!("valid shape [{r}, {c}] exceeds the tile [{pr}, {pc}]")));
    }
    out.valid = if out.shape.len() >= 2 {
        let mut v = vec![1; out.shape.len() - 2];
        v.push(r as usize);
        v.push(c as usize);
        v
    } else {
        vec![c as usize]
    };
    Ok(Flow::Val(Val::Tile(Arc::new(out))))
}

fn tile_reduce(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let a = cx.tile(args, 0)?;
    let name = cx.name().to_string();
    let rows = name.contains("row_");
    let (pr, pc) = Tile::rows_cols(&a.shape);
    let (vr, vc) = Tile::rows_cols(&a.valid);
    let f = |acc: f64, x: f64| -> f64 {
        if name.ends_with("sum") {
            acc + x
        } else if name.ends_with("max") {
            acc.max(x)
        } else {
            acc.min(x)
        }
    };
    let init = if name.ends_with("sum") {
        0.0
    } else if name.ends_with("max") {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    let lanes = a.lanes();
    let (shape, valid, data) = if rows {
        let mut d = vec![0.0; pr];
        for (r, slot) in d.iter_mut().enumerate().take(vr) {
            *slot = (0..vc).fold(init, |acc, c| f(acc, lanes[r * pc + c]));
        }
        (vec![pr, 1], vec![vr, 1], d)
    } else {
        let mut d = vec![0.0; pc];
        for (c, slot) in d.iter_mut().enumerate().take(vc) {
            *slot = (0..vr).fold(init, |acc, r| f(acc, lanes[r * pc + c]));
        }
        (vec![1, pc], vec![1, vc], d)
    };
    let mut out = Tile::from_lanes(a.dtype, shape, &data);
    out.valid = valid;
    Ok(Flow::Val(Val::Tile(Arc::new(out))))
}

fn flat_index(cx: &OpCx<'_>, shape: &[usize], idx: &[i64]) -> Result<usize, Fault> {
    let mut e = 0usize;
    for (d, &i) in idx.iter().enumerate() {
        let n = shape.get(d).copied().unwrap_or(1);
        if i < 0 || i as usize >= n {
            return Err(cx.err(format!("index {i} out of range for dimension {d} of extent {n}")));
        }
        e = e * n + i as usize;
    }
    Ok(e)
}

pub(super) fn scalar_of(dt: DataType, v: f64) -> Val {
    if dt.is_float() {
        Val::Float(v)
    } else {
        Val::Int(v as i64)
    }
}

fn tile_read(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let a = cx.tile(args, 0)?;
    let idx = cx.ints(args, 1)?;
    let e = flat_index(cx, &a.shape, &idx)?;
    let v = a.get(e).ok_or_else(|| cx.err(format!("lane {e} past the tile's {} lanes", a.len())))?;
    Ok(Flow::Val(scalar_of(a.dtype, v)))
}

fn tile_write(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let a = cx.tile(args, 0)?;
    let idx = cx.ints(args, 1)?;
    let v = cx.float(args, 2)?;
    let e = flat_index(cx, &a.shape, &idx)?;
    let mut out = (**a).clone();
    out.set(e, v);
    Ok(Flow::Val(Val::Tile(Arc::new(out))))
}

fn tile_slice(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let a = cx.tile(args, 0)?.clone();
    let shape = tile_dims(cx, &cx.ints(args, 1)?)?;
    let offs = dims_usize(cx, &cx.ints(args, 2)?)?;
    let valid = if args.len() > 3 { dims_usize(cx, &cx.ints(args, 3)?)? } else { shape.clone() };
    if valid.len() != shape.len() || valid.iter().zip(&shape).any(|(v, s)| v > s) {
        return Err(cx.err(format!("valid shape {valid:?} does not fit the slice shape {shape:?}")));
    }
    let (pr, pc) = Tile::rows_cols(&a.shape);
    let (sr, sc) = Tile::rows_cols(&shape);
    let (or, oc) = match offs.len() {
        0 => (0, 0),
        1 => (0, offs[0]),
        n => (offs[n - 2], offs[n - 1]),
    };
    // A dynamic offset the deducer could not check: the valid part must lie inside the tile
    // (past its last column the copy below would read the next row's elements).
    let (vr, vc) = Tile::rows_cols(&valid);
    if or.checked_add(vr).is_none_or(|e| e > pr) || oc.checked_add(vc).is_none_or(|e| e > pc) {
        return Err(cx.err(format!(
            "the slice's valid [{vr}, {vc}] at offsets [{or}, {oc}] exceeds the source tile [{pr}, {pc}]"
        )));
    }
    let mut out = Tile::zeros(a.dtype, shape);
    let eb = Tile::lane_bytes(a.dtype);
    for r in 0..sr {
        // The lanes of row `r` that the source holds (a row past its end keeps zeros).
        let from = ((or + r) * pc + oc) * eb;
        let n = (sc * eb).min(a.data.len().saturating_sub(from));
        if let Some(src) = a.data.get(from..from + n) {
            out.data[r * sc * eb..r * sc * eb + n].copy_from_slice(src);
        }
    }
    out.valid = valid;
    Ok(Flow::Val(Val::Tile(Arc::new(out))))
}

fn tile_reshape(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let a = cx.tile(args, 0)?;
    let shape = tile_dims(cx, &cx.ints(args, 1)?)?;
    if shape.iter().product::<usize>() != a.len() {
        return Err(cx.err(format!("cannot reshape {:?} to {shape:?}", a.shape)));
    }
    let mut out = (**a).clone();
    out.valid = shape.clone();
    out.shape = shape;
    Ok(Flow::Val(Val::Tile(Arc::new(out))))
}

fn tile_matmul(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let a = cx.tile(args, 0)?;
    let b = cx.tile(args, 1)?;
    let (m, k) = Tile::rows_cols(&a.shape);
    let (k2, n) = Tile::rows_cols(&b.shape);
    if k != k2 {
        return Err(cx.err(format!("matmul of [{m}, {k}] and [{k2}, {n}]")));
    }
    let dt = cx.call.attr("out_dtype").and_then(|x| x.as_dtype()).unwrap_or(DataType::FP32);
    crate::limits::tile_lanes(&[m, n], cx.world.tile_cap()).map_err(|e| cx.err(e))?;
    let (la, lb) = (a.lanes(), b.lanes());
    let mut sums = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            sums[i * n + j] = (0..k).map(|p| la[i * k + p] * lb[p * n + j]).sum();
        }
    }
    let out = Tile::from_lanes(dt, vec![m, n], &sums);
    Ok(Flow::Val(Val::Tile(Arc::new(out))))
}

register_semantics!("tile.load", tile_load);
register_owning_semantics!("tile.store", tile_store);
register_semantics!("tile.create", tile_create);
register_semantics!("tile.full", tile_full);
register_owning_semantics!("tile.add", tile_binary);
register_owning_semantics!("tile.sub", tile_binary);
register_owning_semantics!("tile.mul", tile_binary);
register_owning_semantics!("tile.div", tile_binary);
register_owning_semantics!("tile.maximum", tile_binary);
register_owning_semantics!("tile.minimum", tile_binary);
register_owning_semantics!("tile.adds", tile_scalar);
register_owning_semantics!("tile.subs", tile_scalar);
register_owning_semantics!("tile.muls", tile_scalar);
register_owning_semantics!("tile.divs", tile_scalar);
register_semantics!("tile.cast", tile_cast);
register_semantics!("scalar.cast", scalar_cast);
register_semantics!("tile.move", tile_identity);
register_semantics!("tile.fillpad_inplace", tile_fillpad);
register_semantics!("tile.set_validshape", tile_set_validshape);
register_semantics!("tile.row_sum", tile_reduce);
register_semantics!("tile.row_max", tile_reduce);
register_semantics!("tile.row_min", tile_reduce);
register_semantics!("tile.col_sum", tile_reduce);
register_semantics!("tile.col_max", tile_reduce);
register_semantics!("tile.col_min", tile_reduce);
register_semantics!("tile.read", tile_read);
register_semantics!("tile.write", tile_write);
register_semantics!("tile.slice", tile_slice);
register_semantics!("tile.reshape", tile_reshape);
register_semantics!("tile.matmul", tile_matmul);
register_noop_semantics!("system.cacheinvalid");
#[cfg(test)]
mod tests {
    use super::*;

    fn bits(t: &Tile) -> Vec<u32> {
        t.data.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
    }

    fn f64_path(op: Bin, a: &Tile, b: Option<&Tile>, s: f64) -> Tile {
        let data = match b {
            Some(b) => op.zip(&a.lanes(), b.lanes().into_iter()),
            None => op.zip(&a.lanes(), std::iter::repeat(s)),
        };
        a.with_lanes(&data)
    }

    #[test]
    fn fp32_lanewise_ops_give_the_f64_paths_bytes() {
        let xs: Vec<f64> = [1.0 / 3.0, -7.25, 1e-40, 3.4e38, -0.0, f64::INFINITY, f64::NAN, 16777217.0, 0.1]
            .iter()
            .flat_map(|&x| [x, -x * 1.5, x / 3.0])
            .collect();
        let a = Tile::from_lanes(DataType::FP32, vec![3, 9], &xs);
        let ys: Vec<f64> = xs.iter().rev().map(|y| y * 0.7 + 1e-3).collect();
        let b = Tile::from_lanes(DataType::FP32, vec![3, 9], &ys);
        for op in [Bin::Add, Bin::Sub, Bin::Mul, Bin::Div, Bin::Max, Bin::Min] {
            assert_eq!(bits(&op.lanewise(&a, Some(&b), 0.0)), bits(&f64_path(op, &a, Some(&b), 0.0)));
            // An f32 scalar takes the f32 path, any other the f64 one: both as the f64 path.
            for s in [0.5, 1.0 / 3.0, -3.0e38, f64::NAN] {
                assert_eq!(bits(&op.lanewise(&a, None, s)), bits(&f64_path(op, &a, None, s)), "{s}");
            }
        }
    }

    #[test]
    fn an_op_over_an_operands_own_lanes_gives_the_fresh_tile() {
        let xs: Vec<f64> = (0..24).map(|k| k as f64 * 1.37 - 9.0).collect();
        for dt in [DataType::FP32, DataType::FP16, DataType::INT32] {
            let mut a = Tile::from_lanes(dt, vec![4, 6], &xs);
            a.valid = vec![3, 5];
            let b =
                Tile::from_lanes(dt, vec![4, 6], &xs.iter().rev().map(|y| y * 0.7 + 1.0).collect::<Vec<_>>());
            for op in [Bin::Add, Bin::Sub, Bin::Mul, Bin::Div, Bin::Max, Bin::Min] {
                let (mut left, mut right, mut scaled) = (a.clone(), b.clone(), a.clone());
                op.into_left(&mut left, Some(&b), 0.0);
                op.into_right(&a, &mut right);
                op.into_left(&mut scaled, None, 0.25);
                assert_eq!(left, op.lanewise(&a, Some(&b), 0.0), "{dt:?}");
                assert_eq!(right, op.lanewise(&a, Some(&b), 0.0), "{dt:?}");
                assert_eq!(scaled, op.lanewise(&a, None, 0.25), "{dt:?}");
            }
        }
    }
}
