//! The one printer of typed PTO: renders instructions and assembles a function's text.
//!
//! Guarantees: each line is its indentation (two spaces a level), the instruction and a
//! newline; a tile allocation prints its slot's `addr = <constant>` operand only when the
//! address plan gives one; constants come first, then the prologue and body lines, then
//! `return`.

use super::inst::{Dps, Inst, KernelKind, Line, Literal, Operand, SyncOp};
use super::scf::Results;
use super::types::{PtoType, TileBuf};
use crate::mlir::MTy;
use std::fmt::Write;

/// Appends `inst` (no indentation, no newline) to `out`; `addrs` holds each allocation
/// slot's address constant (`None` when the plan prints no address).
pub fn inst(inst: &Inst, addrs: &[Option<String>], out: &mut String) {
    // Writing to a String cannot fail.
    let _ = match inst {
        Inst::Const { result, value, ty } => {
            write!(out, "{result} = arith.constant {} : {}", literal(*value, *ty), ty.name())
        }
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
        Inst::PartitionView { result, view, offsets, sizes, view_ty, ty, .. } => write!(
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
            "func.call @pypto_register_counter_completion({}, {signal}, {offset}, {expected}) : (!pto.ptr<i64>, !pto.ptr<i32>, i64, i64) -> ()",
            crate::func::DEFERRED_ARGS_PARAM
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

/// The name of the operation `inst` prints (`pto.alloc_tile`, `arith.addi`, `scf.for`).
pub fn op_name(inst: &Inst) -> &'static str {
    match inst {
        Inst::Const { .. } => "arith.constant",
        Inst::Arith { op, .. } | Inst::Cast { op, .. } | Inst::Comm { op, .. } => op,
        Inst::Dps(d) => d.op,
        Inst::AllocTile { .. } => "pto.alloc_tile",
        Inst::LoadScalar { .. } => "pto.load_scalar",
        Inst::StoreScalar { .. } => "pto.store_scalar",
        Inst::DeclareArray { .. } => "pto.declare_local_array",
        Inst::ArrayGet { .. } => "pto.local_array_get",
        Inst::ArraySet { .. } => "pto.local_array_set",
        Inst::AddPtr { .. } => "pto.addptr",
        Inst::MakeTensorView { .. } => "pto.make_tensor_view",
        Inst::PartitionView { .. } => "pto.partition_view",
        Inst::Subview { .. } => "pto.subview",
        Inst::Sync(SyncOp::BarrierAll) => "pto.barrier",
        Inst::Sync(SyncOp::FenceGm) => "pto.fence.barrier_all",
        Inst::Sync(SyncOp::CacheInvalidAll) | Inst::CacheInvalidLine { .. } => "pto.cmo.cacheinvalid",
        Inst::RegisterCompletion { .. } => "func.call",
        Inst::For(_) => "scf.for",
        Inst::If(_) => "scf.if",
        Inst::While(_) => "scf.while",
        Inst::Yield { .. } => "scf.yield",
        Inst::Condition { .. } => "scf.condition",
    }
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

/// The text of one `func.func @name(params) attributes {pto.kernel_kind = …} { … }` holding
/// `lines`.
pub fn function<'l>(
    name: &str,
    params: &[(String, PtoType)],
    kind: KernelKind,
    lines: impl IntoIterator<Item = &'l Line>,
    addrs: &[Option<String>],
) -> String {
    let params: Vec<String> = params.iter().map(|(p, t)| format!("{p}: {t}")).collect();
    let kind = match kind {
        KernelKind::Cube => "cube",
        KernelKind::Vector => "vector",
    };
    let mut out = format!(
        "  func.func @{name}({}) attributes {{pto.kernel_kind = #pto.kernel_kind<{kind}>}} {{\n",
        params.join(", ")
    );
    for l in lines {
        line(l, addrs, &mut out);
    }
    out.push_str("  return\n  }\n");
    out
}

/// One `.pto` module for `target` holding the texts of `functions`; `deferred` declares the
/// runtime's deferred-completion function the kernels call.
pub fn module<'f>(target: &str, functions: impl IntoIterator<Item = &'f str>, deferred: bool) -> String {
    let mut text = format!("module attributes {{pto.target_arch = \"{target}\"}} {{\n");
    for f in functions {
        text.push_str(f);
    }
    if deferred {
        text.push_str(
            "  func.func private @pypto_register_counter_completion(!pto.ptr<i64>, !pto.ptr<i32>, i64, i64)\n",
        );
    }
    text.push_str("}\n");
    text
}

/// The SSA value name `%<fragment>`.
pub fn ssa(fragment: impl std::fmt::Display) -> String {
    format!("%{fragment}")
}

/// How result `j` of the `count` results named `base` is used: `%r`, or `%r#j`.
pub fn result_ref(base: &str, j: usize, count: usize) -> String {
    if count == 1 {
        base.to_string()
    } else {
        format!("{base}#{j}")
    }
}

/// The readable name of a constant, `%c<literal>_<type>` (`-` spelled `n`, `.` spelled `p`).
pub fn const_name(value: Literal, ty: MTy) -> String {
    let label = literal(value, ty).replace('-', "n").replace('.', "p").replace('+', "");
    format!("%c{label}_{}", ty.name())
}

/// The spelling of a scalar type.
pub fn scalar_type(t: MTy) -> String {
    match t {
        MTy::I1 => "i1".into(),
        MTy::Int(w) => format!("i{w}"),
        MTy::Index => "index".into(),
        MTy::F16 => "f16".into(),
        MTy::BF16 => "bf16".into(),
        MTy::F32 => "f32".into(),
    }
}

/// The literal of a constant of type `ty`. A float is the shortest decimal that round-trips
/// its `f32` value, always with a '.' in the mantissa (the literal grammar requires it);
/// infinities and NaN are hexadecimal bit patterns of `ty`.
pub fn literal(value: Literal, ty: MTy) -> String {
    let bits32 = match value {
        Literal::Int(v) => return v.to_string(),
        Literal::Bool(b) => return b.to_string(),
        Literal::Float(bits) => bits,
    };
    let x = f32::from_bits(bits32);
    if !x.is_finite() {
        return match ty {
            MTy::BF16 => format!("0x{:04X}", bits32 >> 16),
            MTy::F16 => {
                let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
                format!("0x{:04X}", sign | if x.is_nan() { 0x7E00 } else { 0x7C00 })
            }
            _ => format!("0x{bits32:08X}"),
        };
    }
    let s = format!("{x:e}");
    match s.split_once('e') {
        Some((m, e)) if !m.contains('.') => format!("{m}.0e{e}"),
        _ => s,
    }
}

impl std::fmt::Display for PtoType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PtoType::Scalar(t) => f.write_str(&t.name()),
            PtoType::Tile(t) => t.fmt(f),
            PtoType::Ptr(elem) => write!(f, "!pto.ptr<{elem}>"),
            PtoType::LocalArray { len, elem } => write!(f, "!pto.local_array<{len}x{elem}>"),
            PtoType::TensorView { rank, elem } => {
                f.write_str("!pto.tensor_view<")?;
                for _ in 0..*rank {
                    f.write_str("?x")?;
                }
                write!(f, "{elem}>")
            }
            PtoType::PartitionView { dims, elem } => {
                f.write_str("!pto.partition_tensor_view<")?;
                for d in dims {
                    match d {
                        Some(v) => write!(f, "{v}x")?,
                        None => f.write_str("?x")?,
                    }
                }
                write!(f, "{elem}>")
            }
        }
    }
}

