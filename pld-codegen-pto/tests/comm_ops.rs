//! Codegen of the communication family: remote_load / remote_store through the inline
//! CommContext peer-offset sequence, notify / wait, rank / nranks from the ctx slot, and the
//! diagnostics for forms ptoas would reject.

mod common;
use common::*;
use pld_ir::{BinOp, DataType, Expr, FunctionKind, Program, Target, Type};

/// The §2 reference kernel without put/get: load → remote_store(atomic add) → notify → wait →
/// remote_load → store.
fn kernel_p(atomic: i64) -> Program {
    init();
    let f = kernel(
        "kernel",
        FunctionKind::Aiv,
        &[
            ("x", tensor(&[16, 64], DataType::FP32)),
            ("y", tensor(&[16, 64], DataType::FP32)),
            ("win", dist(&[16, 64], DataType::FP32)),
            ("sig", dist(&[4, 1], DataType::INT32)),
            ("peer", Type::Scalar(DataType::INT32)),
        ],
        |b, p| {
            let (x, y, win, sig, peer) = (p[0], p[1], p[2], p[3], p[4]);
            let t = b.assign_op("t", "tile.load", vec![v(x), ints(&[0, 0]), ints(&[16, 64])], vec![])?;
            b.eval_op(
                "pld.tile.remote_store",
                vec![v(t), v(win), v(peer), ints(&[0, 0])],
                vec![("atomic", ai(atomic))],
            )?;
            b.eval_op("system.fence", vec![], vec![])?;
            b.eval_op(
                "pld.system.notify",
                vec![v(sig), v(peer), ints(&[0, 0]), Expr::int(1)],
                vec![("op", ai(0))],
            )?;
            b.eval_op("pld.system.wait", vec![v(sig), ints(&[0, 0]), Expr::int(1)], vec![("cmp", ai(1))])?;
            b.eval_op("system.cacheinvalid", vec![], vec![])?;
            let r = b.assign_op(
                "r",
                "pld.tile.remote_load",
                vec![v(win), v(peer), ints(&[0, 0]), ints(&[16, 64])],
                vec![],
            )?;
            b.assign_op("y2", "tile.store", vec![v(r), ints(&[0, 0]), v(y)], vec![])?;
            Ok(())
        },
    );
    program(vec![f])
}

