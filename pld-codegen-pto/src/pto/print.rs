//! The one printer of typed PTO: renders instructions and assembles a function's text.
//!
//! Guarantees: each line is its indentation (two spaces a level), the instruction and a
//! newline; a tile allocation prints its slot's `addr = <constant>` operand only when the
//! address plan gives one; constants come first, then the prologue and body lines, then
//! `return`.

use super::inst::{Dps, Inst, Line, Operand};
use std::fmt::Write;

/// Appends `inst` (no indentation, no newline) to `out`; `addrs` holds each allocation
/// slot's address constant (`None` when the plan prints no address).
pub fn inst(inst: &Inst, addrs: &[Option<String>], out: &mut String) {
    // Writing to a String cannot fail.
    let _ = match inst {
        Inst::Const { result, value, ty } => write!(out, "{result} = arith.constant {value} : {}", ty.name()),
        Inst::Arith { result, op, pred, operands, ty } => {
            let pred = pred.map(|p| format!("{p}, ")).unwrap_or_default();
            write!(out, "{result} = {op} {pred}{} : {}", operands.join(", "), ty.name())
        }
        Inst::Cast { result, op, operand, from, to } => {
            write!(out, "{result} = {op} {operand} : {} to {}", from.name(), to.name())
        }
        Inst::Dps(d) => {
            dps(d, out);
            Ok(())
        }
        Inst::AllocTile { result, slot, valid_row, valid_col, ty } => {
            let _ = write!(out, "{result} = pto.alloc_tile ");
            if let Some(Some(a)) = addrs.get(*slot) {
                let _ = write!(out, "addr = {a} ");
            }
            if let Some(v) = valid_row {
                let _ = write!(out, "valid_row = {v} ");
            }
            if let Some(v) = valid_col {
                let _ = write!(out, "valid_col = {v} ");
            }
            write!(out, ": {ty}")
        }
        Inst::Text(t) => write!(out, "{t}"),
    };
}

/// Appends a destination-passing-style instruction.
fn dps(d: &Dps, out: &mut String) {
    if let Some((r, _)) = &d.result {
        let _ = write!(out, "{r} = ");
    }
    let _ = write!(out, "{} ins({})", d.op, typed_list(&d.ins));
    let _ = match &d.result {
        Some((_, ty)) => write!(out, " outs : {}", ty.name()),
        None => write!(out, " outs({})", typed_list(&d.outs)),
    };
    if !d.attrs.is_empty() {
        let a: Vec<String> = d.attrs.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        let _ = write!(out, " {{{}}}", a.join(", "));
    }
}

/// `a, b {k = v} : ta, tb`.
fn typed_list(vals: &[Operand]) -> String {
    let names: Vec<String> = vals
        .iter()
        .map(|o| match o.attr {
            Some((k, v)) => format!("{} {{{k} = {v}}}", o.value),
            None => o.value.clone(),
        })
        .collect();
    let tys: Vec<String> = vals.iter().map(|o| o.ty.to_string()).collect();
    format!("{} : {}", names.join(", "), tys.join(", "))
}

/// Appends `line` and its newline to `out`.
pub fn line(line: &Line, addrs: &[Option<String>], out: &mut String) {
    out.push_str(&"  ".repeat(line.indent));
    inst(&line.inst, addrs, out);
    out.push('\n');
}

/// The text of one `func.func @name(params)attrs { … }` holding `lines`.
pub fn function<'l>(
    name: &str,
    params: &[String],
    attrs: &str,
    lines: impl IntoIterator<Item = &'l Line>,
    addrs: &[Option<String>],
) -> String {
    let mut out = format!("  func.func @{name}({}){attrs} {{\n", params.join(", "));
    for l in lines {
        line(l, addrs, &mut out);
    }
    out.push_str("  return\n  }\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mlir::MTy;

    #[test]
    fn typed_instructions_print_their_mlir_forms() {
        let mut out = String::new();
        let cmp = Inst::Arith {
            result: "%3".into(),
            op: "arith.cmpi",
            pred: Some("slt"),
            operands: vec!["%a".into(), "%b".into()],
            ty: MTy::Index,
        };
        inst(&cmp, &[], &mut out);
        assert_eq!(out, "%3 = arith.cmpi slt, %a, %b : index");
        out.clear();
        let cast = Inst::Cast {
            result: "%4".into(),
            op: "arith.trunci",
            operand: "%p".into(),
            from: MTy::Int(64),
            to: MTy::Int(32),
        };
        inst(&cast, &[], &mut out);
        assert_eq!(out, "%4 = arith.trunci %p : i64 to i32");
    }
}
