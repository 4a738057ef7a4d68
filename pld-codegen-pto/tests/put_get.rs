//! Codegen of `pld.tile.put` / `pld.tile.get`: VEC staging tiles, `buf(%ping, %pong)` only when
//! two stages are given, `atomicType` always on tput and never on tget, identical partition
//! types on both sides, `?` for runtime extents, barriers and the peer-region invalidate.

mod common;
use common::*;
use pld_ir::{Attr, Builder, DataType, Diagnostic, Expr, FunctionKind, Program, Type, ValueId};

fn stage(
    b: &mut Builder<'_>,
    name: &str,
    rows: i64,
    cols: i64,
    d: DataType,
    mem: &str,
) -> Result<ValueId, Diagnostic> {
    b.assign_op(
        name,
        "tile.create",
        vec![ints(&[rows, cols])],
        vec![("dtype", Attr::DType(d)), ("target_memory", Attr::Str(mem.into()))],
    )
}

fn put_kernel(pipelined: bool, atomic: i64) -> Program {
    init();
    let f = kernel(
        "kput",
        FunctionKind::Aiv,
        &[
            ("dst", dist(&[16, 64], DataType::FP16)),
            ("src", dist(&[16, 64], DataType::FP16)),
            ("peer", Type::Scalar(DataType::INT32)),
        ],
        |b, p| {
            let (dst, src, peer) = (p[0], p[1], p[2]);
            let mut args = vec![v(dst), v(peer), v(src)];
            if pipelined {
                let ping = stage(b, "tput_stage_ping", 4, 32, DataType::FP16, "Vec")?;
                let pong = stage(b, "tput_stage_pong", 4, 32, DataType::FP16, "Vec")?;
                args.extend([v(ping), v(pong)]);
            } else {
                let s = stage(b, "tput_stage", 16, 64, DataType::FP16, "Vec")?;
                args.push(v(s));
            }
            b.eval_op("pld.tile.put", args, vec![("atomic", ai(atomic))])?;
            b.eval_op("system.fence", vec![], vec![])?;
            Ok(())
        },
    );
    program(vec![f])
}

