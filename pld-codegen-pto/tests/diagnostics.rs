//! Programs codegen cannot express give diagnostics naming the problem, never panics.

mod common;
use common::*;
use pld_ir::{DataType, Direction, Expr, FunctionBuilder, FunctionKind, Span, Stmt, StmtKind, Target, Type};

#[test]
fn unsupported_parameter_kinds_are_named() {
    init();
    let mut fb = FunctionBuilder::new("k", FunctionKind::Aiv);
    fb.param("t", Type::tile(vec![Expr::int(8), Expr::int(8)], DataType::FP32, None), Direction::In);
    let msgs = errors(&program(vec![fb.finish()]), Target::A2A3);
    assert_eq!(
        msgs,
        ["kernel 'k' parameter 't' has type TileType, which has no pto calling-convention slot"]
    );
}

#[test]
fn mismatched_ctx_pairing_is_reported() {
    init();
    let mut fb = FunctionBuilder::new("k", FunctionKind::Aiv);
    fb.param("a", dist(&[8, 8], DataType::FP32), Direction::In);
    fb.param("b", dist(&[8, 8], DataType::FP32), Direction::In);
    fb.param("a_ctx", Type::CommCtx, Direction::In);
    let msgs = errors(&program(vec![fb.finish()]), Target::A2A3);
    assert!(msgs[0].contains("has 2 DistributedTensor parameters but 1 CommCtx parameters"), "{msgs:?}");
}

#[test]
fn early_return_and_huge_tiles_are_diagnostics() {
    init();
    let mut f = kernel("k", FunctionKind::Aiv, &[("x", tensor(&[8, 8], DataType::FP32))], |_, _| Ok(()));
    f.body.stmts.push(Stmt::new(StmtKind::Return(vec![]), Span::DUMMY));
    f.body.stmts.push(Stmt::new(StmtKind::Return(vec![]), Span::DUMMY));
    let msgs = errors(&program(vec![f]), Target::A2A3);
    assert!(msgs[0].contains("early return"), "{msgs:?}");

    let big = i64::MAX / 2;
    let g = kernel("g", FunctionKind::Aiv, &[("x", tensor(&[big, 4], DataType::FP32))], |b, p| {
        b.assign_op("t", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[big, 4])], vec![])?;
        Ok(())
    });
    let msgs = errors(&program(vec![g]), Target::A2A3);
    assert!(msgs[0].contains("too large for a pto tile buffer"), "{msgs:?}");
}

#[test]
fn fill_values_without_a_pad_encoding_are_refused() {
    init();
    let f = kernel("k", FunctionKind::Aiv, &[("x", tensor(&[8, 8], DataType::FP32))], |b, p| {
        let t = b.assign_op(
            "t",
            "tile.load",
            vec![v(p[0]), ints(&[0, 0]), ints(&[8, 8]), ints(&[4, 8])],
            vec![],
        )?;
        b.assign_op("f", "tile.fillpad_inplace", vec![v(t), Expr::float(7.0)], vec![])?;
        Ok(())
    });
    let msgs = errors(&program(vec![f]), Target::A2A3);
    assert!(msgs[0].contains("tile.fillpad_inplace value `7.0` has no pto pad encoding"), "{msgs:?}");
}

#[test]
fn all_errors_of_a_program_are_collected() {
    init();
    let bad = |name: &str| {
        let mut fb = FunctionBuilder::new(name, FunctionKind::Aiv);
        fb.param("t", Type::tile(vec![Expr::int(8), Expr::int(8)], DataType::FP32, None), Direction::In);
        fb.finish()
    };
    let msgs = errors(&program(vec![bad("a"), bad("b")]), Target::A2A3);
    assert_eq!(msgs.len(), 2, "{msgs:?}");
}
