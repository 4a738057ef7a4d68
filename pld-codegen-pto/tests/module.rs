//! Module-level behaviour: mixed AIC/AIV groups share one module with no helper functions,
//! deferred waits add the hidden parameter and the external declaration, an op without an
//! emitter is a diagnostic naming it, and emission is deterministic (plus a golden module).

mod common;
use common::*;
use pld_ir::{Attr, DataType, Expr, FunctionKind, Program, Target, Type};

fn mixed() -> Program {
    init();
    let aic = kernel(
        "mk_aic",
        FunctionKind::Aic,
        &[
            ("x", tensor(&[16, 64], DataType::FP16)),
            ("win", dist(&[16, 64], DataType::FP16)),
            ("sig", dist(&[2, 1], DataType::INT32)),
            ("peer", Type::Scalar(DataType::INT32)),
        ],
        |b, p| {
            b.assign_op(
                "m",
                "tile.load",
                vec![v(p[0]), ints(&[0, 0]), ints(&[16, 64])],
                vec![("target_memory", Attr::Str("Mat".into()))],
            )?;
            b.eval_op("pld.system.wait", vec![v(p[2]), ints(&[0, 0]), Expr::int(1)], vec![("cmp", ai(1))])?;
            Ok(())
        },
    );
    let aiv = kernel(
        "mk_aiv",
        FunctionKind::Aiv,
        &[
            ("x", tensor(&[16, 64], DataType::FP16)),
            ("win", dist(&[16, 64], DataType::FP16)),
            ("sig", dist(&[2, 1], DataType::INT32)),
            ("peer", Type::Scalar(DataType::INT32)),
        ],
        |b, p| {
            let t = b.assign_op("t", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[16, 64])], vec![])?;
            b.eval_op("pld.tile.remote_store", vec![v(t), v(p[1]), v(p[3]), ints(&[0, 0])], vec![])?;
            b.eval_op("system.fence", vec![], vec![])?;
            b.eval_op(
                "pld.system.notify",
                vec![v(p[2]), v(p[3]), ints(&[0, 0]), Expr::int(1)],
                vec![("op", ai(0))],
            )?;
            b.eval_op("pld.system.wait", vec![v(p[2]), ints(&[0, 0]), Expr::int(1)], vec![("cmp", ai(1))])?;
            Ok(())
        },
    );
    program(vec![aiv, aic])
}

