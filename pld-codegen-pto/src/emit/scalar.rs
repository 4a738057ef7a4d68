//! Scalar element access: `tensor.read` / `tensor.write` through `pto.load_scalar` /
//! `pto.store_scalar` on the tensor's GM pointer, `tile.read` / `tile.write` through
//! `pto.tgetval` / `pto.tsetval` at the row-major element offset.
//!
//! Guarantees: the element offset is the index tuple dotted with the view's strides (the same
//! strides its `make_tensor_view` uses, so DN views stay correct); the scalar type equals the
//! pointer's element type (V8); values are converted to that type before a store.

use crate::func::{FnCx, Idx, TensorRef, Val};
use crate::mlir::{self, MTy};
use crate::pto::{Dps, Inst, Operand};
use crate::register_emitter;
use pld_ir::{Call, Diagnostic, Expr, ValueId};

/// `Σ index_k × stride_k` as an `index` SSA value.
fn flat_offset(cx: &mut FnCx<'_>, t: &TensorRef, idx: &[Expr], op: &str) -> Result<String, Diagnostic> {
    let (_, strides) = cx.view_operands(t)?;
    if idx.len() != strides.len() {
        return Err(cx.err(format!("{op} indices rank must match the tensor rank {}", strides.len())));
    }
    let mut acc: Option<String> = None;
    for (e, s) in idx.iter().zip(&strides) {
        let i = match e.as_int() {
            Some(v) => Idx::Const(v),
            None => Idx::Ssa(cx.scalar_as(e, MTy::Index)?),
        };
        let term = match (&i, s.as_str()) {
            (Idx::Const(0), _) => continue,
            (_, "%c1_index") => cx.idx(&i),
            _ => {
                let a = cx.idx(&i);
                cx.arith("arith.muli", &[&a, s], MTy::Index)
            }
        };
        acc = Some(cx.accumulate(acc, term, "arith.addi", MTy::Index));
    }
    Ok(acc.unwrap_or_else(|| cx.const_int(0, MTy::Index)))
}

fn emit_tensor_read(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let op = "tensor.read";
    let t = cx.tensor(cx.arg(call, 0, "tensor")?, &format!("{op} tensor"))?;
    let idx = cx.tuple_arg(call, 1, "indices")?.to_vec();
    let off = flat_offset(cx, &t, &idx, op)?;
    let ty = MTy::of_scalar(t.ty.dtype).map_err(|m| cx.err(m))?;
    let ptr = mlir::ptr(t.ty.dtype).map_err(|m| cx.err(m))?;
    let hint = cx.result_hint(targets, "elem");
    let r = cx.named(&hint);
    cx.push(Inst::LoadScalar { result: r.clone(), ptr: t.ptr.clone(), offset: off, ptr_ty: ptr, ty });
    Ok(Val::Scalar { ssa: r, ty })
}

fn emit_tensor_write(cx: &mut FnCx<'_>, call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let op = "tensor.write";
    let t = cx.tensor(cx.arg(call, 0, "tensor")?, &format!("{op} tensor"))?;
    let idx = cx.tuple_arg(call, 1, "indices")?.to_vec();
    let ty = MTy::of_scalar(t.ty.dtype).map_err(|m| cx.err(m))?;
    let v = cx.scalar_as(cx.arg(call, 2, "value")?, ty)?;
    let off = flat_offset(cx, &t, &idx, op)?;
    let ptr = mlir::ptr(t.ty.dtype).map_err(|m| cx.err(m))?;
    cx.push(Inst::StoreScalar { value: v, ptr: t.ptr.clone(), offset: off, ptr_ty: ptr, ty });
    Ok(Val::Tensor(t))
}

/// The row-major element offset of `idx` inside a tile buffer.
fn tile_offset(cx: &mut FnCx<'_>, tt: &pld_ir::TileType, idx: &[Expr]) -> Result<String, Diagnostic> {
    let Some(shape) = tt.static_shape() else {
        return Err(cx.err("scalar tile access needs a static tile shape"));
    };
    if idx.len() != shape.len() {
        return Err(cx.err(format!("tile indices rank must match the tile rank {}", shape.len())));
    }
    let mut flat = Idx::Const(0);
    for (k, e) in idx.iter().enumerate() {
        let i = match e.as_int() {
            Some(v) => Idx::Const(v),
            None => Idx::Ssa(cx.scalar_as(e, MTy::Index)?),
        };
        let stride: i64 = shape[k + 1..].iter().product();
        let scaled = cx.mul_idx(&i, &Idx::Const(stride));
        flat = match (&flat, &scaled) {
            (Idx::Const(0), _) => scaled.clone(),
            (_, Idx::Const(0)) => flat.clone(),
            (Idx::Const(a), Idx::Const(b)) => Idx::Const(a + b),
            _ => {
                let (a, b) = (cx.idx(&flat), cx.idx(&scaled));
                Idx::Ssa(cx.arith("arith.addi", &[&a, &b], MTy::Index))
            }
        };
    }
    Ok(cx.idx(&flat))
}

fn emit_tile_read(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let (ts, tt) = cx.tile(cx.arg(call, 0, "tile")?, "tile.read tile")?;
    let idx = cx.tuple_arg(call, 1, "indices")?.to_vec();
    let off = tile_offset(cx, &tt, &idx)?;
    let ty = MTy::of_scalar(tt.dtype).map_err(|m| cx.err(m))?;
    let tty = cx.tile_ty(&ts, &tt)?;
    let hint = cx.result_hint(targets, "elem");
    let r = cx.named(&hint);
    let ins = vec![Operand::new(ts, tty), Operand::new(off, MTy::Index)];
    let dps = Dps { result: Some((r.clone(), ty)), ..Dps::new("pto.tgetval", ins, Vec::new()) };
    cx.push(Inst::Dps(dps));
    Ok(Val::Scalar { ssa: r, ty })
}

fn emit_tile_write(cx: &mut FnCx<'_>, call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let (ts, tt) = cx.tile(cx.arg(call, 0, "tile")?, "tile.write tile")?;
    let idx = cx.tuple_arg(call, 1, "indices")?.to_vec();
    let ty = MTy::of_scalar(tt.dtype).map_err(|m| cx.err(m))?;
    let v = cx.scalar_as(cx.arg(call, 2, "value")?, ty)?;
    let off = tile_offset(cx, &tt, &idx)?;
    let tty = cx.tile_ty(&ts, &tt)?;
    let ins = vec![Operand::new(off, MTy::Index), Operand::new(v, ty)];
    cx.push(Inst::Dps(Dps::new("pto.tsetval", ins, vec![Operand::new(&ts, tty)])));
    Ok(Val::Tile { ssa: ts, tile: tt })
}

register_emitter!("tile.write", emit_tile_write);
register_emitter!("tensor.read", emit_tensor_read);
register_emitter!("tensor.write", emit_tensor_write);
register_emitter!("tile.read", emit_tile_read);
