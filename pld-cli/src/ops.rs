//! `pld ops [--json]`: the registry as a table or as JSON.
//!
//! The table has one line per op, sorted by name; the JSON is an array of objects with the
//! same fields, suitable for scripts. Both show, per op, whether each linked per-op table has
//! an entry for it: `emitter` (a pto emitter in `pld-codegen-pto`) and `sim` (simulator
//! semantics in `pld-sim`).

use clap::Args;
use pld_ir::registry::{registry, AttrDefault, OpDef};
use pld_ir::table::{op_table_hooks, OpTableHook};
use std::process::ExitCode;

/// Arguments of `pld ops`.
#[derive(Args)]
pub struct OpsArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Runs `pld ops`.
pub fn run(args: &OpsArgs) -> ExitCode {
    let ops: Vec<&OpDef> = registry().ops().map(|r| r.def).collect();
    if args.json {
        outln!("{}", to_json(&ops));
    } else {
        out!("{}", to_table(&ops));
    }
    ExitCode::SUCCESS
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

use pld_ir::quote::json_string as json_str;

fn to_json(ops: &[&OpDef]) -> String {
    let hooks = op_table_hooks();
    let items: Vec<String> = ops
        .iter()
        .map(|d| {
            let params: Vec<String> = d
                .params
                .iter()
                .map(|p| format!("{{\"name\": {}, \"optional\": {}}}", json_str(p.name), p.optional))
                .collect();
            let attrs: Vec<String> = d
                .attrs
                .iter()
                .map(|a| {
                    let default = match a.default {
                        Some(AttrDefault::Int(v)) => v.to_string(),
                        Some(AttrDefault::Bool(b)) => b.to_string(),
                        Some(AttrDefault::Str(s)) => json_str(s),
                        None => "null".into(),
                    };
                    format!(
                        "{{\"name\": {}, \"type\": {}, \"required\": {}, \"default\": {default}}}",
                        json_str(a.name),
                        json_str(a.ty.name()),
                        a.required
                    )
                })
                .collect();
            let aliases: Vec<String> = d.aliases.iter().map(|a| json_str(a)).collect();
            let lowerings: Vec<String> = d.lowering_kinds().iter().map(|k| json_str(k.name())).collect();
            let cols: String = hooks.iter().map(|h| format!(", {}: {}", json_str(h.column), has(h, d))).collect();
            format!(
                "  {{\"name\": {}, \"family\": {}, \"affinity\": {}, \"no_duplicate\": {}, \"internal\": {}, \"aliases\": [{}], \"params\": [{}], \"kwargs\": [{}], \"lowerings\": [{}]{cols}, \"summary\": {}}}",
                json_str(d.name),
                json_str(d.family),
                json_str(d.affinity.name()),
                d.no_duplicate,
                d.internal,
                aliases.join(", "),
                params.join(", "),
                attrs.join(", "),
                lowerings.join(", "),
                json_str(d.summary)
            )
        })
        .collect();
    format!("[\n{}\n]", items.join(",\n"))
}
