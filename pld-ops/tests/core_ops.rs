//! The core tile/tensor ops: positive deductions (result kinds, shapes, memory spaces, valid
//! regions) and one negative case per rule each deducer enforces.
#![allow(clippy::cloned_ref_to_slice_refs)]

mod common;
use common::*;
use pld_ir::{Attr, DataType::*, Expr, MemorySpace, Target, Type};

#[test]
fn load_yields_vec_tile_with_valid_shape() {
    let t = ok(call(
        &[tensor(&[16, 64], FP32)],
        "pl.load",
        |v| vec![v[0].clone(), ints(&[0, 0]), ints(&[16, 64])],
        vec![],
    ));
    assert_eq!(t, tile(&[16, 64], FP32));
    let t = ok(call(
        &[dt(&[1, 64], FP16)],
        "tile.load",
        |v| vec![v[0].clone(), ints(&[0, 0]), ints(&[1, 64]), ints(&[1, 17])],
        vec![],
    ));
    let tt = t.as_tile().unwrap();
    assert_eq!(tt.memory, Some(MemorySpace::Vec));
    assert_eq!(tt.valid_shape, vec![Expr::int(1), Expr::int(17)]);
}

#[test]
fn padded_load_reads_only_its_valid_region() {
    // e2e 2.1, size 1: an [8, 1] tile with valid [1, 1] loads from a [1, 1] window.
    let t = ok(call(
        &[dt(&[1, 1], FP32)],
        "tile.load",
        |v| vec![v[0].clone(), ints(&[0, 0]), ints(&[8, 1]), ints(&[1, 1])],
        vec![],
    ));
    assert_eq!(t.as_tile().unwrap().valid_shape, vec![Expr::int(1), Expr::int(1)]);
    err(
        call(
            &[dt(&[1, 1], FP32)],
            "tile.load",
            |v| vec![v[0].clone(), ints(&[0, 0]), ints(&[8, 1]), ints(&[2, 1])],
            vec![],
        ),
        "out of bounds",
    );
}

#[test]
fn load_rejects_bad_calls() {
    err(
        call(
            &[tile(&[4, 4], FP32)],
            "tile.load",
            |v| vec![v[0].clone(), ints(&[0, 0]), ints(&[4, 4])],
            vec![],
        ),
        "must be a Tensor or DistributedTensor",
    );
    err(
        call(
            &[tensor(&[16, 64], FP32)],
            "tile.load",
            |v| vec![v[0].clone(), ints(&[0]), ints(&[16, 64])],
            vec![],
        ),
        "offsets must have 2",
    );
    err(
        call(
            &[tensor(&[16, 64], FP32)],
            "tile.load",
            |v| vec![v[0].clone(), ints(&[8, 0]), ints(&[16, 64])],
            vec![],
        ),
        "out of bounds",
    );
    err(
        call(
            &[tensor(&[16, 64], FP32)],
            "tile.load",
            |v| vec![v[0].clone(), ints(&[0, 0]), ints(&[16, 0])],
            vec![],
        ),
        "must be positive",
    );
    err(
        call(
            &[tensor(&[16, 64], FP32)],
            "tile.load",
            |v| vec![v[0].clone(), ints(&[0, 0]), ints(&[16, 64]), ints(&[17, 1])],
            vec![],
        ),
        "exceeds the tile shape",
    );
    err(
        call(
            &[tensor(&[16, 64], FP32)],
            "tile.load",
            |v| vec![v[0].clone(), ints(&[0, 0]), ints(&[16, 64])],
            vec![("target_memory", Attr::Str("Nowhere".into()))],
        ),
        "target_memory must be a MemorySpace",
    );
}

