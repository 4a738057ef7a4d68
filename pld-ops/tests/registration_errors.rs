//! The one registration machinery reports every collision with both definition sites and
//! every registration for an unknown op with its site: an alias that is another op's name, an
//! overload named like an alias, a second lowering of one kind, a canonicalizer for an op
//! nobody registered, a second private-signal rule and one for an op nobody registered, and a
//! notifier (by signal role) not pinned to one lane. This test lives in its own file (its own test binary) because it
//! deliberately pollutes the global registry.

use pld_ir::auto_signal::SignalDim;
use pld_ir::registry::{LoweringKind, Overload, RegistryError};
use pld_ir::{
    register_canonicalize, register_lowering, register_op, register_overload, register_private_signal,
    Affinity, Attr, Builder, Call, DeduceCx, DeduceEnv, Diagnostic, Expr, OpDef, SignalRole, Span, Type,
    ValueId,
};

fn deduce_unknown(_: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    Ok(Type::Unknown)
}

static ALIAS_THIEF: OpDef = OpDef {
    name: "test.alias_thief",
    family: "test_collide",
    summary: "an op whose alias is another op's canonical name",
    aliases: &["pld.system.rank"],
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
register_op!(ALIAS_THIEF);

/// A fused put+notify declared without `no_duplicate`: its signal role makes it a notifier.
static DOUBLE_NOTIFIER: OpDef = OpDef {
    name: "test.put_notify",
    family: "test_collide",
    summary: "a fused put+notify that forgot `no_duplicate`",
    aliases: &[],
    signal_role: SignalRole::Notify,
    ..ALIAS_THIEF
};
register_op!(DOUBLE_NOTIFIER);

static OVERLOAD_THIEF: Overload =
    Overload { name: "pl.array.create", candidates: &["array.create"], pick: |_| "array.create" };
register_overload!(OVERLOAD_THIEF);

fn lower_nothing(_: &mut Builder<'_>, _: &Call, _: &[ValueId], _: Span) -> Result<(), Diagnostic> {
    Ok(())
}
register_lowering!("pld.tensor.put", LoweringKind::TensorToTile, lower_nothing);

fn canonicalize_nothing(
    _: &mut Vec<Expr>,
    _: &mut Vec<(String, Attr)>,
    _: &DeduceEnv<'_>,
) -> Option<&'static str> {
    None
}
register_canonicalize!("test.no_such_op", canonicalize_nothing);

fn no_signal(_: &Call) -> Result<Vec<SignalDim>, String> {
    Ok(vec![SignalDim::Int(1)])
}
register_private_signal!("pld.tensor.allreduce", no_signal);
register_private_signal!("test.no_such_collective", no_signal);

fn errors() -> Vec<RegistryError> {
    pld_ops::registry().check().expect_err("collisions must be reported")
}

fn message(pred: impl Fn(&RegistryError) -> bool) -> String {
    let errs = errors();
    errs.iter().find(|e| pred(e)).map(ToString::to_string).unwrap_or_else(|| panic!("not reported: {errs:?}"))
}

#[test]
fn an_alias_may_not_be_another_ops_name() {
    let msg = message(|e| matches!(e, RegistryError::Duplicate { name, .. } if name == "pld.system.rank"));
    assert!(msg.starts_with("DSL name `pld.system.rank` is registered twice: at "), "{msg}");
    assert!(msg.contains("pld-ops/src/window.rs") && msg.contains("registration_errors.rs"), "{msg}");
}

#[test]
fn an_overload_may_not_be_an_alias() {
    let msg = message(|e| matches!(e, RegistryError::Duplicate { name, .. } if name == "pl.array.create"));
    assert!(msg.contains("pld-ops/src/core/") && msg.contains("registration_errors.rs"), "{msg}");
}

#[test]
fn a_second_lowering_of_one_kind_is_a_duplicate() {
    let msg = message(|e| matches!(e, RegistryError::Duplicate { what: "lowering", .. }));
    assert!(msg.starts_with("lowering `pld.tensor.put (tensor-to-tile)` is registered twice: at "), "{msg}");
    assert!(msg.contains("pld-ops/src/lowering/") && msg.contains("registration_errors.rs"), "{msg}");
}

#[test]
fn a_canonicalizer_must_name_a_registered_op() {
    let msg = message(|e| matches!(e, RegistryError::UnknownOp { op, .. } if op == "test.no_such_op"));
    assert!(msg.starts_with("a canonicalizer is registered for unknown op `test.no_such_op` at "), "{msg}");
    assert!(msg.contains("registration_errors.rs:"), "{msg}");
}

#[test]
fn a_second_private_signal_rule_is_a_duplicate() {
    let msg = message(|e| matches!(e, RegistryError::Duplicate { what: "private signal", .. }));
    assert!(msg.starts_with("private signal `pld.tensor.allreduce` is registered twice: at "), "{msg}");
    assert!(msg.contains("pld-ops/src/collective_api.rs") && msg.contains("registration_errors.rs"), "{msg}");
}

#[test]
fn a_private_signal_rule_must_name_a_registered_op() {
    let msg =
        message(|e| matches!(e, RegistryError::UnknownOp { op, .. } if op == "test.no_such_collective"));
    assert!(
        msg.starts_with("a private signal is registered for unknown op `test.no_such_collective` at "),
        "{msg}"
    );
    assert!(msg.contains("registration_errors.rs:"), "{msg}");
}

#[test]
fn a_notifier_must_be_no_duplicate_whatever_its_name() {
    let msg = message(|e| matches!(e, RegistryError::Inconsistent { op: "test.put_notify", .. }));
    assert!(msg.starts_with("op `test.put_notify` at "), "{msg}");
    assert!(msg.contains("registration_errors.rs:") && msg.contains("not `no_duplicate`"), "{msg}");
}

#[test]
fn exactly_the_planted_problems_are_reported() {
    assert_eq!(errors().len(), 7, "{:?}", errors());
}
