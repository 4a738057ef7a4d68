//! Tensor family: tensor-level ops on host and window tensors (create, element read/write,
//! zero-copy slice/reshape/view, assemble, elementwise arithmetic, cast), run where called.
//!
//! Guarantees: views are zero-copy strided views of the same memory, and a reshape of a view
//! that is not contiguous is a runtime report, not a silent copy; element ops compute on
//! elements decoded to `f64` and round to the destination dtype, as the tile ops do.

use super::core::{dtype_attr, scalar_of, Bin};
use super::{Flow, OpCx};
use crate::register_semantics;
use crate::report::Fault;
use crate::value::{Mem, TRef, Val};
use pld_ir::DataType;

fn tensor_create(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let shape = cx.ints(args, 0)?;
    let dt = dtype_attr(cx);
    crate::world::check_dtype(dt, cx.span, "tensor.create")?;
    Ok(Flow::Val(Val::tensor(new_tensor(cx, dt, shape)?)))
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
        shape: shape.into(),
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
    Ok(Flow::Val(Val::tensor(t)))
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
    let out = TRef { base: (t.base as i64 + e * t.dtype.bytes() as i64) as u64, shape: shape.into(), ..t };
    Ok(Flow::Val(Val::tensor(out)))
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
    Ok(TRef { strides: TRef::packed_strides(&shape), shape: shape.into(), ..t.clone() })
}

fn tensor_reshape(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let t = cx.tensor(args, 0)?;
    let shape = cx.ints(args, 1)?;
    Ok(Flow::Val(Val::tensor(reshape_view(cx, t, shape)?)))
}

fn tensor_view(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let t = cx.tensor(args, 0)?;
    if args.len() < 2 || matches!(args[1], Val::Unit) {
        // The same view: shared, not copied.
        return Ok(Flow::Val(args[0].clone()));
    }
    let shape = cx.ints(args, 1)?;
    Ok(Flow::Val(Val::tensor(reshape_view(cx, t, shape)?)))
}

fn tensor_assemble(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let target = cx.tensor(args, 0)?.clone();
    let src = cx.tensor(args, 1)?.clone();
    let offs = cx.ints(args, 2)?;
    let atomic = cx.attr_int("atomic").unwrap_or(0) == 1;
    let zeros = vec![0i64; src.shape.len()];
    let lanes = cx.world.read(&cx.access(&src, None, &zeros, &src.shape, "tensor.assemble"))?;
    cx.world.write(&cx.access(&target, None, &offs, &src.shape, "tensor.assemble"), &lanes, atomic)?;
    Ok(Flow::Val(Val::tensor(target)))
}

fn whole(cx: &mut OpCx<'_>, v: &Val, i: usize) -> Result<(TRef, Vec<f64>), Fault> {
    let Val::Tensor(t) = v else {
        return Err(cx.err(format!("argument {i} must be a tensor")));
    };
    let zeros = vec![0i64; t.shape.len()];
    let name = cx.name().to_string();
    let lanes = cx.world.read(&cx.access(t, None, &zeros, &t.shape, &name))?;
    Ok((TRef::clone(t), lanes))
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
    let out = new_tensor(cx, a.dtype, a.shape.to_vec())?;
    let zeros = vec![0i64; out.shape.len()];
    let shape = out.shape.clone();
    let name = cx.name().to_string();
    cx.world.write(&cx.access(&out, None, &zeros, &shape, &name), &lanes, false)?;
    Ok(Flow::Val(Val::tensor(out)))
}

fn tensor_cast(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let (a, la) = whole(cx, args.first().unwrap_or(&Val::Unit), 0)?;
    let dt = dtype_attr(cx);
    crate::world::check_dtype(dt, cx.span, "tensor.cast")?;
    let out = new_tensor(cx, dt, a.shape.to_vec())?;
    let zeros = vec![0i64; out.shape.len()];
    let shape = out.shape.clone();
    cx.world.write(&cx.access(&out, None, &zeros, &shape, "tensor.cast"), &la, false)?;
    Ok(Flow::Val(Val::tensor(out)))
}

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