#[test]
fn store_returns_output_kind() {
    let t = ok(call(
        &[tile(&[1, 64], FP32), dt(&[1, 64], FP32)],
        "pl.store",
        |v| vec![v[0].clone(), ints(&[0, 0]), v[1].clone()],
        vec![],
    ));
    assert_eq!(t, dt(&[1, 64], FP32));
    err(
        call(
            &[tile(&[1, 64], FP32), dt(&[1, 64], FP16)],
            "tile.store",
            |v| vec![v[0].clone(), ints(&[0, 0]), v[1].clone()],
            vec![],
        ),
        "dtype",
    );
    err(
        call(
            &[tile(&[1, 64], FP32), dt(&[1, 32], FP32)],
            "tile.store",
            |v| vec![v[0].clone(), ints(&[0, 0]), v[1].clone()],
            vec![],
        ),
        "out of bounds",
    );
    err(
        call(
            &[tensor(&[1, 64], FP32), dt(&[1, 64], FP32)],
            "tile.store",
            |v| vec![v[0].clone(), ints(&[0, 0]), v[1].clone()],
            vec![],
        ),
        "must be a TileType",
    );
    // Atomic store: int64 is not on the allow-list; bf16 only on a2a3.
    err(
        call(
            &[tile(&[1, 64], INT64), dt(&[1, 64], INT64)],
            "tile.store",
            |v| vec![v[0].clone(), ints(&[0, 0]), v[1].clone()],
            vec![("atomic", int(1))],
        ),
        "requires an fp32/bf16/fp16/int32/int16/int8 dtype (hardware atomic-add dtypes), but got int64",
    );
    let r = common::call_in(
        pld_ir::FunctionKind::InCore,
        Target::A5,
        &[tile(&[1, 64], BF16), dt(&[1, 64], BF16)],
        "tile.store",
        |v| vec![v[0].clone(), ints(&[0, 0]), v[1].clone()],
        vec![("atomic", int(1))],
    );
    let d = err(r, "bf16");
    assert!(d.message.contains("a5") && d.message.contains("Ascend910B"));
    ok(call(
        &[tile(&[1, 64], BF16), dt(&[1, 64], BF16)],
        "tile.store",
        |v| vec![v[0].clone(), ints(&[0, 0]), v[1].clone()],
        vec![("atomic", int(1))],
    ));
}

#[test]
fn create_full_and_elementwise() {
    let t = ok(call(&[], "pl.create_tile", |_| vec![ints(&[16, 64])], vec![("dtype", Attr::DType(FP16))]));
    assert_eq!(t, tile(&[16, 64], FP16));
    err(call(&[], "tile.create", |_| vec![ints(&[16, 64])], vec![]), "missing kwarg 'dtype' on tile.create");
    let t = ok(call(
        &[],
        "tile.full",
        |_| vec![ints(&[1, 8]), Expr::float(0.0)],
        vec![("dtype", Attr::DType(FP32))],
    ));
    assert_eq!(t, tile(&[1, 8], FP32));
    let t = ok(call(&[tile(&[1, 8], FP32), tile(&[1, 8], FP32)], "tile.add", |v| v.to_vec(), vec![]));
    assert_eq!(t, tile(&[1, 8], FP32));
    err(
        call(&[tile(&[1, 8], FP32), tile(&[1, 8], FP16)], "tile.maximum", |v| v.to_vec(), vec![]),
        "operand dtypes differ",
    );
    err(
        call(&[tile(&[1, 8], FP32), tile(&[1, 16], FP32)], "tile.mul", |v| v.to_vec(), vec![]),
        "operand shapes differ",
    );
    let t = ok(call(&[tile(&[1, 8], FP32)], "tile.muls", |v| vec![v[0].clone(), Expr::float(2.0)], vec![]));
    assert_eq!(t, tile(&[1, 8], FP32));
    err(
        call(&[tile(&[1, 8], FP32), tile(&[1, 8], FP32)], "tile.adds", |v| v.to_vec(), vec![]),
        "scalar must be a scalar",
    );
}

#[test]
fn valid_shape_ops() {
    let loaded =
        tile(&[1, 64], FP32).as_tile().unwrap().clone().with_valid_shape(vec![Expr::int(1), Expr::int(7)]);
    let t = ok(call(
        &[Type::Tile(loaded.clone())],
        "tile.fillpad_inplace",
        |v| vec![v[0].clone(), Expr::float(0.0)],
        vec![],
    ));
    assert_eq!(t, tile(&[1, 64], FP32));
    let t = ok(call(
        &[tile(&[1, 64], FP32)],
        "tile.set_validshape",
        |v| vec![v[0].clone(), Expr::int(1), Expr::int(7)],
        vec![],
    ));
    assert_eq!(t, Type::Tile(loaded));
    err(
        call(
            &[tile(&[1, 64], FP32)],
            "tile.set_validshape",
            |v| vec![v[0].clone(), Expr::int(1), Expr::int(65)],
            vec![],
        ),
        "exceeds",
    );
    err(
        call(
            &[tile(&[4, 4, 4], FP32)],
            "tile.set_validshape",
            |v| vec![v[0].clone(), Expr::int(1), Expr::int(1)],
            vec![],
        ),
        "2-D",
    );
}

