//! `pld ops NAME`: one op's full record, read from the registry — its signature, each
//! parameter's effect and side, kwargs with types, defaults and enum members, affinity,
//! `no_duplicate`, signal role, effects, lowerings, the linked per-op tables and its summary.
//!
//! NAME may be the canonical name, a DSL alias (`pld.window`) or an overloaded DSL name (each
//! candidate op is printed). An unknown NAME is a usage error (exit 2) with the registry's
//! nearest-name suggestion.

use crate::driver::Failure;
use pld_ir::registry::{registry, AttrDef, AttrDefault, AttrType, OpDef, ParamDef};
use pld_ir::table::op_table_hooks;
use pld_ir::{Effect, RankRole, Side, SignalRole, StoreKind};

/// The records `name` names (one op, or an overload's candidates), or a usage error.
pub fn records(name: &str) -> Result<String, Failure> {
    let reg = registry();
    if let Some(d) = reg.lookup(name) {
        return Ok(record(d));
    }
    if let Some(o) = reg.overload(name) {
        let mut out = format!(
            "{name} is overloaded: the first argument's type picks one of {}\n",
            o.candidates.join(", ")
        );
        for c in o.candidates {
            if let Some(d) = reg.lookup(c) {
                out.push('\n');
                out.push_str(&record(d));
            }
        }
        return Ok(out);
    }
    let mut msg = format!("unknown op `{name}`");
    if let Some(best) = reg.suggest(name) {
        msg.push_str(&format!("; did you mean `{best}`?"));
    }
    msg.push_str(" (`pld ops` lists every op)");
    Err(Failure::usage(msg))
}

/// One op's record, one field a line.
fn record(d: &OpDef) -> String {
    let mut out = format!("{}\n  {}\n\n", d.name, d.summary);
    let field = |out: &mut String, k: &str, v: &str| out.push_str(&format!("{:<14}{v}\n", format!("{k}:")));
    field(&mut out, "signature", &signature(d));
    field(&mut out, "family", d.family);
    field(&mut out, "aliases", &list_or_none(d.aliases.iter().map(|a| a.to_string())));
    if d.params.is_empty() {
        field(&mut out, "parameters", "(none)");
    } else {
        out.push_str("parameters:\n");
        let width = d.params.iter().map(|p| p.name.len()).max().unwrap_or(0);
        for p in d.params {
            out.push_str(&format!("  {:<width$}  {}\n", p.name, param_facts(p)));
        }
    }
    if d.attrs.is_empty() {
        field(&mut out, "kwargs", "(none)");
    } else {
        out.push_str("kwargs:\n");
        for a in d.attrs {
            out.push_str(&format!("  {}\n", kwarg(a)));
        }
    }
    field(&mut out, "affinity", d.affinity.name());
    let dup = if d.no_duplicate { "yes (pinned to the AIV lane inside split_aiv regions)" } else { "no" };
    field(&mut out, "no_duplicate", dup);
    field(&mut out, "signal role", signal_role(d.signal_role));
    field(&mut out, "rank role", rank_role(d.rank_role));
    if let Some(v) = d.builtin_variant {
        field(&mut out, "kernel variants", &format!("keyed by {}", v.listing()));
    }
    let effects = if d.effects.is_some() {
        "computed per call from its arguments and kwargs (refining the parameters' static effects)"
    } else {
        "the parameters' static effects"
    };
    field(&mut out, "effects", effects);
    field(&mut out, "lowerings", &list_or_none(d.lowering_kinds().iter().map(|k| k.name().to_string())));
    for h in op_table_hooks() {
        let has = registry().id_of(d).is_some_and(|id| (h.has)(id));
        field(&mut out, h.column, if has { "yes" } else { "no" });
    }
    field(&mut out, "internal", if d.internal { "yes (only compiler passes create it)" } else { "no" });
    out
}

/// `pld.system.notify(target, peer, offsets, value, *, op)`: optional parameters end in `?`.
fn signature(d: &OpDef) -> String {
    let mut parts: Vec<String> = d
        .params
        .iter()
        .map(|p| if p.optional { format!("{}?", p.name) } else { p.name.to_string() })
        .collect();
    if !d.attrs.is_empty() {
        parts.push("*".into());
        parts.extend(d.attrs.iter().map(|a| a.name.to_string()));
    }
    format!("{}({})", d.name, parts.join(", "))
}

/// What the op does to a parameter, and whose memory it is.
fn param_facts(p: &ParamDef) -> String {
    let mut facts = vec![match p.effect {
        Effect::None => "value (not a memory operand)",
        Effect::Read => "read",
        Effect::Write => "written",
        Effect::ReadWrite => "read and written",
    }];
    if p.effect != Effect::None {
        facts.push(match p.side {
            Side::Local => "this rank's memory",
            Side::Peer => "a peer's window region",
        });
    }
    match p.store {
        StoreKind::None => {}
        StoreKind::Bulk => facts.push("bulk store"),
        StoreKind::Scalar => facts.push("scalar store"),
    }
    if p.optional {
        facts.push("optional");
    }
    facts.join(", ")
}

/// `op: pld.NotifyOp = AtomicAdd (AtomicAdd=0, Set=1)`.
fn kwarg(a: &AttrDef) -> String {
    let ty = match a.ty {
        AttrType::Enum(k) => format!("pld.{}", k.name()),
        other => other.name().to_string(),
    };
    let mut s = format!("{}: {ty}", a.name);
    match a.default {
        Some(AttrDefault::Int(v)) => s.push_str(&format!(" = {}", a.ty.spell_int(v))),
        Some(AttrDefault::Bool(b)) => s.push_str(if b { " = True" } else { " = False" }),
        Some(AttrDefault::Str(v)) => s.push_str(&format!(" = {v:?}")),
        None if a.from_assignment => s.push_str(" (defaults to the name the result is assigned to)"),
        None if a.required => s.push_str(" (required)"),
        None => s.push_str(" (optional)"),
    }
    if let AttrType::Enum(k) = a.ty {
        let members: Vec<String> = k.members().iter().map(|(n, v)| format!("{n}={v}")).collect();
        s.push_str(&format!(" ({})", members.join(", ")));
    }
    s
}

fn signal_role(r: SignalRole) -> &'static str {
    match r {
        SignalRole::None => "none",
        SignalRole::Notify => "notify (publishes into a peer's signal slot)",
        SignalRole::BlockingWait => "blocking wait (blocks until its own slot satisfies a predicate)",
        SignalRole::DeferredWait => "deferred wait (registers a completion condition, does not block)",
    }
}

fn rank_role(r: RankRole) -> &'static str {
    match r {
        RankRole::None => "none",
        RankRole::Collective => "collective (every rank must reach it, as often and in the same order)",
        RankRole::RankIndex => "rank index (its result differs between ranks)",
    }
}

fn list_or_none(items: impl Iterator<Item = String>) -> String {
    let v: Vec<String> = items.collect();
    if v.is_empty() {
        "(none)".into()
    } else {
        v.join(", ")
    }
}
