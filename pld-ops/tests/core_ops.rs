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
