//! Codegen of core tile ops and the module skeleton: header, signature order, local views,
//! tload/tstore with partition views, atomicType only for atomic add, dynamic dims.

mod common;
use common::*;
use pld_ir::{BinOp, DataType, Expr, FunctionKind, Target, Type};

fn copy_kernel(kind: FunctionKind) -> pld_ir::Program {
    init();
    let f = kernel(
        "copy",
        kind,
        &[("x", tensor(&[16, 64], DataType::FP32)), ("y", tensor(&[16, 64], DataType::FP32))],
        |b, p| {
            let t = b.assign_op("t", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[16, 64])], vec![])?;
            b.assign_op("y2", "tile.store", vec![v(t), ints(&[0, 0]), v(p[1])], vec![])?;
            Ok(())
        },
    );
    program(vec![f])
}

#[test]
fn header_signature_and_load_store() {
    let out = emit(&copy_kernel(FunctionKind::Aiv));
    let text = module(&out, "copy.pto");
    check(
        text,
        r#"
        CHECK: module attributes {pto.target_arch = "a2a3"} {
        CHECK-NEXT: func.func @copy(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
        CHECK: %c16_index = arith.constant 16 : index
        CHECK: %x_view = pto.make_tensor_view %arg0, shape = [%c16_index, %c64_index], strides = [%c64_index, %c1_index] {layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>
        CHECK-NEXT: %y_view = pto.make_tensor_view %arg1
        CHECK: %t = pto.alloc_tile addr = %c0_i64 valid_row = %c16_index valid_col = %c64_index : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>
        CHECK-NEXT: %x_pview = pto.partition_view %x_view, offsets = [%c0_index, %c0_index], sizes = [%c16_index, %c64_index] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x64xf32>
        CHECK-NEXT: pto.tload ins(%x_pview : !pto.partition_tensor_view<16x64xf32>) outs(%t : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64
        CHECK-NEXT: %y_pview = pto.partition_view %y_view
        CHECK-NEXT: pto.tstore ins(%t : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%y_pview : !pto.partition_tensor_view<16x64xf32>)
        CHECK-NOT: atomicType
        CHECK: return
        CHECK-NEXT: }
        CHECK-NEXT: }
        "#,
    );
}

#[test]
fn target_a5_and_cube_kind() {
    let p = copy_kernel(FunctionKind::Aic);
    let out = emit_for(&p, Target::A5).unwrap();
    check(
        only(&out),
        r#"
        CHECK: module attributes {pto.target_arch = "a5"} {
        CHECK-NEXT: attributes {pto.kernel_kind = #pto.kernel_kind<cube>}
        "#,
    );
}

#[test]
fn atomic_type_only_for_atomic_add_store() {
    init();
    let mk = |atomic: Option<i64>| {
        kernel(
            "st",
            FunctionKind::Aiv,
            &[("x", tensor(&[8, 32], DataType::FP32)), ("y", tensor(&[8, 32], DataType::FP32))],
            |b, p| {
                let t =
                    b.assign_op("t", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[8, 32])], vec![])?;
                let attrs = atomic.map(|a| vec![("atomic", ai(a))]).unwrap_or_default();
                b.assign_op("y2", "tile.store", vec![v(t), ints(&[0, 0]), v(p[1])], attrs)?;
                Ok(())
            },
        )
    };
    let add = emit(&program(vec![mk(Some(1))]));
    check(only(&add), "CHECK: pto.tstore ins(%t\nCHECK-SAME: {atomicType = #pto<atomic_type atomic_add>}");
    for none in [None, Some(0)] {
        let out = emit(&program(vec![mk(none)]));
        check(only(&out), "CHECK: pto.tstore ins(%t\nCHECK-NOT: atomicType");
        assert_eq!(count(only(&out), "atomicType"), 0);
    }
}

#[test]
fn ragged_valid_shape_sizes_partition_and_alloc() {
    init();
    let f = kernel(
        "tail",
        FunctionKind::Aiv,
        &[("x", tensor(&[1, 8192], DataType::FP32)), ("y", tensor(&[1, 8192], DataType::FP32))],
        |b, p| {
            let t = b.assign_op(
                "t",
                "tile.load",
                vec![v(p[0]), ints(&[0, 0]), ints(&[1, 8192]), ints(&[1, 17])],
                vec![],
            )?;
            b.assign_op("y2", "tile.store", vec![v(t), ints(&[0, 0]), v(p[1])], vec![])?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        r#"
        CHECK: %t = pto.alloc_tile addr = %c0_i64 valid_row = %c1_index valid_col = %c17_index : !pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=8192
        CHECK-NEXT: sizes = [%c1_index, %c17_index] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<1x17xf32>
        CHECK-NEXT: pto.tload ins(%x_pview : !pto.partition_tensor_view<1x17xf32>)
        CHECK: pto.tstore
        CHECK-SAME: outs(%y_pview : !pto.partition_tensor_view<1x17xf32>)
        "#,
    );
}

#[test]
fn dynamic_dims_become_index_params_and_question_marks() {
    init();
    // x: [N, 64] with a symbolic N; n: a runtime row count.
    let xt = Type::tensor(vec![Expr::sym("N"), Expr::int(64)], DataType::FP16);
    let f = kernel(
        "dyn",
        FunctionKind::Aiv,
        &[("x", xt.clone()), ("y", xt), ("n", Type::Scalar(DataType::INT32))],
        |b, p| {
            let t = b.assign_op(
                "t",
                "tile.load",
                vec![v(p[0]), ints(&[0, 0]), ints(&[16, 64]), Expr::tuple(vec![v(p[2]), Expr::int(64)])],
                vec![],
            )?;
            b.assign_op("y2", "tile.store", vec![v(t), ints(&[0, 0]), v(p[1])], vec![])?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        r#"
        CHECK: func.func @dyn(%arg0: !pto.ptr<f16>, %arg1: !pto.ptr<f16>, %arg2: i32, %arg3: index) attributes
        CHECK: %x_view = pto.make_tensor_view %arg0, shape = [%arg3, %c64_index], strides = [%c64_index, %c1_index]
        CHECK: %n_idx = arith.index_cast %arg2 : i32 to index
        CHECK-NEXT: %t = pto.alloc_tile addr = %c0_i64 valid_row = %n_idx valid_col = %c64_index
        CHECK: %x_pview = pto.partition_view %x_view, offsets = [%c0_index, %c0_index], sizes = [
        CHECK-SAME: , %c64_index] : !pto.tensor_view<?x?xf16> -> !pto.partition_tensor_view<?x64xf16>
        CHECK: pto.tstore
        CHECK-SAME: !pto.partition_tensor_view<?x64xf16>
        "#,
    );
}

#[test]
fn column_vector_gets_dn_view() {
    init();
    let f = kernel(
        "colv",
        FunctionKind::Aiv,
        &[("s", tensor(&[8, 1], DataType::INT32)), ("o", tensor(&[8, 1], DataType::INT32))],
        |b, p| {
            // Eight INT32 rows: a col-major column of 32 bytes, the smallest the ISA accepts.
            let t = b.assign_op("t", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[8, 1])], vec![])?;
            b.assign_op("o2", "tile.store", vec![v(t), ints(&[0, 0]), v(p[1])], vec![])?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        "CHECK: %s_view = pto.make_tensor_view %arg0, shape = [%c8_index, %c1_index], strides = [%c1_index, %c8_index] {layout = #pto.layout<dn>} : !pto.tensor_view<?x?xi32>",
    );
}

#[test]
fn elementwise_and_scalar_ops_and_loops() {
    init();
    let f = kernel(
        "ew",
        FunctionKind::Aiv,
        &[("x", tensor(&[8, 32], DataType::FP32)), ("y", tensor(&[8, 32], DataType::FP32))],
        |b, p| {
            let a = b.assign_op("a", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[8, 32])], vec![])?;
            let c = b.assign_op("c", "tile.add", vec![v(a), v(a)], vec![])?;
            let d = b.assign_op("d", "tile.muls", vec![v(c), Expr::float(2.0)], vec![])?;
            let y = p[1];
            b.for_range("i", (Expr::int(0), Expr::int(4), Expr::int(1)), vec![], |b, i, _| {
                let off = Expr::binary(BinOp::Mul, v(i), Expr::int(0));
                b.assign_op(
                    "y2",
                    "tile.store",
                    vec![v(d), Expr::tuple(vec![off, Expr::int(0)]), v(y)],
                    vec![],
                )?;
                Ok(vec![])
            })?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        r#"
        CHECK: %c = pto.alloc_tile
        CHECK-NEXT: pto.tadd ins(%a, %a : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=32
        CHECK-SAME: outs(%c : !pto.tile_buf
        CHECK: %d = pto.alloc_tile
        CHECK-NEXT: pto.tmuls ins(%c, %c2p0e0_f32 : !pto.tile_buf
        CHECK-SAME: , f32) outs(%d :
        CHECK: scf.for %i_idx = %c0_index to %c4_index step %c1_index {
        CHECK: arith.maxsi
        CHECK: pto.tstore ins(%d
        CHECK: }
        CHECK-NEXT: return
        "#,
    );
}

#[test]
fn distinct_tiles_get_distinct_addresses() {
    init();
    let f = kernel(
        "two",
        FunctionKind::Aiv,
        &[("x", tensor(&[4, 32], DataType::FP16)), ("y", tensor(&[4, 32], DataType::FP16))],
        |b, p| {
            let a = b.assign_op("a", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[4, 32])], vec![])?;
            let c = b.assign_op("c", "tile.add", vec![v(a), v(a)], vec![])?;
            b.assign_op("y2", "tile.store", vec![v(c), ints(&[0, 0]), v(p[1])], vec![])?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    // 4x32 f16 = 256 bytes: the second tile starts at 256.
    check(
        only(&out),
        "CHECK: %a = pto.alloc_tile addr = %c0_i64\nCHECK: %c = pto.alloc_tile addr = %c256_i64",
    );
}

#[test]
fn python_modulo_keeps_the_divisor_sign() {
    init();
    let f = kernel(
        "modk",
        FunctionKind::Aiv,
        &[
            ("x", tensor(&[8, 32], DataType::FP32)),
            ("a", Type::Scalar(DataType::INT32)),
            ("n", Type::Scalar(DataType::INT32)),
        ],
        |b, p| {
            let row = Expr::binary(BinOp::Mod, v(p[1]), v(p[2]));
            b.assign_op(
                "t",
                "tile.load",
                vec![v(p[0]), Expr::tuple(vec![row, Expr::int(0)]), ints(&[1, 32])],
                vec![],
            )?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        r#"
        CHECK: = arith.remsi %arg1, %arg2 : i32
        CHECK-NEXT: = arith.cmpi ne,
        CHECK-NEXT: = arith.cmpi slt,
        CHECK-NEXT: = arith.cmpi slt, %arg2, %c0_i32 : i32
        CHECK-NEXT: = arith.xori
        CHECK-NEXT: = arith.andi
        CHECK-NEXT: = arith.addi
        CHECK-SAME: %arg2 : i32
        CHECK-NEXT: = arith.select
        CHECK-NEXT: = arith.index_cast
        CHECK-NEXT: = arith.maxsi
        "#,
    );
}

#[test]
fn scalar_reads_and_writes_use_view_strides() {
    init();
    let f = kernel(
        "rw",
        FunctionKind::Aiv,
        &[
            ("sig", dist(&[2, 1], DataType::INT32)),
            ("out", tensor(&[4, 8], DataType::INT32)),
            ("r", Type::Scalar(DataType::INT32)),
        ],
        |b, p| {
            let val = b.assign_op("val", "tensor.read", vec![v(p[0]), ints(&[1, 0])], vec![])?;
            b.assign_op(
                "o2",
                "tensor.write",
                vec![v(p[1]), Expr::tuple(vec![v(p[2]), Expr::int(3)]), v(val)],
                vec![],
            )?;
            let t = b.assign_op("t", "tile.load", vec![v(p[1]), ints(&[0, 0]), ints(&[4, 8])], vec![])?;
            b.assign_op("e", "tile.read", vec![v(t), ints(&[2, 5])], vec![])?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        r#"
        CHECK: %sig_view = pto.make_tensor_view %arg0, shape = [%c2_index, %c1_index], strides = [%c1_index, %c2_index] {layout = #pto.layout<dn>}
        CHECK: %val = pto.load_scalar %arg0[%c1_index] : !pto.ptr<i32> -> i32
        CHECK: %r_idx = arith.index_cast %arg2 : i32 to index
        CHECK-NEXT: = arith.muli %r_idx, %c8_index : index
        CHECK-NEXT: = arith.addi
        CHECK-SAME: %c3_index : index
        CHECK-NEXT: pto.store_scalar %val, %arg1[
        CHECK-SAME: : !pto.ptr<i32>, i32
        CHECK: %e = pto.tgetval ins(%t, %c21_index : !pto.tile_buf<loc=vec, dtype=i32, rows=4, cols=8
        CHECK-SAME: , index) outs : i32
        "#,
    );
}

#[test]
fn cast_write_and_column_vector_tiles() {
    init();
    let f = kernel(
        "cw",
        FunctionKind::Aiv,
        &[
            ("x", tensor(&[16, 64], DataType::FP32)),
            ("h", tensor(&[16, 64], DataType::FP16)),
            ("c", tensor(&[8, 1], DataType::FP32)),
        ],
        |b, p| {
            let a = b.assign_op("a", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[16, 64])], vec![])?;
            let h = b.assign_op(
                "half",
                "tile.cast",
                vec![v(a)],
                vec![("dtype", pld_ir::Attr::DType(DataType::FP16))],
            )?;
            let w = b.assign_op("w", "tile.write", vec![v(a), ints(&[1, 1]), Expr::float(3.0)], vec![])?;
            b.assign_op("h2", "tile.store", vec![v(h), ints(&[0, 0]), v(p[1])], vec![])?;
            b.assign_op("x2", "tile.store", vec![v(w), ints(&[0, 0]), v(p[0])], vec![])?;
            b.assign_op("col", "tile.load", vec![v(p[2]), ints(&[0, 0]), ints(&[8, 1])], vec![])?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        r#"
        CHECK: %half = pto.alloc_tile
        CHECK-SAME: dtype=f16, rows=16, cols=64
        CHECK-NEXT: pto.tcvt ins(%a : !pto.tile_buf<loc=vec, dtype=f32
        CHECK-SAME: outs(%half : !pto.tile_buf<loc=vec, dtype=f16
        CHECK-NEXT: pto.tsetval ins(%c65_index, %c3p0e0_f32 : index, f32) outs(%a :
        CHECK: pto.tstore ins(%a
        CHECK: %col = pto.alloc_tile
        CHECK-SAME: rows=8, cols=1, v_row=?, v_col=?, blayout=col_major
        CHECK: sizes = [%c8_index, %c1_index] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x1xf32>
        "#,
    );
}

#[test]
fn a_cast_rounding_mode_is_an_attribute_of_its_source_operand() {
    init();
    let f = kernel("cr", FunctionKind::Aiv, &[("x", tensor(&[16, 64], DataType::FP32))], |b, p| {
        let a = b.assign_op("a", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[16, 64])], vec![])?;
        let mode = ("mode", pld_ir::Attr::Str("floor".into()));
        b.assign_op(
            "half",
            "tile.cast",
            vec![v(a)],
            vec![("dtype", pld_ir::Attr::DType(DataType::FP16)), mode],
        )?;
        Ok(())
    });
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        r#"
        CHECK: pto.tcvt ins(%a {rmode = #pto<round_mode CAST_FLOOR>} : !pto.tile_buf<loc=vec, dtype=f32
        CHECK-SAME: outs(%half : !pto.tile_buf<loc=vec, dtype=f16
        "#,
    );
}

#[test]
fn while_loops_carry_scalars_through_region_arguments() {
    init();
    let mut f = kernel("wl", FunctionKind::Aiv, &[("n", Type::Scalar(DataType::INDEX))], |_, _| Ok(()));
    // while c < n: c = c + 1   (one scalar carry)
    let n = f.params[0].value;
    let c = f.values.add("c", Type::Scalar(DataType::INDEX), pld_ir::Span::DUMMY);
    let r = f.values.add("c_out", Type::Scalar(DataType::INDEX), pld_ir::Span::DUMMY);
    let cond = Expr::binary(BinOp::Lt, v(c), v(n));
    let body = pld_ir::Block {
        stmts: vec![pld_ir::Stmt::new(
            pld_ir::StmtKind::Yield(vec![Expr::binary(BinOp::Add, v(c), Expr::int(1))]),
            pld_ir::Span::DUMMY,
        )],
    };
    f.body.stmts.push(pld_ir::Stmt::new(
        pld_ir::StmtKind::While {
            iter_args: vec![pld_ir::IterArg { value: c, init: Expr::int(0) }],
            cond,
            body,
            results: vec![r],
        },
        pld_ir::Span::DUMMY,
    ));
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        r#"
        CHECK: %0 = scf.while (%c = %c0_index) : (index) -> (index) {
        CHECK-NEXT: %1 = arith.cmpi slt, %c, %arg0 : index
        CHECK-NEXT: scf.condition(%1) %c : index
        CHECK-NEXT: } do {
        CHECK-NEXT: ^bb0(%c_body: index):
        CHECK-NEXT: %2 = arith.addi %c_body, %c1_index : index
        CHECK-NEXT: scf.yield %2 : index
        CHECK-NEXT: }
        "#,
    );
}

#[test]
fn tensor_slice_advances_the_pointer_and_keeps_parent_strides() {
    init();
    let f = kernel(
        "sl",
        FunctionKind::Aiv,
        &[("x", tensor(&[4, 64], DataType::FP32)), ("y", tensor(&[4, 32], DataType::FP32))],
        |b, p| {
            let s =
                b.assign_op("right", "tensor.slice", vec![v(p[0]), ints(&[4, 32]), ints(&[0, 32])], vec![])?;
            let t = b.assign_op("t", "tile.load", vec![v(s), ints(&[0, 0]), ints(&[4, 32])], vec![])?;
            b.assign_op("y2", "tile.store", vec![v(t), ints(&[0, 0]), v(p[1])], vec![])?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        r#"
        CHECK: %0 = arith.muli %c32_index, %c1_index : index
        CHECK-NEXT: %1 = pto.addptr %arg0, %0 : !pto.ptr<f32> -> !pto.ptr<f32>
        CHECK-NEXT: %x_slice_view = pto.make_tensor_view %1, shape = [%c4_index, %c32_index], strides = [%c64_index, %c1_index] {layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>
        CHECK: = pto.partition_view %x_slice_view, offsets = [%c0_index, %c0_index], sizes = [%c4_index, %c32_index]
        "#,
    );
}

#[test]
fn tiles_of_finished_regions_are_reused() {
    init();
    let f = kernel(
        "reuse",
        FunctionKind::Aiv,
        &[("x", tensor(&[16, 64], DataType::FP32)), ("y", tensor(&[16, 64], DataType::FP32))],
        |b, p| {
            let (x, y) = (p[0], p[1]);
            let keep =
                b.assign_op("keep", "tile.load", vec![v(x), ints(&[0, 0]), ints(&[16, 64])], vec![])?;
            for name in ["first", "second"] {
                b.for_range(name, (Expr::int(0), Expr::int(2), Expr::int(1)), vec![], |b, _, _| {
                    let t = b.assign_op(
                        format!("{name}_t"),
                        "tile.load",
                        vec![v(x), ints(&[0, 0]), ints(&[16, 64])],
                        vec![],
                    )?;
                    b.assign_op("y2", "tile.store", vec![v(t), ints(&[0, 0]), v(y)], vec![])?;
                    Ok(vec![])
                })?;
            }
            b.assign_op("y3", "tile.store", vec![v(keep), ints(&[0, 0]), v(y)], vec![])?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    // 16x64 f32 = 4096 bytes: both loop-local tiles sit right after `keep`, at the same address.
    check(
        only(&out),
        "CHECK: %keep = pto.alloc_tile addr = %c0_i64\nCHECK: %first_t = pto.alloc_tile addr = %c4096_i64\nCHECK: %second_t = pto.alloc_tile addr = %c4096_i64",
    );
}
