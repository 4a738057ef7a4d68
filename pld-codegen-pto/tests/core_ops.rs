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

#[test]
fn row_reductions_use_a_scratch_tile_and_a_column_result() {
    init();
    let f = kernel(
        "rs",
        FunctionKind::Aiv,
        &[("x", tensor(&[16, 64], DataType::FP32)), ("y", tensor(&[16, 1], DataType::FP32))],
        |b, p| {
            let t = b.assign_op("t", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[16, 64])], vec![])?;
            let s = b.assign_op("s", "tile.row_sum", vec![v(t)], vec![])?;
            b.assign_op("y2", "tile.store", vec![v(s), ints(&[0, 0]), v(p[1])], vec![])?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        r#"
        CHECK: %s_tmp = pto.alloc_tile
        CHECK-SAME: rows=16, cols=64
        CHECK-NEXT: %s = pto.alloc_tile
        CHECK-SAME: rows=16, cols=1, v_row=?, v_col=?, blayout=col_major
        CHECK-NEXT: pto.trowsum ins(%t, %s_tmp :
        CHECK-SAME: outs(%s : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=1
        CHECK: pto.tstore ins(%s
        CHECK-SAME: !pto.partition_tensor_view<16x1xf32>
        "#,
    );
}

#[test]
fn if_yielding_the_same_tensor_binds_it() {
    init();
    let mut f = kernel(
        "iff",
        FunctionKind::Aiv,
        &[
            ("x", tensor(&[8, 8], DataType::FP32)),
            ("y", tensor(&[8, 8], DataType::FP32)),
            ("c", Type::Scalar(DataType::BOOL)),
        ],
        |_, _| Ok(()),
    );
    let (x, y, c) = (f.params[0].value, f.params[1].value, f.params[2].value);
    let ty = f.values.ty(y).clone();
    let r = f.values.add("y_out", ty, pld_ir::Span::DUMMY);
    let yield_y = |e: Expr| pld_ir::Block {
        stmts: vec![pld_ir::Stmt::new(pld_ir::StmtKind::Yield(vec![e]), pld_ir::Span::DUMMY)],
    };
    f.body.stmts.push(pld_ir::Stmt::new(
        pld_ir::StmtKind::If {
            cond: v(c),
            then_body: yield_y(v(y)),
            else_body: yield_y(v(y)),
            results: vec![r],
        },
        pld_ir::Span::DUMMY,
    ));
    // Use the merged tensor afterwards: load from x, store into y_out.
    let mut fb_body = std::mem::take(&mut f.body.stmts);
    let env = pld_ir::DeduceEnv::new(&f.values);
    let t = Expr::op_call(
        "tile.load",
        vec![v(x), ints(&[0, 0]), ints(&[8, 8])],
        vec![],
        pld_ir::Span::DUMMY,
        &env,
    )
    .unwrap();
    let tv = f.values.add("t", t.ty(&f.values), pld_ir::Span::DUMMY);
    fb_body.push(pld_ir::Stmt::new(
        pld_ir::StmtKind::Assign { targets: vec![tv], value: t },
        pld_ir::Span::DUMMY,
    ));
    let env = pld_ir::DeduceEnv::new(&f.values);
    let st = Expr::op_call("tile.store", vec![v(tv), ints(&[0, 0]), v(r)], vec![], pld_ir::Span::DUMMY, &env)
        .unwrap();
    fb_body.push(pld_ir::Stmt::new(pld_ir::StmtKind::Eval(st), pld_ir::Span::DUMMY));
    f.body.stmts = fb_body;
    let out = emit(&program(vec![f]));
    check(only(&out), "CHECK: scf.if %arg2 {\nCHECK-NEXT: } else {\nCHECK-NEXT: }\nCHECK: %y_pview = pto.partition_view %y_view");
}

#[test]
fn cube_matmul_uses_fractal_operand_layouts() {
    init();
    let mem = |m: &str| vec![("target_memory", pld_ir::Attr::Str(m.into()))];
    let f = kernel(
        "mm",
        FunctionKind::Aic,
        &[
            ("a", tensor(&[16, 32], DataType::FP16)),
            ("b", tensor(&[32, 16], DataType::FP16)),
            ("c", tensor(&[16, 16], DataType::FP32)),
        ],
        |bl, p| {
            let am =
                bl.assign_op("am", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[16, 32])], mem("Mat"))?;
            let bm =
                bl.assign_op("bm", "tile.load", vec![v(p[1]), ints(&[0, 0]), ints(&[32, 16])], mem("Mat"))?;
            let al = bl.assign_op("al", "tile.move", vec![v(am)], mem("Left"))?;
            let br = bl.assign_op("br", "tile.move", vec![v(bm)], mem("Right"))?;
            let acc = bl.assign_op("acc", "tile.matmul", vec![v(al), v(br)], vec![])?;
            bl.assign_op("c2", "tile.store", vec![v(acc), ints(&[0, 0]), v(p[2])], vec![])?;
            let flat = bl.assign_op("flat", "tile.reshape", vec![v(am), ints(&[1, 512])], vec![])?;
            let _ = flat;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        r#"
        CHECK: attributes {pto.kernel_kind = #pto.kernel_kind<cube>}
        CHECK: %am = pto.alloc_tile addr = %c0_i64
        CHECK-SAME: loc=mat, dtype=f16, rows=16, cols=32
        CHECK: %al = pto.alloc_tile
        CHECK-SAME: loc=left, dtype=f16, rows=16, cols=32, v_row=?, v_col=?, blayout=col_major, slayout=row_major, fractal=512, pad=0>
        CHECK-NEXT: pto.tmov ins(%am
        CHECK: loc=right, dtype=f16, rows=32, cols=16, v_row=?, v_col=?, blayout=row_major, slayout=col_major, fractal=512, pad=0>
        CHECK: %acc = pto.alloc_tile
        CHECK-SAME: loc=acc, dtype=f32, rows=16, cols=16, v_row=?, v_col=?, blayout=col_major, slayout=row_major, fractal=1024, pad=0>
        CHECK-NEXT: pto.tmatmul ins(%al, %br : !pto.tile_buf<loc=left
        CHECK-SAME: outs(%acc : !pto.tile_buf<loc=acc
        CHECK: pto.tstore ins(%acc
        CHECK: %flat = pto.alloc_tile addr = %c0_i64 valid_row = %c1_index valid_col = %c512_index
        "#,
    );
    // A matmul on vector tiles is refused with the fix.
    let g = kernel("bad", FunctionKind::Aiv, &[("a", tensor(&[16, 16], DataType::FP16))], |bl, p| {
        let t = bl.assign_op("t", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[16, 16])], vec![])?;
        bl.assign_op("m", "tile.matmul", vec![v(t), v(t)], vec![])?;
        Ok(())
    });
    let msgs = errors(&program(vec![g]), Target::A2A3);
    assert!(msgs[0].contains("tile.matmul needs its lhs in Left"), "{msgs:?}");
}

#[test]
fn scalar_cast_and_tensor_reshape() {
    init();
    let f = kernel(
        "sc",
        FunctionKind::Aiv,
        &[("x", tensor(&[4, 64], DataType::FP32)), ("n", Type::Scalar(DataType::INT32))],
        |b, p| {
            let i = b.assign_op(
                "i",
                "scalar.cast",
                vec![v(p[1])],
                vec![("dtype", pld_ir::Attr::DType(DataType::INT64))],
            )?;
            let r = b.assign_op("r", "tensor.reshape", vec![v(p[0]), ints(&[1, 256])], vec![])?;
            b.assign_op(
                "t",
                "tile.load",
                vec![v(r), Expr::tuple(vec![Expr::int(0), v(i)]), ints(&[1, 64])],
                vec![],
            )?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        r#"
        CHECK: = arith.extsi %arg1 : i32 to i64
        CHECK: = pto.make_tensor_view %arg0, shape = [%c1_index, %c256_index], strides = [%c256_index, %c1_index]
        CHECK: = arith.index_cast
        CHECK-SAME: : i64 to index
        CHECK: sizes = [%c1_index, %c64_index]
        "#,
    );
}

#[test]
fn column_reductions_write_a_row_tile_without_a_scratch_operand() {
    init();
    for (op, inst) in
        [("tile.col_sum", "pto.tcolsum"), ("tile.col_max", "pto.tcolmax"), ("tile.col_min", "pto.tcolmin")]
    {
        let f = kernel(
            "cs",
            FunctionKind::Aiv,
            &[("x", tensor(&[16, 64], DataType::FP32)), ("y", tensor(&[1, 64], DataType::FP32))],
            |b, p| {
                let t =
                    b.assign_op("t", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[16, 64])], vec![])?;
                let s = b.assign_op("s", op, vec![v(t)], vec![])?;
                b.assign_op("y2", "tile.store", vec![v(s), ints(&[0, 0]), v(p[1])], vec![])?;
                Ok(())
            },
        );
        let out = emit(&program(vec![f]));
        let text = only(&out);
        check(
            text,
            &format!(
                r#"
        CHECK: %s = pto.alloc_tile
        CHECK-SAME: valid_row = %c1_index valid_col = %c64_index : !pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=64, v_row=?, v_col=?, blayout=row_major
        CHECK-NEXT: {inst} ins(%t : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%s : !pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=64
        CHECK: pto.tstore ins(%s
        CHECK-SAME: !pto.partition_tensor_view<1x64xf32>
        "#
            ),
        );
        assert!(!text.contains("_tmp"), "no scratch tile (a tmp operand would need isBinary):\n{text}");
    }
}

#[test]
fn column_reduction_of_a_cube_tile_is_a_diagnostic() {
    init();
    let f = kernel("cs", FunctionKind::Aic, &[("x", tensor(&[16, 64], DataType::FP32))], |b, p| {
        let t = b.assign_op(
            "t",
            "tile.load",
            vec![v(p[0]), ints(&[0, 0]), ints(&[16, 64])],
            vec![("target_memory", pld_ir::Attr::Str("Mat".into()))],
        )?;
        b.assign_op("s", "tile.col_sum", vec![v(t)], vec![])?;
        Ok(())
    });
    let msgs = errors(&program(vec![f]), Target::A2A3);
    assert_eq!(msgs, ["tile.col_sum reduces a Mat tile; pto.tcolsum works only on vec tiles"]);
}

#[test]
fn column_reduction_dtypes_follow_the_a2a3_isa() {
    init();
    let k = || {
        kernel("cs", FunctionKind::Aiv, &[("x", tensor(&[16, 64], DataType::BF16))], |b, p| {
            let t = b.assign_op("t", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[16, 64])], vec![])?;
            b.assign_op("s", "tile.col_max", vec![v(t)], vec![])?;
            Ok(())
        })
    };
    let msgs = errors(&program(vec![k()]), Target::A2A3);
    assert_eq!(
        msgs,
        ["tile.col_max of a bfloat16 tile is not supported on the 'a2a3' backend; pto.tcolmax takes fp16, fp32, int16 or int32"]
    );
    // A5 leaves the dtype set to the target (pto-isa: target-defined).
    let out = emit_for(&program(vec![k()]), Target::A5).unwrap();
    assert!(only(&out).contains("pto.tcolmax ins(%t"));
}

/// A kernel loading `x` (optionally ragged), slicing it, adding 1 and storing into `y`; with
/// `dyn_scalar`, a `-1` in `offsets`/`valid` stands for the runtime scalar parameter `n`.
fn slice_kernel(
    src_valid: Option<&[i64]>,
    shape: &[i64],
    offsets: Expr,
    valid: Option<Expr>,
    dyn_scalar: bool,
) -> pld_ir::Program {
    let mut params = vec![("x", tensor(&[16, 64], DataType::FP32)), ("y", tensor(&[16, 64], DataType::FP32))];
    if dyn_scalar {
        params.push(("n", Type::Scalar(DataType::INT32)));
    }
    let src_valid = src_valid.map(|s| s.to_vec());
    let shape = shape.to_vec();
    let f = kernel("sl", FunctionKind::Aiv, &params, |b, p| {
        let mut largs = vec![v(p[0]), ints(&[0, 0]), ints(&[16, 64])];
        if let Some(sv) = &src_valid {
            largs.push(ints(sv));
        }
        let t = b.assign_op("t", "tile.load", largs, vec![])?;
        let offs = match &offsets.kind {
            pld_ir::ExprKind::Tuple(xs) if dyn_scalar => Expr::tuple(
                xs.iter().map(|x| if x.as_int() == Some(-1) { v(p[2]) } else { x.clone() }).collect(),
            ),
            _ => offsets.clone(),
        };
        let mut sargs = vec![v(t), ints(&shape), offs];
        if let Some(vs) = &valid {
            let vs = match &vs.kind {
                pld_ir::ExprKind::Tuple(xs) if dyn_scalar => Expr::tuple(
                    xs.iter().map(|x| if x.as_int() == Some(-1) { v(p[2]) } else { x.clone() }).collect(),
                ),
                _ => vs.clone(),
            };
            sargs.push(vs);
        }
        let s = b.assign_op("s", "tile.slice", sargs, vec![])?;
        let d = b.assign_op("d", "tile.adds", vec![v(s), Expr::float(1.0)], vec![])?;
        b.assign_op("y2", "tile.store", vec![v(d), ints(&[0, 0]), v(p[1])], vec![])?;
        Ok(())
    });
    program(vec![f])
}

#[test]
fn tile_slice_is_a_subview_of_the_source_buffer() {
    init();
    let out = emit(&slice_kernel(None, &[8, 32], ints(&[8, 32]), None, false));
    let text = only(&out);
    check(
        text,
        r#"
        CHECK: %t = pto.alloc_tile
        CHECK: pto.tload
        CHECK-NEXT: %s = pto.subview %t[%c8_index, %c32_index] sizes [8, 32] valid [%c8_index, %c32_index] : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0> -> !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=32, v_row=8, v_col=32, blayout=row_major, slayout=none_box, fractal=512, pad=0>
        CHECK-NEXT: %d = pto.alloc_tile
        CHECK-NEXT: pto.tadds ins(%s, %c1p0e0_f32 : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=32, v_row=8, v_col=32,
        CHECK: pto.tstore ins(%d
        CHECK-SAME: !pto.partition_tensor_view<8x32xf32>
        "#,
    );
    // A view allocates nothing: only the source, the adds result (no slice buffer).
    assert_eq!(text.matches("pto.alloc_tile").count(), 2, "{text}");
}

#[test]
fn tile_slice_valid_shape_sizes_the_view_and_later_stores() {
    init();
    // An explicit static valid_shape [16, 8] of a [16, 16] slice: v_col=8 in the view type and
    // an 8-column store (V10: the tstore count equals the tile's valid count). The adds result
    // is allocated with the view's own type (static valid extent, so no valid operands): one
    // tile type for the source and destination of an elementwise op.
    let out = emit(&slice_kernel(Some(&[16, 40]), &[16, 16], ints(&[0, 32]), Some(ints(&[16, 8])), false));
    check(
        only(&out),
        r#"
        CHECK: %s = pto.subview %t[%c0_index, %c32_index] sizes [16, 16] valid [%c16_index, %c8_index]
        CHECK-SAME: -> !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=8,
        CHECK: %d = pto.alloc_tile addr = %c4096_i64 : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=8,
        CHECK-NEXT: pto.tadds ins(%s, %c1p0e0_f32
        CHECK-SAME: outs(%d : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=8,
        CHECK: pto.tstore ins(%d
        CHECK-SAME: !pto.partition_tensor_view<16x8xf32>
        "#,
    );
}

#[test]
fn tile_slice_with_runtime_offset_and_valid_shape() {
    init();
    // offsets [0, n] and valid_shape [8, n]: the column offset is clamped, v_col is dynamic.
    let out = emit(&slice_kernel(None, &[8, 16], ints(&[0, -1]), Some(ints(&[8, -1])), true));
    check(
        only(&out),
        r#"
        CHECK: arith.maxsi
        CHECK: = pto.subview %t[%c0_index,
        CHECK-SAME: sizes [8, 16] valid [%c8_index,
        CHECK-SAME: -> !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=16, v_row=8, v_col=?, blayout=row_major
        "#,
    );
}

#[test]
fn tile_slice_of_a_cube_operand_keeps_its_fractal_layout() {
    init();
    let f = kernel("sl", FunctionKind::Aic, &[("x", tensor(&[32, 32], DataType::FP16))], |b, p| {
        let m = b.assign_op(
            "m",
            "tile.load",
            vec![v(p[0]), ints(&[0, 0]), ints(&[32, 32])],
            vec![("target_memory", pld_ir::Attr::Str("Mat".into()))],
        )?;
        let l = b.assign_op(
            "l",
            "tile.move",
            vec![v(m)],
            vec![("target_memory", pld_ir::Attr::Str("Left".into()))],
        )?;
        b.assign_op("s", "tile.slice", vec![v(l), ints(&[16, 32]), ints(&[16, 0])], vec![])?;
        Ok(())
    });
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        r#"
        CHECK: %s = pto.subview %l[%c16_index, %c0_index] sizes [16, 32] valid [%c16_index, %c32_index] : !pto.tile_buf<loc=left, dtype=f16, rows=32, cols=32, v_row=?, v_col=?, blayout=col_major, slayout=row_major, fractal=512, pad=0> -> !pto.tile_buf<loc=left, dtype=f16, rows=16, cols=32, v_row=16, v_col=32, blayout=col_major, slayout=row_major, fractal=512, pad=0>
        "#,
    );
}

#[test]
fn tensor_assemble_in_a_kernel_stages_through_one_vec_tile() {
    init();
    let f = kernel(
        "asm",
        FunctionKind::Aiv,
        &[("x", tensor(&[1, 16, 64], DataType::FP16)), ("y", tensor(&[1, 32, 64], DataType::FP16))],
        |b, p| {
            b.assign_op("y2", "tensor.assemble", vec![v(p[1]), v(p[0]), ints(&[0, 16, 0])], vec![])?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        r#"
        CHECK: %y2_stage = pto.alloc_tile addr = %c0_i64 valid_row = %c16_index valid_col = %c64_index : !pto.tile_buf<loc=vec, dtype=f16, rows=16, cols=64,
        CHECK-NEXT: %x_pview = pto.partition_view %x_view, offsets = [%c0_index, %c0_index, %c0_index], sizes = [%c1_index, %c16_index, %c64_index] : !pto.tensor_view<?x?x?xf16> -> !pto.partition_tensor_view<1x16x64xf16>
        CHECK-NEXT: pto.tload ins(%x_pview : !pto.partition_tensor_view<1x16x64xf16>) outs(%y2_stage :
        CHECK-NEXT: %y_pview = pto.partition_view %y_view, offsets = [%c0_index, %c16_index, %c0_index], sizes = [%c1_index, %c16_index, %c64_index]
        CHECK-NEXT: pto.tstore ins(%y2_stage : !pto.tile_buf<loc=vec, dtype=f16, rows=16, cols=64
        CHECK-SAME: outs(%y_pview : !pto.partition_tensor_view<1x16x64xf16>)
        CHECK-NOT: atomicType
        CHECK: return
        "#,
    );
}

#[test]
fn tensor_assemble_limits_are_diagnostics() {
    init();
    let case = |src: &[i64], dst: &[i64], atomic: bool| {
        let offs = vec![0; dst.len()];
        let f = kernel(
            "asm",
            FunctionKind::Aiv,
            &[("x", tensor(src, DataType::FP32)), ("y", tensor(dst, DataType::FP32))],
            |b, p| {
                let attrs = if atomic { vec![("atomic", pld_ir::Attr::Int(1))] } else { vec![] };
                b.assign_op("y2", "tensor.assemble", vec![v(p[1]), v(p[0]), ints(&offs)], attrs)?;
                Ok(())
            },
        );
        errors(&program(vec![f]), Target::A2A3)
    };
    let m = case(&[2, 8, 64], &[2, 8, 64], false);
    assert!(m[0].contains("leading dims other than 1"), "{m:?}");
    let m = case(&[1024, 1024], &[1024, 1024], false);
    assert!(m[0].contains("more than one vec staging tile holds"), "{m:?}");
    let m = case(&[8, 64], &[8, 64], true);
    assert!(m[0].starts_with("tensor.assemble with atomic=AtomicType.Add needs a tile source"), "{m:?}");
}

/// Whether the registry's `op` declares a parameter `name` (the optional scratch operands of
/// the reductions are being added to the op schemas).
fn has_param(op: &str, name: &str) -> bool {
    pld_ir::registry().lookup(op).is_some_and(|d| d.params.iter().any(|p| p.name == name))
}

#[test]
fn reductions_use_the_callers_tmp_tile() {
    init();
    if !has_param("tile.col_sum", "tmp_tile") || !has_param("tile.row_sum", "tmp_tile") {
        // The schema has no scratch operand (yet): a second argument is an arity error, so
        // the emitter's scratch path cannot be reached from IR.
        kernel("r", FunctionKind::Aiv, &[("x", tensor(&[16, 64], DataType::FP32))], |b, p| {
            let t = b.assign_op("t", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[16, 64])], vec![])?;
            assert!(b.assign_op("s", "tile.col_sum", vec![v(t), v(t)], vec![]).is_err());
            Ok(())
        });
        return;
    }
    let f = kernel(
        "r",
        FunctionKind::Aiv,
        &[("x", tensor(&[16, 64], DataType::FP32)), ("y", tensor(&[1, 64], DataType::FP32))],
        |b, p| {
            let t = b.assign_op("t", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[16, 64])], vec![])?;
            let w = b.assign_op("w", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[16, 64])], vec![])?;
            let c = b.assign_op("c", "tile.col_sum", vec![v(t), v(w)], vec![])?;
            b.assign_op("r", "tile.row_sum", vec![v(t), v(w)], vec![])?;
            b.assign_op("y2", "tile.store", vec![v(c), ints(&[0, 0]), v(p[1])], vec![])?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    let text = only(&out);
    check(
        text,
        r#"
        CHECK: pto.tcolsum ins(%t, %w {isBinary = true} : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64
        CHECK-SAME: outs(%c : !pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=64
        CHECK: pto.trowsum ins(%t, %w : !pto.tile_buf
        "#,
    );
    assert!(!text.contains("_tmp"), "the caller's scratch tile is used:\n{text}");
}
