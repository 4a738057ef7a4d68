//! System family: windows and contexts (`alloc_window_buffer`, `window`, `world_size`,
//! `get_comm_ctx`, `rank`, `nranks`) and signals (`notify`, `wait`, `defer_wait`).
//!
//! Guarantees: notify resolves its cell through the CommContext like every remote access,
//! applies Set as a plain store and AtomicAdd as a wrapping i32 add, reports Set/AtomicAdd
//! mixing on one cell within a zeroing epoch, releases the notifier's vector clock into the
//! cell and records who deposited its credits (`crate::credit`); wait checks
//! signed Eq/Ge and, when satisfied, acquires the cell's clock; defer_wait registers an
//! unsigned `>=` condition on the task.

use super::{Flow, Level, OpCx, Park};
use crate::register_semantics;
use crate::report::{Fault, ReportKind};
use crate::value::{Mem, TRef, Val};
use crate::world::World;
use pld_ir::{DataType, Span};
use pld_runtime_abi::{NotifyOp, WaitCmp};

/// `pld.system.notify`: also the name micro programs' notifies report faults under.
pub(crate) const NOTIFY: &str = "pld.system.notify";
/// `pld.system.wait`: also the name micro programs' waits report faults under.
pub(crate) const WAIT: &str = "pld.system.wait";

fn alloc_window_buffer(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let size = cx.int(args, 0)?;
    // A degenerate (zero-cell) allocation, e.g. a ring signal on one rank, is legal.
    if size < 0 {
        return Err(cx.err(format!("size must not be negative, got {size}")));
    }
    let name = cx.call.attr("name").and_then(|a| a.as_str()).unwrap_or("window").to_string();
    // The domain whose scope lists this buffer (innermost first), else the current one.
    let domain = cx.world.scope_domain(&name).unwrap_or(cx.domain);
    let id = cx.world.alloc(domain, &name, size as u64);
    if cx.call.args.first().is_some_and(numbers_only) {
        cx.world.mark_literal_size(id, cx.span);
    }
    Ok(Flow::Val(Val::Alloc(id)))
}

/// Whether `e` is arithmetic on integer literals only.
fn numbers_only(e: &pld_ir::Expr) -> bool {
    let mut only = true;
    e.walk(&mut |x| {
        only &= matches!(
            x.kind,
            pld_ir::ExprKind::Int(_) | pld_ir::ExprKind::Binary(..) | pld_ir::ExprKind::Unary(..)
        );
    });
    only
}

fn window(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let Some(Val::Alloc(a)) = args.first() else {
        return Err(cx.err("argument 0 must be a window allocation"));
    };
    let a = *a;
    let shape = cx.ints(args, 1)?;
    let dtype = cx.call.attr("dtype").and_then(|x| x.as_dtype()).unwrap_or(DataType::FP32);
    crate::world::check_dtype(dtype, cx.span, "pld.tensor.window")?;
    let bytes = crate::limits::byte_size(dtype, &shape).map_err(|m| cx.err(m))?;
    let (domain, base) = cx.world.view_buffer(a, dtype, &shape, bytes).map_err(|m| cx.err(m))?;
    let t = TRef {
        mem: Mem::Window { domain, alloc: a },
        owner: usize::MAX,
        base,
        strides: TRef::packed_strides(&shape),
        shape,
        dtype,
    };
    Ok(Flow::Val(Val::Tensor(t)))
}

fn world_size(cx: &mut OpCx<'_>, _args: &[Val]) -> Result<Flow, Fault> {
    Ok(Flow::Val(Val::Int(cx.world.nranks() as i64)))
}

fn get_comm_ctx(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let t = cx.tensor(args, 0)?;
    match t.mem {
        Mem::Window { domain, .. } => Ok(Flow::Val(Val::Ctx { domain })),
        Mem::Host(_) => Err(cx.err("expects a window-bound tensor")),
    }
}

fn ctx_domain(cx: &OpCx<'_>, args: &[Val]) -> Result<usize, Fault> {
    match args.first() {
        Some(Val::Ctx { domain }) => Ok(*domain),
        Some(Val::Tensor(TRef { mem: Mem::Window { domain, .. }, .. })) => Ok(*domain),
        _ => Err(cx.err("expects a comm context")),
    }
}

fn rank(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let d = ctx_domain(cx, args)?;
    if cx.level == Level::Host {
        return Err(cx.err("the rank is only known on a device"));
    }
    let r = cx
        .world
        .domain(d)
        .drank(cx.rank)
        .ok_or_else(|| cx.err(format!("rank {} is not in this comm domain", cx.rank)))?;
    Ok(Flow::Val(Val::Int(r as i64)))
}

fn nranks(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let d = ctx_domain(cx, args)?;
    Ok(Flow::Val(Val::Int(cx.world.domain(d).members.len() as i64)))
}

