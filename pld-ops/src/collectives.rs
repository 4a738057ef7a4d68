//! The collectives family: `pld.tensor.allreduce` (mesh/ring, `op`, `core_num`, optional
//! signal), `barrier`, `broadcast`, `reduce_scatter`, `allgather`, `all_to_all`,
//! `all_to_all_v` (the seed's contract: packed row-major, distinct operands, `core_num == 1`)
//! and the internal `builtin.tensor.*` forms the host and chip rails lower to.
//!
//! Guarantees: every window operand is exactly a `DistributedTensor`; signals are INT32;
//! static dims that must agree are checked; each collective returns its target's (or, for
//! barrier, its signal's) type unchanged so the window binding survives rebinding; reduce
//! destinations and signals are ReadWrite, gather/exchange destinations Write. All are
//! SHARED. Rail-specific rules that the enclosing function kind decides (explicit signal
//! outside the host, `core_num == 1` on InCore) are checked here when the kind is known.

use crate::util::{describe, window_arg};
use pld_ir::registry::{AbiEnumKind, AttrDefault, AttrType};
use pld_ir::{
    register_op, Affinity, AttrDef, DataType, DeduceCx, Diagnostic, Effect, Expr, FunctionKind, Layout,
    OpDef, ParamDef, SignalRole, TensorType, Type,
};

const FAMILY: &str = "collectives";

const fn coll(
    name: &'static str,
    summary: &'static str,
    params: &'static [ParamDef],
    attrs: &'static [AttrDef],
    deduce: pld_ir::registry::DeduceFn,
) -> OpDef {
    OpDef {
        name,
        family: FAMILY,
        summary,
        aliases: &[],
        params,
        attrs,
        affinity: Affinity::Shared,
        no_duplicate: false,
        signal_role: SignalRole::None,
        internal: false,
        effects: None,
        deduce,
        lowerings: &[],
    }
}

const fn builtin(
    name: &'static str,
    summary: &'static str,
    params: &'static [ParamDef],
    attrs: &'static [AttrDef],
    deduce: pld_ir::registry::DeduceFn,
) -> OpDef {
    OpDef { internal: true, ..coll(name, summary, params, attrs, deduce) }
}

pub(crate) const OP_SUM: AttrDef =
    AttrDef::with_default("op", AttrType::Enum(AbiEnumKind::ReduceOp), AttrDefault::Int(0));
const OP_REQ: AttrDef = AttrDef::required("op", AttrType::Enum(AbiEnumKind::ReduceOp));
const DTYPE_REQ: AttrDef = AttrDef::required("dtype", AttrType::DType);
const CORE_NUM: AttrDef = AttrDef::with_default("core_num", AttrType::Int, AttrDefault::Int(1));

const TARGET_SIGNAL: &[ParamDef] =
    &[ParamDef::mem("target", Effect::ReadWrite), ParamDef::mem("signal", Effect::ReadWrite)];
const SRC_SIGNAL: &[ParamDef] =
    &[ParamDef::mem("src", Effect::ReadWrite), ParamDef::mem("signal", Effect::ReadWrite)];
const GATHER: &[ParamDef] = &[
    ParamDef::mem("input", Effect::Read),
    ParamDef::mem("target", Effect::Write),
    ParamDef::mem("signal", Effect::ReadWrite),
];
const A2AV: &[ParamDef] = &[
    ParamDef::mem("input", Effect::Read),
    ParamDef::mem("target", Effect::Write),
    ParamDef::mem("signal", Effect::ReadWrite),
    ParamDef::mem("send_counts", Effect::Read),
    ParamDef::mem("recv_counts", Effect::Write),
];

// ---------------------------------------------------------------------------------------
// Shared checks.

fn is_incore(cx: &DeduceCx<'_>) -> bool {
    cx.env.func_kind.is_some_and(FunctionKind::is_incore)
}

fn is_host(cx: &DeduceCx<'_>) -> bool {
    cx.env.func_kind == Some(FunctionKind::Host)
}

/// A window-bound INT32 signal.
fn signal_arg<'a>(cx: &'a DeduceCx<'_>, i: usize) -> Result<&'a TensorType, Diagnostic> {
    let s = window_arg(cx, i, "signal")?;
    if s.dtype != DataType::INT32 {
        return Err(cx.arg_error(
            i,
            format!(
                "{} signal must have INT32 element type (the barrier slot is an int counter), got dtype {}",
                cx.def.name, s.dtype
            ),
        ));
    }
    Ok(s)
}

