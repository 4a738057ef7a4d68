//! The registry's listings: the one-line description of an op (checked in as the registry
//! golden: each parameter with its access — effect, side, store kind —, the signal role, what a
//! builtin collective's kernel variants are keyed by, and one
//! `column=yes|no` per linked per-op table) and the nearest-name suggestion
//! for unknown ops.

use super::{AttrDefault, OpDef, OpId, ParamDef, Registry};
use crate::effects::{Effect, Side, SignalRole, StoreKind};
use crate::table::op_table_hooks;

impl Registry {
    /// The sorted listing checked in as a golden: one line per op, ending with one
    /// `column=yes|no` per linked per-op table (`emitter`, `sim`).
    pub fn listing(&self) -> String {
        let hooks = op_table_hooks();
        let mut out = String::new();
        for (i, r) in self.ops().enumerate() {
            out.push_str(&describe(r.def));
            if !hooks.is_empty() {
                let cols: Vec<String> = hooks
                    .iter()
                    .map(|h| format!("{}={}", h.column, if (h.has)(OpId::new(i)) { "yes" } else { "no" }))
                    .collect();
                out.push_str(" | ");
                out.push_str(&cols.join(" "));
            }
            out.push('\n');
        }
        out
    }
}

/// One line describing an op: name, family, affinity, flags, params and kwargs.
pub fn describe(d: &OpDef) -> String {
    let params: Vec<String> = d
        .params
        .iter()
        .map(|p| {
            let mut s = p.name.to_string();
            if let Some(alias) = p.keyword_alias {
                s.push_str(&format!("|{alias}"));
            }
            if p.optional {
                s.push('?');
            }
            s.push_str(&access(p));
            s
        })
        .collect();
    let attrs: Vec<String> = d
        .attrs
        .iter()
        .map(|a| {
            let mut s = format!("{}: {}", a.name, a.ty.name());
            if let Some(def) = a.default {
                match def {
                    AttrDefault::Int(v) => s.push_str(&format!(" = {}", a.ty.spell_int(v))),
                    AttrDefault::Bool(b) => s.push_str(&format!(" = {b}")),
                    AttrDefault::Str(v) => s.push_str(&format!(" = {v:?}")),
                }
            } else if a.from_assignment {
                s.push_str(" = <assigned name>");
            } else if a.required {
                s.push_str(" (required)");
            }
            s
        })
        .collect();
    let mut flags = vec![d.affinity.name().to_string()];
    if d.no_duplicate {
        flags.push("no_duplicate".into());
    }
    if let Some(role) = signal_role_name(d.signal_role) {
        flags.push(role.into());
    }
    if d.effects.is_some() {
        flags.push("per-call-effects".into());
    }
    if d.internal {
        flags.push("internal".into());
    }
    if let Some(v) = d.builtin_variant {
        flags.push(format!("variant={}", v.listing()));
    }
    for k in d.lowering_kinds() {
        flags.push(k.name().into());
    }
    format!("{} [{}] ({}) {{{}}} {}", d.name, d.family, params.join(", "), attrs.join(", "), flags.join(" "))
}

/// A memory operand's access as the listing spells it: `:r`, `:w`, `:rw`, then `@peer` for a
/// peer's window region and `/bulk` or `/scalar` for the kind of local store (empty for a
/// value operand). Printing it makes a wrong `.peer()` or store kind a golden diff.
fn access(p: &ParamDef) -> String {
    let effect = match p.effect {
        Effect::None => return String::new(),
        Effect::Read => ":r",
        Effect::Write => ":w",
        Effect::ReadWrite => ":rw",
    };
    let side = if p.side == Side::Peer { "@peer" } else { "" };
    let store = match p.store {
        StoreKind::None => "",
        StoreKind::Bulk => "/bulk",
        StoreKind::Scalar => "/scalar",
    };
    format!("{effect}{side}{store}")
}

/// The listing's flag for a signal role (none for an op outside the signal protocol).
fn signal_role_name(role: SignalRole) -> Option<&'static str> {
    match role {
        SignalRole::None => None,
        SignalRole::Notify => Some("notify"),
        SignalRole::BlockingWait => Some("blocking-wait"),
        SignalRole::DeferredWait => Some("deferred-wait"),
    }
}

/// The candidate closest to `name`, if reasonably close (ties go to the smaller name).
pub fn nearest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let (best, dist) = candidates.map(|c| (c, edit_distance(name, c))).min_by_key(|&(c, d)| (d, c))?;
    (dist <= name.len().max(3) / 3 + 2 && dist < name.chars().count().max(1)).then_some(best)
}

/// `did you mean `X`?` for the candidate closest to `name`, when one is close.
pub fn did_you_mean<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    nearest(name, candidates.filter(|c| *c != name)).map(|best| format!("did you mean `{best}`?"))
}

/// The Levenshtein distance between `a` and `b` (in chars), for "did you mean" notes.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::AbiEnumKind;

    #[test]
    fn edit_distance_basics() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn enum_member_descriptions() {
        assert_eq!(AbiEnumKind::NotifyOp.describe_members(), "NotifyOp.AtomicAdd or NotifyOp.Set");
        assert_eq!(
            AbiEnumKind::ReduceOp.describe_members(),
            "ReduceOp.Sum, ReduceOp.Max, ReduceOp.Min or ReduceOp.Prod"
        );
        assert_eq!(AbiEnumKind::AtomicType.value_of("None_"), Some(0));
    }
}
