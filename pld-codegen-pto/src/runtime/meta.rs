//! `distributed_meta.json` (schema 2, `runtime_artifacts.md` §2).
//!
//! Guarantees: `schema` is 2; `params` lists every host-orchestrator parameter in order with
//! its name (the exact `tensors["…"]` key `host_orch.py` reads), direction (`In`/`Out`/
//! `InOut`), shape (static dims, `-1` for a dynamic one, `null` for a scalar) and dtype
//! (`str(DataType)` spelling); `num_sub_workers` is the number of `sub_workers/` modules; `num_return_types` is the number of values the host
//! returns (each one of its Out/InOut parameters, or a tensor it creates, which is listed as an
//! extra trailing `Out` parameter of its name, [`super::results`]); `platform`, `backend_type` and a complete
//! `distributed_config` (`device_ids` non-empty, non-negative, distinct; runtime
//! `tensormap_and_ringbuffer`; architecture-default AICPU threads). One extra top-level key
//! (the loader ignores unknown top-level keys), `pld_symbolic_shapes`, keeps the symbolic
//! extents of every parameter with a dynamic dim (`"NR * 4"`) so `run.py` can size outputs.

use super::results::HostResult;
use super::RuntimeOptions;
use crate::json::{obj, Json};
use pld_ir::{Direction, Function, Type};

/// The `ParamDirection` member name.
pub fn direction_name(d: Direction) -> &'static str {
    match d {
        Direction::In => "In",
        Direction::Out => "Out",
        Direction::InOut => "InOut",
    }
}

/// One `params[i]` entry.
fn param_json(name: &str, dir: Direction, ty: &Type) -> Json {
    let (shape, dtype) = match ty {
        Type::Tensor(t) | Type::DistTensor(pld_ir::DistTensorType { tensor: t, .. }) => {
            let last = t.shape.len().saturating_sub(1);
            let dims = t
                .shape
                .iter()
                .enumerate()
                .map(|(i, d)| match d.as_int() {
                    // FP4 packs two elements per byte: the runtime shape halves the last dim.
                    Some(v) if i == last && t.dtype == pld_ir::DataType::FP4 => Json::Int(v / 2),
                    Some(v) => Json::Int(v),
                    None => Json::Int(-1),
                })
                .collect();
            (Json::Arr(dims), t.dtype.display_name())
        }
        Type::Scalar(d) => (Json::Null, d.display_name()),
        _ => (Json::Null, "int64"),
    };
    obj(vec![
        ("name", Json::Str(name.to_string())),
        ("direction", Json::Str(direction_name(dir).into())),
        ("shape", shape),
        ("dtype", Json::Str(dtype.into())),
    ])
}

/// Renders the metadata of `host` under `opts`: its parameters, then one `Out` parameter per
/// created tensor it returns ([`HostResult`]).
pub fn render(host: &Function, sub_workers: usize, results: &[HostResult], opts: &RuntimeOptions) -> String {
    let created: Vec<(String, Type)> =
        results.iter().filter_map(|r| r.created.clone().map(|t| (r.name.clone(), Type::Tensor(t)))).collect();
    let mut all: Vec<(String, Direction, &Type)> = host
        .params
        .iter()
        .map(|p| (host.values.name(p.value).to_string(), p.dir, host.values.ty(p.value)))
        .collect();
    all.extend(created.iter().map(|(n, t)| (n.clone(), Direction::Out, t)));
    let params: Vec<Json> = all.iter().map(|(n, d, t)| param_json(n, *d, t)).collect();
    let mut symbolic = Vec::new();
    for (name, _, ty) in &all {
        if let Some(t) = ty.as_tensor_like() {
            if t.shape.iter().any(|d| d.as_int().is_none()) {
                let dims = t
                    .shape
                    .iter()
                    .map(|d| match d.as_int() {
                        Some(v) => Json::Int(v),
                        None => Json::Str(
                            super::py_expr(d, &|v| host.values.name(v).to_string())
                                .unwrap_or_else(|_| "-1".to_string()),
                        ),
                    })
                    .collect();
                symbolic.push((name.clone(), Json::Arr(dims)));
            }
        }
    }
    obj(vec![
        ("schema", Json::Int(2)),
        ("params", Json::Arr(params)),
        ("num_return_types", Json::Int(results.len() as i64)),
        ("platform", Json::Str(opts.platform.clone())),
        ("backend_type", Json::Str(opts.backend_type().into())),
        (
            "distributed_config",
            obj(vec![
                ("device_ids", Json::Arr(opts.device_ids.iter().map(|d| Json::Int(*d)).collect())),
                ("num_sub_workers", Json::Int(sub_workers as i64)),
                ("runtime", Json::Str(super::RUNTIME.into())),
                ("aicpu_thread_num", Json::Int(0)),
            ]),
        ),
        ("pld_symbolic_shapes", Json::Obj(symbolic)),
    ])
    .render()
}