#[test]
fn cast_move_reduce_read_write() {
    let t = ok(call(
        &[tile(&[2, 8], FP32)],
        "tile.cast",
        |v| vec![v[0].clone()],
        vec![("dtype", Attr::DType(FP16))],
    ));
    assert_eq!(t, tile(&[2, 8], FP16));
    let t = ok(call(
        &[tile(&[2, 8], FP32)],
        "tile.move",
        |v| vec![v[0].clone()],
        vec![("target_memory", Attr::Str("Mat".into()))],
    ));
    assert_eq!(t, tile_in(&[2, 8], FP32, MemorySpace::Mat));
    err(
        call(
            &[tile(&[2, 8], FP32)],
            "tile.move",
            |v| vec![v[0].clone()],
            vec![("target_memory", Attr::Str("DDR".into()))],
        ),
        "not DDR",
    );
    let t = ok(call(&[tile(&[2, 8], FP32)], "tile.row_sum", |v| vec![v[0].clone()], vec![]));
    assert_eq!(t, tile(&[2, 1], FP32));
    let t = ok(call(&[tile(&[2, 8], FP32)], "tile.col_max", |v| vec![v[0].clone()], vec![]));
    assert_eq!(t, tile(&[1, 8], FP32));
    let t = ok(call(&[tile(&[2, 8], INT32)], "tile.read", |v| vec![v[0].clone(), ints(&[1, 7])], vec![]));
    assert_eq!(t, scalar(INT32));
    err(
        call(&[tile(&[2, 8], INT32)], "tile.read", |v| vec![v[0].clone(), ints(&[2, 0])], vec![]),
        "out of bounds",
    );
    let t = ok(call(&[dt(&[4, 1], INT32)], "tensor.read", |v| vec![v[0].clone(), ints(&[3, 0])], vec![]));
    assert_eq!(t, scalar(INT32));
    let t = ok(call(
        &[dt(&[4, 1], INT32), scalar(INT32)],
        "tensor.write",
        |v| vec![v[0].clone(), ints(&[3, 0]), v[1].clone()],
        vec![],
    ));
    assert_eq!(t, dt(&[4, 1], INT32));
    err(
        call(&[dt(&[4, 1], INT32)], "tensor.read", |v| vec![v[0].clone(), ints(&[3])], vec![]),
        "indices must have 2",
    );
    err(
        call(&[tile(&[4, 1], INT32)], "tensor.read", |v| vec![v[0].clone(), ints(&[3, 0])], vec![]),
        "must be a Tensor or DistributedTensor",
    );
}

#[test]
fn tensor_views_keep_kind() {
    let t = ok(call(&[dt(&[2, 3, 4], FP32)], "tensor.view", |v| vec![v[0].clone(), ints(&[1, 24])], vec![]));
    assert_eq!(t, dt(&[1, 24], FP32));
    err(
        call(&[dt(&[2, 3, 4], FP32)], "tensor.view", |v| vec![v[0].clone(), ints(&[1, 25])], vec![]),
        "element count",
    );
    let t = ok(call(
        &[dt(&[2, 64], FP32)],
        "tensor.slice",
        |v| vec![v[0].clone(), ints(&[1, 32]), ints(&[0, 0])],
        vec![],
    ));
    assert_eq!(t, dt(&[1, 32], FP32));
    err(
        call(
            &[dt(&[2, 64], FP32)],
            "tensor.slice",
            |v| vec![v[0].clone(), ints(&[1, 32]), ints(&[2, 0])],
            vec![],
        ),
        "out of bounds",
    );
    let t =
        ok(call(&[tensor(&[2, 64], FP32)], "tensor.reshape", |v| vec![v[0].clone(), ints(&[128])], vec![]));
    assert_eq!(t, tensor(&[128], FP32));
    let t = ok(call(
        &[dt(&[2, 64], FP32), tensor(&[1, 32], FP32)],
        "pl.assemble",
        |v| vec![v[0].clone(), v[1].clone(), ints(&[0, 0])],
        vec![],
    ));
    assert_eq!(t, dt(&[2, 64], FP32));
    let t = ok(call(&[], "pl.create_tensor", |_| vec![ints(&[4, 4])], vec![("dtype", Attr::DType(INT32))]));
    assert_eq!(t, tensor(&[4, 4], INT32));
    let t = ok(call(&[dt(&[4, 4], FP32), tensor(&[4, 4], FP32)], "tensor.add", |v| v.to_vec(), vec![]));
    assert_eq!(t, tensor(&[4, 4], FP32));
    let t = ok(call(
        &[dt(&[4, 4], FP32)],
        "tensor.cast",
        |v| vec![v[0].clone()],
        vec![("dtype", Attr::DType(FP16))],
    ));
    assert_eq!(t, tensor(&[4, 4], FP16));
}

