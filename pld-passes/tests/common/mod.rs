//! Shared helpers of the pass tests: registry setup, type shorthands, running one pass with
//! verification, and an in-order CHECK matcher over printed IR.
#![allow(dead_code)]

use pld_ir::{DataType, Diagnostics, MemorySpace, Program, Type};

/// Links the op families and checks the registry.
pub fn init() {
    let reg = pld_ops::registry();
    if let Err(e) = reg.check() {
        let msgs: Vec<String> = e.iter().map(|e| e.to_string()).collect();
        panic!("registry inconsistent: {}", msgs.join("; "));
    }
}

pub fn dist(shape: &[i64], dt: DataType) -> Type {
    Type::dist_tensor(shape.iter().map(|&d| pld_ir::Expr::int(d)).collect(), dt)
}

pub fn tensor(shape: &[i64], dt: DataType) -> Type {
    Type::tensor(shape.iter().map(|&d| pld_ir::Expr::int(d)).collect(), dt)
}

pub fn tile(shape: &[i64], dt: DataType, mem: MemorySpace) -> Type {
    Type::tile(shape.iter().map(|&d| pld_ir::Expr::int(d)).collect(), dt, Some(mem))
}

/// Runs the named passes in order, verifying after each.
pub fn run(p: &mut Program, passes: &[&str]) -> Result<(), Diagnostics> {
    let opts = pld_passes::PipelineOptions::default();
    for name in passes {
        pld_passes::run_pass(p, name, &opts)?;
    }
    Ok(())
}

/// Every pattern occurs in `text`, in order (each after the previous match).
pub fn check_in_order(text: &str, patterns: &[&str]) {
    let mut pos = 0;
    for pat in patterns {
        match text[pos..].find(pat) {
            Some(i) => pos += i + pat.len(),
            None => panic!("CHECK `{pat}` not found after offset {pos} in:\n{text}"),
        }
    }
}

pub fn count(text: &str, pat: &str) -> usize {
    text.matches(pat).count()
}

/// The printed text of one function of `p`.
pub fn func_text(p: &Program, name: &str) -> String {
    match p.function(name) {
        Some(f) => pld_ir::print_function(f),
        None => panic!("no function `{name}` in:\n{}", pld_ir::print_program(p)),
    }
}

pub fn messages(d: &Diagnostics) -> String {
    d.iter().map(|d| format!("{} [{}]", d.message, d.notes.join("; "))).collect::<Vec<_>>().join("\n")
}
