//! The ergonomic collective API (`pld.all_reduce`, `pld.all_gather`, `pld.reduce_scatter`,
//! `pld.broadcast`, `pld.all_to_all`, `pld.barrier`) and the private signals of host
//! collectives.
//!
//! Guarantees:
//! - every ergonomic op is canonicalized at call-build time onto its `pld.tensor.*` op
//!   (same operands, the same keyword attributes), so its deducer rules and diagnostics are
//!   exactly those of that op and no pass ever sees an ergonomic name; a diagnostic names
//!   the op as the user wrote it, with the `pld.tensor.*` op in a note;
//! - the ergonomic forms pass no signal; the `pld.tensor.*` host collectives accept an
//!   omitted signal in a host orchestrator only (an explicit one is required everywhere
//!   else), and each registers the shape of the private INT32 signal
//!   `SynthesizeAllReduceSignals` allocates for it: `[world_size, core_num]` for a mesh
//!   allreduce, `[2*(nranks-1)+1, nranks]` for a ring allreduce with a static `nranks=`,
//!   `[world_size]` for broadcast and reduce_scatter, `[world_size, 1]` for allgather and
//!   all_to_all;
//! - `pld.all_to_all_v(input, target, send_counts, recv_counts, nranks=N)` becomes
//!   `pld.tensor.all_to_all_v(input, target, [N, 1], send_counts, recv_counts)`: a static
//!   shape list in the signal slot (the signal sits between the operands, so it cannot
//!   simply be left off) asks for a private `[N, 1]` signal, in a host orchestrator only;
//! - `pld.barrier(signal)` takes the caller's signal (a barrier has no data window whose
//!   comm-domain coverage a private signal could inherit);
//! - `nranks=` belongs to a ring allreduce: with a mesh allreduce it is an error, a
//!   non-positive one is an error, and with an explicit ring signal it must match the
//!   signal's rank dimension.

use crate::record::{op, optional_updates, reads, updates, writes, OpSpec};
use pld_ir::auto_signal::SignalDim;
use pld_ir::registry::{AttrDefault, AttrType};
use pld_ir::{
    register_canonicalize, register_op, register_private_signal, Attr, AttrDef, Call, DeduceCx, DeduceEnv,
    Diagnostic, Expr, ExprKind, FunctionKind, OpDef, ParamDef, TensorType, Type,
};

/// `target, signal?`: broadcast and reduce_scatter with an optional (host) signal.
pub(crate) const TARGET_OPT_SIGNAL: &[ParamDef] = &[updates("target"), optional_updates("signal")];

/// `input, target, signal?`: allgather and all_to_all with an optional (host) signal.
pub(crate) const GATHER_OPT_SIGNAL: &[ParamDef] =
    &[reads("input"), writes("target"), optional_updates("signal")];

/// Whether the optional signal at argument `i` was omitted; an omission outside a host
/// orchestrator is an error (only the host rail synthesizes signals).
pub(crate) fn omitted_signal(cx: &DeduceCx<'_>, i: usize) -> Result<bool, Diagnostic> {
    if cx.arg(i).is_some() {
        return Ok(false);
    }
    if cx.env.func_kind.is_some_and(|k| k != FunctionKind::Host) {
        let op = cx.def.name;
        return Err(cx.error(format!(
            "{op} requires an explicit signal outside host orchestrator functions; pass an INT32 signal window \
             (only a host orchestrator allocates a private one)"
        )));
    }
    Ok(true)
}

/// The shape list standing in for the signal at argument `i` (`[N, 1]`, N a positive
/// literal): `Some(N)` when there is one, `None` for an ordinary operand.
pub(crate) fn signal_shape_slot(cx: &DeduceCx<'_>, i: usize) -> Result<Option<Expr>, Diagnostic> {
    let Some(ExprKind::Tuple(items)) = cx.arg(i).map(|a| &a.kind) else { return Ok(None) };
    let op = cx.def.name;
    if cx.env.func_kind.is_some_and(|k| k != FunctionKind::Host) {
        return Err(cx.arg_error(
            i,
            format!(
                "{op} requires an explicit signal window outside host orchestrator functions, not a shape"
            ),
        ));
    }
    match items.as_slice() {
        [n, one] if n.as_int().is_some_and(|n| n > 0) && one.as_int() == Some(1) => Ok(Some(n.clone())),
        _ => Err(cx.arg_error(
            i,
            format!(
                "{op} signal shape must be [NR, 1] with a static NR > 0 (a private signal of that shape)"
            ),
        )),
    }
}

