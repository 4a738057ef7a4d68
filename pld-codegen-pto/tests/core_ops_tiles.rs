//! Codegen of the core tile ops beyond load/store: row and column reductions (scratch tiles,
//! result layouts, ISA dtypes), branches yielding tensors, cube matmul fractal layouts,
//! scalar casts and reshapes, tile slices as subviews of their source buffer, and in-kernel
//! tensor assemble with its limits.

mod common;
use common::*;
use pld_ir::{DataType, Expr, FunctionKind, Target, Type};

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

/// `out[:, 0:C] = win[:, 0:C]` over `[M, C]` with M dynamic: a whole-shape staging tile
/// would need dynamic rows (no PTO tile buffer has them), so the copy runs a row at a time
/// through one `[1, C]` tile. (It used to be refused at codegen although `pld run` ran it.)
#[test]
fn tensor_assemble_with_dynamic_rows_copies_a_row_at_a_time() {
    init();
    let dyn_rows = |d| Type::tensor(vec![Expr::sym("M"), Expr::int(48)], d);
    let f = kernel(
        "asm_rows",
        FunctionKind::InCore,
        &[("x", dyn_rows(DataType::FP32)), ("y", dyn_rows(DataType::FP32))],
        |b, p| {
            b.assign_op("y2", "tensor.assemble", vec![v(p[1]), v(p[0]), ints(&[0, 0])], vec![])?;
            Ok(())
        },
    );
    let mut p = program(vec![f]);
    let opts = pld_passes::PipelineOptions::default();
    if let Err(d) = pld_passes::run_pass(&mut p, "ConvertTensorToTileOps", &opts) {
        panic!("{:?}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>());
    }
    let out = emit(&p);
    check(
        only(&out),
        r#"
        CHECK: scf.for
        CHECK: pto.alloc_tile
        CHECK-SAME: rows=1, cols=48
        CHECK: pto.tload
        CHECK: pto.tstore
        CHECK-NOT: pto.tload
        CHECK: return
        "#,
    );
}