#[test]
fn kernel_p_signature_views_and_remote_ops() {
    let out = emit(&kernel_p(1));
    let text = module(&out, "kernel.pto");
    check(
        text,
        r#"
        CHECK: func.func @kernel(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: !pto.ptr<f32>, %arg3: !pto.ptr<i32>, %arg4: i32, %arg5: !pto.ptr<i64>, %arg6: !pto.ptr<i64>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
        CHECK: %sig_view = pto.make_tensor_view %arg3, shape = [%c4_index, %c1_index], strides = [%c1_index, %c4_index] {layout = #pto.layout<dn>} : !pto.tensor_view<?x?xi32>
        CHECK: pto.tload ins(%x_pview
        CHECK: %peer_idx = arith.index_cast %arg4 : i32 to index
        CHECK-NEXT: = pto.load_scalar %arg5[%c2_index] : !pto.ptr<i64> -> i64
        CHECK-NEXT: = arith.trunci
        CHECK-SAME: : i64 to i32
        CHECK-NEXT: = arith.index_cast
        CHECK-SAME: : i32 to index
        CHECK-NEXT: = arith.addi %c4_index,
        CHECK-NEXT: = pto.load_scalar %arg5[
        CHECK-NEXT: = arith.addi %c4_index, %peer_idx : index
        CHECK-NEXT: = pto.load_scalar %arg5[
        CHECK-NEXT: = arith.subi
        CHECK-NEXT: = arith.divsi
        CHECK-SAME: %c4_i64 : i64
        CHECK-NEXT: = arith.index_cast
        CHECK-SAME: : i64 to index
        CHECK-NEXT: = pto.addptr %arg2,
        CHECK-SAME: : !pto.ptr<f32> -> !pto.ptr<f32>
        CHECK-NEXT: = pto.make_tensor_view
        CHECK-SAME: shape = [%c16_index, %c64_index], strides = [%c64_index, %c1_index] {layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>
        CHECK-NEXT: %win_peer_pview = pto.partition_view
        CHECK-SAME: -> !pto.partition_tensor_view<16x64xf32>
        CHECK-NEXT: pto.tstore ins(%t : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64
        CHECK-SAME: outs(%win_peer_pview : !pto.partition_tensor_view<16x64xf32>) {atomicType = #pto<atomic_type atomic_add>}
        CHECK-NEXT: pto.cmo.cacheinvalid %win_peer_pview single_cache_line : !pto.partition_tensor_view<16x64xf32>
        CHECK-NEXT: pto.fence.barrier_all #pto.fence_scope<gm>
        CHECK: = pto.load_scalar %arg6[%c2_index]
        CHECK: = pto.addptr %arg3,
        CHECK-SAME: : !pto.ptr<i32> -> !pto.ptr<i32>
        CHECK-NEXT: pto.make_tensor_view
        CHECK-SAME: {layout = #pto.layout<dn>}
        CHECK-NEXT: %sig_peer_pview = pto.partition_view
        CHECK-SAME: sizes = [%c1_index, %c1_index] : !pto.tensor_view<?x?xi32> -> !pto.partition_tensor_view<1x1xi32>
        CHECK-NEXT: pto.barrier <PIPE_ALL>
        CHECK-NEXT: pto.comm.tnotify(%sig_peer_pview, %c1_i32 : !pto.partition_tensor_view<1x1xi32>, i32) {notifyOp = #pto<notify_op atomic_add>}
        CHECK-NEXT: %sig_local_pview = pto.partition_view %sig_view, offsets = [%c0_index, %c0_index], sizes = [%c1_index, %c1_index]
        CHECK-NEXT: pto.comm.twait(%sig_local_pview, %c1_i32 : !pto.partition_tensor_view<1x1xi32>, i32) {cmp = #pto<wait_cmp ge>}
        CHECK-NEXT: pto.cmo.cacheinvalid all #pto.address_space<gm>
        CHECK-NEXT: %r = pto.alloc_tile
        CHECK: = pto.addptr %arg2,
        CHECK: pto.tload ins(
        CHECK-SAME: outs(%r :
        CHECK: pto.tstore ins(%r
        CHECK-NOT: atomicType
        CHECK: return
        "#,
    );
    // One peer sequence per remote operand (remote_store, notify, remote_load).
    assert_peer_sequences(text, 3);
    assert_eq!(count(text, "pto.load_scalar"), 9);
    assert_no_helpers(text);
    // The notify uses sig's ctx (%arg6), the data ops win's ctx (%arg5).
    assert_eq!(count(text, "pto.load_scalar %arg6"), 3);
    assert_eq!(count(text, "pto.load_scalar %arg5"), 6);
}

#[test]
fn remote_store_without_atomic_prints_no_attribute() {
    let out = emit(&kernel_p(0));
    let text = only(&out);
    check(text, "CHECK: pto.tstore ins(%t\nCHECK-SAME: outs(%win_peer_pview : !pto.partition_tensor_view<16x64xf32>)\nCHECK-NEXT: pto.cmo.cacheinvalid %win_peer_pview");
    assert_eq!(count(text, "atomicType"), 0);
}

/// Appendix A: rank/nranks from the signal's ctx, notify inside a loop with an index-typed
/// payload, runtime offsets clamped with maxsi.
#[test]
fn rank_nranks_and_notify_in_loop() {
    init();
    let f = kernel(
        "kernel2",
        FunctionKind::Aiv,
        &[("sig", dist(&[8, 8], DataType::INT32)), ("peer", Type::Scalar(DataType::INT32))],
        |b, p| {
            let (sig, peer, ctx) = (p[0], p[1], p[2]);
            let me = b.assign_op("me", "pld.system.rank", vec![v(ctx)], vec![])?;
            let nr = b.assign_op("nr", "pld.system.nranks", vec![v(ctx)], vec![])?;
            b.for_range("step", (Expr::int(0), Expr::int(4), Expr::int(1)), vec![], |b, step, _| {
                let val = Expr::binary(BinOp::Add, v(step), Expr::int(1));
                b.eval_op(
                    "pld.system.notify",
                    vec![v(sig), v(peer), Expr::tuple(vec![v(me), Expr::int(0)]), val],
                    vec![("op", ai(1))],
                )?;
                Ok(vec![])
            })?;
            let last = Expr::binary(BinOp::Sub, v(nr), Expr::int(1));
            b.eval_op(
                "pld.system.wait",
                vec![v(sig), Expr::tuple(vec![last, Expr::int(0)]), Expr::int(1)],
                vec![("cmp", ai(0))],
            )?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    let text = only(&out);
    check(
        text,
        r#"
        CHECK: func.func @kernel2(%arg0: !pto.ptr<i32>, %arg1: i32, %arg2: !pto.ptr<i64>)
        CHECK: %0 = pto.load_scalar %arg2[%c2_index] : !pto.ptr<i64> -> i64
        CHECK-NEXT: %me = arith.trunci %0 : i64 to i32
        CHECK-NEXT: %1 = pto.load_scalar %arg2[%c2_index] : !pto.ptr<i64> -> i64
        CHECK-NEXT: %2 = arith.shrui %1, %c32_i64 : i64
        CHECK-NEXT: %nr = arith.trunci %2 : i64 to i32
        CHECK-NEXT: scf.for %step_idx = %c0_index to %c4_index step %c1_index {
        CHECK: pto.addptr %arg0
        CHECK: %me_idx = arith.index_cast %me : i32 to index
        CHECK-NEXT: = arith.maxsi %me_idx, %c0_index : index
        CHECK-NEXT: %sig_peer_pview = pto.partition_view
        CHECK-NEXT: = arith.addi %step_idx, %c1_index : index
        CHECK-NEXT: = arith.index_cast
        CHECK-SAME: : index to i32
        CHECK-NEXT: pto.barrier <PIPE_ALL>
        CHECK-NEXT: pto.comm.tnotify(%sig_peer_pview,
        CHECK-SAME: : !pto.partition_tensor_view<1x1xi32>, i32) {notifyOp = #pto<notify_op set>}
        CHECK-NEXT: }
        CHECK: = arith.subi
        CHECK-SAME: %c1_i32 : i32
        CHECK: = arith.maxsi
        CHECK-NEXT: %sig_local_pview = pto.partition_view %sig_view
        CHECK-NEXT: pto.comm.twait(%sig_local_pview, %c1_i32 : !pto.partition_tensor_view<1x1xi32>, i32) {cmp = #pto<wait_cmp eq>}
        "#,
    );
    assert_peer_sequences(text, 1);
}

#[test]
fn ragged_remote_load_uses_effective_valid_shape() {
    init();
    let f = kernel(
        "rl",
        FunctionKind::Aiv,
        &[
            ("win", dist(&[1, 8192], DataType::FP32)),
            ("y", tensor(&[1, 8192], DataType::FP32)),
            ("peer", Type::Scalar(DataType::INT32)),
        ],
        |b, p| {
            let r = b.assign_op(
                "r",
                "pld.tile.remote_load",
                vec![v(p[0]), v(p[2]), ints(&[0, 0]), ints(&[1, 8192]), ints(&[1, 17])],
                vec![],
            )?;
            b.assign_op("y2", "tile.store", vec![v(r), ints(&[0, 0]), v(p[1])], vec![])?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        r#"
        CHECK: %r = pto.alloc_tile addr = %c0_i64 valid_row = %c1_index valid_col = %c17_index : !pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=8192
        CHECK: pto.addptr %arg0
        CHECK-NEXT: pto.make_tensor_view
        CHECK-NEXT: %win_peer_pview = pto.partition_view
        CHECK-SAME: sizes = [%c1_index, %c17_index] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<1x17xf32>
        CHECK-NEXT: pto.tload ins(%win_peer_pview : !pto.partition_tensor_view<1x17xf32>)
        CHECK: outs(%y_pview : !pto.partition_tensor_view<1x17xf32>)
        "#,
    );
}

#[test]
fn remote_store_of_rank3_target_pads_leading_dims() {
    init();
    let f = kernel(
        "r3",
        FunctionKind::Aiv,
        &[
            ("x", tensor(&[16, 32], DataType::FP16)),
            ("win", dist(&[4, 16, 64], DataType::FP16)),
            ("peer", Type::Scalar(DataType::INT32)),
        ],
        |b, p| {
            let t = b.assign_op("t", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[16, 32])], vec![])?;
            b.eval_op("pld.tile.remote_store", vec![v(t), v(p[1]), v(p[2]), ints(&[1, 0, 32])], vec![])?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        r#"
        CHECK: %win_view = pto.make_tensor_view %arg1, shape = [%c4_index, %c16_index, %c64_index], strides = [%c1024_index, %c64_index, %c1_index]
        CHECK: arith.divsi
        CHECK-SAME: %c2_i64 : i64
        CHECK: %win_peer_pview = pto.partition_view
        CHECK-SAME: offsets = [%c1_index, %c0_index, %c32_index], sizes = [%c1_index, %c16_index, %c32_index] : !pto.tensor_view<?x?x?xf16> -> !pto.partition_tensor_view<1x16x32xf16>
        "#,
    );
}

#[test]
fn missing_ctx_is_a_diagnostic_with_the_fix() {
    init();
    let mut f = kernel(
        "noctx",
        FunctionKind::Aiv,
        &[("sig", dist(&[2, 1], DataType::INT32)), ("peer", Type::Scalar(DataType::INT32))],
        |b, p| {
            b.eval_op(
                "pld.system.notify",
                vec![v(p[0]), v(p[1]), ints(&[0, 0]), Expr::int(1)],
                vec![("op", ai(1))],
            )?;
            Ok(())
        },
    );
    f.params.pop(); // drop the CommCtx parameter
    let p = program(vec![f]);
    let e = emit_for(&p, Target::A2A3).unwrap_err();
    let d = e.iter().next().unwrap();
    assert!(
        d.message.contains("pld.system.notify: distributed tensor 'sig' has no CommContext parameter"),
        "{}",
        d.message
    );
    assert!(d.notes.iter().any(|n| n.contains("MaterializeDistTensorCtx")));
}

/// An FP16 remote load with `allow_physical_tail_padding` reads its ragged tail's span
/// rounded up to 32 bytes (the seed's MTE-safe span): at a static offset that span may end
/// less than one 32-byte unit past the last element, and codegen and the PTO verifier accept
/// it (a multi-block host allreduce of 777 FP16 elements reads [768, 784) of its last tile).
/// (A span a full 32-byte unit past the end is the deducer's error, before codegen.)
#[test]
fn padded_fp16_tail_may_end_within_one_unit_past_the_extent() {
    init();
    let build = |valid: i64| {
        let f = kernel(
            "tail",
            FunctionKind::Aiv,
            &[("win", dist(&[1, 777], DataType::FP16)), ("peer", Type::Scalar(DataType::INT32))],
            |b, p| {
                let attrs = vec![("allow_physical_tail_padding", pld_ir::Attr::Bool(true))];
                b.assign_op(
                    "r",
                    "pld.tile.remote_load",
                    vec![v(p[0]), v(p[1]), ints(&[0, 768]), ints(&[1, 256]), ints(&[1, valid])],
                    attrs,
                )?;
                Ok(())
            },
        );
        program(vec![f])
    };
    let out = emit(&build(16));
    check(
        only(&out),
        r#"
        CHECK: %win_peer_pview = pto.partition_view
        CHECK-SAME: -> !pto.partition_tensor_view<1x16xf16>
        CHECK-NEXT: pto.tload ins(%win_peer_pview
        "#,
    );
}