/// TNOTIFY: writes `value` into cell `idx` of `peer`'s copy of `sig` (a local view).
#[allow(clippy::too_many_arguments)]
pub fn notify(
    world: &mut World,
    g: usize,
    sig: &TRef,
    peer: i64,
    idx: &[i64],
    value: i32,
    op: NotifyOp,
    span: Span,
    who: &str,
) -> Result<(), Fault> {
    let r = world.cell_addr(g, sig, Some(peer), idx, span, NOTIFY)?;
    world.notify_cell(g, r, value, op, span, who)
}

/// TWAIT, one sweep: `None` when satisfied (clock acquired), else the park record.
#[allow(clippy::too_many_arguments)]
pub fn wait(
    world: &mut World,
    g: usize,
    sig: &TRef,
    idx: &[i64],
    expected: i32,
    ge: bool,
    span: Span,
    who: &str,
) -> Result<Option<Park>, Fault> {
    let r = world.cell_addr(g, sig, None, idx, span, WAIT)?;
    world.wait_cell(g, r, expected, ge, span, who)
}

/// With fence checking on, a notify may not publish window writes that no GM fence covered.
fn check_fenced(cx: &OpCx<'_>) -> Result<(), Fault> {
    match cx.world.first_unfenced(cx.rank) {
        None => Ok(()),
        Some((op, buf, span)) => Err(Fault::new(
            ReportKind::UnfencedNotify,
            cx.span,
            format!("pld.system.notify on rank {} publishes a write to buffer '{buf}' ({op}) that no GM fence has made visible", cx.rank),
        )
        .note_at(format!("the unfenced {op} is at"), *span)
        .note("a peer released by this notify may read stale bytes; fence (pipe barrier + dsb) before notifying")),
    }
}

fn fence(cx: &mut OpCx<'_>, _args: &[Val]) -> Result<Flow, Fault> {
    cx.world.fence(cx.rank);
    Ok(Flow::Val(Val::Unit))
}

/// A notify written outside every `split_aiv` region is duplicated onto both lanes of a
/// mixed kernel: the same source notify executed by two lanes of one group is reported.
fn check_single_lane(cx: &mut OpCx<'_>) -> Result<(), Fault> {
    let Some(group) = cx.group else { return Ok(()) };
    match cx.world.note_lane_notify(cx.rank, group, cx.span, cx.who) {
        Some(lane) => Err(Fault::new(
            ReportKind::DuplicateNotify,
            cx.span,
            format!(
                "pld.system.notify of mixed kernel '{group}' runs on two lanes ('{lane}' and '{}') of rank {}: duplicate credit, and the cube lane can publish before the vector lane's data landed",
                cx.who, cx.rank
            ),
        )
        .note("put the notify inside a pl.split_aiv region so it is pinned to the vector lane")),
        None => Ok(()),
    }
}

fn notify_op(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    check_fenced(cx)?;
    check_single_lane(cx)?;
    let sig = cx.tensor(args, 0)?.clone();
    let peer = cx.int(args, 1)?;
    let idx = cx.ints(args, 2)?;
    let value = cx.int(args, 3)?;
    let op = NotifyOp::from_i64(cx.attr_int("op").unwrap_or(0)).map_err(|e| cx.err(e.to_string()))?;
    notify(cx.world, cx.rank, &sig, peer, &idx, value as i32, op, cx.span, cx.who)?;
    Ok(Flow::Val(Val::Unit))
}

fn wait_op(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let sig = cx.tensor(args, 0)?.clone();
    let idx = cx.ints(args, 1)?;
    let expected = cx.int(args, 2)?;
    let cmp = WaitCmp::from_i64(cx.attr_int("cmp").unwrap_or(1)).map_err(|e| cx.err(e.to_string()))?;
    match wait(cx.world, cx.rank, &sig, &idx, expected as i32, cmp == WaitCmp::Ge, cx.span, cx.who)? {
        None => Ok(Flow::Val(Val::Unit)),
        Some(p) => Ok(Flow::Park(p)),
    }
}

fn defer_wait_op(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let sig = cx.tensor(args, 0)?.clone();
    let idx = cx.ints(args, 1)?;
    let expected = cx.int(args, 2)?;
    if !(0..=i64::from(i32::MAX)).contains(&expected) {
        return Err(Fault::new(
            ReportKind::Deferred,
            cx.span,
            format!("pld.system.defer_wait expected {expected} is outside [0, INT32_MAX] (error 101)"),
        ));
    }
    let r = cx.world.cell_addr(cx.rank, &sig, None, &idx, cx.span, "pld.system.defer_wait")?;
    Ok(Flow::Defer(Park { cell: r, ge: true, unsigned: true, expected: expected as i32 }))
}

register_semantics!("pld.tensor.alloc_window_buffer", alloc_window_buffer);
register_semantics!("pld.tensor.window", window);
register_semantics!("pld.system.world_size", world_size);
register_semantics!("pld.system.get_comm_ctx", get_comm_ctx);
register_semantics!("pld.system.rank", rank);
register_semantics!("pld.system.nranks", nranks);
register_semantics!(NOTIFY, notify_op);
register_semantics!(WAIT, wait_op);
register_semantics!("pld.system.defer_wait", defer_wait_op);
register_semantics!("system.fence", fence);
