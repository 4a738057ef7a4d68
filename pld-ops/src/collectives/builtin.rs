//! The internal `builtin.tensor.*` collectives the HOST and CHIP rails lower the user-facing
//! `pld.tensor.*` calls to: mesh/ring allreduce, barrier, broadcast, reduce_scatter,
//! allgather, all_to_all and all_to_all_v. Guarantees: their operands are windows with the
//! dtype the `dtype` attribute names, signals are rank-1 INT32 `DistributedTensor`s (or the
//! shapes each kernel documents), and each returns its target's type unchanged.

use super::checks::*;
use super::*;
use crate::record::OpSpec;
use crate::util::{describe, window_arg};
use pld_ir::registry::AttrType;
use pld_ir::registry::BuiltinVariant;
use pld_ir::{AttrDef, DataType, DeduceCx, Diagnostic, OpDef, Type};

/// A `builtin.tensor.*` record: internal (only the rail lowerings create these calls), a
/// collective, dispatched to a prebuilt kernel whose variants are keyed by `keys`.
const fn builtin(name: &'static str, summary: &'static str, keys: BuiltinVariant) -> OpSpec {
    op(name, FAMILY, summary).internal().collective().builtin_variant(keys)
}

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
    BuiltinVariant::BY_DTYPE.by_reduce_inst().with_core_count(),
)
.params(SRC_SIGNAL)
.attrs(&[OP_REQ, DTYPE_REQ, AttrDef::required("core_num", AttrType::Int)])
.deduce(deduce_b_allreduce);

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
    BuiltinVariant::BY_DTYPE.by_reduce_op(),
)
.params(SRC_SIGNAL)
.attrs(&[OP_REQ, DTYPE_REQ])
.deduce(deduce_b_allreduce_ring);

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
pub static B_BARRIER: OpDef =
    builtin("builtin.tensor.barrier", "HOST barrier chip dispatch", BuiltinVariant::BY_DTYPE)
        .params(&[updates("signal")])
        .deduce(deduce_b_barrier);

fn deduce_b_barrier(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    rank1_signal(cx, 0)?;
    Ok(cx.ty(0).clone())
}

/// `builtin.tensor.broadcast(target, signal, *, root, dtype)`.
pub static B_BROADCAST: OpDef =
    builtin("builtin.tensor.broadcast", "HOST broadcast chip dispatch", BuiltinVariant::BY_DTYPE.by_root())
        .params(TARGET_SIGNAL)
        .attrs(&[AttrDef::required("root", AttrType::Int), DTYPE_REQ])
        .deduce(deduce_b_broadcast);

fn deduce_b_broadcast(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    let t = window_arg(cx, 0, "target")?;
    rank1_signal(cx, 1)?;
    root_attr(cx)?;
    fp32_target(cx, t.dtype)?;
    Ok(cx.ty(0).clone())
}

/// `builtin.tensor.reduce_scatter(target, signal, *, op, dtype)`.
pub static B_REDUCE_SCATTER: OpDef = builtin(
    "builtin.tensor.reduce_scatter",
    "HOST reduce-scatter chip dispatch",
    BuiltinVariant::BY_DTYPE.by_reduce_op(),
)
.params(TARGET_SIGNAL)
.attrs(&[OP_REQ, DTYPE_REQ])
.deduce(deduce_b_reduce_scatter);

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
    fp32_target(cx, t.dtype)?;
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
    let io = InOut { input, target };
    if !one_row {
        io.same_rows(cx)?;
    }
    io.same_size(cx, "SIZE")?;
    io.same_dtype(cx)?;
    mesh_signal(cx, 2)?;
    fp32_target(cx, target.dtype)?;
    Ok(cx.ty(1).clone())
}

/// `builtin.tensor.allgather(input, target, signal, *, dtype)`.
pub static B_ALLGATHER: OpDef =
    builtin("builtin.tensor.allgather", "HOST allgather chip dispatch", BuiltinVariant::BY_DTYPE)
        .params(GATHER)
        .attrs(&[DTYPE_REQ])
        .deduce(deduce_b_allgather);

fn deduce_b_allgather(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    builtin_gather(cx, true)
}

/// `builtin.tensor.all_to_all(input, target, signal, *, dtype)`.
pub static B_ALL_TO_ALL: OpDef =
    builtin("builtin.tensor.all_to_all", "HOST all-to-all chip dispatch", BuiltinVariant::BY_DTYPE)
        .params(GATHER)
        .attrs(&[DTYPE_REQ])
        .deduce(deduce_b_all_to_all);

fn deduce_b_all_to_all(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    builtin_gather(cx, false)
}

/// `builtin.tensor.all_to_all_v(input, target, signal, send_counts, recv_counts, *, dtype,
/// core_num=1)`: the HOST and CHIP rails' kernel.
pub static B_ALL_TO_ALL_V: OpDef = builtin(
    "builtin.tensor.all_to_all_v",
    "HOST/CHIP all-to-all-v dispatch (in-kernel TPUT builtin)",
    BuiltinVariant::BY_DTYPE,
)
.params(A2AV)
.attrs(&[DTYPE_REQ, CORE_NUM])
.deduce(deduce_b_all_to_all_v);

fn deduce_b_all_to_all_v(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    a2av(cx, true)
}
