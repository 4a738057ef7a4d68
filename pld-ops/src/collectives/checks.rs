//! The collectives family's shared argument checks: window-bound INT32 signals (and their
//! mesh `[NR]`/`[NR, 1]` shapes), distinct operands, static dims that must agree, rank-2
//! tensors, `dtype` kwargs that match their operand, FP32-only kernels and the packed
//! row-major contract. Each check returns a diagnostic naming the op and the argument.

use crate::util::window_arg;
use pld_ir::{DataType, DeduceCx, Diagnostic, Expr, FunctionKind, Layout, TensorType};

pub(super) fn is_incore(cx: &DeduceCx<'_>) -> bool {
    cx.env.func_kind.is_some_and(FunctionKind::is_incore)
}

pub(super) fn is_host(cx: &DeduceCx<'_>) -> bool {
    cx.env.func_kind == Some(FunctionKind::Host)
}

/// The row-push collectives (allgather, all_to_all) read a plain Tensor input in an InCore
/// kernel, and a call in a chip orchestration runs as that same composite (the CHIP rail:
/// one AIV task), so it keeps the rule; only a HOST orchestrator takes a window input. Said
/// at the input argument, naming the rail the call is on.
pub(super) fn plain_row_input(cx: &DeduceCx<'_>, what: &str) -> Result<(), Diagnostic> {
    let chip = cx.env.func_kind == Some(FunctionKind::ChipOrch);
    if (!chip && !is_incore(cx)) || matches!(cx.ty(0), pld_ir::Type::Tensor(_)) {
        return Ok(());
    }
    let (rail, hint) = if chip {
        (
            "on the CHIP rail (a collective in a chip orchestration runs as the InCore composite, in one AIV task)",
            "; pass the plain tensor the row comes from, or call the collective from the HOST orchestrator, which takes a window input",
        )
    } else {
        ("on the InCore path", "")
    };
    Err(cx.arg_error(0, format!("{} {what} {rail}, got {}{hint}", cx.def.name, cx.ty(0).kind_name())))
}

