//! System family: windows and contexts (`alloc_window_buffer`, `window`, `world_size`,
//! `get_comm_ctx`, `rank`, `nranks`) and signals (`notify`, `wait`, `defer_wait`).
//!
//! Guarantees: notify first runs the checks every notify runs (`World::check_notify`: GM
//! fence, single lane), then resolves its cell through the CommContext like every remote access,
//! applies Set as a plain store and AtomicAdd as a wrapping i32 add, reports Set/AtomicAdd
//! mixing on one cell within a zeroing epoch, releases the notifier's vector clock into the
//! cell and records who deposited its credits (`crate::credit`); wait checks
//! signed Eq/Ge and, when satisfied, acquires the cell's clock; defer_wait registers an
//! unsigned `>=` condition on the task.

use super::{Flow, Level, OpCx, Park};
use crate::register_semantics;
use crate::report::{Fault, ReportKind};
use crate::value::{Mem, TRef, Val};
use crate::world::{Checked, Notifier, World};
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
        shape: shape.into(),
        dtype,
    };
    Ok(Flow::Val(Val::tensor(t)))
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
        Some(Val::Tensor(t)) => match t.mem {
            Mem::Window { domain, .. } => Ok(domain),
            Mem::Host(_) => Err(cx.err("expects a comm context")),
        },
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

/// TNOTIFY by rank `g` (kernel `who`, no mixed-kernel group): writes `value` into cell `idx`
/// of `peer`'s copy of `sig` (a local view), after the checks every notify runs.
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
    let checked = world.check_notify(Notifier { g, who, group: None, span, op: NOTIFY })?;
    notify_checked(world, checked, sig, peer, idx, value, op)
}

/// A checked notify (see [`World::check_notify`]) into cell `idx` of `peer`'s copy of `sig`.
fn notify_checked(
    world: &mut World,
    n: Checked<'_>,
    sig: &TRef,
    peer: i64,
    idx: &[i64],
    value: i32,
    op: NotifyOp,
) -> Result<(), Fault> {
    let Notifier { g, span, .. } = *n.notifier();
    let r = world.cell_addr(g, sig, Some(peer), idx, span, NOTIFY)?;
    world.notify_cell(n, r, value, op)
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

fn fence(cx: &mut OpCx<'_>, _args: &[Val]) -> Result<Flow, Fault> {
    cx.world.fence(cx.rank);
    Ok(Flow::Val(Val::Unit))
}

fn notify_op(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let (who, group) = (cx.who, cx.group);
    let checked = cx.world.check_notify(Notifier { g: cx.rank, who, group, span: cx.span, op: NOTIFY })?;
    let sig = cx.tensor(args, 0)?.clone();
    let peer = cx.int(args, 1)?;
    let idx = cx.ints(args, 2)?;
    let value = cx.int(args, 3)?;
    let op = NotifyOp::from_i64(cx.attr_int("op").unwrap_or(0)).map_err(|e| cx.err(e.to_string()))?;
    notify_checked(cx.world, checked, &sig, peer, &idx, value as i32, op)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::micro::{CellIdx, Micro, MicroRun, MicroStep};
    use crate::world::Access;
    use pld_ir::FileId;
    use std::sync::Arc;

    /// Where the protocol op (and so each of its instructions) is written.
    const AT: Span = Span { file: FileId(0), lo: 10, hi: 20 };

    /// Two ranks with fence checking on: a `[2, 4]` FP32 `data` buffer whose row 0 rank 0
    /// wrote and fenced, and a 2-cell INT32 `signal`; rank 0's views of both.
    fn world() -> (World, TRef, TRef) {
        let (mut w, dv, sv) = crate::world::fixture::two_ranks(2, 4, 0, false);
        w.write(&Access::of(0, &dv, None, &[0, 0], &[1, 4], "store"), &[1.0; 4], false).expect("row 0");
        w.fence(0);
        (w, dv, sv)
    }

    /// A micro program of rank 0 (kernel `who` of mixed-kernel `group`): copy row 0 of `data`
    /// to row 1, then notify rank 1's cell 0 (`fence`: fenced first); its first fault.
    fn micro_copy_notify(
        w: &mut World,
        (dv, sv): (&TRef, &TRef),
        fence: bool,
        (who, group): (&str, Option<&str>),
    ) -> Result<(), Fault> {
        let row = |reg, r| (reg, dv.clone(), None, vec![r, 0], vec![1, 4], "store", Default::default());
        let (reg, src, peer, offs, shape, op, at) = row(0, 0);
        let load = Micro::Load { reg, src, peer, offs, shape, op, at };
        let (reg, dst, peer, offs, shape, op, at) = row(0, 1);
        let store = Micro::Store { reg, dst, peer, offs, shape, atomic: false, op, at };
        let notify = Micro::Notify {
            sig: Arc::new(sv.clone()),
            peer: 1,
            idx: CellIdx::two(0, 0),
            value: 1,
            op: NotifyOp::AtomicAdd,
            fence,
            name: NOTIFY,
            at: Default::default(),
        };
        let mut run = MicroRun::new(vec![load, store, notify], AT);
        while let MicroStep::Ran = run.step(w, 0, who, group)? {}
        Ok(())
    }

    #[test]
    fn a_micro_notify_without_a_fence_gets_the_unfenced_fault_a_dsl_notify_gets() {
        // The DSL: the same store of row 1, then `pld.system.notify` with no fence between.
        let (mut w, dv, sv) = world();
        let store = Access { span: AT, ..Access::of(0, &dv, None, &[1, 0], &[1, 4], "store") };
        w.write(&store, &[1.0; 4], false).expect("row 1");
        let dsl = notify(&mut w, 0, &sv, 1, &[0, 0], 1, NotifyOp::AtomicAdd, AT, "k").expect_err("unfenced");
        assert_eq!(dsl.kind, ReportKind::UnfencedNotify);
        // A micro program that writes the window and notifies without a fence.
        let (mut w, dv, sv) = world();
        let micro = micro_copy_notify(&mut w, (&dv, &sv), false, ("k", None)).expect_err("unfenced");
        assert_eq!(format!("{micro:?}"), format!("{dsl:?}"), "the same fault, span and notes");
        assert!(micro.message.contains("buffer 'data' (store)"), "{}", micro.message);
        // Fenced first (as every protocol builder's notify is), it notifies.
        let (mut w, dv, sv) = world();
        micro_copy_notify(&mut w, (&dv, &sv), true, ("k", None)).expect("fenced");
        let cell = w.cell_addr(0, &sv, Some(1), &[0, 0], AT, NOTIFY).expect("cell");
        assert_eq!(w.cell_value(cell), 1);
    }

    #[test]
    fn a_micro_notify_run_by_two_lanes_of_a_mixed_kernel_is_a_duplicate_notify() {
        let (mut w, dv, sv) = world();
        micro_copy_notify(&mut w, (&dv, &sv), true, ("k_aic", Some("k"))).expect("the first lane");
        micro_copy_notify(&mut w, (&dv, &sv), true, ("k_aic", Some("k"))).expect("the same lane again");
        let f = micro_copy_notify(&mut w, (&dv, &sv), true, ("k_aiv", Some("k"))).expect_err("a second lane");
        assert_eq!(f.kind, ReportKind::DuplicateNotify);
        assert!(f.message.contains("('k_aic' and 'k_aiv')"), "{}", f.message);
    }
}
