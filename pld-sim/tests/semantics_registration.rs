//! Simulator semantics for an op the registry does not know, or a second registration for
//! one op, is a registry error naming the sites (never silently dead or shadowed). Its own
//! test binary: it pollutes the global tables.

use pld_ir::registry::RegistryError;
use pld_sim::sem::{Flow, OpCx};
use pld_sim::value::Val;
use pld_sim::{register_collective, register_semantics};

fn never(cx: &mut OpCx<'_>, _: &[Val]) -> Result<Flow, pld_sim::report::Fault> {
    Err(cx.err("never called"))
}
register_semantics!("test.no_such_op", never);
register_semantics!("tile.add", never);

fn never_micro(cx: &mut OpCx<'_>, _: &[Val]) -> Result<Vec<pld_sim::micro::Micro>, pld_sim::report::Fault> {
    Err(cx.err("never called"))
}
register_collective!("test.no_such_collective", 0, never_micro);

#[test]
fn unknown_and_duplicate_semantics_are_registry_errors() {
    let errs = pld_ops::registry().check().expect_err("bad semantics must be reported");
    let msgs: Vec<String> = errs.iter().map(ToString::to_string).collect();
    assert_eq!(errs.len(), 3, "{msgs:?}");
    for op in ["test.no_such_op", "test.no_such_collective"] {
        let m = msgs.iter().find(|m| m.contains(op)).unwrap_or_else(|| panic!("{op} not reported: {msgs:?}"));
        assert!(
            m.starts_with(&format!("simulator semantics is registered for unknown op `{op}` at ")),
            "{m}"
        );
        assert!(m.contains("semantics_registration.rs:"), "{m}");
    }
    let dup = errs.iter().find(|e| matches!(e, RegistryError::Duplicate { .. })).expect("duplicate reported");
    let dup = dup.to_string();
    assert!(dup.starts_with("simulator semantics `tile.add` is registered twice: at "), "{dup}");
    assert!(dup.contains("pld-sim/src/sem/") && dup.contains("semantics_registration.rs:"), "{dup}");
    assert_eq!(pld_sim::sem::duplicates().len(), 3);
}