#[test]
fn single_stage_put() {
    let out = emit(&put_kernel(false, 0));
    let text = only(&out);
    check(
        text,
        r#"
        CHECK: func.func @kput(%arg0: !pto.ptr<f16>, %arg1: !pto.ptr<f16>, %arg2: i32, %arg3: !pto.ptr<i64>, %arg4: !pto.ptr<i64>)
        CHECK: %tput_stage = pto.alloc_tile addr = %c0_i64 valid_row = %c16_index valid_col = %c64_index : !pto.tile_buf<loc=vec, dtype=f16, rows=16, cols=64
        CHECK: pto.load_scalar %arg3[%c2_index]
        CHECK: arith.divsi
        CHECK-SAME: %c2_i64 : i64
        CHECK: = pto.addptr %arg0,
        CHECK-NEXT: pto.make_tensor_view
        CHECK-NEXT: %dst_peer_pview = pto.partition_view
        CHECK-SAME: sizes = [%c16_index, %c64_index] : !pto.tensor_view<?x?xf16> -> !pto.partition_tensor_view<16x64xf16>
        CHECK-NEXT: %src_local_pview = pto.partition_view %src_view, offsets = [%c0_index, %c0_index], sizes = [%c16_index, %c64_index]
        CHECK-NEXT: pto.barrier <PIPE_ALL>
        CHECK-NEXT: pto.comm.tput(%dst_peer_pview, %src_local_pview, buf(%tput_stage) : !pto.partition_tensor_view<16x64xf16>, !pto.partition_tensor_view<16x64xf16>, !pto.tile_buf<loc=vec, dtype=f16, rows=16, cols=64, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>) {atomicType = #pto<atomic_type atomic_none>}
        CHECK-NEXT: pto.barrier <PIPE_ALL>
        CHECK-NEXT: pto.cmo.cacheinvalid %dst_peer_pview single_cache_line : !pto.partition_tensor_view<16x64xf16>
        CHECK-NEXT: pto.fence.barrier_all #pto.fence_scope<gm>
        "#,
    );
    assert_eq!(count(text, "buf("), 1);
    assert!(!text.contains("buf(%tput_stage,"));
    assert_peer_sequences(text, 1);
}

#[test]
fn pipelined_put_uses_ping_pong() {
    let out = emit(&put_kernel(true, 1));
    let text = only(&out);
    check(
        text,
        r#"
        CHECK: %tput_stage_ping = pto.alloc_tile addr = %c0_i64 valid_row = %c4_index valid_col = %c32_index : !pto.tile_buf<loc=vec, dtype=f16, rows=4, cols=32
        CHECK-NEXT: %tput_stage_pong = pto.alloc_tile addr = %c256_i64 valid_row = %c4_index valid_col = %c32_index : !pto.tile_buf<loc=vec, dtype=f16, rows=4, cols=32
        CHECK: pto.comm.tput(%dst_peer_pview, %src_local_pview, buf(%tput_stage_ping, %tput_stage_pong) : !pto.partition_tensor_view<16x64xf16>, !pto.partition_tensor_view<16x64xf16>, !pto.tile_buf<loc=vec, dtype=f16, rows=4, cols=32, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>, !pto.tile_buf<loc=vec, dtype=f16, rows=4, cols=32, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>) {atomicType = #pto<atomic_type atomic_add>}
        "#,
    );
}

#[test]
fn dynamic_extent_get_prints_question_marks() {
    init();
    let f = kernel(
        "kget",
        FunctionKind::Aiv,
        &[
            ("dst", dist(&[16, 64], DataType::FP16)),
            ("src", dist(&[16, 64], DataType::FP16)),
            ("peer", Type::Scalar(DataType::INT32)),
            ("n", Type::Scalar(DataType::INT32)),
        ],
        |b, p| {
            let (dst, src, peer, n) = (p[0], p[1], p[2], p[3]);
            let s = stage(b, "tget_stage", 4, 32, DataType::FP16, "Vec")?;
            b.eval_op(
                "pld.tile.get",
                vec![
                    v(dst),
                    v(peer),
                    v(src),
                    v(s),
                    ints(&[0, 0]),
                    ints(&[0, 0]),
                    Expr::tuple(vec![v(n), Expr::int(64)]),
                ],
                vec![],
            )?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    let text = only(&out);
    check(
        text,
        r#"
        CHECK: func.func @kget(%arg0: !pto.ptr<f16>, %arg1: !pto.ptr<f16>, %arg2: i32, %arg3: i32, %arg4: !pto.ptr<i64>, %arg5: !pto.ptr<i64>)
        CHECK: %tget_stage = pto.alloc_tile
        CHECK: %n_idx = arith.index_cast %arg3 : i32 to index
        CHECK-NEXT: %dst_local_pview = pto.partition_view %dst_view, offsets = [%c0_index, %c0_index], sizes = [%n_idx, %c64_index] : !pto.tensor_view<?x?xf16> -> !pto.partition_tensor_view<?x64xf16>
        CHECK: pto.load_scalar %arg5[%c2_index]
        CHECK: = pto.addptr %arg1,
        CHECK-NEXT: pto.make_tensor_view
        CHECK-NEXT: %src_peer_pview = pto.partition_view
        CHECK-SAME: -> !pto.partition_tensor_view<?x64xf16>
        CHECK-NEXT: pto.barrier <PIPE_ALL>
        CHECK-NEXT: pto.comm.tget(%dst_local_pview, %src_peer_pview, buf(%tget_stage) : !pto.partition_tensor_view<?x64xf16>, !pto.partition_tensor_view<?x64xf16>, !pto.tile_buf<loc=vec, dtype=f16, rows=4, cols=32, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
        CHECK-NEXT: pto.barrier <PIPE_ALL>
        "#,
    );
    let tget = text.lines().find(|l| l.contains("pto.comm.tget(")).unwrap();
    assert!(tget.ends_with(')'), "tget carries no attribute dictionary: {tget}");
    assert_eq!(count(text, "{atomicType"), 0);
    assert_peer_sequences(text, 1);
}

#[test]
fn subregion_put_uses_region_offsets_on_both_sides() {
    init();
    let f = kernel(
        "kreg",
        FunctionKind::Aiv,
        &[
            ("dst", dist(&[4, 64], DataType::FP16)),
            ("src", tensor(&[4, 64], DataType::FP16)),
            ("peer", Type::Scalar(DataType::INT32)),
        ],
        |b, p| {
            let s = stage(b, "tput_stage", 1, 64, DataType::FP16, "Vec")?;
            b.eval_op(
                "pld.tile.put",
                vec![v(p[0]), v(p[2]), v(p[1]), v(s), ints(&[3, 0]), ints(&[1, 0]), ints(&[1, 64])],
                vec![("atomic", ai(0))],
            )?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        r#"
        CHECK: %dst_peer_pview = pto.partition_view
        CHECK-SAME: offsets = [%c3_index, %c0_index], sizes = [%c1_index, %c64_index] : !pto.tensor_view<?x?xf16> -> !pto.partition_tensor_view<1x64xf16>
        CHECK-NEXT: %src_local_pview = pto.partition_view %src_view, offsets = [%c1_index, %c0_index], sizes = [%c1_index, %c64_index] : !pto.tensor_view<?x?xf16> -> !pto.partition_tensor_view<1x64xf16>
        "#,
    );
}
