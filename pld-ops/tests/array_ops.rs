//! The on-core array ops (`array.create` / `get_element` / `update_element`): result types,
//! the positional-dtype spelling, and one negative case per rule each deducer enforces.

mod common;
use common::*;
use pld_ir::{ArrayType, Attr, DataType::*, Expr, Type};

fn array(n: i64, d: pld_ir::DataType) -> Type {
    Type::Array(ArrayType { dtype: d, extent: Expr::int(n) })
}

fn dtype(d: pld_ir::DataType) -> Vec<(&'static str, Attr)> {
    vec![("dtype", Attr::DType(d))]
}

#[test]
fn create_yields_an_array_of_the_extent_and_dtype() {
    assert_eq!(ok(call(&[], "pl.array.create", |_| vec![Expr::int(8)], dtype(INT32))), array(8, INT32));
    assert_eq!(ok(call(&[], "array.create", |_| vec![Expr::int(1)], dtype(BOOL))), array(1, BOOL));
    assert_eq!(ok(call(&[], "array.create", |_| vec![Expr::int(4)], dtype(TASK_ID))), array(4, TASK_ID));
}

#[test]
fn create_accepts_the_positional_dtype() {
    let t = ok(call(
        &[],
        "pl.array.create",
        |_| vec![Expr::int(16), Expr::new(pld_ir::ExprKind::DType(UINT16), pld_ir::Span::DUMMY)],
        vec![],
    ));
    assert_eq!(t, array(16, UINT16));
}

#[test]
fn create_rejects_bad_extents_and_dtypes() {
    err(call(&[], "array.create", |_| vec![Expr::int(0)], dtype(INT32)), "extent must be positive, got 0");
    err(call(&[], "array.create", |_| vec![Expr::int(-3)], dtype(INT32)), "extent must be positive");
    err(
        call(&[scalar(INDEX)], "array.create", |v| vec![v[0].clone()], dtype(INT32)),
        "extent must be a compile-time integer constant",
    );
    err(
        call(&[], "array.create", |_| vec![Expr::int(4)], dtype(FP32)),
        "dtype must be an integer, BOOL or TASK_ID",
    );
    err(call(&[], "array.create", |_| vec![Expr::int(4)], vec![]), "missing kwarg 'dtype'");
}

#[test]
fn get_element_yields_the_element_dtype() {
    let t = ok(call(
        &[array(8, INT32), scalar(INT64)],
        "pl.array.get_element",
        |v| vec![v[0].clone(), v[1].clone()],
        vec![],
    ));
    assert_eq!(t, scalar(INT32));
    let t = ok(call(&[array(8, UINT8)], "array.get_element", |v| vec![v[0].clone(), Expr::int(7)], vec![]));
    assert_eq!(t, scalar(UINT8));
}

#[test]
fn get_element_rejects_bad_calls() {
    err(
        call(&[tensor(&[8], INT32)], "array.get_element", |v| vec![v[0].clone(), Expr::int(0)], vec![]),
        "first argument must be an ArrayType (pl.Array), got TensorType",
    );
    err(
        call(
            &[array(8, INT32), scalar(FP32)],
            "array.get_element",
            |v| vec![v[0].clone(), v[1].clone()],
            vec![],
        ),
        "index must have an integer dtype, got fp32",
    );
    err(
        call(&[array(8, INT32)], "array.get_element", |v| vec![v[0].clone(), Expr::int(8)], vec![]),
        "index 8 is out of range for an array of extent 8",
    );
    err(
        call(&[array(8, INT32)], "array.get_element", |v| vec![v[0].clone(), Expr::int(-1)], vec![]),
        "index -1 is out of range",
    );
    err(
        call(
            &[array(8, INT32), tensor(&[1], INT32)],
            "array.get_element",
            |v| vec![v[0].clone(), v[1].clone()],
            vec![],
        ),
        "index must be a ScalarType, got TensorType",
    );
    err(
        call(&[array(8, INT32)], "array.get_element", |v| vec![v[0].clone()], vec![]),
        "takes 2 positional arguments",
    );
}

#[test]
fn update_element_keeps_the_array_type() {
    let t = ok(call(
        &[array(4, INT32), scalar(INDEX), scalar(INT32)],
        "pl.array.update_element",
        |v| vec![v[0].clone(), v[1].clone(), v[2].clone()],
        vec![],
    ));
    assert_eq!(t, array(4, INT32));
    // INDEX values (loop variables, literals) fit any integer array, and an INDEX array
    // takes any integer value.
    ok(call(
        &[array(4, INT64), scalar(INDEX)],
        "array.update_element",
        |v| vec![v[0].clone(), v[1].clone(), v[1].clone()],
        vec![],
    ));
    ok(call(
        &[array(4, INT32)],
        "array.update_element",
        |v| vec![v[0].clone(), Expr::int(3), Expr::int(7)],
        vec![],
    ));
    ok(call(
        &[array(4, INDEX), scalar(INT16)],
        "array.update_element",
        |v| vec![v[0].clone(), Expr::int(0), v[1].clone()],
        vec![],
    ));
}

#[test]
fn update_element_rejects_bad_calls() {
    let d = err(
        call(
            &[array(4, INT32), scalar(INT64)],
            "array.update_element",
            |v| vec![v[0].clone(), Expr::int(0), v[1].clone()],
            vec![],
        ),
        "value dtype (int64) must match the array dtype (int32)",
    );
    assert!(d.notes.iter().any(|n| n.contains("pl.cast(value, pl.INT32)")), "{:?}", d.notes);
    err(
        call(
            &[array(4, INT32), scalar(FP32)],
            "array.update_element",
            |v| vec![v[0].clone(), Expr::int(0), v[1].clone()],
            vec![],
        ),
        "value dtype (fp32) must match",
    );
    err(
        call(
            &[array(4, BOOL)],
            "array.update_element",
            |v| vec![v[0].clone(), Expr::int(0), Expr::int(1)],
            vec![],
        ),
        "value dtype (index) must match the array dtype (bool)",
    );
    err(
        call(
            &[array(4, INT32), tile(&[1, 8], INT32)],
            "array.update_element",
            |v| vec![v[0].clone(), Expr::int(0), v[1].clone()],
            vec![],
        ),
        "value must be a ScalarType, got TileType",
    );
    err(
        call(
            &[array(4, INT32)],
            "array.update_element",
            |v| vec![v[0].clone(), Expr::int(4), Expr::int(1)],
            vec![],
        ),
        "index 4 is out of range for an array of extent 4",
    );
    err(
        call(
            &[scalar(INT32)],
            "array.update_element",
            |v| vec![v[0].clone(), Expr::int(0), Expr::int(1)],
            vec![],
        ),
        "first argument must be an ArrayType",
    );
}

#[test]
fn array_ops_are_shared_core_scalar_ops() {
    let reg = pld_ops::registry();
    let cast = reg.lookup("scalar.cast").unwrap();
    for name in ["array.create", "array.get_element", "array.update_element"] {
        let d = reg.lookup(name).unwrap();
        assert_eq!(d.affinity, cast.affinity, "{name}");
        assert_eq!(d.no_duplicate, cast.no_duplicate, "{name}");
        assert!(!d.internal, "{name}");
        assert_eq!(reg.lookup(&format!("pl.{name}")).map(|x| x.name), Some(name));
    }
}
