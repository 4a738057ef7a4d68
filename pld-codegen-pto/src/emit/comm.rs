//! Communication ops: `pld.tile.remote_load`, `pld.tile.remote_store`, `pld.tile.put`,
//! `pld.tile.get`, `pld.system.notify`, `pld.system.wait`, `pld.system.defer_wait`
//! (codegen.md §3.3–§3.9).
//!
//! Guarantees:
//! - every remote operand is addressed through the inline peer-offset sequence of its own
//!   CommContext (`FnCx::peer_view`), in this function;
//! - `tput`/`tget` take partition views of identical type (V2) and one or two VEC staging
//!   tiles of identical type (V3, P7); `buf(%ping, %pong)` appears only with two stages;
//!   `tput` always carries `atomicType`, `tget` no attribute;
//! - a remote store prints `atomicType` only for atomic add, then invalidates the peer region;
//! - notify/wait signals are `i32` single-cell static partition views and their values are
//!   `i32` (V4, P5); `pto.barrier <PIPE_ALL>` precedes every tnotify and brackets tput/tget;
//! - defer_wait registers a counter completion through the external adapter (no twait).

use super::{atomic_for, check_tload_dst, check_tstore_src, Region};
use crate::func::{FnCx, TensorRef, Val};
use crate::mlir::{self, MTy};
use crate::pto::{Inst, Operand, PtoType, SyncOp};
use crate::register_emitter;
use pld_ir::{Call, DataType, Diagnostic, Expr, MemorySpace, TileType, Type, ValueId};

fn emit_remote_load(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let op = "pld.tile.remote_load";
    let t = cx.tensor(cx.arg(call, 0, "target")?, &format!("{op} target"))?;
    let Type::Tile(tt) = &call.ty else {
        return Err(cx.err(format!("{op} result must be a tile")));
    };
    let tt = tt.clone();
    check_tload_dst(cx, op, &tt)?;
    let hint = cx.result_hint(targets, "remote");
    let tile = cx.alloc_tile(&hint, &tt)?;
    let peer = cx.arg(call, 1, "peer")?.clone();
    let view = cx.peer_view(&t, &peer, op)?;
    let region = Region { call, offsets_arg: 2, view: &view, tensor: &t, suffix: "peer_pview" };
    super::tload(cx, &region, (&tile, &tt))?;
    Ok(Val::Tile { ssa: tile, tile: tt })
}

fn emit_remote_store(cx: &mut FnCx<'_>, call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let op = "pld.tile.remote_store";
    let (ts, tt) = cx.tile(cx.arg(call, 0, "src_tile")?, &format!("{op} src_tile"))?;
    let t = cx.tensor(cx.arg(call, 1, "target")?, &format!("{op} target"))?;
    check_tstore_src(cx, op, &tt)?;
    let atomic = atomic_for(cx, call, t.ty.dtype)?;
    let peer = cx.arg(call, 2, "peer")?.clone();
    let view = cx.peer_view(&t, &peer, op)?;
    let region = Region { call, offsets_arg: 3, view: &view, tensor: &t, suffix: "peer_pview" };
    let (pv, pty) = super::tstore(cx, &region, (&ts, &tt), atomic)?;
    cx.push(Inst::CacheInvalidLine { view: pv, ty: pty });
    Ok(Val::Unit)
}

/// The parsed operands of a tile-level put/get.
struct Transfer {
    dst: TensorRef,
    src: TensorRef,
    peer: Expr,
    stages: Vec<(String, TileType)>,
    dst_offsets: Vec<Expr>,
    src_offsets: Vec<Expr>,
    shape: Vec<Expr>,
}

