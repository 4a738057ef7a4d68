//! The builtin collective family's variant names and template vars (codegen.md §5.5), read from
//! the op record's [`BuiltinVariant`] keys: which `builtin.tensor.*` op, reduce op, root and
//! dtype a variant stands for, as the orchestration JSON and the builtin kernels name it.
//!
//! Guarantees: a variant name is a function of the call's op, and of the reduce op, root and
//! dtype its record keys it by, only; the template vars are those the record says the family's
//! C++ templates read. No op is known here by name.

use crate::orch::Json;
use crate::CodegenOptions;
use pld_ir::registry::{BuiltinVariant, ReduceKey};
use pld_ir::{Attr, Call, DataType};
use pld_runtime_abi::ReduceOp;

/// The variant keys of the op `c` calls (keyed by dtype only when its record declares none).
fn keys(c: &Call) -> BuiltinVariant {
    c.op().and_then(|d| d.builtin_variant).unwrap_or(BuiltinVariant::BY_DTYPE)
}

/// Whether the host passes a core count to the variants of op `op` (the mesh allreduce).
pub fn takes_core_num(op: &str) -> bool {
    pld_ir::registry().lookup(op).and_then(|d| d.builtin_variant).is_some_and(|k| k.core_count)
}

/// The runtime's C++ enumerator and the tile instruction of a reduce op.
fn reduce_cpp(red: ReduceOp) -> (&'static str, &'static str) {
    match red {
        ReduceOp::Max => ("ReduceOp::kMax", "TMAX"),
        ReduceOp::Min => ("ReduceOp::kMin", "TMIN"),
        ReduceOp::Prod => ("ReduceOp::kProd", "TMUL"),
        ReduceOp::Sum => ("ReduceOp::kSum", "TADD"),
    }
}

/// Variant name and template vars of a builtin collective call (codegen.md §5.5).
pub(crate) fn builtin_spec(c: &Call, opts: &CodegenOptions) -> (String, Vec<(String, Json)>) {
    let op = c.callee.name();
    let keys = keys(c);
    let dtype = c.attr("dtype").and_then(Attr::as_dtype).unwrap_or(DataType::FP32);
    let (dsuffix, dcpp) = match dtype {
        DataType::FP16 => ("fp16", "half"),
        _ => ("fp32", "float"),
    };
    let red = c.attr_int("op").and_then(|v| ReduceOp::from_i64(v).ok()).unwrap_or(ReduceOp::Sum);
    let (op_cpp, inst) = reduce_cpp(red);
    let mut vars = Vec::new();
    let mut v = |k: &str, s: String| vars.push((k.to_string(), Json::String(s)));
    let mut name = op.to_string();
    if keys.reduce != ReduceKey::None {
        v("op_cpp", op_cpp.into());
        if keys.reduce == ReduceKey::OpAndInstruction {
            v("reduce_inst", inst.into());
        }
        name.push_str(&format!("__{}", red.dsl_name().to_lowercase()));
    }
    if keys.root {
        let root = c.attr_int("root").unwrap_or(0);
        v("root_cpp", root.to_string());
        name.push_str(&format!("__root{root}"));
    }
    v("dtype_cpp", dcpp.into());
    name.push_str(&format!("__{dsuffix}"));
    if keys.core_count {
        let method = if opts.target == pld_ir::Target::A5 { "set_core_num" } else { "set_block_num" };
        v("launch_core_count_method", method.into());
    }
    (name, vars)
}
