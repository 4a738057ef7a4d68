//! `pld ops [--json]`: the registry as a table or as JSON; `pld ops NAME`: one op's record
//! ([`crate::ops_name`]).
//!
//! The table has one line per op, sorted by name; the JSON is an array of objects with the
//! same fields, suitable for scripts. Both show, per op, whether each linked per-op table has
//! an entry for it: `emitter` (a pto emitter in `pld-codegen-pto`) and `sim` (simulator
//! semantics in `pld-sim`).

use crate::driver::Failure;
use clap::Args;
use pld_ir::registry::{registry, AttrDefault, OpDef};
use pld_ir::table::{op_table_hooks, OpTableHook};
use serde::Serialize;

/// Arguments of `pld ops`.
#[derive(Args)]
pub struct OpsArgs {
    /// Print one op's full record: signature, parameter effects, kwargs with defaults and enum
    /// members, affinity, no_duplicate, signal role (canonical name or DSL alias).
    #[arg(value_name = "NAME", conflicts_with = "json")]
    name: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Runs `pld ops`.
pub fn run(args: &OpsArgs) -> Result<(), Failure> {
    if let Some(name) = &args.name {
        out!("{}", crate::ops_name::records(name)?);
        return Ok(());
    }
    let ops: Vec<&OpDef> = registry().ops().map(|r| r.def).collect();
    if args.json {
        outln!("{}", to_json(&ops));
    } else {
        out!("{}", to_table(&ops));
    }
    Ok(())
}

fn kwargs(d: &OpDef) -> Vec<String> {
    d.attrs
        .iter()
        .map(|a| match a.default {
            Some(AttrDefault::Int(v)) => format!("{}={}", a.name, a.ty.spell_int(v)),
            Some(AttrDefault::Bool(b)) => format!("{}={}", a.name, if b { "True" } else { "False" }),
            Some(AttrDefault::Str(s)) => format!("{}={s:?}", a.name),
            None if a.required => format!("{}!", a.name),
            None => format!("{}?", a.name),
        })
        .collect()
}

/// Whether `hook`'s table has an entry for `d`.
fn has(hook: &OpTableHook, d: &OpDef) -> bool {
    registry().id_of(d).is_some_and(|id| (hook.has)(id))
}

fn to_table(ops: &[&OpDef]) -> String {
    let width = ops.iter().map(|d| d.name.len()).max().unwrap_or(2).max(2);
    let hooks = op_table_hooks();
    let cols: String = hooks.iter().map(|h| format!("{:<8}  ", h.column)).collect();
    let mut out = format!(
        "{:<width$}  {:<14}  {:<14}  {:<12}  {cols}kwargs\n",
        "op", "family", "affinity", "no_duplicate"
    );
    for d in ops {
        let mut name = d.name.to_string();
        if d.internal {
            name.push('*');
        }
        let cols: String =
            hooks.iter().map(|h| format!("{:<8}  ", if has(h, d) { "yes" } else { "no" })).collect();
        let line = format!(
            "{:<width$}  {:<14}  {:<14}  {:<12}  {cols}{}",
            name,
            d.family,
            d.affinity.name(),
            if d.no_duplicate { "yes" } else { "no" },
            kwargs(d).join(" ")
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str(&format!(
        "\n{} ops (* = internal; kwargs: name=default, name! required, name? optional)\n",
        ops.len()
    ));
    out
}

/// One op in `pld ops --json`.
#[derive(Serialize)]
struct OpJson<'a> {
    name: &'a str,
    family: &'a str,
    affinity: &'a str,
    no_duplicate: bool,
    internal: bool,
    aliases: &'a [&'a str],
    params: Vec<ParamJson<'a>>,
    kwargs: Vec<KwargJson<'a>>,
    lowerings: Vec<&'a str>,
    /// One boolean per linked per-op table (`emitter`, `sim`, …).
    #[serde(flatten)]
    tables: serde_json::Map<String, serde_json::Value>,
    summary: &'a str,
}

/// A positional parameter.
#[derive(Serialize)]
struct ParamJson<'a> {
    name: &'a str,
    optional: bool,
}

/// A keyword argument.
#[derive(Serialize)]
struct KwargJson<'a> {
    name: &'a str,
    #[serde(rename = "type")]
    ty: &'a str,
    required: bool,
    default: serde_json::Value,
}

fn to_json(ops: &[&OpDef]) -> String {
    let hooks = op_table_hooks();
    let items: Vec<OpJson<'_>> = ops
        .iter()
        .map(|d| OpJson {
            name: d.name,
            family: d.family,
            affinity: d.affinity.name(),
            no_duplicate: d.no_duplicate,
            internal: d.internal,
            aliases: d.aliases,
            params: d.params.iter().map(|p| ParamJson { name: p.name, optional: p.optional }).collect(),
            kwargs: d
                .attrs
                .iter()
                .map(|a| KwargJson {
                    name: a.name,
                    ty: a.ty.name(),
                    required: a.required,
                    default: match a.default {
                        Some(AttrDefault::Int(v)) => v.into(),
                        Some(AttrDefault::Bool(b)) => b.into(),
                        Some(AttrDefault::Str(s)) => s.into(),
                        None => serde_json::Value::Null,
                    },
                })
                .collect(),
            lowerings: d.lowering_kinds().iter().map(|k| k.name()).collect(),
            tables: hooks.iter().map(|h| (h.column.to_string(), has(h, d).into())).collect(),
            summary: d.summary,
        })
        .collect();
    // Strings, booleans and integers always serialize.
    serde_json::to_string_pretty(&items).unwrap_or_default()
}
