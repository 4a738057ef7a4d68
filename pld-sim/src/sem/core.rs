//! Core family: the non-distributed tile and tensor ops the programs need (load/store,
//! create/full, elementwise, reductions, views, casts, scalar read/write, matmul, fences).
//!
//! Guarantees: tiles operate on whole lanes (`Vec<f64>`) rounded to the tile dtype after
//! every op; loads fill lanes outside the valid region with zero; stores write exactly the
//! valid region; tensor views (slice/reshape/view) are zero-copy strided views, and a reshape
//! of a view that is not contiguous is a runtime report, not a silent copy.

use super::{Flow, OpCx};
use crate::elem;
use crate::register_semantics;
use crate::report::Fault;
use crate::value::{Mem, TRef, Tile, Val};
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
pub fn tile_region(t: &Tile, rank: usize) -> Vec<i64> {
    let (vr, vc) = match t.valid.len() {
        0 => (1, 1),
        1 => (1, t.valid[0]),
        n if n == rank => return t.valid.iter().map(|&x| x as i64).collect(),
        _ => Tile::rows_cols(&t.valid),
    };
    let mut r = vec![1i64; rank.saturating_sub(2)];
    if rank >= 2 {
        r.push(vr as i64);
    }
    r.push(vc as i64);
    r
}

/// The valid lanes of a tile, row-major.
pub fn valid_lanes(t: &Tile) -> std::borrow::Cow<'_, [f64]> {
    let (pr, pc) = Tile::rows_cols(&t.shape);
    let (vr, vc) = Tile::rows_cols(&t.valid);
    if vc >= pc && vr >= pr {
        // Fully valid: the lanes are the tile's own, in order.
        return std::borrow::Cow::Borrowed(&t.data[..(pr * pc).min(t.data.len())]);
    }
    let mut out = Vec::with_capacity(vr * vc);
    for r in 0..vr {
        out.extend_from_slice(&t.data[r * pc..r * pc + vc.min(pc)]);
    }
    std::borrow::Cow::Owned(out)
}

/// A tile of physical `shape` whose valid region `valid` holds `lanes` (row-major), rounded to
/// `dtype`; lanes missing from `lanes` stay zero. A fully valid tile takes `lanes` as its data.
pub fn tile_from(dtype: DataType, shape: Vec<usize>, valid: Vec<usize>, mut lanes: Vec<f64>) -> Tile {
    let n: usize = shape.iter().product();
    if valid == shape && lanes.len() == n {
        elem::round_all(dtype, &mut lanes);
        return Tile { dtype, shape, valid, data: lanes };
    }
    let mut t = Tile::zeros(dtype, shape);
    let (_, pc) = Tile::rows_cols(&t.shape);
    let (vr, vc) = Tile::rows_cols(&valid);
    for r in 0..vr {
        let (src, dst) = (r * vc, r * pc);
        let n = vc.min(pc).min(lanes.len().saturating_sub(src)).min(t.data.len().saturating_sub(dst));
        if n == 0 {
            break;
        }
        let row = &mut t.data[dst..dst + n];
        row.copy_from_slice(&lanes[src..src + n]);
        elem::round_all(dtype, row);
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
    let lanes = cx.world.read(&cx.access(&t, None, &offs, &valid, "tile.load"))?;
    let tile = tile_from(t.dtype, dims, dims_usize(cx, &valid)?, lanes);
    Ok(Flow::Val(Val::Tile(Arc::new(tile))))
}

fn tile_store(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let tile = cx.tile(args, 0)?.clone();
    let offs = cx.ints(args, 1)?;
    let t = cx.tensor(args, 2)?.clone();
    let atomic = cx.attr_int("atomic").unwrap_or(0) == 1;
    let region = tile_region(&tile, t.shape.len());
    let lanes = valid_lanes(&tile);
    cx.world.write(&cx.access(&t, None, &offs, &region, "tile.store"), &lanes, atomic)?;
    Ok(Flow::Val(Val::Tensor(t)))
}

fn dtype_attr(cx: &OpCx<'_>) -> DataType {
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
    let mut t = Tile::zeros(dt, shape);
    t.data.fill(elem::round(dt, v));
    Ok(Flow::Val(Val::Tile(Arc::new(t))))
}

/// The elementwise binary ops, chosen once per op call (not per lane).
#[derive(Clone, Copy)]
enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
}

