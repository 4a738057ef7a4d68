//! The seed's tables, checked against the registry: the fifteen user ops exist with the
//! declared affinity (put/get VECTOR; remote_store derived from its tile; remote_load,
//! notify, wait SHARED), `no_duplicate` on notify only (and, registry-wide, exactly on the ops
//! whose signal role is Notify), the ABI-enum kwargs, the internal
//! flags of the staging and builtin forms, and per-argument write effects.

use pld_ir::registry::{AbiEnumKind, AttrType};
use pld_ir::{Affinity, Effect, SignalRole};

const USER_OPS: [(&str, Affinity); 15] = [
    ("pld.tile.remote_load", Affinity::Shared),
    ("pld.tile.remote_store", Affinity::FromFirstTileArg),
    ("pld.tensor.remote_store", Affinity::Shared),
    ("pld.tensor.get", Affinity::Vector),
    ("pld.tensor.put", Affinity::Vector),
    ("pld.tensor.allreduce", Affinity::Shared),
    ("pld.tensor.barrier", Affinity::Shared),
    ("pld.tensor.broadcast", Affinity::Shared),
    ("pld.tensor.reduce_scatter", Affinity::Shared),
    ("pld.tensor.allgather", Affinity::Shared),
    ("pld.tensor.all_to_all", Affinity::Shared),
    ("pld.tensor.all_to_all_v", Affinity::Shared),
    ("pld.system.notify", Affinity::Shared),
    ("pld.system.wait", Affinity::Shared),
    ("pld.system.defer_wait", Affinity::Shared),
];

#[test]
fn fifteen_user_ops_with_seed_affinity() {
    let reg = pld_testkit::init();
    for (name, affinity) in USER_OPS {
        let d = reg.lookup(name).unwrap_or_else(|| panic!("{name} not registered"));
        assert_eq!(d.affinity, affinity, "{name}");
        assert!(!d.internal, "{name} is user-facing");
        assert_eq!(d.no_duplicate, name == "pld.system.notify", "{name}");
        assert!(d.lowerings.is_empty(), "{name}: lowerings are registered apart, never inline");
    }
    // Across the whole registry the signal role decides: an op is pinned to one lane exactly
    // when it notifies (the registry refuses a notifier without the flag).
    for r in reg.ops() {
        assert_eq!(r.def.no_duplicate, r.def.signal_role == SignalRole::Notify, "{}", r.def.name);
    }
}

#[test]
fn internal_forms() {
    let reg = pld_testkit::init();
    for name in ["pld.tile.put", "pld.tile.get"] {
        let d = reg.lookup(name).unwrap();
        assert!(d.internal && d.affinity == Affinity::Vector, "{name}");
    }
    let builtins: Vec<&str> =
        reg.ops().map(|r| r.def.name).filter(|n| n.starts_with("builtin.tensor.")).collect();
    assert_eq!(
        builtins,
        vec![
            "builtin.tensor.all_to_all",
            "builtin.tensor.all_to_all_v",
            "builtin.tensor.allgather",
            "builtin.tensor.allreduce",
            "builtin.tensor.allreduce_ring",
            "builtin.tensor.barrier",
            "builtin.tensor.broadcast",
            "builtin.tensor.reduce_scatter",
        ]
    );
    assert!(builtins.iter().all(|n| reg.lookup(n).unwrap().internal));
}

#[test]
fn abi_enum_kwargs() {
    let reg = pld_testkit::init();
    let cases: [(&str, &str, AbiEnumKind, bool); 9] = [
        ("pld.system.notify", "op", AbiEnumKind::NotifyOp, true),
        ("pld.system.wait", "cmp", AbiEnumKind::WaitCmp, true),
        ("pld.system.defer_wait", "cmp", AbiEnumKind::WaitCmp, true),
        ("pld.tensor.put", "atomic", AbiEnumKind::AtomicType, false),
        ("pld.tile.put", "atomic", AbiEnumKind::AtomicType, true),
        ("pld.tile.remote_store", "atomic", AbiEnumKind::AtomicType, false),
        ("pld.tensor.remote_store", "atomic", AbiEnumKind::AtomicType, false),
        ("pld.tensor.allreduce", "op", AbiEnumKind::ReduceOp, false),
        ("pld.tensor.reduce_scatter", "op", AbiEnumKind::ReduceOp, false),
    ];
    for (op, kw, kind, required) in cases {
        let a = reg.lookup(op).unwrap().attr_def(kw).unwrap_or_else(|| panic!("{op} lacks {kw}"));
        assert_eq!(a.ty, AttrType::Enum(kind), "{op}.{kw}");
        assert_eq!(a.required, required, "{op}.{kw}");
    }
    // get has chunk kwargs but no atomic; tile.get has no kwargs at all.
    assert!(reg.lookup("pld.tensor.get").unwrap().attr_def("atomic").is_none());
    assert!(reg.lookup("pld.tile.get").unwrap().attrs.is_empty());
    let put = reg.lookup("pld.tensor.put").unwrap();
    for kw in ["chunk_rows", "chunk_cols", "pipeline"] {
        assert!(put.attr_def(kw).is_some(), "put.{kw}");
    }
}

#[test]
fn static_write_effects() {
    let reg = pld_testkit::init();
    let writes = |name: &str| -> Vec<(usize, Effect)> {
        reg.lookup(name)
            .unwrap()
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.effect.writes())
            .map(|(i, p)| (i, p.effect))
            .collect()
    };
    use Effect::*;
    assert_eq!(writes("pld.tensor.allreduce"), vec![(0, ReadWrite), (1, ReadWrite)]);
    assert_eq!(writes("pld.tensor.barrier"), vec![(0, ReadWrite)]);
    assert_eq!(writes("pld.tensor.broadcast"), vec![(0, ReadWrite), (1, ReadWrite)]);
    assert_eq!(writes("pld.tensor.reduce_scatter"), vec![(0, ReadWrite), (1, ReadWrite)]);
    assert_eq!(writes("pld.tensor.allgather"), vec![(1, Write), (2, ReadWrite)]);
    assert_eq!(writes("pld.tensor.all_to_all"), vec![(1, Write), (2, ReadWrite)]);
    assert_eq!(writes("pld.tensor.all_to_all_v"), vec![(1, Write), (2, ReadWrite), (4, Write)]);
    assert_eq!(writes("pld.tensor.get"), vec![(0, Write)]);
    assert!(writes("pld.system.wait").is_empty());
    assert!(writes("pld.system.defer_wait").is_empty());
    assert!(writes("pld.tile.remote_load").is_empty());
}

#[test]
fn overload_names_are_not_also_op_names_or_aliases() {
    // The frontend tries overloads first; an alias with the same spelling would be dead.
    let reg = pld_testkit::init();
    let mut n = 0;
    for o in reg.overloads() {
        n += 1;
        assert!(reg.lookup(o.name).is_none(), "{} is both an overload and an op/alias", o.name);
        assert!(o.candidates.len() >= 2, "{}", o.name);
    }
    assert!(n >= 15, "expected the unified pl.* overloads and pld.remote_store, got {n}");
}