fn transfer(cx: &mut FnCx<'_>, call: &Call, op: &str) -> Result<Transfer, Diagnostic> {
    let n = call.args.len();
    let (nstages, region) = match n {
        4 => (1, false),
        5 => (2, false),
        7 => (1, true),
        8 => (2, true),
        _ => {
            return Err(cx.err(format!(
                "{op} requires 4/5 (single/double stage, full-slice) or 7/8 (single/double stage, subregion) positional arguments, but got {n}"
            )))
        }
    };
    let dst = cx.tensor(cx.arg(call, 0, "dst")?, &format!("{op} dst"))?;
    let peer = cx.arg(call, 1, "peer")?.clone();
    let src = cx.tensor(cx.arg(call, 2, "src")?, &format!("{op} src"))?;
    if dst.ty.dtype != src.ty.dtype {
        return Err(cx.err(format!(
            "{op} dst and src must have the same element type, got {} vs {}",
            dst.ty.dtype, src.ty.dtype
        )));
    }
    let mut stages = Vec::new();
    for k in 0..nstages {
        let what = if k == 0 { "stage" } else { "stage2" };
        let (s, st) = cx.tile(cx.arg(call, 3 + k, what)?, &format!("{op} {what}"))?;
        if !matches!(st.memory, None | Some(MemorySpace::Vec)) {
            return Err(cx.err(format!(
                "{op} {what} must be a VEC staging tile (ptoas requires the staging tile in vec), got {}",
                st.memory.map_or("none", |m| m.dsl_name())
            )));
        }
        if st.dtype != src.ty.dtype {
            return Err(cx.err(format!(
                "{op} {what} dtype {} must match the transfer dtype {}",
                st.dtype, src.ty.dtype
            )));
        }
        cx.tile_dims(&st)?;
        stages.push((s, st));
    }
    if stages.len() == 2
        && cx.tile_ty(&stages[0].0, &stages[0].1)? != cx.tile_ty(&stages[1].0, &stages[1].1)?
    {
        return Err(cx.err(format!("{op} ping/pong staging tiles must have identical types")));
    }
    let (dst_offsets, src_offsets, shape) = if region {
        let b = 3 + nstages;
        (
            cx.tuple_arg(call, b, "dst_offsets")?.to_vec(),
            cx.tuple_arg(call, b + 1, "src_offsets")?.to_vec(),
            cx.tuple_arg(call, b + 2, "shape")?.to_vec(),
        )
    } else {
        let shape = dst.ty.shape.clone();
        let zeros = vec![Expr::int(0); shape.len()];
        (zeros.clone(), vec![Expr::int(0); src.ty.rank()], shape)
    };
    if dst.ty.rank() != src.ty.rank() || shape.len() != dst.ty.rank() {
        return Err(cx.err(format!(
            "{op} dst rank ({}), src rank ({}) and transfer rank ({}) must match",
            dst.ty.rank(),
            src.ty.rank(),
            shape.len()
        )));
    }
    Ok(Transfer { dst, src, peer, stages, dst_offsets, src_offsets, shape })
}

/// The staging tiles of a transfer with their types (the `buf(…)` group).
fn buf_group(cx: &FnCx<'_>, x: &Transfer) -> Result<Vec<Operand>, Diagnostic> {
    let mut buf = Vec::new();
    for (s, st) in &x.stages {
        buf.push(Operand::new(s, cx.tile_ty(s, st)?));
    }
    Ok(buf)
}

fn emit_put(cx: &mut FnCx<'_>, call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let op = "pld.tile.put";
    let x = transfer(cx, call, op)?;
    let atomic = atomic_for(cx, call, x.dst.ty.dtype)?;
    let sizes = cx.sizes(&x.shape)?;
    let view = cx.peer_view(&x.dst, &x.peer, op)?;
    let hint = format!("{}_peer_pview", x.dst.name);
    let (dpv, dty) = cx.partition_sized(&view, &x.dst, &x.dst_offsets, &sizes, &hint, 0)?;
    let lview = cx.local_view(&x.src)?;
    let hint = format!("{}_local_pview", x.src.name);
    let (spv, sty) = cx.partition_sized(&lview, &x.src, &x.src_offsets, &sizes, &hint, 0)?;
    same_signature(cx, op, &dty, &sty)?;
    let buf = buf_group(cx, &x)?;
    let attr = mlir::atomic_attr(atomic).unwrap_or("#pto<atomic_type atomic_none>");
    cx.push(Inst::Sync(SyncOp::BarrierAll));
    let operands = vec![Operand::new(&dpv, dty.clone()), Operand::new(spv, sty)];
    cx.push(Inst::Comm { op: "pto.comm.tput", operands, buf, attrs: vec![("atomicType", attr)] });
    cx.push(Inst::Sync(SyncOp::BarrierAll));
    cx.push(Inst::CacheInvalidLine { view: dpv, ty: dty });
    Ok(Val::Unit)
}