#[test]
fn malformed_valid_regions_do_not_panic() {
    // A valid region with the wrong number of extents (found by deducer_fuzz) is ignored.
    let bad = Type::Tile(pld_ir::TileType {
        valid_shape: vec![Expr::int(1)],
        ..tile(&[2, 8], FP32).as_tile().unwrap().clone()
    });
    assert_eq!(ok(call(&[bad.clone()], "tile.col_sum", |v| vec![v[0].clone()], vec![])), tile(&[1, 8], FP32));
    assert_eq!(ok(call(&[bad], "tile.row_sum", |v| vec![v[0].clone()], vec![])), tile(&[2, 1], FP32));
}

#[test]
fn fence_markers() {
    assert_eq!(ok(call(&[], "system.fence", |_| vec![], vec![])), Type::Unknown);
    assert_eq!(ok(call(&[], "system.cacheinvalid", |_| vec![], vec![])), Type::Unknown);
    ok(call(
        &[dt(&[4, 4], FP32)],
        "system.cacheinvalid",
        |v| vec![v[0].clone(), ints(&[4, 4]), ints(&[0, 0])],
        vec![],
    ));
    err(
        call(&[dt(&[4, 4], FP32)], "system.cacheinvalid", |v| vec![v[0].clone()], vec![]),
        "either no arguments",
    );
}

#[test]
fn unified_overloads_pick_by_first_argument() {
    let reg = pld_testkit::init();
    let cast = reg.overload("pl.cast").expect("pl.cast overload");
    assert_eq!((cast.pick)(&scalar(INT32)), "scalar.cast");
    assert_eq!((cast.pick)(&tile(&[1, 1], FP32)), "tile.cast");
    assert_eq!((cast.pick)(&tensor(&[1, 1], FP32)), "tensor.cast");
    let t = ok(call(
        &[scalar(INT32)],
        "scalar.cast",
        |v| vec![v[0].clone()],
        vec![("dtype", Attr::DType(INDEX))],
    ));
    assert_eq!(t, scalar(INDEX));
    err(
        call(
            &[tile(&[1, 1], FP32)],
            "scalar.cast",
            |v| vec![v[0].clone()],
            vec![("dtype", Attr::DType(INDEX))],
        ),
        "value must be a scalar",
    );
    let add = reg.overload("pl.add").expect("pl.add overload");
    assert_eq!((add.pick)(&tile(&[1, 1], FP32)), "tile.add");
    assert_eq!((add.pick)(&dt(&[1, 1], FP32)), "tensor.add");
    for o in reg.overloads() {
        for c in o.candidates {
            assert!(reg.lookup(c).is_some(), "overload {} names unknown op {c}", o.name);
        }
    }
}

/// Builds one call like [`common::call`] and returns the stored call (callee, canonical
/// arguments and attributes) instead of only its type.
fn built(
    params: &[Type],
    op: &str,
    args: impl FnOnce(&[Expr]) -> Vec<Expr>,
    attrs: Vec<(&str, Attr)>,
) -> Result<pld_ir::Call, pld_ir::Diagnostic> {
    let _ = pld_testkit::init();
    let mut fb = pld_ir::FunctionBuilder::new("f", pld_ir::FunctionKind::InCore);
    let vars: Vec<Expr> = params
        .iter()
        .enumerate()
        .map(|(i, t)| Expr::var(fb.param(format!("p{i}"), t.clone(), pld_ir::Direction::InOut)))
        .collect();
    let args = args(&vars);
    let mut out = None;
    fb.body(|b| {
        let e = b.op(op, args, attrs)?;
        if let pld_ir::ExprKind::Call(c) = &e.kind {
            out = Some((**c).clone());
        }
        Ok(())
    })?;
    Ok(out.expect("an op call builds a Call expression"))
}

fn lit(kind: pld_ir::ExprKind) -> Expr {
    Expr::new(kind, Default::default())
}

