//! An op defined only in this test file, with a composite lowering registered here too, goes
//! through the whole pipeline with no change to pld-passes: the passes find it through the
//! registry (its lowering, its affinity) like any built-in op.

mod common;
use common::*;
use pld_ir::{
    register_lowering, register_op, Affinity, Builder, Call, DataType, DeduceCx, Diagnostic, Direction,
    Effect, Expr, FunctionBuilder, FunctionKind, LoweringKind, OpDef, ParamDef, Program, SignalRole, Span,
    Type, ValueId,
};

/// `test.tensor.double(win)`: doubles a window-bound tensor in place.
static DOUBLE: OpDef = OpDef {
    name: "test.tensor.double",
    family: "test",
    summary: "double every element of a window in place",
    aliases: &[],
    params: &[ParamDef::mem("win", Effect::ReadWrite)],
    attrs: &[],
    affinity: Affinity::Shared,
    no_duplicate: false,
    signal_role: SignalRole::None,
    rank_role: pld_ir::RankRole::None,
    builtin_variant: None,
    internal: false,
    effects: None,
    deduce: deduce_double,
    lowerings: &[],
};

fn deduce_double(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    match cx.ty(0) {
        Type::DistTensor(_) => Ok(Type::Unknown),
        other => Err(cx.arg_error(
            0,
            format!("test.tensor.double win must be a DistributedTensor, got {}", other.kind_name()),
        )),
    }
}

fn lower_double(
    b: &mut Builder<'_>,
    call: &Call,
    _results: &[ValueId],
    span: Span,
) -> Result<(), Diagnostic> {
    b.span = span;
    let win = call.args[0].clone();
    let shape = b.type_of(&win).shape().map(|s| s.to_vec()).unwrap_or_default();
    let zeros = Expr::tuple(shape.iter().map(|_| Expr::int(0)).collect());
    let v = b.assign_op("v", "tile.load", vec![win.clone(), zeros.clone(), Expr::tuple(shape)], vec![])?;
    let w = b.assign_op("doubled", "tile.muls", vec![Expr::var(v), Expr::float(2.0)], vec![])?;
    b.eval_op("tile.store", vec![Expr::var(w), zeros, win], vec![])
}

register_op!(DOUBLE);
register_lowering!("test.tensor.double", LoweringKind::Composite, lower_double);

#[test]
fn a_test_only_op_is_lowered_by_the_pipeline() {
    init();
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let w = fb.param("w", dist(&[4, 16], DataType::FP32), Direction::In);
    fb.body(|b| b.eval_op("test.tensor.double", vec![Expr::var(w)], vec![])).unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    let dump = pld_passes::run_pipeline_with_dumps(
        &mut p,
        &pld_passes::PipelineOptions::default(),
        "LowerCompositeOps",
    )
    .unwrap_or_else(|e| panic!("{}", messages(&e)));
    check_in_order(
        &dump,
        &["pl.tile.load(w, [0, 0], [4, 16])", "pl.tile.muls(v, 2.0)", "pl.tile.store(doubled, [0, 0], w)"],
    );
    assert!(!dump.contains("test.tensor.double"), "{dump}");
    let end = pld_ir::print_program(&p);
    // The rest of the pipeline treats the expansion like any other: an AIV kernel with a
    // fenced window store.
    check_in_order(
        &end,
        &[
            "FunctionType.AIV",
            "pl.tile.store(doubled, [0, 0], w)",
            "pl.system.cacheinvalid(w, [4, 16], [0, 0])",
            "pl.system.fence()",
        ],
    );
}
