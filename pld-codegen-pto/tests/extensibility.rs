//! A new op needs only its record and its emitter: an op defined in this test file (registered
//! with `register_op!`) and its PTO emitter (registered with `register_emitter!`) go through
//! codegen with no change to the crate.

mod common;
use common::*;
use pld_codegen_pto::pto::{Dps, Inst, Operand};
use pld_codegen_pto::{register_emitter, FnCx, MTy, Val};
use pld_ir::{
    register_op, Affinity, Call, DataType, DeduceCx, Diagnostic, Effect, FunctionKind, OpDef, ParamDef,
    SignalRole, Type, ValueId,
};

static TEST_NEG: OpDef = OpDef {
    name: "test.tile.neg",
    family: "test",
    summary: "negate every element of a tile (test-only op)",
    aliases: &[],
    params: &[ParamDef::mem("tile", Effect::Read)],
    attrs: &[],
    affinity: Affinity::Vector,
    no_duplicate: false,
    signal_role: SignalRole::None,
    rank_role: pld_ir::RankRole::None,
    builtin_variant: None,
    internal: false,
    effects: None,
    deduce: deduce_neg,
    lowerings: &[],
};

fn deduce_neg(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    match cx.ty(0) {
        Type::Tile(t) => Ok(Type::Tile(t.clone())),
        other => {
            Err(cx.arg_error(0, format!("test.tile.neg tile must be a tile, got {}", other.kind_name())))
        }
    }
}

register_op!(TEST_NEG);

fn emit_neg(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let (src, st) = cx.tile(cx.arg(call, 0, "tile")?, "test.tile.neg tile")?;
    let Type::Tile(tt) = &call.ty else { return Err(cx.err("test.tile.neg result must be a tile")) };
    let hint = cx.result_hint(targets, "neg");
    let dst = cx.alloc_tile(&hint, tt)?;
    let (sty, dty) = (cx.tile_ty(&src, &st)?, cx.tile_ty(&dst, tt)?);
    let m1 = cx.const_float(-1.0, MTy::F32);
    let ins = vec![Operand::new(src, sty), Operand::new(m1, MTy::F32)];
    cx.push(Inst::Dps(Dps::elementwise("pto.tmuls", ins, vec![Operand::new(&dst, dty)])));
    Ok(Val::Tile { ssa: dst, tile: tt.clone() })
}

register_emitter!("test.tile.neg", emit_neg);

#[test]
fn an_op_defined_in_a_test_file_is_emitted() {
    init();
    let f = kernel(
        "negk",
        FunctionKind::Aiv,
        &[("x", tensor(&[8, 32], DataType::FP32)), ("y", tensor(&[8, 32], DataType::FP32))],
        |b, p| {
            let t = b.assign_op("t", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[8, 32])], vec![])?;
            let n = b.assign_op("n", "test.tile.neg", vec![v(t)], vec![])?;
            b.assign_op("y2", "tile.store", vec![v(n), ints(&[0, 0]), v(p[1])], vec![])?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        r#"
        CHECK: %n = pto.alloc_tile
        CHECK-NEXT: pto.tmuls ins(%t, %cn1p0e0_f32 :
        CHECK-SAME: outs(%n :
        CHECK: pto.tstore ins(%n
        "#,
    );
    assert!(pld_codegen_pto::emitters().get("test.tile.neg").is_some());
}
