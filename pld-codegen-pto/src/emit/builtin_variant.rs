//! The builtin collective family's variant names and template vars (codegen.md §5.5): which
//! `builtin.tensor.*` op, reduce op, root and dtype a variant stands for, as the orchestration
//! JSON and the builtin kernels name it.
//!
//! Guarantees: a variant name is a function of the call's op, reduce op, root (broadcast) and
//! dtype only; the template vars are those the family's C++ templates read.

use crate::orch::Json;
use crate::CodegenOptions;
use pld_ir::{Attr, Call, DataType};

/// The op name of the mesh allreduce builtin (the one taking a core count).
pub const MESH_ALLREDUCE: &str = "builtin.tensor.allreduce";

/// Variant name and template vars of a builtin collective call (codegen.md §5.5).
pub(crate) fn builtin_spec(c: &Call, opts: &CodegenOptions) -> (String, Vec<(String, Json)>) {
    let op = c.callee.name();
    let dtype = c.attr("dtype").and_then(Attr::as_dtype).unwrap_or(DataType::FP32);
    let (dsuffix, dcpp) = match dtype {
        DataType::FP16 => ("fp16", "half"),
        _ => ("fp32", "float"),
    };
    let red = c.attr_int("op").and_then(|v| pld_runtime_abi::ReduceOp::from_i64(v).ok());
    let red_name = red.map_or("Sum", |r| r.dsl_name());
    let (op_cpp, inst) = match red_name {
        "Max" => ("ReduceOp::kMax", "TMAX"),
        "Min" => ("ReduceOp::kMin", "TMIN"),
        "Prod" => ("ReduceOp::kProd", "TMUL"),
        _ => ("ReduceOp::kSum", "TADD"),
    };
    let mut vars = Vec::new();
    let mut v = |k: &str, s: String| vars.push((k.to_string(), Json::String(s)));
    let variant = match op {
        MESH_ALLREDUCE => {
            v("op_cpp", op_cpp.into());
            v("reduce_inst", inst.into());
            v("dtype_cpp", dcpp.into());
            let method = if opts.target == pld_ir::Target::A5 { "set_core_num" } else { "set_block_num" };
            v("launch_core_count_method", method.into());
            format!("{op}__{}__{dsuffix}", red_name.to_lowercase())
        }
        "builtin.tensor.allreduce_ring" | "builtin.tensor.reduce_scatter" => {
            v("op_cpp", op_cpp.into());
            v("dtype_cpp", dcpp.into());
            format!("{op}__{}__{dsuffix}", red_name.to_lowercase())
        }
        "builtin.tensor.broadcast" => {
            let root = c.attr_int("root").unwrap_or(0);
            v("root_cpp", root.to_string());
            v("dtype_cpp", dcpp.into());
            format!("{op}__root{root}__{dsuffix}")
        }
        _ => {
            v("dtype_cpp", dcpp.into());
            format!("{op}__{dsuffix}")
        }
    };
    (variant, vars)
}