fn attr_names(c: &pld_ir::Call) -> Vec<&str> {
    c.attrs.iter().map(|(k, _)| k.as_str()).collect()
}

#[test]
fn cast_accepts_the_reference_spellings() {
    // pl.cast(x, pl.FP32): a positional dtype becomes the dtype attribute, for all three forms.
    for (ty, op, want) in [
        (tile(&[2, 8], FP16), "tile.cast", tile(&[2, 8], FP32)),
        (tensor(&[2, 8], FP16), "tensor.cast", tensor(&[2, 8], FP32)),
        (scalar(INT32), "scalar.cast", scalar(FP32)),
    ] {
        let c = ok_call(built(&[ty], op, |v| vec![v[0].clone(), lit(pld_ir::ExprKind::DType(FP32))], vec![]));
        assert_eq!(c.callee.name(), op);
        assert_eq!(c.args.len(), 1, "{op}: the dtype left the positional arguments");
        assert_eq!(c.attrs, vec![("dtype".to_string(), Attr::DType(FP32))], "{op}");
        assert_eq!(c.ty, want, "{op}");
    }
    // target_type= is the reference's keyword: stored as dtype.
    let c = ok_call(built(
        &[scalar(INT32)],
        "scalar.cast",
        |v| vec![v[0].clone()],
        vec![("target_type", Attr::DType(INDEX))],
    ));
    assert_eq!(c.attrs, vec![("dtype".to_string(), Attr::DType(INDEX))]);
    assert_eq!(c.ty, scalar(INDEX));
    // A positional mode (name or the reference's integer code) becomes mode="…", after dtype.
    let c = ok_call(built(
        &[tile(&[2, 8], FP32)],
        "tile.cast",
        |v| vec![v[0].clone(), lit(pld_ir::ExprKind::DType(FP16)), lit(pld_ir::ExprKind::Str("rint".into()))],
        vec![],
    ));
    assert_eq!(attr_names(&c), vec!["dtype", "mode"]);
    assert_eq!(c.attrs[1].1, Attr::Str("rint".into()));
    let c = ok_call(built(
        &[tile(&[2, 8], FP32)],
        "tile.cast",
        |v| vec![v[0].clone(), lit(pld_ir::ExprKind::DType(FP16)), Expr::int(3)],
        vec![],
    ));
    assert_eq!(c.args.len(), 1);
    assert_eq!(c.attrs[1], ("mode".to_string(), Attr::Str("floor".into())));
    let c = ok_call(built(
        &[tensor(&[2, 8], FP32)],
        "tensor.cast",
        |v| vec![v[0].clone()],
        vec![("mode", int(5)), ("target_type", Attr::DType(BF16))],
    ));
    assert_eq!(attr_names(&c), vec!["dtype", "mode"]);
    assert_eq!(c.attrs[1].1, Attr::Str("trunc".into()));
    assert_eq!(c.ty, tensor(&[2, 8], BF16));
    // Canonical calls are left alone (passes rebuild them).
    let c = ok_call(built(
        &[tile(&[2, 8], FP32)],
        "tile.cast",
        |v| vec![v[0].clone()],
        vec![("dtype", Attr::DType(FP16))],
    ));
    assert_eq!(c.attrs, vec![("dtype".to_string(), Attr::DType(FP16))]);
}

#[test]
fn cast_rejects_malformed_reference_spellings() {
    err(
        call(
            &[tile(&[2, 8], FP32)],
            "tile.cast",
            |v| vec![v[0].clone()],
            vec![("dtype", Attr::DType(FP16)), ("target_type", Attr::DType(BF16))],
        ),
        "give dtype= or target_type=, not both",
    );
    // A second positional that is not a dtype is not guessed at.
    err(
        call(&[tile(&[2, 8], FP32), scalar(INT32)], "tile.cast", |v| v.to_vec(), vec![]),
        "tile.cast takes 1 positional argument, but got 2",
    );
    err(call(&[tile(&[2, 8], FP32)], "tile.cast", |v| vec![v[0].clone()], vec![]), "missing kwarg 'dtype'");
    err(
        call(
            &[tile(&[2, 8], FP32)],
            "tile.cast",
            |v| vec![v[0].clone()],
            vec![("dtype", Attr::DType(FP16)), ("mode", Attr::Str("sideways".into()))],
        ),
        "tile.cast mode must be one of none, rint, round, floor, ceil, trunc, odd",
    );
    err(
        call(
            &[tensor(&[2, 8], FP32)],
            "tensor.cast",
            |v| vec![v[0].clone()],
            vec![("dtype", Attr::DType(FP16)), ("mode", int(9))],
        ),
        "kwarg 'mode' for operator 'tensor.cast' has incompatible type: expected str, got int",
    );
    let d = err(
        call(
            &[scalar(INT32)],
            "scalar.cast",
            |v| vec![v[0].clone()],
            vec![("dtype", Attr::DType(FP32)), ("mode", Attr::Str("floor".into()))],
        ),
        "scalar.cast supports only the default rounding mode",
    );
    assert!(d.notes.iter().any(|n| n.contains("tile.cast")), "{:?}", d.notes);
}

