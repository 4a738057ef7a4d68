//! The registry's listings: the one-line description of an op (checked in as the registry
//! golden, with one `column=yes|no` per linked per-op table) and the nearest-name suggestion
//! for unknown ops.

use super::{AttrDefault, OpDef, OpId, Registry};
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
        .map(|p| if p.optional { format!("{}?", p.name) } else { p.name.to_string() })
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
    if d.internal {
        flags.push("internal".into());
    }
    for k in d.lowering_kinds() {
        flags.push(k.name().into());
    }
    format!("{} [{}] ({}) {{{}}} {}", d.name, d.family, params.join(", "), attrs.join(", "), flags.join(" "))
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
