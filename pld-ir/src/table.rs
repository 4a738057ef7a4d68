//! One registration machinery for every link-time table of the toolchain.
//!
//! Ops, overloads, aliases, lowerings and canonicalizers (here, in `pld-ir`), pto emitters
//! (`pld-codegen-pto`) and simulator semantics (`pld-sim`) are all submitted through
//! `inventory` by macros that capture the submission's `file!()`/`line!()` ([`Site`]), and all
//! are materialised by the same two types:
//!
//! - [`Table`]: entries keyed by name (or name and kind), sorted, with one duplicate rule —
//!   the first submission in `(key, file, line)` order wins and every further one is a
//!   [`RegistryError::Duplicate`] naming both sites;
//! - [`OpTable`]: a [`Table`] keyed by op name, resolved against the op registry into a dense
//!   vector indexed by [`OpId`] (a lookup is a bounds-checked index, no hashing); a name the
//!   registry does not know is a [`RegistryError::UnknownOp`] naming the submission's site.
//!
//! Every per-op entry (a lowering, a canonicalizer, a private-signal rule, an emitter, a
//! simulator semantics) is submitted as one record type, [`Registration`], by one macro,
//! [`register_entry!`](crate::register_entry) (each table's `register_*!` macro is a line
//! around it): the ops it is for, the entry, and its [`Site`]. The entry's type says which
//! table it belongs to ([`entries`] collects one type's entries), so every table is built from
//! the same records with the same errors.
//!
//! A crate that owns an [`OpTable`] submits an [`OpTableHook`] so the registry's
//! [`check`](crate::registry::Registry::check) reports that table's errors too and the
//! listings (`pld ops`, the registry golden) show one column per linked table.

use crate::registry::registry;
use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;

/// One submitted registration of a per-op entry, by [`register_entry!`](crate::register_entry):
/// the entry is registered for every op of `ops` (one, or a family's list that shares it).
pub struct Registration {
    /// The canonical names of the ops the entry is for.
    pub ops: &'static [&'static str],
    /// The entry; its type names the table it belongs to.
    pub entry: &'static (dyn Any + Send + Sync),
    /// Where it was submitted.
    pub site: Site,
}

inventory::collect!(Registration);

/// Submits `$entry` (a value whose type names its table) for every op of `$ops`
/// (a `&'static [&'static str]`), at the site of the macro call.
#[macro_export]
macro_rules! register_entry {
    ($ops:expr, $entry:expr) => {
        $crate::inventory::submit! {
            $crate::table::Registration { ops: $ops, entry: &$entry, site: $crate::site!() }
        }
    };
}

/// One op's registered entry of type `T`.
#[derive(Debug)]
pub struct Entry<T: 'static> {
    /// The op.
    pub op: &'static str,
    /// The entry.
    pub value: &'static T,
    /// Where it was submitted.
    pub site: Site,
}

impl<T> Clone for Entry<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Entry<T> {}

impl<T> Entry<T> {
    /// `(op, site, entry)`: an item for [`Table::collect`] and [`OpTable::collect`].
    pub fn item(self) -> (&'static str, Site, Entry<T>) {
        (self.op, self.site, self)
    }
}

/// Every registered entry of type `T`, one per op it was registered for, in submission order.
pub fn entries<T: Any>() -> impl Iterator<Item = Entry<T>> {
    inventory::iter::<Registration>
        .into_iter()
        .filter_map(|r| Some((r, r.entry.downcast_ref::<T>()?)))
        .flat_map(|(r, value)| r.ops.iter().map(move |op| Entry { op, value, site: r.site }))
}

/// Where a registration was submitted: the `file!()` and `line!()` of the macro call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Site {
    /// Source file.
    pub file: &'static str,
    /// Source line.
    pub line: u32,
}

/// The [`Site`] of the macro call it expands in: registration macros put it in their records.
#[macro_export]
macro_rules! site {
    () => {
        $crate::table::Site { file: file!(), line: line!() }
    };
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// A problem with the set of registrations.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// Two submissions of one table share a key.
    #[error("{what} `{name}` is registered twice: at {first} and at {second}")]
    Duplicate {
        /// What the table holds (`op`, `lowering`, `pto emitter`, …).
        what: &'static str,
        /// The key as the listings spell it.
        name: String,
        /// The submission kept (first in `(key, file, line)` order).
        first: Site,
        /// The one rejected.
        second: Site,
    },
    /// A submission names an op nobody registered.
    #[error("{what} is registered for unknown op `{op}` at {site}")]
    UnknownOp {
        /// What the table holds.
        what: &'static str,
        /// The op name as written.
        op: String,
        /// The submission's site.
        site: Site,
    },
    /// An op record contradicts itself: a flag its other fields require is missing.
    #[error("op `{op}` at {site}: {why}")]
    Inconsistent {
        /// The op's name.
        op: &'static str,
        /// Its registration site.
        site: Site,
        /// What is wrong, and why it matters.
        why: &'static str,
    },
    /// Nothing is registered.
    #[error("no op families registered; is `pld-ops` linked? add `use pld_ops as _;` to the binary or test")]
    Empty,
}

