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
//! The shared argument checks live in `checks`, the internal `builtin.tensor.*` records in
//! `builtin` (re-exported here).

use crate::record::{op, optional_updates, reads, updates, writes};
use crate::util::window_arg;
use pld_ir::registry::{AbiEnumKind, AttrDefault, AttrType};
use pld_ir::{register_op, AttrDef, DataType, DeduceCx, Diagnostic, Expr, OpDef, ParamDef, Type};

const FAMILY: &str = "collectives";

pub(crate) const OP_SUM: AttrDef =
    AttrDef::with_default("op", AttrType::Enum(AbiEnumKind::ReduceOp), AttrDefault::Int(0));
const OP_REQ: AttrDef = AttrDef::required("op", AttrType::Enum(AbiEnumKind::ReduceOp));
const DTYPE_REQ: AttrDef = AttrDef::required("dtype", AttrType::DType);
const CORE_NUM: AttrDef = AttrDef::with_default("core_num", AttrType::Int, AttrDefault::Int(1));

const TARGET_SIGNAL: &[ParamDef] = &[updates("target"), updates("signal")];
const SRC_SIGNAL: &[ParamDef] = &[updates("src"), updates("signal")];
const GATHER: &[ParamDef] = &[reads("input"), writes("target"), updates("signal")];
const A2AV: &[ParamDef] =
    &[reads("input"), writes("target"), updates("signal"), reads("send_counts"), writes("recv_counts")];

mod builtin;
mod checks;

pub use builtin::*;
use checks::*;

// ---------------------------------------------------------------------------------------
// allreduce

