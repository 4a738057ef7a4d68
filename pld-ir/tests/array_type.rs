//! `pl.Array[N, dtype]`: its printed form (the reference printer's) and the ArrayNotEscaped
//! verifier rule (no array parameter or result, also inside a tuple).

use pld_ir::{verify_function, ArrayType, DataType, Direction, Expr, FunctionBuilder, FunctionKind, Type};

fn array(n: i64, d: DataType) -> Type {
    Type::Array(ArrayType { dtype: d, extent: Expr::int(n) })
}

#[test]
fn array_type_prints_in_subscript_form() {
    assert_eq!(array(8, DataType::INT32).to_string(), "pl.Array[8, pl.INT32]");
    assert_eq!(array(32, DataType::UINT16).to_string(), "pl.Array[32, pl.UINT16]");
    assert_eq!(array(4, DataType::INT32).kind_name(), "ArrayType");
    assert!(Type::Tuple(vec![Type::Scalar(DataType::INT32), array(2, DataType::BOOL)]).contains_array());
    assert!(!Type::Scalar(DataType::INT32).contains_array());
}

#[test]
fn an_array_parameter_is_rejected() {
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    fb.param("counts", array(4, DataType::INT32), Direction::In);
    let f = fb.finish();
    let d = verify_function(&f).expect_err("an array parameter must not verify");
    let msg = d.to_string();
    assert!(msg.contains("parameter #0 (`counts`) has type pl.Array[4, pl.INT32]"), "{msg}");
    assert!(msg.contains("cannot cross a function boundary"), "{msg}");
}

#[test]
fn an_array_result_is_rejected_also_inside_a_tuple() {
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    fb.returns(Type::Tuple(vec![Type::Scalar(DataType::INT32), array(2, DataType::INT64)]));
    let f = fb.finish();
    let d = verify_function(&f).expect_err("an array result must not verify");
    assert!(
        d.to_string().contains("return type #0 is pl.Tuple[pl.Scalar[pl.INT32], pl.Array[2, pl.INT64]]"),
        "{d}"
    );
}