impl Bin {
    /// The op of `tile.add` / `tile.adds` / `tensor.add` …, by the last segment of its name.
    fn of(name: &str) -> Bin {
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
    fn zip(self, xs: &[f64], ys: impl Iterator<Item = f64>) -> Vec<f64> {
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
}

/// `a`'s shape and valid region holding `data` rounded to `a`'s dtype.
fn tile_like(a: &Tile, mut data: Vec<f64>) -> Tile {
    elem::round_all(a.dtype, &mut data);
    Tile { dtype: a.dtype, shape: a.shape.clone(), valid: a.valid.clone(), data }
}

fn tile_binary(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let a = cx.tile(args, 0)?;
    let b = cx.tile(args, 1)?;
    if a.data.len() != b.data.len() {
        return Err(cx.err(format!("tiles of shapes {:?} and {:?}", a.shape, b.shape)));
    }
    let data = Bin::of(cx.name()).zip(&a.data, b.data.iter().copied());
    Ok(Flow::Val(Val::Tile(Arc::new(tile_like(a, data)))))
}

fn tile_scalar(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let a = cx.tile(args, 0)?;
    let s = cx.float(args, 1)?;
    let data = Bin::of(cx.name()).zip(&a.data, std::iter::repeat(s));
    Ok(Flow::Val(Val::Tile(Arc::new(tile_like(a, data)))))
}

fn tile_cast(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let a = cx.tile(args, 0)?;
    let dt = dtype_attr(cx);
    crate::world::check_dtype(dt, cx.span, "tile.cast")?;
    let mut out = (**a).clone();
    out.dtype = dt;
    elem::round_all(dt, &mut out.data);
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
                out.data[r * pc + c] = elem::round(out.dtype, v);
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
    let (shape, valid, data) = if rows {
        let mut d = vec![0.0; pr];
        for (r, slot) in d.iter_mut().enumerate().take(vr) {
            *slot = elem::round(a.dtype, (0..vc).fold(init, |acc, c| f(acc, a.data[r * pc + c])));
        }
        (vec![pr, 1], vec![vr, 1], d)
    } else {
        let mut d = vec![0.0; pc];
        for (c, slot) in d.iter_mut().enumerate().take(vc) {
            *slot = elem::round(a.dtype, (0..vr).fold(init, |acc, r| f(acc, a.data[r * pc + c])));
        }
        (vec![1, pc], vec![1, vc], d)
    };
    Ok(Flow::Val(Val::Tile(Arc::new(Tile { dtype: a.dtype, shape, valid, data }))))
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

fn scalar_of(dt: DataType, v: f64) -> Val {
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
    Ok(Flow::Val(scalar_of(a.dtype, a.data[e])))
}

fn tile_write(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let a = cx.tile(args, 0)?;
    let idx = cx.ints(args, 1)?;
    let v = cx.float(args, 2)?;
    let e = flat_index(cx, &a.shape, &idx)?;
    let mut out = (**a).clone();
    out.data[e] = elem::round(out.dtype, v);
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
    for r in 0..sr {
        for c in 0..sc {
            if let Some(v) = a.data.get((or + r) * pc + oc + c) {
                out.data[r * sc + c] = *v;
            }
        }
    }
    out.valid = valid;
    Ok(Flow::Val(Val::Tile(Arc::new(out))))
}

fn tile_reshape(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let a = cx.tile(args, 0)?;
    let shape = tile_dims(cx, &cx.ints(args, 1)?)?;
    if shape.iter().product::<usize>() != a.data.len() {
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
    let mut out = Tile::zeros(dt, vec![m, n]);
    for i in 0..m {
        for j in 0..n {
            let s: f64 = (0..k).map(|p| a.data[i * k + p] * b.data[p * n + j]).sum();
            out.data[i * n + j] = elem::round(dt, s);
        }
    }
    Ok(Flow::Val(Val::Tile(Arc::new(out))))
}

fn noop(_cx: &mut OpCx<'_>, _args: &[Val]) -> Result<Flow, Fault> {
    Ok(Flow::Val(Val::Unit))
}

// ---- tensor level -------------------------------------------------------------------------

fn tensor_create(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let shape = cx.ints(args, 0)?;
    let dt = dtype_attr(cx);
    crate::world::check_dtype(dt, cx.span, "tensor.create")?;
    Ok(Flow::Val(Val::Tensor(new_tensor(cx, dt, shape)?)))
}

fn new_tensor(cx: &mut OpCx<'_>, dt: DataType, shape: Vec<i64>) -> Result<TRef, Fault> {
    let bytes = crate::limits::byte_size(dt, &shape).map_err(|m| cx.err(m))?;
    cx.world.reserve_host(bytes, "a tensor created by the program").map_err(|f| f.at(cx.span))?;
    let buf = cx.world.host_buffer(vec![0u8; bytes as usize]);
    Ok(TRef {
        mem: Mem::Host(buf),
        owner: 0,
        base: 0,
        strides: TRef::packed_strides(&shape),
        shape,
        dtype: dt,
    })
}

fn tensor_read(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let t = cx.tensor(args, 0)?.clone();
    let idx = cx.ints(args, 1)?;
    let ones = vec![1i64; idx.len()];
    let v = cx.world.read(&cx.access(&t, None, &idx, &ones, "tensor.read"))?;
    Ok(Flow::Val(scalar_of(t.dtype, v.first().copied().unwrap_or(0.0))))
}

fn tensor_write(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let t = cx.tensor(args, 0)?.clone();
    let idx = cx.ints(args, 1)?;
    let v = cx.float(args, 2)?;
    let ones = vec![1i64; idx.len()];
    cx.world.write(&cx.access(&t, None, &idx, &ones, "tensor.write"), &[v], false)?;
    Ok(Flow::Val(Val::Tensor(t)))
}

fn tensor_slice(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let t = cx.tensor(args, 0)?.clone();
    let shape = cx.ints(args, 1)?;
    let offs = cx.ints(args, 2)?;
    if shape.len() != t.shape.len() || offs.len() != t.shape.len() {
        return Err(cx.err("slice rank does not match the tensor rank"));
    }
    for d in 0..shape.len() {
        if offs[d] < 0 || shape[d] < 0 || offs[d] + shape[d] > t.shape[d] {
            return Err(Fault::new(
                crate::report::ReportKind::OutOfBounds,
                cx.span,
                format!(
                    "tensor.slice dimension {d} [{}, {}) exceeds the extent {}",
                    offs[d],
                    offs[d] + shape[d],
                    t.shape[d]
                ),
            ));
        }
    }
    let e: i64 = offs.iter().zip(&t.strides).map(|(o, s)| o * s).sum();
    let out = TRef { base: (t.base as i64 + e * t.dtype.bytes() as i64) as u64, shape, ..t };
    Ok(Flow::Val(Val::Tensor(out)))
}

fn reshape_view(cx: &OpCx<'_>, t: &TRef, shape: Vec<i64>) -> Result<TRef, Fault> {
    // Checked: a shape whose count overflows is no view of anything.
    if crate::limits::numel(&shape).ok() != u64::try_from(t.numel()).ok() {
        return Err(cx.err(format!("cannot view {:?} as {shape:?}", t.shape)));
    }
    // Contiguity of the non-unit dims.
    let dims: Vec<(i64, i64)> =
        t.shape.iter().zip(&t.strides).filter(|(d, _)| **d != 1).map(|(d, s)| (*d, *s)).collect();
    let mut expect = 1i64;
    for (d, s) in dims.iter().rev() {
        if *s != expect {
            return Err(cx.err(format!(
                "cannot reshape a non-contiguous view of shape {:?} (strides {:?})",
                t.shape, t.strides
            )));
        }
        expect *= d;
    }
    Ok(TRef { strides: TRef::packed_strides(&shape), shape, ..t.clone() })
}

fn tensor_reshape(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let t = cx.tensor(args, 0)?.clone();
    let shape = cx.ints(args, 1)?;
    Ok(Flow::Val(Val::Tensor(reshape_view(cx, &t, shape)?)))
}

fn tensor_view(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let t = cx.tensor(args, 0)?.clone();
    if args.len() < 2 || matches!(args[1], Val::Unit) {
        return Ok(Flow::Val(Val::Tensor(t)));
    }
    let shape = cx.ints(args, 1)?;
    Ok(Flow::Val(Val::Tensor(reshape_view(cx, &t, shape)?)))
}

fn tensor_assemble(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let target = cx.tensor(args, 0)?.clone();
    let src = cx.tensor(args, 1)?.clone();
    let offs = cx.ints(args, 2)?;
    let atomic = cx.attr_int("atomic").unwrap_or(0) == 1;
    let zeros = vec![0i64; src.shape.len()];
    let lanes = cx.world.read(&cx.access(&src, None, &zeros, &src.shape, "tensor.assemble"))?;
    cx.world.write(&cx.access(&target, None, &offs, &src.shape, "tensor.assemble"), &lanes, atomic)?;
    Ok(Flow::Val(Val::Tensor(target)))
}

fn whole(cx: &mut OpCx<'_>, v: &Val, i: usize) -> Result<(TRef, Vec<f64>), Fault> {
    let Val::Tensor(t) = v else {
        return Err(cx.err(format!("argument {i} must be a tensor")));
    };
    let zeros = vec![0i64; t.shape.len()];
    let name = cx.name().to_string();
    let lanes = cx.world.read(&cx.access(t, None, &zeros, &t.shape, &name))?;
    Ok((t.clone(), lanes))
}

fn tensor_binary(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let (a, la) = whole(cx, args.first().unwrap_or(&Val::Unit), 0)?;
    let op = Bin::of(cx.name());
    let lanes = match args.get(1) {
        Some(Val::Tensor(_)) => {
            let (_, lb) = whole(cx, &args[1], 1)?;
            if lb.len() != la.len() {
                return Err(cx.err(format!("tensors of {} and {} elements", la.len(), lb.len())));
            }
            op.zip(&la, lb.into_iter())
        }
        _ => op.zip(&la, std::iter::repeat(cx.float(args, 1)?)),
    };
    let out = new_tensor(cx, a.dtype, a.shape.clone())?;
    let zeros = vec![0i64; out.shape.len()];
    let shape = out.shape.clone();
    let name = cx.name().to_string();
    cx.world.write(&cx.access(&out, None, &zeros, &shape, &name), &lanes, false)?;
    Ok(Flow::Val(Val::Tensor(out)))
}

fn tensor_cast(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let (a, la) = whole(cx, args.first().unwrap_or(&Val::Unit), 0)?;
    let dt = dtype_attr(cx);
    crate::world::check_dtype(dt, cx.span, "tensor.cast")?;
    let out = new_tensor(cx, dt, a.shape.clone())?;
    let zeros = vec![0i64; out.shape.len()];
    let shape = out.shape.clone();
    cx.world.write(&cx.access(&out, None, &zeros, &shape, "tensor.cast"), &la, false)?;
    Ok(Flow::Val(Val::Tensor(out)))
}

register_semantics!("tile.load", tile_load);
register_semantics!("tile.store", tile_store);
register_semantics!("tile.create", tile_create);
register_semantics!("tile.full", tile_full);
register_semantics!("tile.add", tile_binary);
register_semantics!("tile.sub", tile_binary);
register_semantics!("tile.mul", tile_binary);
register_semantics!("tile.div", tile_binary);
register_semantics!("tile.maximum", tile_binary);
register_semantics!("tile.minimum", tile_binary);
register_semantics!("tile.adds", tile_scalar);
register_semantics!("tile.subs", tile_scalar);
register_semantics!("tile.muls", tile_scalar);
register_semantics!("tile.divs", tile_scalar);
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
register_semantics!("system.cacheinvalid", noop);
register_semantics!("tensor.create", tensor_create);
register_semantics!("tensor.read", tensor_read);
register_semantics!("tensor.write", tensor_write);
register_semantics!("tensor.slice", tensor_slice);
register_semantics!("tensor.reshape", tensor_reshape);
register_semantics!("tensor.view", tensor_view);
register_semantics!("tensor.assemble", tensor_assemble);
register_semantics!("tensor.add", tensor_binary);
register_semantics!("tensor.sub", tensor_binary);
register_semantics!("tensor.mul", tensor_binary);
register_semantics!("tensor.div", tensor_binary);
register_semantics!("tensor.maximum", tensor_binary);
register_semantics!("tensor.minimum", tensor_binary);
register_semantics!("tensor.adds", tensor_binary);
register_semantics!("tensor.subs", tensor_binary);
register_semantics!("tensor.muls", tensor_binary);
register_semantics!("tensor.divs", tensor_binary);
register_semantics!("tensor.cast", tensor_cast);