/// `pld.tensor.allreduce(target[, signal], *, op=Sum, mode="mesh", core_num=1)`.
pub static ALLREDUCE: OpDef = op(
    "pld.tensor.allreduce",
    FAMILY,
    "reduce every rank's window slice in place (mesh or ring); returns the target",
)
.params(&[updates("target"), optional_updates("signal")])
.attrs(&[
    OP_SUM,
    AttrDef::with_default("mode", AttrType::Str, AttrDefault::Str("mesh")),
    CORE_NUM,
    AttrDef::optional("nranks", AttrType::Int),
])
.collective()
.deduce(deduce_allreduce);

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
            if never_one(&signal.shape[1]) {
                // Symbolic: `[2*(NR-1), NR]` (the ring layout) has one column only for NR = 1.
                return Err(cx.arg_error(
                    1,
                    format!(
                        "{OP} mesh signal must be [NR, 1], got [{}, {}]; a [2*(NR-1), NR] signal is the ring layout \
                         and must not be shared with a mesh allreduce",
                        signal.shape[0], signal.shape[1]
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
        } else if never_ring_shaped(&signal.shape[0], &signal.shape[1]) {
            // Symbolic: `[NR, 1]` (the mesh layout) is never `[2*(NR-1), NR]` for any rank count.
            return Err(cx.arg_error(
                1,
                format!(
                    "{OP} mode=ring signal must be [2*(NR-1), NR], got [{}, {}]; an [NR, 1] signal is the mesh \
                     layout and must not be shared with a ring allreduce",
                    signal.shape[0], signal.shape[1]
                ),
            ));
        }
    }
    Ok(cx.ty(0).clone())
}

/// Whether a mesh signal's column count, written in one rank-count symbol, is never 1 for a
/// rank count of 2 or more (`NR`; two symbols or none: unknown, `false`).
fn never_one(cols: &Expr) -> bool {
    let mut syms = Vec::new();
    Expr::collect_syms([cols], &mut syms);
    syms.len() == 1 && [2i64, 3, 4, 5, 8].iter().all(|&n| cols.eval_int(&|_| Some(n)).is_some_and(|c| c != 1))
}

/// Whether a ring signal's `[rows, cols]` can never be `[2*(cols-1), cols]`: both dims are in
/// one rank-count symbol (two independent symbols, e.g. a builtin kernel's shape parameters,
/// may take any values: unknown, `false`) and the shape is not ring-shaped for any of a few rank
/// counts given to it.
fn never_ring_shaped(rows: &Expr, cols: &Expr) -> bool {
    let mut syms = Vec::new();
    Expr::collect_syms([rows, cols], &mut syms);
    if syms.len() > 1 {
        return false;
    }
    [2i64, 3, 4, 5, 8].iter().all(|&n| {
        let at = |e: &Expr| e.eval_int(&|_| Some(n));
        match (at(rows), at(cols)) {
            (Some(r), Some(c)) => c.checked_sub(1).and_then(|x| x.checked_mul(2)) != Some(r),
            _ => false,
        }
    })
}

// ---------------------------------------------------------------------------------------
// barrier, broadcast, reduce_scatter

/// `pld.tensor.barrier(signal)`: returns the signal.
pub static BARRIER: OpDef = op(
    "pld.tensor.barrier",
    FAMILY,
    "synchronise window visibility across ranks on a self-clearing signal; returns the signal",
)
.params(&[updates("signal")])
.collective()
.deduce(deduce_barrier);

fn deduce_barrier(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    signal_arg(cx, 0)?;
    Ok(cx.ty(0).clone())
}

/// `pld.tensor.broadcast(target, signal, *, root)`: returns the target.
pub static BROADCAST: OpDef = op(
    "pld.tensor.broadcast",
    FAMILY,
    "replicate the root rank's window slice to every rank; returns the target",
)
.params(crate::collective_api::TARGET_OPT_SIGNAL)
.attrs(&[AttrDef::required("root", AttrType::Int)])
.collective()
.deduce(deduce_broadcast);

fn deduce_broadcast(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    window_arg(cx, 0, "target")?;
    in_place_signal(cx)?;
    root_attr(cx)?;
    Ok(cx.ty(0).clone())
}

/// `pld.tensor.reduce_scatter(target, signal, *, op=Sum)`: returns the target.
pub static REDUCE_SCATTER: OpDef = op(
    "pld.tensor.reduce_scatter",
    FAMILY,
    "reduce a [NR, SIZE] window and leave row r on rank r; returns the target",
)
.params(crate::collective_api::TARGET_OPT_SIGNAL)
.attrs(&[OP_SUM])
.collective()
.deduce(deduce_reduce_scatter);

fn deduce_reduce_scatter(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    const OP: &str = "pld.tensor.reduce_scatter";
    let t = window_arg(cx, 0, "target")?;
    if t.rank() != 2 {
        return Err(cx.arg_error(0, format!("{OP} target must be 2D [NR, SIZE], got {} dims", t.rank())));
    }
    in_place_signal(cx)?;
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
pub static ALLGATHER: OpDef = op(
    "pld.tensor.allgather",
    FAMILY,
    "gather every rank's [1, SIZE] chunk into row r of a [NR, SIZE] window; returns the target",
)
.params(crate::collective_api::GATHER_OPT_SIGNAL)
.collective()
.deduce(deduce_allgather);

fn deduce_allgather(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let op = cx.def.name;
    not_the_same(cx, "buffers")?;
    let input = tensor_like(cx, 0, "input")?;
    if input.rank() != 2 {
        return Err(cx.arg_error(
            0,
            format!("{op} input must be 2D [1, SIZE] (this rank's single chunk), got {} dims", input.rank()),
        ));
    }
    if let Some(r) = input.shape[0].as_int().filter(|r| *r != 1) {
        return Err(cx.arg_error(
            0,
            format!("{op} input must be 2D [1, SIZE] (this rank's single chunk), got first dim {r}"),
        ));
    }
    let target = rank2(cx, 1, window_arg(cx, 1, "target")?, "target", "[NR, SIZE]")?;
    let io = InOut { input, target };
    io.same_dtype(cx)?;
    io.same_size(cx, "SIZE")?;
    let ty = gather_signal(cx, &target.shape[0], "target")?;
    plain_row_input(cx, "local_data must be a plain Tensor [1, SIZE]")?;
    Ok(ty)
}

/// `pld.tensor.all_to_all(input, target, signal)`: returns the target.
pub static ALL_TO_ALL: OpDef = op(
    "pld.tensor.all_to_all",
    FAMILY,
    "personalised exchange: row d of every rank's [NR, SIZE] input lands in row r of rank d's window",
)
.params(crate::collective_api::GATHER_OPT_SIGNAL)
.collective()
.deduce(deduce_all_to_all);

fn deduce_all_to_all(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    not_the_same(cx, "windows")?;
    let input = rank2(cx, 0, tensor_like(cx, 0, "input")?, "input", "[NR, SIZE]")?;
    let target = rank2(cx, 1, window_arg(cx, 1, "target")?, "target", "[NR, SIZE]")?;
    let io = InOut { input, target };
    io.same_rows(cx)?;
    io.same_size(cx, "shape")?;
    io.same_dtype(cx)?;
    let ty = gather_signal(cx, &input.shape[0], "input")?;
    plain_row_input(cx, "input must be a plain Tensor [NR, SIZE]")?;
    Ok(ty)
}

// ---------------------------------------------------------------------------------------
// all_to_all_v (seed contract)

/// `pld.tensor.all_to_all_v(input, target, signal, send_counts, recv_counts, *, core_num=1)`.
pub static ALL_TO_ALL_V: OpDef = op("pld.tensor.all_to_all_v", FAMILY, "variable-size all-to-all: clamp(send_counts[d], 0, MAX_RECV) rows to each peer, counts published to recv_counts")
    .params(A2AV)
    .attrs(&[CORE_NUM])
    .collective()
    .deduce(deduce_all_to_all_v);

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
    let io = InOut { input, target };
    io.same_rows(cx)?;
    io.same_size(cx, "SIZE")?;
    io.same_dtype(cx)?;
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
        fp32_target(cx, target.dtype)?;
    }
    Ok(cx.ty(1).clone())
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
