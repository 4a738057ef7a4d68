//! A pto emitter for an op the registry does not know, or a second emitter for one op, is a
//! registry error naming the sites (never a silently dead or shadowed emitter), and codegen
//! refuses to run while one exists. Its own test binary: it pollutes the global tables.

use pld_codegen_pto::{emit_program, register_emitter, CodegenOptions, FnCx, Val};
use pld_ir::registry::RegistryError;
use pld_ir::{Call, Diagnostic, Program, ValueId};

fn emit_nothing(cx: &mut FnCx<'_>, _: &Call, _: &[ValueId]) -> Result<Val, Diagnostic> {
    Err(cx.err("never called"))
}
register_emitter!("test.no_such_op", emit_nothing);
register_emitter!("tile.add", emit_nothing);

#[test]
fn unknown_and_duplicate_emitters_are_registry_errors() {
    let errs = pld_ops::registry().check().expect_err("bad emitters must be reported");
    let msgs: Vec<String> = errs.iter().map(ToString::to_string).collect();
    assert_eq!(errs.len(), 2, "{msgs:?}");
    let unknown = msgs.iter().find(|m| m.contains("test.no_such_op")).expect("unknown op reported");
    assert!(
        unknown.starts_with("pto emitter is registered for unknown op `test.no_such_op` at "),
        "{unknown}"
    );
    assert!(unknown.contains("emitter_registration.rs:"), "{unknown}");
    let dup = errs.iter().find(|e| matches!(e, RegistryError::Duplicate { .. })).expect("duplicate reported");
    let dup = dup.to_string();
    assert!(dup.starts_with("pto emitter `tile.add` is registered twice: at "), "{dup}");
    assert!(dup.contains("pld-codegen-pto/src/emit/") && dup.contains("emitter_registration.rs:"), "{dup}");
}

#[test]
fn codegen_refuses_to_run_with_a_broken_emitter_table() {
    let _ = pld_ops::registry();
    let e = emit_program(&Program::default(), &CodegenOptions::default()).expect_err("refused");
    let d = e.iter().next().expect("one diagnostic");
    assert!(d.message.contains("is registered"), "{}", d.message);
}