/// A `[NR]` or `[NR, 1]` signal (allgather / all_to_all).
fn mesh_signal<'a>(cx: &'a DeduceCx<'_>, i: usize) -> Result<&'a TensorType, Diagnostic> {
    let s = signal_arg(cx, i)?;
    match s.rank() {
        1 => {}
        2 => {
            if s.shape[1].as_int() != Some(1) {
                let got = s.shape[1].as_int().map_or("<dynamic>".to_string(), |v| v.to_string());
                return Err(
                    cx.arg_error(i, format!("{} signal second dimension must be 1, got {got}", cx.def.name))
                );
            }
        }
        n => {
            return Err(cx
                .arg_error(i, format!("{} signal must be 1D [NR] or 2D [NR, 1], got {n} dims", cx.def.name)))
        }
    }
    Ok(s)
}

/// The same expression passed in two roles.
fn distinct(cx: &DeduceCx<'_>, roles: &[(usize, &str)]) -> Result<(), Diagnostic> {
    for (k, (i, a)) in roles.iter().enumerate() {
        for (j, b) in &roles[k + 1..] {
            if let (Some(x), Some(y)) = (cx.arg(*i), cx.arg(*j)) {
                if x == y {
                    return Err(cx.arg_error(
                        *j,
                        format!(
                            "{} {a} and {b} must be different buffers, but the same expression was passed for both",
                            cx.def.name
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// `a` and `b` agree when both static (dynamic dims are trusted).
fn static_ne(a: &Expr, b: &Expr) -> Option<(i64, i64)> {
    match (a.as_int(), b.as_int()) {
        (Some(x), Some(y)) if x != y => Some((x, y)),
        _ => None,
    }
}

fn rank2<'a>(
    cx: &DeduceCx<'_>,
    i: usize,
    t: &'a TensorType,
    role: &str,
    layout: &str,
) -> Result<&'a TensorType, Diagnostic> {
    if t.rank() != 2 {
        return Err(
            cx.arg_error(i, format!("{} {role} must be 2D {layout}, got {} dims", cx.def.name, t.rank()))
        );
    }
    Ok(t)
}

fn tensor_like<'a>(cx: &'a DeduceCx<'_>, i: usize, role: &str) -> Result<&'a TensorType, Diagnostic> {
    cx.ty(i).as_tensor_like().ok_or_else(|| {
        cx.arg_error(
            i,
            format!(
                "{} {role} must be a Tensor or DistributedTensor, got {}",
                cx.def.name,
                cx.ty(i).kind_name()
            ),
        )
    })
}

fn dtype_kwarg(cx: &DeduceCx<'_>, role: &str, want: DataType) -> Result<(), Diagnostic> {
    if let Some(d) = cx.attr("dtype").and_then(|a| a.as_dtype()) {
        if d != want {
            return Err(
                cx.error(format!("{} dtype kwarg ({d}) must match {role} dtype ({want})", cx.def.name))
            );
        }
    }
    Ok(())
}

fn fp32_only(cx: &DeduceCx<'_>, d: DataType) -> Result<(), Diagnostic> {
    if d != DataType::FP32 {
        return Err(cx.error(format!("{} currently supports only FP32 data, got {d}", cx.def.name)));
    }
    Ok(())
}

/// Packed row-major, fully valid (the all_to_all_v seed contract on input/target).
fn packed(cx: &DeduceCx<'_>, i: usize, t: &TensorType, role: &str) -> Result<(), Diagnostic> {
    let op = cx.def.name;
    let Some(v) = &t.view else { return Ok(()) };
    if v.layout != Layout::Nd {
        return Err(cx.arg_error(
            i,
            format!("{op} {role} must be a packed row-major (ND) view, got layout {}", v.layout.dsl_name()),
        ));
    }
    if !v.stride.is_empty() {
        let packed: Vec<Option<i64>> = (0..t.rank())
            .map(|k| {
                t.shape[k + 1..].iter().try_fold(1i64, |acc, d| d.as_int().and_then(|x| acc.checked_mul(x)))
            })
            .collect();
        for (k, (s, p)) in v.stride.iter().zip(&packed).enumerate() {
            if let (Some(s), Some(p)) = (s.as_int(), p) {
                if s != *p {
                    return Err(cx.arg_error(
                        i,
                        format!("{op} {role} must be packed row-major; stride {k} is {s}, expected {p}"),
                    ));
                }
            }
        }
    }
    for (k, (vs, s)) in v.valid_shape.iter().zip(&t.shape).enumerate() {
        if let Some((a, b)) = static_ne(vs, s) {
            return Err(cx.arg_error(
                i,
                format!("{op} {role} valid_shape must cover the whole shape; dimension {k} is {a} of {b}"),
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// allreduce

/// `pld.tensor.allreduce(target[, signal], *, op=Sum, mode="mesh", core_num=1)`.
pub static ALLREDUCE: OpDef = coll(
    "pld.tensor.allreduce",
    "reduce every rank's window slice in place (mesh or ring); returns the target",
    &[ParamDef::mem("target", Effect::ReadWrite), ParamDef::optional_mem("signal", Effect::ReadWrite)],
    &[
        OP_SUM,
        AttrDef::with_default("mode", AttrType::Str, AttrDefault::Str("mesh")),
        CORE_NUM,
        AttrDef::optional("nranks", AttrType::Int),
    ],
    deduce_allreduce,
);

fn deduce_allreduce(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    const OP: &str = "pld.tensor.allreduce";
    let target = window_arg(cx, 0, "target")?;
    if !matches!(target.dtype, DataType::FP16 | DataType::FP32) {
        return Err(cx.arg_error(0, format!("{OP} target dtype must be FP16 or FP32, got {}", target.dtype)));
    }
    let signal = if cx.arg(1).is_some() { Some(signal_arg(cx, 1)?) } else { None };
    let core_num = cx.attr_int("core_num").unwrap_or(1);
    if core_num <= 0 {
        return Err(cx.error(format!("{OP} core_num must be positive, got {core_num}")));
    }
    let mode = cx.attr_str("mode").unwrap_or_else(|| "mesh".into());
    if mode != "mesh" && mode != "ring" {
        return Err(cx.error(format!("{OP} mode must be \"ring\" or \"mesh\", got \"{mode}\"")));
    }
    if mode == "ring" && core_num != 1 {
        return Err(cx.error(format!(
            "HOST {OP} mode=\"ring\" does not support core_num > 1, got core_num={core_num}; use mode=\"mesh\" for \
             a multi-core AllReduce"
        )));
    }
    if is_incore(cx) && core_num != 1 {
        return Err(cx.error(format!(
            "{OP} core_num > 1 is supported only in a HOST orchestrator; use an enclosing pl.spmd(...) for \
             multi-core InCore execution"
        )));
    }
    crate::collective_api::check_ring_nranks(cx, &mode, signal)?;
    let Some(signal) = signal else {
        if mode == "ring" && cx.attr_int("nranks").is_none() {
            return Err(cx.error(format!(
                "{OP} mode=ring requires an explicit signal. Use pld.tensor.allreduce(target, signal, mode=\"ring\")"
            ))
            .with_note("in a host orchestrator a static rank count is enough: pld.all_reduce(target, mode=\"ring\", nranks=N)"));
        }
        if cx.env.func_kind.is_some() && !is_host(cx) {
            return Err(cx.error(format!(
                "{OP} requires an explicit signal outside host orchestrator functions. Use \
                 pld.tensor.allreduce(target, signal, op=...) for InCore/lowered composite paths."
            )));
        }
        return Ok(cx.ty(0).clone());
    };
    if cx.arg(0) == cx.arg(1) {
        return Err(cx.arg_error(1, format!("{OP} target and signal must be different window buffers")));
    }
    if !is_host(cx) && cx.env.func_kind.is_some() {
        // The InCore composite rail: [NR, 1] for mesh, [2(NR-1), NR] for ring.
        if signal.rank() != 2 {
            let layout = if mode == "ring" { "[2*(NR-1), NR]" } else { "[NR, 1]" };
            return Err(
                cx.arg_error(1, format!("{OP} signal must be 2D {layout}, got rank {}", signal.rank()))
            );
        }
        if mode == "mesh" {
            if let Some(c) = signal.shape[1].as_int().filter(|c| *c != 1) {
                return Err(cx.arg_error(
                    1,
                    format!(
                        "{OP} mesh signal must be [NR, 1], got second dimension {c}; a [2*(NR-1), NR] signal is the \
                         ring layout and must not be shared with a mesh allreduce"
                    ),
                ));
            }
        } else if let (Some(r), Some(nr)) = (signal.shape[0].as_int(), signal.shape[1].as_int()) {
            let want = nr.checked_sub(1).and_then(|x| x.checked_mul(2));
            if want != Some(r) {
                let want = want.map_or_else(|| "out of range".to_string(), |w| w.to_string());
                return Err(cx.arg_error(
                    1,
                    format!(
                        "{OP} mode=ring signal shape[0] ({r}) must equal 2*(NR-1) = {want} for NR = {nr}"
                    ),
                ));
            }
        }
    }
    Ok(cx.ty(0).clone())
}

// ---------------------------------------------------------------------------------------
// barrier, broadcast, reduce_scatter

/// `pld.tensor.barrier(signal)`: returns the signal.
pub static BARRIER: OpDef = coll(
    "pld.tensor.barrier",
    "synchronise window visibility across ranks on a self-clearing signal; returns the signal",
    &[ParamDef::mem("signal", Effect::ReadWrite)],
    &[],
    deduce_barrier,
);

fn deduce_barrier(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    signal_arg(cx, 0)?;
    Ok(cx.ty(0).clone())
}

/// `pld.tensor.broadcast(target, signal, *, root)`: returns the target.
pub static BROADCAST: OpDef = coll(
    "pld.tensor.broadcast",
    "replicate the root rank's window slice to every rank; returns the target",
    crate::collective_api::TARGET_OPT_SIGNAL,
    &[AttrDef::required("root", AttrType::Int)],
    deduce_broadcast,
);

fn deduce_broadcast(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    window_arg(cx, 0, "target")?;
    if !crate::collective_api::omitted_signal(cx, 1)? {
        signal_arg(cx, 1)?;
        distinct(cx, &[(0, "target"), (1, "signal")])?;
    }
    let root = cx.attr_int("root").unwrap_or(0);
    if root < 0 {
        return Err(cx.error(format!("pld.tensor.broadcast root rank must be non-negative, got {root}")));
    }
    Ok(cx.ty(0).clone())
}

/// `pld.tensor.reduce_scatter(target, signal, *, op=Sum)`: returns the target.
pub static REDUCE_SCATTER: OpDef = coll(
    "pld.tensor.reduce_scatter",
    "reduce a [NR, SIZE] window and leave row r on rank r; returns the target",
    crate::collective_api::TARGET_OPT_SIGNAL,
    &[OP_SUM],
    deduce_reduce_scatter,
);

fn deduce_reduce_scatter(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    const OP: &str = "pld.tensor.reduce_scatter";
    let t = window_arg(cx, 0, "target")?;
    if t.rank() != 2 {
        return Err(cx.arg_error(0, format!("{OP} target must be 2D [NR, SIZE], got {} dims", t.rank())));
    }
    if !crate::collective_api::omitted_signal(cx, 1)? {
        signal_arg(cx, 1)?;
        distinct(cx, &[(0, "target"), (1, "signal")])?;
    }
    let op = cx.attr_int("op").unwrap_or(0);
    if op != 0 {
        return Err(cx
            .error(format!(
                "{OP} op must be ReduceOp.Sum (got int {op}); Max / Min / Prod lowerings are not yet implemented"
            ))
            .with_note("pld.tensor.allreduce supports Sum, Max, Min and Prod"));
    }
    Ok(cx.ty(0).clone())
}

// ---------------------------------------------------------------------------------------
// allgather, all_to_all

/// `pld.tensor.allgather(input, target, signal)`: returns the target.
pub static ALLGATHER: OpDef = coll(
    "pld.tensor.allgather",
    "gather every rank's [1, SIZE] chunk into row r of a [NR, SIZE] window; returns the target",
    crate::collective_api::GATHER_OPT_SIGNAL,
    &[],
    deduce_allgather,
);

fn deduce_allgather(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    const OP: &str = "pld.tensor.allgather";
    if cx.arg(0) == cx.arg(1) {
        return Err(cx.arg_error(
            1,
            format!("{OP} input and target must be different buffers, but the same expression was passed for both"),
        ));
    }
    let input = tensor_like(cx, 0, "input")?;
    if input.rank() != 2 {
        return Err(cx.arg_error(
            0,
            format!("{OP} input must be 2D [1, SIZE] (this rank's single chunk), got {} dims", input.rank()),
        ));
    }
    if let Some(r) = input.shape[0].as_int().filter(|r| *r != 1) {
        return Err(cx.arg_error(
            0,
            format!("{OP} input must be 2D [1, SIZE] (this rank's single chunk), got first dim {r}"),
        ));
    }
    if is_incore(cx) && !matches!(cx.ty(0), Type::Tensor(_)) {
        return Err(cx.arg_error(
            0,
            format!(
                "{OP} local_data must be a plain Tensor [1, SIZE] on the InCore path, got {}",
                cx.ty(0).kind_name()
            ),
        ));
    }
    let target = rank2(cx, 1, window_arg(cx, 1, "target")?, "target", "[NR, SIZE]")?;
    if target.dtype != input.dtype {
        return Err(cx.arg_error(
            1,
            format!("{OP} target dtype {} must match input dtype {}", target.dtype, input.dtype),
        ));
    }
    if target.shape[1] != input.shape[1] {
        return Err(cx.arg_error(1, format!("{OP} target SIZE must equal input SIZE")));
    }
    if crate::collective_api::omitted_signal(cx, 2)? {
        return Ok(cx.ty(1).clone());
    }
    let signal = mesh_signal(cx, 2)?;
    distinct(cx, &[(0, "input"), (1, "target"), (2, "signal")])?;
    if let Some((a, b)) = static_ne(&signal.shape[0], &target.shape[0]) {
        return Err(cx.arg_error(
            2,
            format!("{OP} signal first dimension ({a}) must equal target first dimension ({b})"),
        ));
    }
    Ok(cx.ty(1).clone())
}

/// `pld.tensor.all_to_all(input, target, signal)`: returns the target.
pub static ALL_TO_ALL: OpDef = coll(
    "pld.tensor.all_to_all",
    "personalised exchange: row d of every rank's [NR, SIZE] input lands in row r of rank d's window",
    crate::collective_api::GATHER_OPT_SIGNAL,
    &[],
    deduce_all_to_all,
);

fn deduce_all_to_all(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    const OP: &str = "pld.tensor.all_to_all";
    if cx.arg(0) == cx.arg(1) {
        return Err(cx.arg_error(
            1,
            format!("{OP} input and target must be different windows, but the same expression was passed for both"),
        ));
    }
    let input = rank2(cx, 0, tensor_like(cx, 0, "input")?, "input", "[NR, SIZE]")?;
    let target = rank2(cx, 1, window_arg(cx, 1, "target")?, "target", "[NR, SIZE]")?;
    if let Some((a, b)) = static_ne(&target.shape[0], &input.shape[0]) {
        return Err(cx.arg_error(
            1,
            format!("{OP} target first dimension ({a}) must equal input first dimension ({b})"),
        ));
    }
    if target.shape[1] != input.shape[1] {
        return Err(cx.arg_error(1, format!("{OP} target shape must equal input shape")));
    }
    if target.dtype != input.dtype {
        return Err(cx.arg_error(
            1,
            format!("{OP} target dtype {} must match input dtype {}", target.dtype, input.dtype),
        ));
    }
    if crate::collective_api::omitted_signal(cx, 2)? {
        return Ok(cx.ty(1).clone());
    }
    let signal = mesh_signal(cx, 2)?;
    distinct(cx, &[(0, "input"), (1, "target"), (2, "signal")])?;
    if let Some((a, b)) = static_ne(&signal.shape[0], &input.shape[0]) {
        return Err(cx.arg_error(
            2,
            format!("{OP} signal first dimension ({a}) must equal input first dimension ({b})"),
        ));
    }
    Ok(cx.ty(1).clone())
}

// ---------------------------------------------------------------------------------------
// all_to_all_v (seed contract)

/// `pld.tensor.all_to_all_v(input, target, signal, send_counts, recv_counts, *, core_num=1)`.
pub static ALL_TO_ALL_V: OpDef = coll(
    "pld.tensor.all_to_all_v",
    "variable-size all-to-all: clamp(send_counts[d], 0, MAX_RECV) rows to each peer, counts published to recv_counts",
    A2AV,
    &[CORE_NUM],
    deduce_all_to_all_v,
);

fn deduce_all_to_all_v(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    a2av(cx, false)
}

/// The shared all_to_all_v contract; `builtin` narrows input/send_counts to windows.
fn a2av(cx: &DeduceCx<'_>, builtin: bool) -> Result<Type, Diagnostic> {
    let op = cx.def.name;
    let input = if builtin { window_arg(cx, 0, "input")? } else { tensor_like(cx, 0, "input")? };
    if input.rank() != 2 {
        return Err(
            cx.arg_error(0, format!("{op} input must be 2D [NR*MAX_RECV, SIZE], got {} dims", input.rank()))
        );
    }
    let target = rank2(cx, 1, window_arg(cx, 1, "target")?, "target", "[NR*MAX_RECV, SIZE]")?;
    if let Some((a, b)) = static_ne(&target.shape[0], &input.shape[0]) {
        return Err(cx.arg_error(
            1,
            format!("{op} target first dimension ({a}) must equal input first dimension ({b})"),
        ));
    }
    if target.shape[1] != input.shape[1] {
        return Err(cx.arg_error(1, format!("{op} target SIZE must equal input SIZE")));
    }
    if target.dtype != input.dtype {
        return Err(cx.arg_error(
            1,
            format!("{op} target dtype {} must match input dtype {}", target.dtype, input.dtype),
        ));
    }
    packed(cx, 0, input, "input")?;
    packed(cx, 1, target, "target")?;
    distinct(cx, &[(0, "input"), (1, "target"), (2, "signal"), (3, "send_counts"), (4, "recv_counts")])
        .map_err(|d| d.with_note("two views of one window allocation are a cross-process data race under in-kernel TPUT/notify"))?;
    // A shape list in the signal slot asks for a private signal (collective_api.rs).
    let slot = crate::collective_api::signal_shape_slot(cx, 2)?;
    let signal = match &slot {
        Some(_) => None,
        None => Some(signal_arg(cx, 2)?),
    };
    if let Some(signal) = signal {
        if signal.rank() != 2 {
            return Err(
                cx.arg_error(2, format!("{op} signal must be 2D [NR, 1], got {} dims", signal.rank()))
            );
        }
        if signal.shape[1].as_int() != Some(1) {
            return Err(
                cx.arg_error(2, format!("{op} signal second dimension must be 1, got {}", signal.shape[1]))
            );
        }
    }
    // NR may be dynamic (the seed: the HOST kernel derives MAX_RECV = target.shape[0] / nranks
    // at entry), so the shape relations are checked only where they are provable.
    let nr = slot.as_ref().or(signal.map(|s| &s.shape[0])).unwrap_or(&target.shape[0]);
    if let Some(n) = nr.as_int().filter(|n| *n <= 0) {
        return Err(cx.arg_error(2, format!("{op} signal dim 0 (NR) must be positive, got {n}")));
    }
    if let (Some(rows), Some(n)) = (target.shape[0].as_int(), nr.as_int()) {
        if rows % n != 0 {
            return Err(cx.arg_error(1, format!("{op} signal dim 0 ({n}) must divide target dim 0 ({rows})")));
        }
    }
    let send = if builtin { window_arg(cx, 3, "send_counts")? } else { tensor_like(cx, 3, "send_counts")? };
    if send.dtype != DataType::INT32 {
        return Err(cx.arg_error(
            3,
            format!("{op} send_counts must have INT32 element type, got dtype {}", send.dtype),
        ));
    }
    match send.rank() {
        1 => {}
        2 if send.shape[1].as_int() == Some(1) => {}
        2 => {
            return Err(cx
                .arg_error(3, format!("{op} send_counts second dimension must be 1, got {}", send.shape[1])))
        }
        n => {
            return Err(
                cx.arg_error(3, format!("{op} send_counts must be 1D [NR] or 2D [NR, 1], got {n} dims"))
            )
        }
    }
    if let Some((a, b)) = static_ne(&send.shape[0], nr) {
        return Err(
            cx.arg_error(3, format!("{op} send_counts dim 0 ({a}) must equal signal dim 0 (NR = {b})"))
        );
    }
    let recv = window_arg(cx, 4, "recv_counts")?;
    if recv.dtype != DataType::INT32 {
        return Err(cx.arg_error(
            4,
            format!("{op} recv_counts must have INT32 element type, got dtype {}", recv.dtype),
        ));
    }
    if recv.rank() != 2 {
        return Err(cx.arg_error(4, format!("{op} recv_counts must be 2D [NR, 1], got {} dims", recv.rank())));
    }
    if recv.shape[1].as_int() != Some(1) {
        return Err(
            cx.arg_error(4, format!("{op} recv_counts second dimension must be 1, got {}", recv.shape[1]))
        );
    }
    if let Some((a, b)) = static_ne(&recv.shape[0], nr) {
        return Err(
            cx.arg_error(4, format!("{op} recv_counts dim 0 ({a}) must equal signal dim 0 (NR = {b})"))
        );
    }
    let core_num = cx.attr_int("core_num").unwrap_or(1);
    if core_num != 1 {
        return Err(cx
            .error(format!("{op} core_num must be 1 (every rail is single-block today), got {core_num}"))
            .with_note(
                "a multi-AIV launch will land on the CHIP rail (the same call in a CHIP orchestration body, \
                 lowered by LowerL2TensorCollectives)",
            ));
    }
    if builtin {
        dtype_kwarg(cx, "target", target.dtype)?;
        fp32_only(cx, target.dtype)?;
    }
    Ok(cx.ty(1).clone())
}

// ---------------------------------------------------------------------------------------
// builtin.tensor.* (internal; HOST/CHIP rails)

fn rank1_signal(cx: &DeduceCx<'_>, i: usize) -> Result<(), Diagnostic> {
    let s = cx.ty(i).as_dist().ok_or_else(|| {
        cx.arg_error(
            i,
            format!("{} signal must be a DistributedTensor, got {}", cx.def.name, describe(cx.ty(i))),
        )
    })?;
    if s.dtype != DataType::INT32 {
        return Err(cx.arg_error(
            i,
            format!("{} signal must have INT32 element type, got dtype {}", cx.def.name, s.dtype),
        ));
    }
    if s.rank() != 1 {
        return Err(cx.arg_error(
            i,
            format!("{} signal must be a rank-1 DistributedTensor, got rank {}", cx.def.name, s.rank()),
        ));
    }
    Ok(())
}

/// `builtin.tensor.allreduce(src, signal, *, op, dtype, core_num)`.
pub static B_ALLREDUCE: OpDef = builtin(
    "builtin.tensor.allreduce",
    "HOST mesh allreduce chip dispatch (prebuilt AIV kernel, core_num blocks)",
    SRC_SIGNAL,
    &[OP_REQ, DTYPE_REQ, AttrDef::required("core_num", AttrType::Int)],
    deduce_b_allreduce,
);

fn deduce_b_allreduce(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let op = cx.def.name;
    let src = window_arg(cx, 0, "src")?;
    if !matches!(src.dtype, DataType::FP16 | DataType::FP32) {
        return Err(cx.arg_error(0, format!("{op} src dtype must be FP16 or FP32, got {}", src.dtype)));
    }
    dtype_kwarg(cx, "src", src.dtype)?;
    let s = signal_arg(cx, 1)?;
    let core_num = cx.attr_int("core_num").unwrap_or(1);
    if core_num <= 0 {
        return Err(cx.error(format!("{op} core_num must be positive, got {core_num}")));
    }
    match s.rank() {
        1 if core_num == 1 => {}
        1 => {
            return Err(
                cx.arg_error(1, format!("{op} a rank-1 signal supports only core_num == 1, got {core_num}"))
            )
        }
        2 => match s.shape[1].as_int() {
            Some(stride) if stride >= core_num => {}
            Some(stride) => {
                return Err(cx
                    .arg_error(1, format!("{op} signal stride ({stride}) must be >= core_num ({core_num})")))
            }
            None => {
                return Err(cx.arg_error(1, format!("{op} signal shape[1] must be a compile-time constant")))
            }
        },
        n => return Err(cx.arg_error(1, format!("{op} signal must be rank 1 or 2, got rank {n}"))),
    }
    Ok(cx.ty(0).clone())
}

/// `builtin.tensor.allreduce_ring(src, signal, *, op, dtype)`.
pub static B_ALLREDUCE_RING: OpDef = builtin(
    "builtin.tensor.allreduce_ring",
    "HOST ring allreduce chip dispatch (prebuilt AIV kernel)",
    SRC_SIGNAL,
    &[OP_REQ, DTYPE_REQ],
    deduce_b_allreduce_ring,
);

fn deduce_b_allreduce_ring(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let op = cx.def.name;
    let src = window_arg(cx, 0, "src")?;
    dtype_kwarg(cx, "src", src.dtype)?;
    let s = signal_arg(cx, 1)?;
    if s.rank() != 2 {
        return Err(
            cx.arg_error(1, format!("{op} signal must be rank 2 [2*(NR-1)+1, NR], got rank {}", s.rank()))
        );
    }
    if let Some(nr) = s.shape[1].as_int() {
        if !(1..=16).contains(&nr) {
            return Err(cx.arg_error(1, format!("{op} supports at most 16 ranks, got NR = {nr}")));
        }
        if let Some(r) = s.shape[0].as_int() {
            if r != 2 * (nr - 1) + 1 {
                return Err(cx.arg_error(
                    1,
                    format!(
                        "{op} signal shape[0] ({r}) must equal 2*(NR-1)+1 = {} for NR = {nr}",
                        2 * (nr - 1) + 1
                    ),
                ));
            }
        }
        let Some(numel) = src.static_numel() else {
            return Err(cx.arg_error(0, format!("{op} src shape must be fully static")));
        };
        if numel % nr != 0 {
            return Err(
                cx.arg_error(0, format!("{op} src element count {numel} must be divisible by NR = {nr}"))
            );
        }
    }
    let rop = cx.attr_int("op").unwrap_or(0);
    if rop != 0 || src.dtype != DataType::FP32 {
        return Err(cx.error(format!(
            "{op} currently supports only (op=ReduceOp.Sum, dtype=FP32); got (op={}, dtype={})",
            AbiEnumKind::ReduceOp.member_name(rop).unwrap_or("?"),
            src.dtype
        )));
    }
    Ok(cx.ty(0).clone())
}

/// `builtin.tensor.barrier(signal)`.
pub static B_BARRIER: OpDef = builtin(
    "builtin.tensor.barrier",
    "HOST barrier chip dispatch",
    &[ParamDef::mem("signal", Effect::ReadWrite)],
    &[],
    deduce_b_barrier,
);

fn deduce_b_barrier(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    rank1_signal(cx, 0)?;
    Ok(cx.ty(0).clone())
}

/// `builtin.tensor.broadcast(target, signal, *, root, dtype)`.
pub static B_BROADCAST: OpDef = builtin(
    "builtin.tensor.broadcast",
    "HOST broadcast chip dispatch",
    TARGET_SIGNAL,
    &[AttrDef::required("root", AttrType::Int), DTYPE_REQ],
    deduce_b_broadcast,
);

fn deduce_b_broadcast(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let t = window_arg(cx, 0, "target")?;
    rank1_signal(cx, 1)?;
    let root = cx.attr_int("root").unwrap_or(0);
    if root < 0 {
        return Err(cx.error(format!("{} root rank must be non-negative, got {root}", cx.def.name)));
    }
    dtype_kwarg(cx, "target", t.dtype)?;
    fp32_only(cx, t.dtype)?;
    Ok(cx.ty(0).clone())
}

/// `builtin.tensor.reduce_scatter(target, signal, *, op, dtype)`.
pub static B_REDUCE_SCATTER: OpDef = builtin(
    "builtin.tensor.reduce_scatter",
    "HOST reduce-scatter chip dispatch",
    TARGET_SIGNAL,
    &[OP_REQ, DTYPE_REQ],
    deduce_b_reduce_scatter,
);

fn deduce_b_reduce_scatter(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let op = cx.def.name;
    let t = window_arg(cx, 0, "target")?;
    if t.rank() != 2 {
        return Err(cx.arg_error(0, format!("{op} target must be 2D [NR, SIZE], got {} dims", t.rank())));
    }
    rank1_signal(cx, 1)?;
    if cx.attr_int("op").unwrap_or(0) != 0 {
        return Err(cx.error(format!("{op} supports only ReduceOp.Sum")));
    }
    dtype_kwarg(cx, "target", t.dtype)?;
    fp32_only(cx, t.dtype)?;
    Ok(cx.ty(0).clone())
}

fn builtin_gather(cx: &DeduceCx<'_>, one_row: bool) -> Result<Type, Diagnostic> {
    let op = cx.def.name;
    distinct(cx, &[(0, "input"), (1, "target"), (2, "signal")])?;
    let input = window_arg(cx, 0, "input")?;
    if input.rank() != 2 {
        return Err(cx.arg_error(0, format!("{op} input must be 2D, got {} dims", input.rank())));
    }
    if one_row {
        if let Some(r) = input.shape[0].as_int().filter(|r| *r != 1) {
            return Err(cx.arg_error(0, format!("{op} input must be [1, SIZE], got first dim {r}")));
        }
    }
    let target = rank2(cx, 1, window_arg(cx, 1, "target")?, "target", "[NR, SIZE]")?;
    if !one_row {
        if let Some((a, b)) = static_ne(&target.shape[0], &input.shape[0]) {
            return Err(cx.arg_error(
                1,
                format!("{op} target first dimension ({a}) must equal input first dimension ({b})"),
            ));
        }
    }
    if target.shape[1] != input.shape[1] {
        return Err(cx.arg_error(1, format!("{op} target SIZE must equal input SIZE")));
    }
    if target.dtype != input.dtype {
        return Err(cx.arg_error(
            1,
            format!("{op} target dtype {} must match input dtype {}", target.dtype, input.dtype),
        ));
    }
    mesh_signal(cx, 2)?;
    dtype_kwarg(cx, "target", target.dtype)?;
    fp32_only(cx, target.dtype)?;
    Ok(cx.ty(1).clone())
}

/// `builtin.tensor.allgather(input, target, signal, *, dtype)`.
pub static B_ALLGATHER: OpDef = builtin(
    "builtin.tensor.allgather",
    "HOST allgather chip dispatch",
    GATHER,
    &[DTYPE_REQ],
    deduce_b_allgather,
);

fn deduce_b_allgather(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    builtin_gather(cx, true)
}

/// `builtin.tensor.all_to_all(input, target, signal, *, dtype)`.
pub static B_ALL_TO_ALL: OpDef = builtin(
    "builtin.tensor.all_to_all",
    "HOST all-to-all chip dispatch",
    GATHER,
    &[DTYPE_REQ],
    deduce_b_all_to_all,
);

fn deduce_b_all_to_all(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    builtin_gather(cx, false)
}

/// `builtin.tensor.all_to_all_v(input, target, signal, send_counts, recv_counts, *, dtype,
/// core_num=1)`: the HOST and CHIP rails' kernel.
pub static B_ALL_TO_ALL_V: OpDef = builtin(
    "builtin.tensor.all_to_all_v",
    "HOST/CHIP all-to-all-v dispatch (in-kernel TPUT builtin)",
    A2AV,
    &[DTYPE_REQ, CORE_NUM],
    deduce_b_all_to_all_v,
);

fn deduce_b_all_to_all_v(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    a2av(cx, true)
}

register_op!(
    ALLREDUCE,
    BARRIER,
    BROADCAST,
    REDUCE_SCATTER,
    ALLGATHER,
    ALL_TO_ALL,
    ALL_TO_ALL_V,
    B_ALLREDUCE,
    B_ALLREDUCE_RING,
    B_BARRIER,
    B_BROADCAST,
    B_REDUCE_SCATTER,
    B_ALLGATHER,
    B_ALL_TO_ALL,
    B_ALL_TO_ALL_V,
);
