//! Canonicalizers of the core ops: the reference DSL surface is accepted at call-build time
//! and stored in one canonical form, so passes, codegen and the simulator only ever see that
//! form.
//!
//! - casts: `cast(x, pl.FP32)` (positional dtype), `cast(x, pl.FP32, "rint")` (positional
//!   mode), `target_type=` and integer rounding-mode codes (0–6) all become
//!   `cast(x, dtype=…, mode="…")`;
//! - binary elementwise ops with a scalar right operand (`tensor.add(t, 1.0)`,
//!   `tile.mul(t, s)`) become their scalar forms (`tensor.adds`, `tile.muls`).
//!
//! Anything not recognised is left untouched for the deducer to report, so every rewrite is
//! idempotent and none fails.

use pld_ir::{register_canonicalize, Attr, DeduceEnv, Expr, ExprKind, Type};

/// The rounding modes of a cast, indexed by the reference's integer codes.
pub const CAST_MODES: [&str; 7] = ["none", "rint", "round", "floor", "ceil", "trunc", "odd"];

fn has(attrs: &[(String, Attr)], k: &str) -> bool {
    attrs.iter().any(|(n, _)| n == k)
}

/// Moves a positional dtype (and mode) into attributes, renames `target_type` to `dtype`,
/// turns an integer mode code into its name, and orders the attributes as every cast declares
/// them ([`super::CAST_ATTRS`]).
fn canon_cast(
    args: &mut Vec<Expr>,
    attrs: &mut Vec<(String, Attr)>,
    _: &DeduceEnv<'_>,
) -> Option<&'static str> {
    if args.len() >= 2 && !has(attrs, "dtype") && !has(attrs, "target_type") {
        if let ExprKind::DType(d) = args[1].kind {
            args.remove(1);
            attrs.push(("dtype".into(), Attr::DType(d)));
            if args.len() == 2 && !has(attrs, "mode") {
                let mode = match &args[1].kind {
                    ExprKind::Str(s) => Some(Attr::Str(s.clone())),
                    ExprKind::Int(v) => Some(Attr::Int(*v)),
                    _ => None,
                };
                if let Some(m) = mode {
                    args.remove(1);
                    attrs.push(("mode".into(), m));
                }
            }
        }
    }
    if !has(attrs, "dtype") {
        if let Some((k, _)) = attrs.iter_mut().find(|(k, _)| k == "target_type") {
            *k = "dtype".into();
        }
    }
    for (k, v) in attrs.iter_mut() {
        if k == "mode" {
            if let Attr::Int(code) = v {
                if let Some(name) = usize::try_from(*code).ok().and_then(|i| CAST_MODES.get(i)) {
                    *v = Attr::Str((*name).to_string());
                }
            }
        }
    }
    attrs.sort_by_key(|(k, _)| super::CAST_ATTRS.iter().position(|a| a.name == k).unwrap_or(usize::MAX));
    None
}

register_canonicalize!("tile.cast", canon_cast);
register_canonicalize!("tensor.cast", canon_cast);
register_canonicalize!("scalar.cast", canon_cast);

/// Whether the right operand of a binary call is a scalar (not a tuple), so the call means
/// the scalar form of the op.
fn scalar_rhs(args: &[Expr], env: &DeduceEnv<'_>) -> bool {
    match args {
        [_, rhs] => matches!(rhs.ty(env.values), Type::Scalar(_)) && !matches!(rhs.kind, ExprKind::Tuple(_)),
        _ => false,
    }
}

macro_rules! scalar_redirect {
    ($($f:ident: $op:literal => $to:literal;)*) => {$(
        // The signature is `CanonicalizeFn`'s: these only read the arguments.
        #[allow(clippy::ptr_arg)]
        fn $f(args: &mut Vec<Expr>, _: &mut Vec<(String, Attr)>, env: &DeduceEnv<'_>) -> Option<&'static str> {
            scalar_rhs(args, env).then_some($to)
        }
        register_canonicalize!($op, $f);
    )*};
}

scalar_redirect! {
    canon_tile_add: "tile.add" => "tile.adds";
    canon_tile_sub: "tile.sub" => "tile.subs";
    canon_tile_mul: "tile.mul" => "tile.muls";
    canon_tile_div: "tile.div" => "tile.divs";
    canon_tensor_add: "tensor.add" => "tensor.adds";
    canon_tensor_sub: "tensor.sub" => "tensor.subs";
    canon_tensor_mul: "tensor.mul" => "tensor.muls";
    canon_tensor_div: "tensor.div" => "tensor.divs";
}