fn emit_get(cx: &mut FnCx<'_>, call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let op = "pld.tile.get";
    let x = transfer(cx, call, op)?;
    let sizes = cx.sizes(&x.shape)?;
    let lview = cx.local_view(&x.dst)?;
    let hint = format!("{}_local_pview", x.dst.name);
    let (dpv, dty) = cx.partition_sized(&lview, &x.dst, &x.dst_offsets, &sizes, &hint, 0)?;
    let view = cx.peer_view(&x.src, &x.peer, op)?;
    let hint = format!("{}_peer_pview", x.src.name);
    let (spv, sty) = cx.partition_sized(&view, &x.src, &x.src_offsets, &sizes, &hint, 0)?;
    same_signature(cx, op, &dty, &sty)?;
    let buf = buf_group(cx, &x)?;
    cx.push(Inst::Sync(SyncOp::BarrierAll));
    let operands = vec![Operand::new(dpv, dty), Operand::new(spv, sty)];
    cx.push(Inst::Comm { op: "pto.comm.tget", operands, buf, attrs: Vec::new() });
    cx.push(Inst::Sync(SyncOp::BarrierAll));
    Ok(Val::Unit)
}

/// V2: both transfer views must print the identical shape signature.
fn same_signature(cx: &FnCx<'_>, op: &str, dty: &PtoType, sty: &PtoType) -> Result<(), Diagnostic> {
    if dty != sty {
        return Err(cx.err(format!(
            "{op} dst and src partition views must have the same shape signature, got {dty} and {sty}"
        )));
    }
    Ok(())
}

/// Checks a signal operand: an `i32` tensor with a static shape (V4).
fn check_signal(cx: &FnCx<'_>, t: &TensorRef, op: &str) -> Result<(), Diagnostic> {
    if t.ty.dtype != DataType::INT32 {
        return Err(cx.err(format!(
            "{op} signal '{}' has dtype {}; ptoas requires an int32 signal (tnotify/twait/ttest)",
            t.name, t.ty.dtype
        )));
    }
    Ok(())
}

fn emit_notify(cx: &mut FnCx<'_>, call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let op = "pld.system.notify";
    let t = cx.tensor(cx.arg(call, 0, "target")?, &format!("{op} target"))?;
    check_signal(cx, &t, op)?;
    let kind = call.attr_int("op").and_then(mlir::notify_attr);
    let Some(kind) = kind else {
        return Err(cx.err(format!(
            "{op} needs op=NotifyOp.AtomicAdd or NotifyOp.Set (ptoas has no default notifyOp)"
        )));
    };
    let peer = cx.arg(call, 1, "peer")?.clone();
    let view = cx.peer_view(&t, &peer, op)?;
    let offsets = cx.tuple_arg(call, 2, "offsets")?.to_vec();
    let ones = vec![Expr::int(1); t.ty.rank()];
    let (pv, pty) = cx.partition(&view, &t, &offsets, &ones, &format!("{}_peer_pview", t.name))?;
    let v = cx.scalar_as(cx.arg(call, 3, "value")?, MTy::Int(32))?;
    cx.push(Inst::Sync(SyncOp::BarrierAll));
    let operands = vec![Operand::new(pv, pty), Operand::new(v, MTy::Int(32))];
    cx.push(Inst::Comm {
        op: "pto.comm.tnotify",
        operands,
        buf: Vec::new(),
        attrs: vec![("notifyOp", kind)],
    });
    Ok(Val::Unit)
}