/// A key of a [`Table`]: how duplicates are named and which op the entry belongs to.
pub trait TableKey: Copy + Ord {
    /// The op (or DSL) name the entry is registered for.
    fn op(&self) -> &'static str;
    /// The key as duplicate reports spell it.
    fn describe(&self) -> String {
        self.op().to_string()
    }
}

impl TableKey for &'static str {
    fn op(&self) -> &'static str {
        self
    }
}

/// Registrations keyed by `K`, deduplicated by the one rule of this module.
#[derive(Debug)]
pub struct Table<K, V> {
    entries: BTreeMap<K, (Site, V)>,
    errors: Vec<RegistryError>,
}

impl<K: TableKey, V: Copy> Table<K, V> {
    /// Materialises `items`; `what` names the table in errors.
    pub fn collect(what: &'static str, items: impl IntoIterator<Item = (K, Site, V)>) -> Table<K, V> {
        let mut items: Vec<(K, Site, V)> = items.into_iter().collect();
        items.sort_by_key(|item| (item.0, item.1));
        let mut entries: BTreeMap<K, (Site, V)> = BTreeMap::new();
        let mut errors = Vec::new();
        for (key, site, value) in items {
            if let Some((first, _)) = entries.get(&key) {
                errors.push(RegistryError::Duplicate {
                    what,
                    name: key.describe(),
                    first: *first,
                    second: site,
                });
                continue;
            }
            entries.insert(key, (site, value));
        }
        Table { entries, errors }
    }

    /// The entry for `key`.
    pub fn get(&self, key: &K) -> Option<V> {
        self.entries.get(key).map(|(_, v)| *v)
    }

    /// The entry for a borrowed form of a key (`&str` for `&'static str` keys).
    pub fn get_by<Q: Ord + ?Sized>(&self, key: &Q) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
    {
        self.entries.get(key).map(|(_, v)| *v)
    }

    /// The entry for `key` with its site.
    pub fn entry(&self, key: &K) -> Option<(Site, V)> {
        self.entries.get(key).copied()
    }

    /// Every entry in key order.
    pub fn iter(&self) -> impl Iterator<Item = (K, Site, V)> + '_ {
        self.entries.iter().map(|(k, (s, v))| (*k, *s, *v))
    }

    /// The entries whose keys lie in `range`, in key order.
    pub fn range(&self, range: std::ops::RangeFrom<K>) -> impl Iterator<Item = (K, Site, V)> + '_ {
        self.entries.range(range).map(|(k, (s, v))| (*k, *s, *v))
    }

    /// Every key, in order.
    pub fn keys(&self) -> impl Iterator<Item = K> + '_ {
        self.entries.keys().copied()
    }

    /// Number of entries kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no entry was kept.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Duplicates found while collecting.
    pub fn errors(&self) -> &[RegistryError] {
        &self.errors
    }
}

/// The dense index of a registered op: its position in the registry's name-sorted op list,
/// assigned when the registry is collected. Stable for one process, not across builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpId(u32);

impl OpId {
    /// An id for index `i` (the registry assigns them; tables use them).
    pub(crate) fn new(i: usize) -> OpId {
        OpId(u32::try_from(i).unwrap_or(u32::MAX))
    }