#[test]
fn binary_ops_with_a_scalar_rhs_become_their_scalar_forms() {
    for (ty, op, scalar_op) in [
        (tensor(&[1, 32], FP32), "tensor.add", "tensor.adds"),
        (tensor(&[1, 32], FP32), "tensor.sub", "tensor.subs"),
        (dt(&[1, 32], FP32), "tensor.mul", "tensor.muls"),
        (tensor(&[1, 32], FP32), "tensor.div", "tensor.divs"),
        (tile(&[1, 32], FP32), "tile.add", "tile.adds"),
        (tile(&[1, 32], FP32), "tile.sub", "tile.subs"),
        (tile(&[1, 32], FP32), "tile.mul", "tile.muls"),
        (tile(&[1, 32], FP32), "tile.div", "tile.divs"),
    ] {
        // A literal and a scalar value both count.
        let c = ok_call(built(&[ty.clone()], op, |v| vec![v[0].clone(), Expr::float(1.0)], vec![]));
        assert_eq!(c.callee.name(), scalar_op, "{op} with a literal");
        let c = ok_call(built(&[ty.clone(), scalar(FP32)], op, |v| v.to_vec(), vec![]));
        assert_eq!(c.callee.name(), scalar_op, "{op} with a scalar value");
        assert_eq!(
            c.ty.as_tensor_like().map(|t| t.shape.len()).or(c.ty.as_tile().map(|t| t.shape.len())),
            Some(2)
        );
        // Two tensors/tiles keep the binary op.
        let c = ok_call(built(&[ty.clone(), ty.clone()], op, |v| v.to_vec(), vec![]));
        assert_eq!(c.callee.name(), op);
    }
    // Through the unified spelling, as the reference programs write it.
    let c = ok_call(built(
        &[tensor(&[1, 32], FP32)],
        "pl.tensor.add",
        |v| vec![v[0].clone(), Expr::float(1.0)],
        vec![],
    ));
    assert_eq!(c.callee.name(), "tensor.adds");
    assert_eq!(c.ty, tensor(&[1, 32], FP32));
}

#[test]
fn binary_ops_without_a_scalar_form_reject_a_scalar_rhs() {
    err(
        call(&[tile(&[1, 8], FP32)], "tile.maximum", |v| vec![v[0].clone(), Expr::float(0.0)], vec![]),
        "tile.maximum rhs must be a TileType, got ScalarType",
    );
    err(
        call(&[tensor(&[1, 8], FP32)], "tensor.minimum", |v| vec![v[0].clone(), Expr::float(0.0)], vec![]),
        "tensor.minimum rhs must be a Tensor or DistributedTensor",
    );
    // A tuple is not a scalar operand.
    err(
        call(&[tensor(&[1, 8], FP32)], "tensor.add", |v| vec![v[0].clone(), ints(&[1, 2])], vec![]),
        "tensor.add rhs must be a Tensor or DistributedTensor",
    );
    // The scalar lhs is not silently swapped.
    err(call(&[scalar(FP32), tile(&[1, 8], FP32)], "tile.add", |v| v.to_vec(), vec![]), "tile.add");
}

#[test]
fn load_valid_shape_is_the_reference_keyword() {
    let reg = pld_testkit::init();
    let load = reg.lookup("tile.load").expect("tile.load");
    assert_eq!(
        load.params.iter().map(|p| p.name).collect::<Vec<_>>(),
        ["tensor", "offsets", "shapes", "valid_shape"]
    );
    assert!(load.params[3].optional);
    let t = ok(call(
        &[tensor(&[1, 64], FP32), scalar(INDEX)],
        "pl.load",
        |v| vec![v[0].clone(), ints(&[0, 0]), ints(&[1, 64]), Expr::tuple(vec![Expr::int(1), v[1].clone()])],
        vec![],
    ));
    assert_eq!(t.as_tile().unwrap().valid_shape.len(), 2);
    err(
        call(
            &[tensor(&[1, 64], FP32)],
            "tile.load",
            |v| vec![v[0].clone(), ints(&[0, 0]), ints(&[1, 64]), ints(&[1, 65])],
            vec![],
        ),
        "tile.load valid_shape[1] = 65 exceeds the tile shape 64",
    );
}