/// A window-bound INT32 signal.
pub(super) fn signal_arg<'a>(cx: &'a DeduceCx<'_>, i: usize) -> Result<&'a TensorType, Diagnostic> {
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

/// The optional signal (argument 1) of an in-place collective `(target, signal)`: omitted
/// (a private one is synthesized), or a window-bound INT32 signal distinct from the target.
pub(super) fn in_place_signal(cx: &DeduceCx<'_>) -> Result<(), Diagnostic> {
    if !crate::collective_api::omitted_signal(cx, 1)? {
        signal_arg(cx, 1)?;
        distinct(cx, &[(0, "target"), (1, "signal")])?;
    }
    Ok(())
}

/// A `[NR]` or `[NR, 1]` signal (allgather / all_to_all).
pub(super) fn mesh_signal<'a>(cx: &'a DeduceCx<'_>, i: usize) -> Result<&'a TensorType, Diagnostic> {
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
pub(super) fn distinct(cx: &DeduceCx<'_>, roles: &[(usize, &str)]) -> Result<(), Diagnostic> {
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
pub(super) fn static_ne(a: &Expr, b: &Expr) -> Option<(i64, i64)> {
    match (a.as_int(), b.as_int()) {
        (Some(x), Some(y)) if x != y => Some((x, y)),
        _ => None,
    }
}

pub(super) fn rank2<'a>(
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

/// Argument `i` must be a plain tensor or a window-bound tensor (the crate's one check).
pub(super) use crate::util::tensor_like_arg as tensor_like;

pub(super) fn dtype_kwarg(cx: &DeduceCx<'_>, role: &str, want: DataType) -> Result<(), Diagnostic> {
    if let Some(d) = cx.attr("dtype").and_then(|a| a.as_dtype()) {
        if d != want {
            return Err(
                cx.error(format!("{} dtype kwarg ({d}) must match {role} dtype ({want})", cx.def.name))
            );
        }
    }
    Ok(())
}

/// The FP32-only builtin kernels: the `dtype` kwarg names the target's dtype, and it is FP32.
pub(super) fn fp32_target(cx: &DeduceCx<'_>, d: DataType) -> Result<(), Diagnostic> {
    dtype_kwarg(cx, "target", d)?;
    if d != DataType::FP32 {
        return Err(cx.error(format!("{} currently supports only FP32 data, got {d}", cx.def.name)));
    }
    Ok(())
}

/// The `root` attribute of a broadcast is a rank index (non-negative).
pub(super) fn root_attr(cx: &DeduceCx<'_>) -> Result<(), Diagnostic> {
    let root = cx.attr_int("root").unwrap_or(0);
    if root < 0 {
        return Err(cx.error(format!("{} root rank must be non-negative, got {root}", cx.def.name)));
    }
    Ok(())
}

/// Packed row-major, fully valid (the all_to_all_v seed contract on input/target).
pub(super) fn packed(cx: &DeduceCx<'_>, i: usize, t: &TensorType, role: &str) -> Result<(), Diagnostic> {
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

/// The data operands of a gather-like collective: `input` (argument 0) and `target`
/// (argument 1), whose agreement each check reports at the target.
pub(super) struct InOut<'a> {
    pub(super) input: &'a TensorType,
    pub(super) target: &'a TensorType,
}

impl InOut<'_> {
    /// The same first dimension, when both are static.
    pub(super) fn same_rows(&self, cx: &DeduceCx<'_>) -> Result<(), Diagnostic> {
        if let Some((a, b)) = static_ne(&self.target.shape[0], &self.input.shape[0]) {
            return Err(cx.arg_error(
                1,
                format!(
                    "{} target first dimension ({a}) must equal input first dimension ({b})",
                    cx.def.name
                ),
            ));
        }
        Ok(())
    }

    /// The same row length (`what`: "SIZE", "shape" in the message).
    pub(super) fn same_size(&self, cx: &DeduceCx<'_>, what: &str) -> Result<(), Diagnostic> {
        if self.target.shape[1] != self.input.shape[1] {
            return Err(cx.arg_error(1, format!("{} target {what} must equal input {what}", cx.def.name)));
        }
        Ok(())
    }

    /// The same dtype.
    pub(super) fn same_dtype(&self, cx: &DeduceCx<'_>) -> Result<(), Diagnostic> {
        let (t, i) = (self.target.dtype, self.input.dtype);
        if t != i {
            return Err(
                cx.arg_error(1, format!("{} target dtype {t} must match input dtype {i}", cx.def.name))
            );
        }
        Ok(())
    }
}

/// The signal (argument 2) of a gather-like collective `(input, target, signal)`: omitted
/// (a private one is synthesized), or a mesh signal distinct from the buffers whose first
/// dimension equals `rows` (the first dimension of `rows_of`); the call returns the target.
pub(super) fn gather_signal(
    cx: &DeduceCx<'_>,
    rows: &Expr,
    rows_of: &str,
) -> Result<pld_ir::Type, Diagnostic> {
    if crate::collective_api::omitted_signal(cx, 2)? {
        return Ok(cx.ty(1).clone());
    }
    let signal = mesh_signal(cx, 2)?;
    distinct(cx, &[(0, "input"), (1, "target"), (2, "signal")])?;
    if let Some((a, b)) = static_ne(&signal.shape[0], rows) {
        return Err(cx.arg_error(
            2,
            format!(
                "{} signal first dimension ({a}) must equal {rows_of} first dimension ({b})",
                cx.def.name
            ),
        ));
    }
    Ok(cx.ty(1).clone())
}

/// The input (argument 0) and target (argument 1) are not one expression (`what`: "buffers",
/// "windows").
pub(super) fn not_the_same(cx: &DeduceCx<'_>, what: &str) -> Result<(), Diagnostic> {
    if cx.arg(0) == cx.arg(1) {
        return Err(cx.arg_error(
            1,
            format!(
                "{} input and target must be different {what}, but the same expression was passed for both",
                cx.def.name
            ),
        ));
    }
    Ok(())
}