    /// The index into per-op vectors.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What names an op in an [`OpTable`] lookup.
pub trait OpKey {
    /// The op's id, if it is registered.
    fn op_id(&self) -> Option<OpId>;
}

impl OpKey for OpId {
    fn op_id(&self) -> Option<OpId> {
        Some(*self)
    }
}

impl OpKey for &crate::registry::OpDef {
    fn op_id(&self) -> Option<OpId> {
        registry().id_of(self)
    }
}

impl OpKey for &str {
    fn op_id(&self) -> Option<OpId> {
        registry().id(self)
    }
}

/// A table keyed by op, indexed by [`OpId`]: emitters, simulator semantics.
#[derive(Debug)]
pub struct OpTable<V> {
    by_id: Vec<Option<(Site, V)>>,
    errors: Vec<RegistryError>,
}

impl<V: Copy> OpTable<V> {
    /// Materialises `items` (canonical op name, site, value) against the global registry;
    /// `what` names the table in errors.
    pub fn collect(
        what: &'static str,
        items: impl IntoIterator<Item = (&'static str, Site, V)>,
    ) -> OpTable<V> {
        let table = Table::collect(what, items);
        let reg = registry();
        let mut errors = table.errors().to_vec();
        let mut by_id = vec![None; reg.len()];
        for (name, site, value) in table.iter() {
            match reg.id(name) {
                Some(id) => by_id[id.index()] = Some((site, value)),
                None => errors.push(RegistryError::UnknownOp { what, op: name.to_string(), site }),
            }
        }
        OpTable { by_id, errors }
    }

    /// The entry of the op `key` names: an [`OpId`] (a vector index), an op record (found by
    /// its address, no name hashed) or a canonical op name (for tools and tests).
    pub fn get(&self, key: impl OpKey) -> Option<V> {
        let id = key.op_id()?;
        self.by_id.get(id.index()).copied().flatten().map(|(_, v)| v)
    }

    /// The entry of `def`: [`OpTable::get`] by record.
    pub fn of(&self, def: &crate::registry::OpDef) -> Option<V> {
        self.get(def)
    }

    /// Whether the op `key` names has an entry.
    pub fn has(&self, key: impl OpKey) -> bool {
        self.get(key).is_some()
    }

    /// The site of op `id`'s entry.
    pub fn site(&self, id: OpId) -> Option<Site> {
        self.by_id.get(id.index()).copied().flatten().map(|(s, _)| s)
    }

    /// The canonical names of every op with an entry, sorted.
    pub fn names(&self) -> Vec<&'static str> {
        let reg = registry();
        (0..self.by_id.len()).map(OpId::new).filter(|id| self.has(*id)).map(|id| reg.op(id).name).collect()
    }

    /// Duplicates and unknown op names found while collecting.
    pub fn errors(&self) -> &[RegistryError] {
        &self.errors
    }
}

/// A per-op table owned by another crate, made known to the registry: its errors join
/// [`Registry::check`](crate::registry::Registry::check) and its column joins the listings.
/// Submitted with [`register_op_table!`](crate::register_op_table).
pub struct OpTableHook {
    /// The listing column (`emitter`, `sim`).
    pub column: &'static str,
    /// Whether op `id` has an entry.
    pub has: fn(OpId) -> bool,
    /// The table's registration errors.
    pub errors: fn() -> Vec<RegistryError>,
}

inventory::collect!(OpTableHook);

/// Makes a per-op table known to the registry:
/// `register_op_table!("emitter", |id| emitters().has(id), || emitters().errors().to_vec())`.
#[macro_export]
macro_rules! register_op_table {
    ($column:expr, $has:expr, $errors:expr) => {
        $crate::inventory::submit! {
            $crate::table::OpTableHook { column: $column, has: $has, errors: $errors }
        }
    };
}

/// Every linked per-op table, sorted by column.
pub fn op_table_hooks() -> Vec<&'static OpTableHook> {
    let mut hooks: Vec<&'static OpTableHook> = inventory::iter::<OpTableHook>.into_iter().collect();
    hooks.sort_by_key(|h| h.column);
    hooks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(file: &'static str, line: u32) -> Site {
        Site { file, line }
    }

    #[test]
    fn the_first_submission_in_key_file_line_order_wins() {
        let t = Table::collect(
            "thing",
            [
                ("b", site("z.rs", 1), 1),
                ("a", site("y.rs", 9), 2),
                ("b", site("x.rs", 5), 3),
                ("b", site("x.rs", 7), 4),
            ],
        );
        assert_eq!(t.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(t.get_by("b"), Some(3));
        assert_eq!(t.entry(&"a"), Some((site("y.rs", 9), 2)));
        let msgs: Vec<String> = t.errors().iter().map(ToString::to_string).collect();
        assert_eq!(
            msgs,
            [
                "thing `b` is registered twice: at x.rs:5 and at x.rs:7",
                "thing `b` is registered twice: at x.rs:5 and at z.rs:1"
            ]
        );
    }

    #[test]
    fn unknown_op_errors_name_the_site() {
        let e = RegistryError::UnknownOp { what: "a thing", op: "no.op".into(), site: site("f.rs", 3) };
        assert_eq!(e.to_string(), "a thing is registered for unknown op `no.op` at f.rs:3");
    }
}