#[test]
fn store_puts_a_lower_rank_tile_into_the_trailing_dims() {
    // test_l3_host_tensor_allgather: a [1, N] row at [0, j, 0] of a [1, R, N] tensor.
    let t = ok(call(
        &[tile(&[1, 64], FP32), tensor(&[1, 4, 64], FP32)],
        "pl.store",
        |v| vec![v[0].clone(), ints(&[0, 3, 0]), v[1].clone()],
        vec![],
    ));
    assert_eq!(t, tensor(&[1, 4, 64], FP32));
    ok(call(
        &[tile(&[64], FP32), dt(&[2, 4, 64], FP32)],
        "tile.store",
        |v| vec![v[0].clone(), ints(&[1, 3, 0]), v[1].clone()],
        vec![],
    ));
    // The leading dims have extent 1: bounds are checked on the padded region.
    err(
        call(
            &[tile(&[2, 64], FP32), tensor(&[1, 4, 64], FP32)],
            "tile.store",
            |v| vec![v[0].clone(), ints(&[0, 3, 0]), v[1].clone()],
            vec![],
        ),
        "out of bounds",
    );
    // The offsets still have the tensor's rank.
    err(
        call(
            &[tile(&[1, 64], FP32), tensor(&[1, 4, 64], FP32)],
            "tile.store",
            |v| vec![v[0].clone(), ints(&[3, 0]), v[1].clone()],
            vec![],
        ),
        "offsets must have 3",
    );
    err(
        call(
            &[tile(&[1, 1, 64], FP32), tensor(&[4, 64], FP32)],
            "tile.store",
            |v| vec![v[0].clone(), ints(&[0, 0]), v[1].clone()],
            vec![],
        ),
        "tile.store tile rank 3 exceeds output tensor rank 2",
    );
    err(
        call(
            &[tile(&[1, 2, 64], FP32), tensor(&[1, 1, 2, 64], FP32)],
            "tile.store",
            |v| vec![v[0].clone(), ints(&[0, 0, 0, 0]), v[1].clone()],
            vec![],
        ),
        "only a 1-D or 2-D tile",
    );
}

#[test]
fn reductions_take_the_reference_scratch_tile() {
    for op in ["tile.row_sum", "tile.row_max", "pl.row_min", "tile.col_sum"] {
        let t = ok(call(&[tile(&[4, 16], FP32), tile(&[4, 16], FP32)], op, |v| v.to_vec(), vec![]));
        assert_eq!(t.as_tile().unwrap().shape.len(), 2, "{op}");
    }
    let t = ok(call(&[tile(&[4, 16], FP32), tile(&[8, 16], FP32)], "tile.row_sum", |v| v.to_vec(), vec![]));
    assert_eq!(t, tile(&[4, 1], FP32));
    err(
        call(&[tile(&[4, 16], FP32), tile(&[4, 16], FP16)], "tile.row_sum", |v| v.to_vec(), vec![]),
        "tile.row_sum tmp_tile dtype fp16 does not match the tile dtype fp32",
    );
    err(
        call(&[tile(&[4, 16], FP32), tile(&[4, 8], FP32)], "tile.row_max", |v| v.to_vec(), vec![]),
        "tile.row_max tmp_tile dim 1 is 8, smaller than the tile's 16",
    );
    err(
        call(&[tile(&[4, 16], FP32), tile(&[64], FP32)], "tile.row_sum", |v| v.to_vec(), vec![]),
        "tmp_tile must be 2-D",
    );
    err(
        call(&[tile(&[4, 16], FP32), tensor(&[4, 16], FP32)], "tile.row_sum", |v| v.to_vec(), vec![]),
        "tmp_tile",
    );
    // The reference's col_max/col_min take no scratch tile.
    err(
        call(&[tile(&[4, 16], FP32), tile(&[4, 16], FP32)], "tile.col_max", |v| v.to_vec(), vec![]),
        "tile.col_max takes 1 positional argument, but got 2",
    );
    let reg = pld_testkit::init();
    let row_sum = reg.lookup("tile.row_sum").expect("tile.row_sum");
    assert!(row_sum.params[1].effect.writes(), "the scratch tile is written");
}