/// The `nranks=` rules of `pld.tensor.allreduce`.
pub(crate) fn check_ring_nranks(
    cx: &DeduceCx<'_>,
    mode: &str,
    signal: Option<&TensorType>,
) -> Result<(), Diagnostic> {
    let op = cx.def.name;
    let Some(n) = cx.attr("nranks").map(|a| a.as_int()) else { return Ok(()) };
    let Some(n) = n.filter(|n| *n > 0) else {
        return Err(cx.error(format!(
            "{op} nranks must be a positive static int (the ring signal [2*(NR-1)+1, NR] is a compile-time shape)"
        )));
    };
    if mode != "ring" {
        return Err(cx.error(format!(
            "{op} nranks is only used with mode=\"ring\"; omit it for a mesh allreduce (or pass mode=\"ring\")"
        )));
    }
    if let Some(got) = signal.and_then(|s| s.shape.get(1)).and_then(Expr::as_int) {
        if got != n {
            return Err(cx.arg_error(
                1,
                format!("{op} nranks ({n}) must equal the signal's second dimension ({got})"),
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Private signal shapes (registry data read by SynthesizeAllReduceSignals).

fn allreduce_signal(call: &Call) -> Result<Vec<SignalDim>, String> {
    let op = call.callee.name();
    if matches!(call.attr("mode"), Some(Attr::Str(m)) if m == "ring") {
        return match call.attr_int("nranks") {
            Some(n) if n > 0 => Ok(vec![SignalDim::Int(2 * (n - 1) + 1), SignalDim::Int(n)]),
            _ => Err(format!(
                "{op} mode=\"ring\" requires an explicit signal window or a static nranks= \
                 (pld.all_reduce(target, mode=\"ring\", nranks=N))"
            )),
        };
    }
    Ok(vec![SignalDim::WorldSize, SignalDim::Int(call.attr_int("core_num").unwrap_or(1))])
}

fn rank1_signal(_: &Call) -> Result<Vec<SignalDim>, String> {
    Ok(vec![SignalDim::WorldSize])
}

fn column_signal(_: &Call) -> Result<Vec<SignalDim>, String> {
    Ok(vec![SignalDim::WorldSize, SignalDim::Int(1)])
}

fn shape_slot_signal(call: &Call) -> Result<Vec<SignalDim>, String> {
    let op = call.callee.name();
    let i = call.op().and_then(|d| d.params.iter().position(|p| p.name == "signal")).unwrap_or(2);
    match call.args.get(i).and_then(Expr::as_tuple) {
        Some(items) => items
            .iter()
            .map(|d| d.as_int().map(SignalDim::Int))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("{op} signal shape must be static")),
        None => Err(format!("{op} requires a signal window or a static [NR, 1] shape in its place")),
    }
}

register_private_signal!("pld.tensor.allreduce", allreduce_signal);
register_private_signal!("pld.tensor.all_to_all_v", shape_slot_signal);
register_private_signal!("pld.tensor.broadcast", rank1_signal);
register_private_signal!("pld.tensor.reduce_scatter", rank1_signal);
register_private_signal!("pld.tensor.allgather", column_signal);
register_private_signal!("pld.tensor.all_to_all", column_signal);

// ---------------------------------------------------------------------------------------
// The ergonomic ops: records for keyword resolution, canonicalized onto pld.tensor.*.

const FAMILY: &str = "collective_api";

/// An ergonomic op's record: SHARED, no aliases, a collective, deduced only if
/// canonicalization fails.
const fn api(name: &'static str, summary: &'static str) -> OpSpec {
    op(name, FAMILY, summary).collective()
}

/// Never reached: every ergonomic call is redirected before deduction.
fn deduce_canonicalized(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    Err(cx.error(format!("{} is rewritten onto its pld.tensor op before type deduction", cx.def.name)))
}

const MODE: AttrDef = AttrDef::with_default("mode", AttrType::Str, AttrDefault::Str("mesh"));

/// `pld.all_reduce(target, *, op=Sum, mode="mesh", nranks=None)`.
pub static ALL_REDUCE: OpDef = api(
    "pld.all_reduce",
    "in-place allreduce of a window with a private signal (mesh, or ring with a static nranks)",
)
.params(&[updates("target")])
.attrs(&[crate::collectives::OP_SUM, MODE, AttrDef::optional("nranks", AttrType::Int)])
.deduce(deduce_canonicalized);

/// `pld.all_gather(local_data, target)`.
pub static ALL_GATHER: OpDef = api(
    "pld.all_gather",
    "gather every rank's [1, SIZE] chunk into a [NR, SIZE] window with a private signal",
)
.params(&[reads("local_data"), writes("target")])
.deduce(deduce_canonicalized);

/// `pld.reduce_scatter(target, *, op=Sum)`.
pub static REDUCE_SCATTER: OpDef =
    api("pld.reduce_scatter", "reduce a [NR, SIZE] window, row r to rank r, with a private signal")
        .params(&[updates("target")])
        .attrs(&[crate::collectives::OP_SUM])
        .deduce(deduce_canonicalized);

/// `pld.broadcast(target, *, root)`.
pub static BROADCAST: OpDef =
    api("pld.broadcast", "replicate the root's window slice to every rank with a private signal")
        .params(&[updates("target")])
        .attrs(&[AttrDef::required("root", AttrType::Int)])
        .deduce(deduce_canonicalized);

/// `pld.all_to_all(input, target)`.
pub static ALL_TO_ALL: OpDef =
    api("pld.all_to_all", "personalised [NR, SIZE] exchange with a private signal")
        .params(&[reads("input"), writes("target")])
        .deduce(deduce_canonicalized);

/// `pld.barrier(signal)`.
pub static BARRIER: OpDef =
    api("pld.barrier", "cross-rank barrier on the caller's comm-domain-covered INT32 signal")
        .params(&[updates("signal")])
        .deduce(deduce_canonicalized);

/// `pld.all_to_all_v(input, target, send_counts, recv_counts, *, nranks)`.
pub static ALL_TO_ALL_V: OpDef =
    api("pld.all_to_all_v", "variable-size all-to-all with a private [nranks, 1] signal")
        .params(&[reads("input"), writes("target"), reads("send_counts"), writes("recv_counts")])
        .attrs(&[AttrDef::required("nranks", AttrType::Int)])
        .deduce(deduce_all_to_all_v_api);

/// Reached only when the canonicalizer could not place the signal: `nranks` is not a
/// positive int.
fn deduce_all_to_all_v_api(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    Err(cx.error(format!(
        "{} nranks must be a positive static int (the signal [nranks, 1] and MAX_RECV = target rows / nranks \
         are compile-time shapes)",
        cx.def.name
    )))
}

register_op!(ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, BROADCAST, ALL_TO_ALL, ALL_TO_ALL_V, BARRIER);

/// `pld.all_to_all_v(i, t, s, r, nranks=N)` → `pld.tensor.all_to_all_v(i, t, [N, 1], s, r)`;
/// left alone (for the record's deducer to report) unless N is a positive int and the four
/// operands are there.
fn canon_all_to_all_v(
    args: &mut Vec<Expr>,
    attrs: &mut Vec<(String, Attr)>,
    _: &DeduceEnv<'_>,
) -> Option<&'static str> {
    let at = attrs.iter().position(|(k, _)| k == "nranks")?;
    let n = match attrs[at].1 {
        Attr::Int(n) if n > 0 => n,
        _ => return None, // a bool or a non-positive count: the record reports it
    };
    if args.len() != 4 {
        return None;
    }
    attrs.remove(at);
    args.insert(2, Expr::tuple(vec![Expr::int(n), Expr::int(1)]));
    Some("pld.tensor.all_to_all_v")
}

register_canonicalize!("pld.all_to_all_v", canon_all_to_all_v);

macro_rules! onto {
    ($($f:ident: $op:literal => $to:literal;)*) => {$(
        // The signature is `CanonicalizeFn`'s: the operands and attributes carry over as written.
        #[allow(clippy::ptr_arg)]
        fn $f(_: &mut Vec<Expr>, _: &mut Vec<(String, Attr)>, _: &DeduceEnv<'_>) -> Option<&'static str> {
            Some($to)
        }
        register_canonicalize!($op, $f);
    )*};
}

onto! {
    canon_all_reduce: "pld.all_reduce" => "pld.tensor.allreduce";
    canon_all_gather: "pld.all_gather" => "pld.tensor.allgather";
    canon_reduce_scatter: "pld.reduce_scatter" => "pld.tensor.reduce_scatter";
    canon_broadcast: "pld.broadcast" => "pld.tensor.broadcast";
    canon_all_to_all: "pld.all_to_all" => "pld.tensor.all_to_all";
    canon_barrier: "pld.barrier" => "pld.tensor.barrier";
}