#[test]
fn mixed_group_is_one_module_without_helpers() {
    let out = emit(&mixed());
    assert_eq!(out.modules.len(), 1);
    let text = module(&out, "mk.pto");
    check(
        text,
        r#"
        CHECK: module attributes {pto.target_arch = "a2a3"} {
        CHECK-NEXT: func.func @mk_aic(
        CHECK-SAME: attributes {pto.kernel_kind = #pto.kernel_kind<cube>} {
        CHECK: %m = pto.alloc_tile
        CHECK-SAME: !pto.tile_buf<loc=mat, dtype=f16, rows=16, cols=64
        CHECK: pto.comm.twait
        CHECK: return
        CHECK: func.func @mk_aiv(
        CHECK-SAME: attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
        CHECK: pto.tstore
        CHECK: pto.comm.tnotify
        CHECK-NOT: func.func
        CHECK: return
        "#,
    );
    assert_eq!(count(text, "func.func"), 2);
    assert_no_helpers(text);
    assert!(!text.contains("func.call"));
    assert_peer_sequences(text, 2);
}

#[test]
fn separate_kernels_get_separate_modules() {
    init();
    let mk = |name: &str| {
        kernel(name, FunctionKind::Aiv, &[("x", tensor(&[8, 8], DataType::FP32))], |b, p| {
            b.assign_op("t", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[8, 8])], vec![])?;
            Ok(())
        })
    };
    let out = emit(&program(vec![mk("zeta"), mk("alpha_aiv")]));
    let names: Vec<&str> = out.modules.iter().map(|m| m.0.as_str()).collect();
    assert_eq!(names, ["alpha_aiv.pto", "zeta.pto"]);
}

#[test]
fn defer_wait_registers_a_counter_completion() {
    init();
    let f = kernel(
        "waiter",
        FunctionKind::Aiv,
        &[("sig", dist(&[4, 1], DataType::INT32)), ("k", Type::Scalar(DataType::INT32))],
        |b, p| {
            b.eval_op(
                "pld.system.defer_wait",
                vec![v(p[0]), Expr::tuple(vec![v(p[1]), Expr::int(0)]), Expr::int(3)],
                vec![("cmp", ai(1))],
            )?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    let text = only(&out);
    check(
        text,
        r#"
        CHECK: func.func @waiter(%arg0: !pto.ptr<i32>, %arg1: i32, %arg2: !pto.ptr<i64>, %__pypto_deferred_raw_args: !pto.ptr<i64>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
        CHECK: %k_idx = arith.index_cast %arg1 : i32 to index
        CHECK: arith.cmpi slt, %k_idx, %c0_index : index
        CHECK: arith.cmpi sge, %k_idx, %c4_index : index
        CHECK: arith.select
        CHECK-SAME: %cn1_index
        CHECK: arith.index_cast
        CHECK-SAME: : index to i64
        CHECK: func.call @pypto_register_counter_completion(%__pypto_deferred_raw_args, %arg0,
        CHECK-SAME: %c3_i64) : (!pto.ptr<i64>, !pto.ptr<i32>, i64, i64) -> ()
        CHECK-NOT: pto.comm.twait
        CHECK: return
        CHECK: func.func private @pypto_register_counter_completion(!pto.ptr<i64>, !pto.ptr<i32>, i64, i64)
        CHECK-NEXT: }
        "#,
    );
    assert_no_helpers(text);
}

#[test]
fn op_without_emitter_is_a_diagnostic_naming_it() {
    init();
    // An unlowered tensor-level elementwise op (ConvertTensorToTileOps did not run).
    let f = kernel("red", FunctionKind::Aiv, &[("x", tensor(&[8, 8], DataType::FP32))], |b, p| {
        b.assign_op("s", "tensor.adds", vec![v(p[0]), Expr::float(1.0)], vec![])?;
        Ok(())
    });
    let msgs = errors(&program(vec![f]), Target::A2A3);
    assert_eq!(msgs, ["op tensor.adds has no pto emitter"]);
}

#[test]
fn tensor_create_in_a_kernel_says_what_to_write_instead() {
    init();
    let f = kernel("cr", FunctionKind::Aiv, &[("x", tensor(&[8, 8], DataType::FP32))], |b, _| {
        b.assign_op("s", "tensor.create", vec![ints(&[8, 8])], vec![("dtype", Attr::DType(DataType::FP32))])?;
        Ok(())
    });
    let e = emit_for(&program(vec![f]), Target::A2A3).unwrap_err();
    let d = e.iter().next().unwrap();
    assert_eq!(
        d.message,
        "tensor.create inside a kernel has no pto form: a kernel cannot allocate global memory"
    );
    assert!(d.notes.iter().any(|n| n.contains("tile.create")), "{:?}", d.notes);
}

#[test]
fn unlowered_tensor_put_names_the_op_and_the_pass() {
    init();
    let f = kernel(
        "tp",
        FunctionKind::Aiv,
        &[
            ("dst", dist(&[16, 64], DataType::FP32)),
            ("src", tensor(&[16, 64], DataType::FP32)),
            ("peer", Type::Scalar(DataType::INT32)),
        ],
        |b, p| {
            b.eval_op("pld.tensor.put", vec![v(p[0]), v(p[2]), v(p[1])], vec![("atomic", ai(0))])?;
            Ok(())
        },
    );
    let e = emit_for(&program(vec![f]), Target::A2A3).unwrap_err();
    let d = e.iter().next().unwrap();
    assert_eq!(d.message, "op pld.tensor.put has no pto emitter");
    let has_lowering = pld_ir::registry()
        .lookup("pld.tensor.put")
        .and_then(|def| def.lowering(pld_ir::LoweringKind::TensorToTile))
        .is_some();
    assert_eq!(d.notes.iter().any(|n| n.contains("ConvertTensorToTileOps")), has_lowering);
}

#[test]
fn emitter_table_is_consistent() {
    let e = pld_codegen_pto::emitters();
    assert!(e.errors().is_empty(), "{:?}", e.errors());
    for op in
        ["pld.tile.put", "pld.tile.get", "pld.system.notify", "pld.system.wait", "tile.load", "tile.store"]
    {
        assert!(e.get(op).is_some(), "{op} has no emitter");
    }
}

#[test]
fn emission_is_deterministic() {
    let p = full_kernel();
    let a = emit(&p);
    let b = emit(&p.clone());
    let c = emit(&full_kernel());
    assert_eq!(a, b);
    assert_eq!(a, c);
    let m = mixed();
    assert_eq!(emit(&m), emit(&mixed()));
}

/// The §2 reference kernel (every comm op) pinned as a golden module (`cargo xtask bless`
/// rewrites it).
#[test]
fn kernel_p_golden() {
    let out = emit(&full_kernel());
    let text = only(&out);
    pld_testkit::golden::check_file(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/kernel_p.pto"), text);
    assert_peer_sequences(text, 5);
    assert_eq!(count(text, "pto.load_scalar"), 15);
}
