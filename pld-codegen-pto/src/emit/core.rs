//! Core tile ops: `tile.load` / `tile.store` through local partition views, `tile.create`,
//! `tile.move`, and elementwise tile-tile and tile-scalar arithmetic.
//!
//! Guarantees: loads and stores size their partition view by the tile's effective valid
//! shape (so a tstore's static element count equals the tile's valid count, V10); a store
//! prints `atomicType` only for atomic add; every tile result gets its own `pto.alloc_tile`.

use super::{atomic_for, check_tload_dst, check_tstore_src};
use crate::func::{FnCx, Val};
use crate::mlir::{self, MTy};
use crate::register_emitter;
use pld_ir::{Call, Diagnostic, TileType, Type, ValueId};

fn result_tile(cx: &FnCx<'_>, call: &Call) -> Result<TileType, Diagnostic> {
    match &call.ty {
        Type::Tile(t) => Ok(t.clone()),
        other => {
            Err(cx.err(format!("{} result must be a tile, got {}", call.callee.name(), other.kind_name())))
        }
    }
}

fn emit_load(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let t = cx.tensor(cx.arg(call, 0, "tensor")?, "tile.load tensor")?;
    let tt = result_tile(cx, call)?;
    check_tload_dst(cx, "tile.load", &tt)?;
    let hint = cx.result_hint(targets, "tile");
    let tile = cx.alloc_tile(&hint, &tt)?;
    let view = cx.local_view(&t)?;
    let offsets = cx.tuple_arg(call, 1, "offsets")?.to_vec();
    let sizes = tt.effective_valid_shape().to_vec();
    let (pv, pty) = cx.partition(&view, &t, &offsets, &sizes, &format!("{}_pview", t.name))?;
    let tty = cx.tile_type(&tt)?;
    cx.line(format!("pto.tload ins({pv} : {pty}) outs({tile} : {tty})"));
    Ok(Val::Tile { ssa: tile, tile: tt })
}

fn emit_store(cx: &mut FnCx<'_>, call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let (ts, tt) = cx.tile(cx.arg(call, 0, "tile")?, "tile.store tile")?;
    let t = cx.tensor(cx.arg(call, 2, "output_tensor")?, "tile.store output_tensor")?;
    check_tstore_src(cx, "tile.store", &tt)?;
    let atomic = atomic_for(cx, call, t.ty.dtype)?;
    let view = cx.local_view(&t)?;
    let offsets = cx.tuple_arg(call, 1, "offsets")?.to_vec();
    let sizes = FnCx::tile_region(&tt, t.ty.rank());
    let (pv, pty) = cx.partition(&view, &t, &offsets, &sizes, &format!("{}_pview", t.name))?;
    let tty = cx.tile_type(&tt)?;
    let attr = if atomic == 1 { " {atomicType = #pto<atomic_type atomic_add>}" } else { "" };
    cx.line(format!("pto.tstore ins({ts} : {tty}) outs({pv} : {pty}){attr}"));
    Ok(Val::Tensor(t))
}

fn emit_create(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let tt = result_tile(cx, call)?;
    let hint = cx.result_hint(targets, "tile");
    let ssa = cx.alloc_tile(&hint, &tt)?;
    Ok(Val::Tile { ssa, tile: tt })
}

fn unary_into(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId], inst: &str) -> Result<Val, Diagnostic> {
    let (src, st) = cx.tile(cx.arg(call, 0, "tile")?, &format!("{} tile", call.callee.name()))?;
    let tt = result_tile(cx, call)?;
    let hint = cx.result_hint(targets, "tile");
    let dst = cx.alloc_tile(&hint, &tt)?;
    let (sty, dty) = (cx.tile_type(&st)?, cx.tile_type(&tt)?);
    cx.line(format!("{inst} ins({src} : {sty}) outs({dst} : {dty})"));
    Ok(Val::Tile { ssa: dst, tile: tt })
}

fn emit_move(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    unary_into(cx, call, targets, "pto.tmov")
}

fn binary(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId], inst: &str) -> Result<Val, Diagnostic> {
    let op = call.callee.name();
    let (a, at) = cx.tile(cx.arg(call, 0, "lhs")?, &format!("{op} lhs"))?;
    let (b, bt) = cx.tile(cx.arg(call, 1, "rhs")?, &format!("{op} rhs"))?;
    let tt = result_tile(cx, call)?;
    let hint = cx.result_hint(targets, "tile");
    let dst = cx.alloc_tile(&hint, &tt)?;
    let (aty, bty, dty) = (cx.tile_type(&at)?, cx.tile_type(&bt)?, cx.tile_type(&tt)?);
    cx.line(format!("{inst} ins({a}, {b} : {aty}, {bty}) outs({dst} : {dty})"));
    Ok(Val::Tile { ssa: dst, tile: tt })
}

fn with_scalar(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId], inst: &str) -> Result<Val, Diagnostic> {
    let op = call.callee.name();
    let (a, at) = cx.tile(cx.arg(call, 0, "tile")?, &format!("{op} tile"))?;
    let sty = MTy::of_scalar(at.dtype).map_err(|m| cx.err(m))?;
    let s = cx.scalar_as(cx.arg(call, 1, "scalar")?, sty)?;
    let tt = result_tile(cx, call)?;
    let hint = cx.result_hint(targets, "tile");
    let dst = cx.alloc_tile(&hint, &tt)?;
    let (aty, dty) = (cx.tile_type(&at)?, cx.tile_type(&tt)?);
    cx.line(format!("{inst} ins({a}, {s} : {aty}, {}) outs({dst} : {dty})", sty.name()));
    Ok(Val::Tile { ssa: dst, tile: tt })
}

macro_rules! elementwise {
    ($($f:ident = $op:literal => $inst:literal, $kind:ident;)*) => {$(
        fn $f(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
            $kind(cx, call, targets, $inst)
        }
        register_emitter!($op, $f);
    )*};
}

elementwise! {
    emit_add = "tile.add" => "pto.tadd", binary;
    emit_sub = "tile.sub" => "pto.tsub", binary;
    emit_mul = "tile.mul" => "pto.tmul", binary;
    emit_div = "tile.div" => "pto.tdiv", binary;
    emit_max = "tile.maximum" => "pto.tmax", binary;
    emit_min = "tile.minimum" => "pto.tmin", binary;
    emit_adds = "tile.adds" => "pto.tadds", with_scalar;
    emit_subs = "tile.subs" => "pto.tsubs", with_scalar;
    emit_muls = "tile.muls" => "pto.tmuls", with_scalar;
    emit_divs = "tile.divs" => "pto.tdivs", with_scalar;
}

register_emitter!("tile.load", emit_load);
register_emitter!("tile.store", emit_store);
register_emitter!("tile.create", emit_create);
register_emitter!("tile.move", emit_move);

/// The element spelling of a tile's dtype (re-exported for family modules).
pub fn tile_elem(cx: &FnCx<'_>, t: &TileType) -> Result<&'static str, Diagnostic> {
    mlir::elem(t.dtype).map_err(|m| cx.err(m))
}
