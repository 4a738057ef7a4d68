//! Test support for op deducers: build one call inside a fresh function whose parameters
//! have the given types, and return the deduced type or the diagnostic.
#![allow(dead_code)]

use pld_ir::{
    Attr, DataType, Diagnostic, Direction, Expr, FunctionBuilder, FunctionKind, MemorySpace, Target, Type,
};

/// A window-bound tensor type with static dims.
pub fn dt(shape: &[i64], d: DataType) -> Type {
    Type::dist_tensor(shape.iter().map(|&v| Expr::int(v)).collect(), d)
}

/// A plain tensor type with static dims.
pub fn tensor(shape: &[i64], d: DataType) -> Type {
    Type::tensor(shape.iter().map(|&v| Expr::int(v)).collect(), d)
}

/// A Vec tile type with static dims.
pub fn tile(shape: &[i64], d: DataType) -> Type {
    Type::tile(shape.iter().map(|&v| Expr::int(v)).collect(), d, Some(MemorySpace::Vec))
}

/// A tile type in memory space `m`.
pub fn tile_in(shape: &[i64], d: DataType, m: MemorySpace) -> Type {
    Type::tile(shape.iter().map(|&v| Expr::int(v)).collect(), d, Some(m))
}

/// A scalar type.
pub fn scalar(d: DataType) -> Type {
    Type::Scalar(d)
}

/// A tuple of integer literals.
pub fn ints(v: &[i64]) -> Expr {
    Expr::ints(v)
}

/// An integer attribute.
pub fn int(v: i64) -> Attr {
    Attr::Int(v)
}

/// A call in an InCore function on the default target.
pub fn call(
    params: &[Type],
    op: &str,
    args: impl FnOnce(&[Expr]) -> Vec<Expr>,
    attrs: Vec<(&str, Attr)>,
) -> Result<Type, Diagnostic> {
    call_in(FunctionKind::InCore, Target::A2A3, params, op, args, attrs)
}

/// A call in a function of `kind` compiled for `target`.
pub fn call_in(
    kind: FunctionKind,
    target: Target,
    params: &[Type],
    op: &str,
    args: impl FnOnce(&[Expr]) -> Vec<Expr>,
    attrs: Vec<(&str, Attr)>,
) -> Result<Type, Diagnostic> {
    let _ = pld_testkit::init();
    let mut fb = FunctionBuilder::new("f", kind).target(target);
    let vars: Vec<Expr> = params
        .iter()
        .enumerate()
        .map(|(i, t)| Expr::var(fb.param(format!("p{i}"), t.clone(), Direction::InOut)))
        .collect();
    let args = args(&vars);
    let mut out = Type::Unknown;
    fb.body(|b| {
        let e = b.op(op, args, attrs)?;
        out = b.type_of(&e);
        Ok(())
    })?;
    Ok(out)
}

/// Asserts `r` is an error whose message contains `needle`; returns the diagnostic.
#[track_caller]
pub fn err(r: Result<Type, Diagnostic>, needle: &str) -> Diagnostic {
    match r {
        Ok(t) => panic!("expected an error containing {needle:?}, got type {t}"),
        Err(d) => {
            assert!(d.message.contains(needle), "message {:?} does not contain {needle:?}", d.message);
            d
        }
    }
}

/// Asserts `r` is an error whose message or notes contain `needle`.
#[track_caller]
pub fn err_or_note(r: Result<Type, Diagnostic>, needle: &str) -> Diagnostic {
    match r {
        Ok(t) => panic!("expected an error containing {needle:?}, got type {t}"),
        Err(d) => {
            let all = format!("{} | {}", d.message, d.notes.join(" | "));
            assert!(all.contains(needle), "diagnostic {all:?} does not contain {needle:?}");
            d
        }
    }
}

/// Asserts `r` is Ok and returns the type.
#[track_caller]
pub fn ok(r: Result<Type, Diagnostic>) -> Type {
    match r {
        Ok(t) => t,
        Err(d) => panic!("expected success, got error: {} (notes: {:?})", d.message, d.notes),
    }
}
