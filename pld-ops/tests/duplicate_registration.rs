//! Registering an op name twice is reported with both definition sites. This test lives in
//! its own file (its own test binary) because it deliberately pollutes the global registry.

use pld_ir::{register_op, Affinity, DeduceCx, Diagnostic, OpDef, SignalRole, Type};

fn deduce_unknown(_: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    Ok(Type::Unknown)
}

static SHADOW_RANK: OpDef = OpDef {
    name: "pld.system.rank",
    family: "test_shadow",
    summary: "a second definition of an existing op name",
    aliases: &[],
    params: &[],
    attrs: &[],
    affinity: Affinity::Shared,
    no_duplicate: false,
    signal_role: SignalRole::None,
    rank_role: pld_ir::RankRole::None,
    builtin_variant: None,
    internal: false,
    effects: None,
    deduce: deduce_unknown,
    lowerings: &[],
};

register_op!(SHADOW_RANK);

#[test]
fn duplicate_names_report_both_sites() {
    let errs = pld_ops::registry().check().expect_err("duplicate must be reported");
    assert_eq!(errs.len(), 1, "{errs:?}");
    let msg = errs[0].to_string();
    assert!(msg.contains("op `pld.system.rank` is registered twice"), "{msg}");
    assert!(msg.contains("pld-ops/src/window.rs"), "{msg}");
    assert!(msg.contains("duplicate_registration.rs"), "{msg}");
}
