//! The one printer of typed PTO: renders instructions and assembles a function's text.
//!
//! Guarantees: each line is its indentation (two spaces a level), the instruction and a
//! newline; a tile allocation prints its slot's `addr = <constant>` operand only when the
//! address plan gives one; constants come first, then the prologue and body lines, then
//! `return`.

use super::inst::{Dps, Inst, Line, Operand, SyncOp};
use super::scf::Results;
use crate::mlir::MTy;
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
        Inst::LoadScalar { result, ptr, offset, ptr_ty, ty } => {
            write!(out, "{result} = pto.load_scalar {ptr}[{offset}] : {ptr_ty} -> {}", ty.name())
        }
        Inst::StoreScalar { value, ptr, offset, ptr_ty, ty } => {
            write!(out, "pto.store_scalar {value}, {ptr}[{offset}] : {ptr_ty}, {}", ty.name())
        }
        Inst::DeclareArray { result, ty } => write!(out, "{result} = pto.declare_local_array -> {ty}"),
        Inst::ArrayGet { result, array, index, array_ty, ty } => {
            write!(out, "{result} = pto.local_array_get {array}[{index}] : {array_ty} -> {}", ty.name())
        }
        Inst::ArraySet { array, index, value, array_ty, ty } => {
            write!(out, "pto.local_array_set {array}[{index}], {value} : {array_ty}, {}", ty.name())
        }
        Inst::AddPtr { result, ptr, offset, ty } => write!(out, "{result} = pto.addptr {ptr}, {offset} : {ty} -> {ty}"),
        Inst::MakeTensorView { result, ptr, shape, strides, layout, ty } => write!(
            out,
            "{result} = pto.make_tensor_view {ptr}, shape = [{}], strides = [{}] {{layout = #pto.layout<{layout}>}} : {ty}",
            shape.join(", "),
            strides.join(", ")
        ),
        Inst::PartitionView { result, view, offsets, sizes, view_ty, ty } => write!(
            out,
            "{result} = pto.partition_view {view}, offsets = [{}], sizes = [{}] : {view_ty} -> {ty}",
            offsets.join(", "),
            sizes.join(", ")
        ),
        Inst::Subview { result, src, offsets, sizes, valid, src_ty, ty } => write!(
            out,
            "{result} = pto.subview {src}[{}, {}] sizes [{}, {}] valid [{}, {}] : {src_ty} -> {ty}",
            offsets[0], offsets[1], sizes[0], sizes[1], valid[0], valid[1]
        ),
        Inst::Sync(op) => out.write_str(match op {
            SyncOp::BarrierAll => "pto.barrier <PIPE_ALL>",
            SyncOp::FenceGm => "pto.fence.barrier_all #pto.fence_scope<gm>",
            SyncOp::CacheInvalidAll => "pto.cmo.cacheinvalid all #pto.address_space<gm>",
        }),
        Inst::CacheInvalidLine { view, ty } => write!(out, "pto.cmo.cacheinvalid {view} single_cache_line : {ty}"),
        Inst::Comm { op, operands, buf, attrs } => {
            let mut names: Vec<String> = operands.iter().map(|o| o.value.clone()).collect();
            let mut tys: Vec<String> = operands.iter().map(|o| o.ty.to_string()).collect();
            if !buf.is_empty() {
                let b: Vec<&str> = buf.iter().map(|o| o.value.as_str()).collect();
                names.push(format!("buf({})", b.join(", ")));
                tys.extend(buf.iter().map(|o| o.ty.to_string()));
            }
            let _ = write!(out, "{op}({} : {})", names.join(", "), tys.join(", "));
            attr_dict(attrs, out);
            Ok(())
        }
        Inst::RegisterCompletion { signal, offset, expected } => write!(
            out,
            "func.call @pypto_register_counter_completion(%__pypto_deferred_raw_args, {signal}, {offset}, {expected}) : (!pto.ptr<i64>, !pto.ptr<i32>, i64, i64) -> ()"
        ),
        Inst::For(f) => {
            results_lhs(&f.results, out);
            let [lb, ub, step] = &f.bounds;
            let _ = write!(out, "scf.for {} = {lb} to {ub} step {step}", f.iv);
            if let Some(r) = &f.results {
                let inits: Vec<String> = f.iter_args.iter().map(|(n, i)| format!("{n} = {i}")).collect();
                let _ = write!(out, " iter_args({}) -> ({})", inits.join(", "), type_names(&r.types));
            }
            out.write_str(" {")
        }
        Inst::If(i) => {
            results_lhs(&i.results, out);
            let _ = write!(out, "scf.if {}", i.cond);
            if let Some(r) = &i.results {
                let _ = write!(out, " -> ({})", type_names(&r.types));
            }
            out.write_str(" {")
        }
        Inst::While(w) => {
            results_lhs(&w.results, out);
            let inits: Vec<String> = w.inits.iter().map(|(n, i)| format!("{n} = {i}")).collect();
            let tys = type_names(&w.types);
            write!(out, "scf.while ({}) : ({tys}) -> ({tys}) {{", inits.join(", "))
        }
        Inst::Yield { values, types } if values.is_empty() => {
            let _ = types;
            out.write_str("scf.yield")
        }
        Inst::Yield { values, types } => write!(out, "scf.yield {} : {}", values.join(", "), type_names(types)),
        Inst::Condition { cond, values, .. } if values.is_empty() => write!(out, "scf.condition({cond})"),
        Inst::Condition { cond, values, types } => {
            write!(out, "scf.condition({cond}) {} : {}", values.join(", "), type_names(types))
        }
    };
}

/// `%r = ` or `%r:N = ` for a structured op's results (nothing for none).
fn results_lhs(results: &Option<Results>, out: &mut String) {
    if let Some(r) = results {
        let _ = match r.types.len() {
            1 => write!(out, "{} = ", r.name),
            n => write!(out, "{}:{n} = ", r.name),
        };
    }
}

/// `t1, t2` of scalar types.
fn type_names(types: &[MTy]) -> String {
    types.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
}

/// ` {k = v, …}` (nothing for no attributes).
fn attr_dict(attrs: &[(&'static str, &'static str)], out: &mut String) {
    if !attrs.is_empty() {
        let a: Vec<String> = attrs.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        let _ = write!(out, " {{{}}}", a.join(", "));
    }
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
    attr_dict(&d.attrs, out);
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

/// Appends `line` and its newline to `out`; a structured op's regions follow its header,
/// each line at its own depth, and its closing brace at the op's depth.
pub fn line(line: &Line, addrs: &[Option<String>], out: &mut String) {
    let pad = "  ".repeat(line.indent);
    out.push_str(&pad);
    inst(&line.inst, addrs, out);
    out.push('\n');
    let lines = |body: &[Line], out: &mut String| body.iter().for_each(|l| self::line(l, addrs, out));
    match &line.inst {
        Inst::For(f) => lines(&f.body, out),
        Inst::If(i) => {
            lines(&i.then_body, out);
            if let Some(e) = &i.else_body {
                let _ = writeln!(out, "{pad}}} else {{");
                lines(e, out);
            }
        }
        Inst::While(w) => {
            lines(&w.before, out);
            let _ = writeln!(out, "{pad}}} do {{");
            if !w.after_args.is_empty() {
                let args: Vec<String> =
                    w.after_args.iter().map(|(n, t)| format!("{n}: {}", t.name())).collect();
                let _ = writeln!(out, "{pad}^bb0({}):", args.join(", "));
            }
            lines(&w.after, out);
        }
        _ => return,
    }
    let _ = writeln!(out, "{pad}}}");
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
