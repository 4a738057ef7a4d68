//! `distributed_meta.json` (schema 2, `runtime_artifacts.md` §2).
//!
//! Guarantees: `schema` is 2; `params` lists every host-orchestrator parameter in order with
//! its name (the exact `tensors["…"]` key `host_orch.py` reads), direction (`In`/`Out`/
//! `InOut`), shape (static dims, `-1` for a dynamic one, `null` for a scalar) and dtype
//! (`str(DataType)` spelling); `num_sub_workers` is the number of `sub_workers/` modules; `num_return_types` is the number of values the host
//! returns (each one of its Out/InOut parameters, or a tensor it creates, which is listed as an
//! extra trailing `Out` parameter of its name, [`crate::results`]); `platform`, `backend_type` and a complete
//! `distributed_config` (`device_ids` non-empty, non-negative, distinct; runtime
//! `tensormap_and_ringbuffer`; architecture-default AICPU threads). One extra top-level key
//! (the loader ignores unknown top-level keys), `pld_symbolic_shapes`, keeps the symbolic
//! extents of every parameter with a dynamic dim (`"NR * 4"`) so `run.py` can size outputs.

use crate::results::HostResult;
use crate::RuntimeOptions;
use pld_codegen_pto::json::{self, Json};
use pld_ir::{Direction, Function, Type};
use serde::{Deserialize, Serialize};

/// The whole `distributed_meta.json` document (the loader ignores unknown top-level keys, and
/// so does [`DistributedMeta::parse`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DistributedMeta {
    /// Always 2.
    pub schema: u32,
    /// Every host-orchestrator parameter, in order, then one `Out` per created result.
    pub params: Vec<MetaParam>,
    /// How many values the host returns.
    pub num_return_types: usize,
    /// The platform name (`a2a3sim`, `a5`, …).
    pub platform: String,
    /// `Ascend910B` or `Ascend950`.
    pub backend_type: String,
    /// The distributed launch configuration.
    pub distributed_config: DistributedConfig,
    /// Symbolic extents of every parameter with a dynamic dim, by parameter name.
    #[serde(default)]
    pub pld_symbolic_shapes: serde_json::Map<String, Json>,
}

/// One `params[i]` entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetaParam {
    /// The exact `tensors["…"]` key `host_orch.py` reads.
    pub name: String,
    /// `In`, `Out` or `InOut`.
    pub direction: String,
    /// Static dims (`-1` for a dynamic one), `null` for a scalar.
    pub shape: Option<Vec<i64>>,
    /// The `str(DataType)` spelling.
    pub dtype: String,
}

/// `distributed_config`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DistributedConfig {
    /// The devices of the launch, one per rank.
    pub device_ids: Vec<i64>,
    /// How many `sub_workers/` modules there are.
    pub num_sub_workers: usize,
    /// The Simpler runtime name.
    pub runtime: String,
    /// AICPU threads (0: the architecture default).
    pub aicpu_thread_num: i64,
}

/// A `distributed_meta.json` that does not parse: the reader's message and its 1-based
/// line and column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetaError {
    /// What the reader found wrong.
    pub message: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

impl DistributedMeta {
    /// Parses a `distributed_meta.json` text.
    pub fn parse(text: &str) -> Result<DistributedMeta, MetaError> {
        serde_json::from_str(text).map_err(|e| {
            let (line, column) = (e.line(), e.column());
            let full = e.to_string();
            let message = full.trim_end_matches(&format!(" at line {line} column {column}")).to_string();
            MetaError { message, line, column }
        })
    }

    /// The target the recorded `backend_type` names, if it names one.
    pub fn target(&self) -> Option<pld_ir::Target> {
        match self.backend_type.as_str() {
            "Ascend950" => Some(pld_ir::Target::A5),
            "Ascend910B" => Some(pld_ir::Target::A2A3),
            _ => None,
        }
    }
}

/// The `ParamDirection` member name.
pub fn direction_name(d: Direction) -> &'static str {
    match d {
        Direction::In => "In",
        Direction::Out => "Out",
        Direction::InOut => "InOut",
    }
}

/// One `params[i]` entry.
fn param(name: &str, dir: Direction, ty: &Type) -> MetaParam {
    let (shape, dtype) = match ty {
        Type::Tensor(t) | Type::DistTensor(pld_ir::DistTensorType { tensor: t, .. }) => {
            let last = t.shape.len().saturating_sub(1);
            let dims = t
                .shape
                .iter()
                .enumerate()
                .map(|(i, d)| match d.as_int() {
                    // FP4 packs two elements per byte: the runtime shape halves the last dim.
                    Some(v) if i == last && t.dtype == pld_ir::DataType::FP4 => v / 2,
                    Some(v) => v,
                    None => -1,
                })
                .collect();
            (Some(dims), t.dtype.display_name())
        }
        Type::Scalar(d) => (None, d.display_name()),
        _ => (None, "int64"),
    };
    MetaParam { name: name.to_string(), direction: direction_name(dir).into(), shape, dtype: dtype.into() }
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
    let params = all.iter().map(|(n, d, t)| param(n, *d, t)).collect();
    let mut symbolic = serde_json::Map::new();
    for (name, _, ty) in &all {
        if let Some(t) = ty.as_tensor_like() {
            if t.shape.iter().any(|d| d.as_int().is_none()) {
                let dims = t
                    .shape
                    .iter()
                    .map(|d| match d.as_int() {
                        Some(v) => json::int(v),
                        None => json::s(
                            crate::py_expr(d, &|v| host.values.name(v).to_string())
                                .unwrap_or_else(|_| "-1".to_string()),
                        ),
                    })
                    .collect();
                symbolic.insert(name.clone(), Json::Array(dims));
            }
        }
    }
    json::render(&DistributedMeta {
        schema: 2,
        params,
        num_return_types: results.len(),
        platform: opts.platform.clone(),
        backend_type: opts.backend_type().into(),
        distributed_config: DistributedConfig {
            device_ids: opts.device_ids.clone(),
            num_sub_workers: sub_workers,
            runtime: crate::RUNTIME.into(),
            aicpu_thread_num: 0,
        },
        pld_symbolic_shapes: symbolic,
    })
}