fn emit_wait(cx: &mut FnCx<'_>, call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let op = "pld.system.wait";
    let t = cx.tensor(cx.arg(call, 0, "signal")?, &format!("{op} signal"))?;
    check_signal(cx, &t, op)?;
    let Some(cmp) = call.attr_int("cmp").and_then(mlir::wait_attr) else {
        return Err(cx.err(format!("{op} needs cmp=WaitCmp.Eq or WaitCmp.Ge (ptoas has no default cmp)")));
    };
    let view = cx.local_view(&t)?;
    let offsets = cx.tuple_arg(call, 1, "offsets")?.to_vec();
    let ones = vec![Expr::int(1); t.ty.rank()];
    let (pv, pty) = cx.partition(&view, &t, &offsets, &ones, &format!("{}_local_pview", t.name))?;
    let v = cx.scalar_as(cx.arg(call, 2, "expected")?, MTy::Int(32))?;
    let operands = vec![Operand::new(pv, pty), Operand::new(v, MTy::Int(32))];
    cx.push(Inst::Comm { op: "pto.comm.twait", operands, buf: Vec::new(), attrs: vec![("cmp", cmp)] });
    Ok(Val::Unit)
}

fn emit_defer_wait(cx: &mut FnCx<'_>, call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let op = "pld.system.defer_wait";
    let sig = cx.arg(call, 0, "signal")?;
    if sig.as_var().is_none_or(|v| !cx.func.params.iter().any(|p| p.value == v)) {
        return Err(cx.err(format!("{op} signal must be a direct DistributedTensor parameter of the kernel")));
    }
    let t = cx.tensor(sig, &format!("{op} signal"))?;
    check_signal(cx, &t, op)?;
    if call.attr_int("cmp") != Some(1) {
        return Err(cx.err(format!("{op} supports only cmp=WaitCmp.Ge")));
    }
    let offsets = cx.tuple_arg(call, 1, "offsets")?.to_vec();
    let (shape, strides) = cx.view_operands(&t)?;
    if offsets.len() != shape.len() {
        return Err(cx.err(format!("{op} offsets rank must match the signal rank")));
    }
    let zero = cx.const_int(0, MTy::Index);
    let mut oob: Option<String> = None;
    let mut flat: Option<String> = None;
    for (k, o) in offsets.iter().enumerate() {
        let i = cx.scalar_as(o, MTy::Index)?;
        let lt = cx.arith_pred("arith.cmpi", Some("slt"), &[&i, &zero], MTy::Index);
        let ge = cx.arith_pred("arith.cmpi", Some("sge"), &[&i, &shape[k]], MTy::Index);
        let bad = cx.arith("arith.ori", &[&lt, &ge], MTy::I1);
        oob = Some(cx.accumulate(oob, bad, "arith.ori", MTy::I1));
        let term = cx.arith("arith.muli", &[&i, &strides[k]], MTy::Index);
        flat = Some(cx.accumulate(flat, term, "arith.addi", MTy::Index));
    }
    let (Some(oob), Some(flat)) = (oob, flat) else {
        return Err(cx.err(format!("{op} signal rank must be at least 1")));
    };
    let neg = cx.const_int(-1, MTy::Index);
    let sel = cx.arith("arith.select", &[&oob, &neg, &flat], MTy::Index);
    let off = cx.convert("arith.index_cast", &sel, MTy::Index, MTy::Int(64));
    let exp = cx.scalar_as(cx.arg(call, 2, "expected")?, MTy::Int(64))?;
    cx.uses_deferred = true;
    cx.push(Inst::RegisterCompletion { signal: t.ptr.clone(), offset: off, expected: exp });
    Ok(Val::Unit)
}

register_emitter!("pld.tile.remote_load", emit_remote_load);
register_emitter!("pld.tile.remote_store", emit_remote_store);
register_emitter!("pld.tile.put", emit_put);
register_emitter!("pld.tile.get", emit_get);
register_emitter!("pld.system.notify", emit_notify);
register_emitter!("pld.system.wait", emit_wait);
register_emitter!("pld.system.defer_wait", emit_defer_wait);