#[test]
fn every_canonicalizer_names_a_registered_op() {
    let reg = pld_testkit::init();
    let mut n = 0;
    for c in reg.canonicalizers() {
        assert!(reg.lookup(c.op).is_some(), "canonicalizer for unknown op {} at {}:{}", c.op, c.file, c.line);
        n += 1;
    }
    assert!(n >= 11, "the core canonicalizers are registered ({n})");
}

/// A program written in the reference's spellings: positional cast dtype and mode,
/// `valid_shape=`, `pl.add`/`pl.mul` with a scalar, a scratch-tile `row_sum` and a 2-D tile
/// stored into a 3-D tensor. It parses, survives the pass pipeline and simulates correctly.
const REFERENCE_SPELLINGS: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")

@pl.program
class ReferenceSpellings:
    @pl.function(type=pl.FunctionType.InCore)
    def step(self, x: pl.Tensor[[2, 8], pl.FP16], y: pl.Out[pl.Tensor[[1, 3, 8], pl.FP32]]) -> pl.Tensor[[1, 3, 8], pl.FP32]:
        t = pl.load(x, [0, 0], [2, 8], valid_shape=[2, 8])
        f = pl.cast(t, pl.FP32, "round")
        g = pl.add(f, 1.0)
        h = pl.mul(g, 2.0)
        y = pl.store(h, [0, 0, 0], y)
        tmp = pl.tile.create([2, 8], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        s = pl.tile.row_sum(h, tmp)
        s_row = pl.tile.reshape(s, [1, 2])
        y = pl.store(s_row, [0, 2, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[2, 8], pl.FP16], y: pl.Out[pl.Tensor[[1, 3, 8], pl.FP32]]) -> pl.Tensor[[1, 3, 8], pl.FP32]:
        y = self.step(x, y)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, 2, 8], pl.FP16], outputs: pl.Out[pl.Tensor[[NR, 1, 3, 8], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.chip(inputs[r], outputs[r], device=r)
"#;

#[test]
fn reference_spellings_parse_lower_and_simulate() {
    use pld_testkit::e2e::{assert_ranks, inputs, lower, parse, run_ok, stack, unstack};
    let prog = parse(REFERENCE_SPELLINGS);
    let text = pld_ir::print_program(&prog);
    for want in ["tile.cast(", "dtype=pl.FP32", "mode=\"round\"", "tile.adds(", "tile.muls(", "tile.row_sum("]
    {
        assert!(text.contains(want), "{want} missing from the parsed program:\n{text}");
    }
    assert!(!text.contains("tile.add(") && !text.contains("tile.mul("), "binary forms kept:\n{text}");
    let lowered = match lower(&prog) {
        Ok(p) => p,
        Err(d) => panic!("pipeline failed: {:?}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>()),
    };
    let p = 2;
    let per: Vec<Vec<f64>> = (0..p).map(|r| (0..16).map(|i| (r * 16 + i) as f64 * 0.5).collect()).collect();
    let want: Vec<Vec<f64>> = per
        .iter()
        .map(|x| {
            let h: Vec<f64> = x.iter().map(|v| (v + 1.0) * 2.0).collect();
            let mut out = h.clone();
            out.push(h[..8].iter().sum());
            out.push(h[8..].iter().sum());
            out.extend(std::iter::repeat_n(0.0, 6));
            out
        })
        .collect();
    for (what, program) in [("as parsed", &prog), ("lowered", &lowered)] {
        let inp = inputs(vec![
            ("inputs", stack(FP16, &per, &[2, 8])),
            ("outputs", stack(FP32, &vec![vec![0.0; 24]; p], &[1, 3, 8])),
        ]);
        let out = run_ok(program, "host", p, &inp, Default::default(), what);
        assert_ranks(&unstack(&out.outputs["outputs"]), &want, 1e-5, 1e-5, what);
    }
}

#[track_caller]
fn ok_call(r: Result<pld_ir::Call, pld_ir::Diagnostic>) -> pld_ir::Call {
    match r {
        Ok(c) => c,
        Err(d) => panic!("expected success, got error: {} (notes: {:?})", d.message, d.notes),
    }
}
