//! `pld ops NAME`: one op's record read from the registry (signature, parameter effects,
//! kwargs with defaults and enum members, affinity, no_duplicate, signal role), DSL aliases and
//! overloaded names accepted, and an unknown name a usage error with a suggestion.

mod cli_support;

use cli_support::{pld, text};

/// The value of the `key:` line of a record.
fn field<'a>(record: &'a str, key: &str) -> &'a str {
    let prefix = format!("{key}:");
    record
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no `{key}:` line in\n{record}"))
}

#[test]
fn notify_record_shows_kwargs_enum_members_affinity_and_flags() {
    let out = pld(&["ops", "pld.system.notify"]);
    let t = text(&out.stdout);
    assert!(out.status.success(), "{t}{}", text(&out.stderr));
    assert_eq!(t.lines().next(), Some("pld.system.notify"), "{t}");
    assert!(t.contains("signal slot (TNOTIFY)"), "the summary: {t}");
    assert_eq!(field(&t, "signature"), "pld.system.notify(target, peer, offsets, value, *, op)");
    // The target is read-modify-written in a peer's window; the rest are values.
    assert!(t.lines().any(|l| l.trim() == "target   read and written, a peer's window region"), "{t}");
    assert!(t.contains("  op: pld.NotifyOp (required) (AtomicAdd=0, Set=1)\n"), "{t}");
    assert_eq!(field(&t, "affinity"), "shared");
    assert!(field(&t, "no_duplicate").starts_with("yes"), "{t}");
    assert!(field(&t, "signal role").starts_with("notify"), "{t}");
    assert!(field(&t, "effects").starts_with("computed per call"), "{t}");
}

#[test]
fn enum_default_reads_as_its_member_name() {
    let out = pld(&["ops", "pld.tensor.allreduce"]);
    let t = text(&out.stdout);
    assert!(out.status.success(), "{t}{}", text(&out.stderr));
    assert!(t.contains("  op: pld.ReduceOp = Sum (Sum=0, Max=1, Min=2, Prod=3)\n"), "{t}");
    assert!(t.contains("  mode: str = \"mesh\"\n"), "{t}");
    assert_eq!(field(&t, "no_duplicate"), "no");
    assert_eq!(field(&t, "signal role"), "none");
}

#[test]
fn a_builtin_collective_shows_what_its_kernel_variants_are_keyed_by() {
    for (op, keys) in [
        ("builtin.tensor.allreduce", "keyed by reduce-op-inst+dtype+core-count"),
        ("builtin.tensor.broadcast", "keyed by root+dtype"),
        ("builtin.tensor.barrier", "keyed by dtype"),
    ] {
        let out = pld(&["ops", op]);
        let t = text(&out.stdout);
        assert!(out.status.success(), "{t}{}", text(&out.stderr));
        assert_eq!(field(&t, "kernel variants"), keys, "{t}");
    }
    // A user-facing collective has no prebuilt kernel of its own: no such line.
    let t = text(&pld(&["ops", "pld.tensor.allreduce"]).stdout);
    assert!(!t.contains("kernel variants:"), "{t}");
}

#[test]
fn a_dsl_alias_prints_its_op() {
    let out = pld(&["ops", "pld.window"]);
    let t = text(&out.stdout);
    assert!(out.status.success(), "{t}{}", text(&out.stderr));
    assert_eq!(t.lines().next(), Some("pld.tensor.window"), "{t}");
    assert!(field(&t, "aliases").contains("pld.window"), "{t}");
}

#[test]
fn a_misspelt_name_is_a_usage_error_with_a_suggestion() {
    let out = pld(&["ops", "pld.system.notfy"]);
    assert_eq!(out.status.code(), Some(2));
    let e = text(&out.stderr);
    assert!(e.contains("unknown op `pld.system.notfy`"), "{e}");
    assert!(e.contains("did you mean `pld.system.notify`?"), "{e}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
}
