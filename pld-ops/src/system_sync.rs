//! The system_sync family: `notify` (TNOTIFY), `wait` (TWAIT) and `defer_wait` (deferred
//! task completion). All three drive a per-rank signal slot of a window-bound tensor and
//! produce no value (`UnknownType`). All are SHARED; only `notify` carries `no_duplicate`
//! (a cube-lane copy could publish the signal before the vector lane's data lands), and
//! `notify` writes its target (Set) or read-modify-writes it (AtomicAdd); the waits write
//! nothing.

use crate::record::{op, reads, updates, value};
use crate::util::{describe, offsets_tuple, peer_arg, window_arg};
use pld_ir::registry::{AbiEnumKind, AttrType};
use pld_ir::{
    register_op, AttrDef, Call, DataType, DeduceCx, Diagnostic, Effect, ExprKind, Layout, OpDef, SignalRole,
    Type,
};

const FAMILY: &str = "system_sync";

/// `pld.system.notify(target, peer, offsets, value, *, op)`: signal a peer's slot.
pub static NOTIFY: OpDef = op(
    "pld.system.notify",
    FAMILY,
    "write or atomically add a scalar into a peer rank's signal slot (TNOTIFY)",
)
.params(&[updates("target").peer(), value("peer"), value("offsets"), value("value")])
.attrs(&[AttrDef::required("op", AttrType::Enum(AbiEnumKind::NotifyOp))])
.no_duplicate()
.signal_role(SignalRole::Notify)
.effects(notify_effects)
.deduce(deduce_notify);

/// Set overwrites the slot (Write); AtomicAdd, or an absent `op`, reads it too.
fn notify_effects(call: &Call) -> Vec<Effect> {
    let target = if call.attr_int("op") == Some(1) { Effect::Write } else { Effect::ReadWrite };
    (0..call.args.len()).map(|i| if i == 0 { target } else { Effect::None }).collect()
}

fn deduce_notify(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let target = window_arg(cx, 0, "target")?;
    peer_arg(cx, 1)?;
    offsets_tuple(cx, 2, "offsets", target.rank(), "target tensor")?;
    if !matches!(cx.ty(3), Type::Scalar(_)) {
        return Err(cx.arg_error(
            3,
            format!("pld.system.notify value must be a scalar, got {}", cx.ty(3).kind_name()),
        ));
    }
    Ok(Type::Unknown)
}

/// `pld.system.wait(signal, offsets, expected, *, cmp)`: block on this rank's own slot.
pub static WAIT: OpDef =
    op("pld.system.wait", FAMILY, "block until this rank's signal slot compares Eq/Ge to a scalar (TWAIT)")
        .params(&[reads("signal"), value("offsets"), value("expected")])
        .attrs(&[AttrDef::required("cmp", AttrType::Enum(AbiEnumKind::WaitCmp))])
        .signal_role(SignalRole::BlockingWait)
        .deduce(deduce_wait);

/// A wait whose offsets and expected value are given the other way round: name which
/// argument is which.
fn swapped_wait(cx: &DeduceCx<'_>) -> Result<(), Diagnostic> {
    if matches!(cx.ty(1), Type::Scalar(_)) && matches!(cx.ty(2), Type::Tuple(_)) {
        let name = cx.def.name;
        return Err(cx
            .error(format!(
                "{name} arguments 2 and 3 look swapped: argument 2 is the offsets (a list, one index per \
                 signal dimension) and argument 3 the expected value (a scalar), but got a scalar, then a list"
            ))
            .with_help(format!("write {name}(signal, [offsets...], expected, cmp=...)")));
    }
    Ok(())
}

fn deduce_wait(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let signal = window_arg(cx, 0, "signal")?;
    swapped_wait(cx)?;
    offsets_tuple(cx, 1, "offsets", signal.rank(), "target tensor")?;
    if !matches!(cx.ty(2), Type::Scalar(_)) {
        return Err(cx.arg_error(
            2,
            format!("pld.system.wait expected must be a scalar, got {}", cx.ty(2).kind_name()),
        ));
    }
    Ok(Type::Unknown)
}

/// `pld.system.defer_wait(signal, offsets, expected, *, cmp)`: defer this task's completion
/// until a local counter reaches `expected` (Ge only).
pub static DEFER_WAIT: OpDef = op(
    "pld.system.defer_wait",
    FAMILY,
    "defer the task's logical completion until a local INT32 counter is >= expected",
)
.params(&[reads("signal"), value("offsets"), value("expected")])
.attrs(&[AttrDef::required("cmp", AttrType::Enum(AbiEnumKind::WaitCmp))])
.signal_role(SignalRole::DeferredWait)
.deduce(deduce_defer_wait);

fn is_int_scalar(t: &Type) -> bool {
    matches!(t, Type::Scalar(d) if d.is_int())
}

fn deduce_defer_wait(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let signal = window_arg(cx, 0, "signal")?;
    swapped_wait(cx)?;
    if signal.dtype != DataType::INT32 {
        return Err(cx.arg_error(
            0,
            format!("pld.system.defer_wait signal dtype must be INT32, got {}", signal.dtype),
        ));
    }
    if signal.rank() == 0 {
        return Err(cx.arg_error(0, "pld.system.defer_wait signal rank must be at least 1, got 0"));
    }
    if signal.layout() == Layout::Nz {
        return Err(
            cx.arg_error(0, "pld.system.defer_wait signal must use ND or DN addressing, got NZ layout")
        );
    }
    if !matches!(cx.arg(0).map(|a| &a.kind), Some(ExprKind::Var(_))) {
        return Err(cx.arg_error(
            0,
            "pld.system.defer_wait signal must be a direct window-bound parameter, not a slice, view or computed value",
        ));
    }
    let offsets = offsets_tuple(cx, 1, "offsets", signal.rank(), "signal tensor")?;
    for (i, o) in offsets.iter().enumerate() {
        let t = o.ty(cx.env.values);
        if !is_int_scalar(&t) {
            return Err(cx.arg_error(
                1,
                format!(
                    "pld.system.defer_wait offset {i} must be an integer or index scalar, got {}",
                    dtype_or_kind(&t)
                ),
            ));
        }
    }
    if !is_int_scalar(cx.ty(2)) {
        return Err(cx.arg_error(
            2,
            format!(
                "pld.system.defer_wait expected must be an integer or index scalar, got {}",
                dtype_or_kind(cx.ty(2))
            ),
        ));
    }
    if let Some(v) = cx.arg(2).and_then(|e| e.as_int()) {
        if !(0..=i64::from(i32::MAX)).contains(&v) {
            return Err(cx.arg_error(
                2,
                format!("pld.system.defer_wait constant expected must be in [0, INT32_MAX], got {v}"),
            ));
        }
    }
    let cmp = cx.attr_int("cmp").unwrap_or(-1);
    if cmp != 1 {
        return Err(cx
            .error(format!("pld.system.defer_wait only supports WaitCmp.Ge (got int {cmp})"))
            .with_note(
                "to block until equality, use pld.system.wait(signal, offsets, expected, cmp=pld.WaitCmp.Eq)",
            ));
    }
    Ok(Type::Unknown)
}

fn dtype_or_kind(t: &Type) -> String {
    match t {
        Type::Scalar(d) => d.to_string(),
        other => describe(other),
    }
}

register_op!(NOTIFY, WAIT, DEFER_WAIT);