impl std::fmt::Display for TileBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let q = |v: Option<i64>| v.map_or_else(|| "?".to_string(), |x| x.to_string());
        write!(
            f,
            "!pto.tile_buf<loc={}, dtype={}, rows={}, cols={}, v_row={}, v_col={}, blayout={}, slayout={}, fractal={}, pad={}>",
            self.loc,
            self.dtype,
            self.rows,
            self.cols,
            q(self.valid[0]),
            q(self.valid[1]),
            self.blayout,
            self.slayout,
            self.fractal,
            self.pad
        )
    }
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

    #[test]
    fn regions_print_nested_with_their_closing_lines_at_the_op_depth() {
        use crate::pto::{Results, ScfIf};
        let y = |v: &str, d| Line {
            indent: d,
            inst: Inst::Yield { values: vec![v.into()], types: vec![MTy::Index] },
            span: pld_ir::Span::DUMMY,
        };
        let results = Some(Results { name: "%5".into(), types: vec![MTy::Index, MTy::I1] });
        let branch = ScfIf {
            results,
            cond: "%c".into(),
            then_body: vec![y("%a", 2)],
            else_body: Some(vec![y("%b", 2)]),
        };
        let mut out = String::new();
        line(&Line { indent: 1, inst: Inst::If(branch), span: pld_ir::Span::DUMMY }, &[], &mut out);
        assert_eq!(
            out,
            "  %5:2 = scf.if %c -> (index, i1) {\n    scf.yield %a : index\n  } else {\n    scf.yield %b : index\n  }\n"
        );
        assert_eq!(result_ref("%5", 1, 2), "%5#1");
        assert_eq!(result_ref("%5", 0, 1), "%5");
    }

    #[test]
    fn float_literals_parse_as_mlir_floats() {
        let f = |v: f64, ty| literal(Literal::Float((v as f32).to_bits()), ty);
        assert_eq!(f(2.0, MTy::F32), "2.0e0");
        assert_eq!(f(0.1, MTy::F32), "1.0e-1");
        assert_eq!(f(1.2345678, MTy::F32), "1.2345678e0");
        assert_eq!(f(-0.5, MTy::F32), "-5.0e-1");
        assert_eq!(f(f64::INFINITY, MTy::F32), "0x7F800000");
        assert_eq!(f(f64::NEG_INFINITY, MTy::F16), "0xFC00");
        assert_eq!(f(f64::NEG_INFINITY, MTy::BF16), "0xFF80");
        assert_eq!(const_name(Literal::Float((-1.0f32).to_bits()), MTy::F32), "%cn1p0e0_f32");
        assert_eq!(const_name(Literal::Int(-3), MTy::Int(32)), "%cn3_i32");
    }
}
