//! LowerCompositeOps: the mesh and ring allreduce schedules (chunk widths, ragged tails,
//! barrier generations, epilogues) and the other InCore collectives on the shared
//! self-clearing credit barrier.

mod common;
use common::*;
use pld_ir::{Attr, DataType, Direction, Expr, FunctionBuilder, FunctionKind, Program};

pub fn allreduce_kernel(
    shape: &[i64],
    dt: DataType,
    attrs: Vec<(&'static str, Attr)>,
    sig: &[i64],
) -> Program {
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let data = fb.param("data", dist(shape, dt), Direction::InOut);
    let s = fb.param("sig", dist(sig, DataType::INT32), Direction::InOut);
    fb.body(|b| {
        let r = b.assign_op("out", "pld.tensor.allreduce", vec![Expr::var(data), Expr::var(s)], attrs)?;
        let _ = r;
        Ok(())
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    p
}

pub fn lowered(mut p: Program) -> String {
    run(&mut p, &["ConvertTensorToTileOps", "LowerCompositeOps"])
        .unwrap_or_else(|e| panic!("{}", messages(&e)));
    pld_ir::print_program(&p)
}

/// (N, FP32 chunk, FP32 epilogue total, FP16 chunk, FP16 epilogue total).
const MESH_CASES: &[(i64, i64, i64, i64, i64)] = &[
    (1, 8, 2, 16, 2),
    (17, 24, 2, 32, 2),
    (256, 256, 2, 256, 2),
    (4097, 4096, 3, 4112, 2),
    (1000003, 4096, 246, 8192, 124),
];

fn check_mesh(t: &str, n: i64, chunk: i64, total: i64, fp16: bool) {
    check_in_order(
        t,
        &[
            &format!("target_2d: pld.DistributedTensor[[1, {n}]"),
            &format!("pl.tensor.view(data, [1, {n}])"),
            // Ready barrier, generation 1.
            "pld.system.notify(sig, peer, [my_rank, 0], 1, op=pld.NotifyOp.AtomicAdd)",
            "pld.system.wait(sig, [src, 0], 1, cmp=pld.WaitCmp.Ge)",
            // The chunk loop over one logical [1, N] stream.
            &format!("for col in pl.range(0, {n}, {chunk}):"),
            &format!("valid_cols: pl.Scalar[pl.INDEX] = min({chunk}, {n} - col)"),
            &format!("pl.tile.load(target_2d, [0, col], [1, {chunk}], [1, valid_cols]"),
            "pl.tile.fillpad_inplace(acc_loaded, 0.0)",
            "if peer_1 != my_rank:",
        ],
    );
    if fp16 {
        check_in_order(
            t,
            &[
                &format!("pld.tile.remote_load(target_2d, peer_1, [0, col], [1, {chunk}], [1, min((valid_cols + 15) // 16 * 16, {chunk})], allow_physical_tail_padding=True)"),
                "pl.tile.set_validshape(recv_padded, 1, valid_cols)",
            ],
        );
    } else {
        assert!(
            t.contains(&format!(
                "pld.tile.remote_load(target_2d, peer_1, [0, col], [1, {chunk}], [1, valid_cols])"
            )),
            "{t}"
        );
        assert!(!t.contains("allow_physical_tail_padding"), "{t}");
    }
    check_in_order(
        t,
        &[
            "pl.tile.add(acc_1, recv_full)",
            // Read-done barrier of this chunk before store-back: generation 2 + chunk index.
            &format!("pld.system.wait(sig, [src_1, 0], 2 + col // {chunk}, cmp=pld.WaitCmp.Ge)"),
            &format!("store_value: pl.Tile[[1, {chunk}]"),
            "pl.tile.set_validshape(acc_2, 1, valid_cols)",
            "pl.tile.store(store_value, [0, col], target_2d)",
            // Self-clearing epilogue: subtract 1 + ceil(N / chunk).
            &format!("pld.system.notify(sig, my_rank, [src_2, 0], -{total}, op=pld.NotifyOp.AtomicAdd)"),
            "out: pld.DistributedTensor",
        ],
    );
    assert_eq!(count(t, "pld.system.wait("), 2, "one ready and one per-chunk barrier:\n{t}");
}

#[test]
fn mesh_allreduce_fp32_chunks_tails_barriers_epilogue() {
    init();
    for &(n, chunk, total, _, _) in MESH_CASES {
        let t = lowered(allreduce_kernel(&[n], DataType::FP32, vec![], &[4, 1]));
        check_mesh(&t, n, chunk, total, false);
    }
}

#[test]
fn mesh_allreduce_fp16_chunks_tails_barriers_epilogue() {
    init();
    for &(n, _, _, chunk, total) in MESH_CASES {
        let t = lowered(allreduce_kernel(&[n], DataType::FP16, vec![], &[4, 1]));
        check_mesh(&t, n, chunk, total, true);
    }
}

#[test]
fn mesh_chunks_never_exceed_16_kib() {
    for dt in [DataType::FP32, DataType::FP16] {
        for &(n, ..) in MESH_CASES {
            let chunk = pld_ops::lowering::mesh_chunk_cols(dt, Some(n));
            assert!(chunk * dt.bytes() as i64 <= 16384);
            assert_eq!(chunk * dt.bytes() as i64 % 32, 0, "32-byte aligned");
            assert!(chunk >= n.min(16384 / dt.bytes() as i64));
        }
    }
}

#[test]
fn mesh_flattens_nd_targets_and_every_reduce_op_lowers() {
    init();
    let t = lowered(allreduce_kernel(&[3, 5, 7], DataType::FP32, vec![], &[4, 1]));
    assert!(t.contains("pl.tensor.view(data, [1, 105])"), "{t}");
    for (op, tile) in [(0, "pl.tile.add"), (1, "pl.tile.maximum"), (2, "pl.tile.minimum"), (3, "pl.tile.mul")]
    {
        let t = lowered(allreduce_kernel(&[64], DataType::FP32, vec![("op", Attr::Int(op))], &[4, 1]));
        assert!(t.contains(&format!("{tile}(acc_1, recv_full)")), "{t}");
    }
}

#[test]
fn mesh_with_dynamic_length_keeps_the_full_chunk_and_runtime_epilogue() {
    init();
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let data =
        fb.param("data", pld_ir::Type::dist_tensor(vec![Expr::sym("N")], DataType::FP32), Direction::InOut);
    let s = fb.param("sig", dist(&[4, 1], DataType::INT32), Direction::InOut);
    fb.body(|b| b.eval_op("pld.tensor.allreduce", vec![Expr::var(data), Expr::var(s)], vec![])).unwrap();
    let mut p = Program::new("p");
    p.dyn_syms.push("N".into());
    p.add_function(fb.finish());
    let t = lowered(p);
    check_in_order(
        &t,
        &["for col in pl.range(0, N, 4096):", "min(4096, N - col)", "-(1 + (N + 4095) // 4096)"],
    );
}

/// Builds `allreduce(data, sig)` and returns the first error (deducer or lowering).
fn allreduce_error(
    shape: &[i64],
    attrs: Vec<(&'static str, Attr)>,
    sig: &[i64],
    with_signal: bool,
) -> String {
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let data = fb.param("data", dist(shape, DataType::FP32), Direction::InOut);
    let s = fb.param("sig", dist(sig, DataType::INT32), Direction::InOut);
    let args = if with_signal { vec![Expr::var(data), Expr::var(s)] } else { vec![Expr::var(data)] };
    if let Err(d) = fb.body(|b| b.eval_op("pld.tensor.allreduce", args, attrs)) {
        return d.message;
    }
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    match run(&mut p, &["LowerCompositeOps"]) {
        Err(e) => messages(&e),
        Ok(()) => panic!("accepted:\n{}", pld_ir::print_program(&p)),
    }
}

#[test]
fn mesh_rejects_ring_shaped_signal_missing_signal_and_multicore() {
    init();
    let m = allreduce_error(&[64], vec![], &[6, 4], true);
    assert!(m.contains("mesh signal must") && m.contains("[NR, 1]"), "{m}");
    let m = allreduce_error(&[64], vec![("core_num", Attr::Int(2))], &[4, 1], true);
    assert!(m.contains("core_num"), "{m}");
    let m = allreduce_error(&[64], vec![], &[4, 1], false);
    assert!(m.contains("signal"), "{m}");
}

#[test]
fn mesh_allreduce_inside_a_loop_lowers_in_place() {
    init();
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let data = fb.param("data", dist(&[64], DataType::FP32), Direction::InOut);
    let s = fb.param("sig", dist(&[4, 1], DataType::INT32), Direction::InOut);
    fb.body(|b| {
        b.for_range("it", (Expr::int(0), Expr::int(3), Expr::int(1)), vec![], |b, _, _| {
            b.eval_op("pld.tensor.allreduce", vec![Expr::var(data), Expr::var(s)], vec![])?;
            b.eval_op("pld.tensor.allreduce", vec![Expr::var(data), Expr::var(s)], vec![])?;
            Ok(vec![])
        })?;
        Ok(())
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    let t = lowered(p);
    // Back-to-back calls each restart at generation 1 and clear their credits.
    assert_eq!(count(&t, "[src, 0], 1, cmp=pld.WaitCmp.Ge)"), 1, "{t}");
    assert_eq!(count(&t, ", 1, cmp=pld.WaitCmp.Ge)"), 2, "{t}");
    assert_eq!(count(&t, ", -2, op=pld.NotifyOp.AtomicAdd)"), 2, "{t}");
}

#[test]
fn mesh_partial_valid_target_reduces_one_rectangle() {
    init();
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let ty = pld_ir::Type::DistTensor(pld_ir::DistTensorType {
        tensor: pld_ir::TensorType::new(vec![Expr::int(4), Expr::int(16)], DataType::FP32).with_view(
            pld_ir::TensorView { valid_shape: vec![Expr::int(3), Expr::int(16)], ..Default::default() },
        ),
        window: None,
    });
    let data = fb.param("data", ty, Direction::InOut);
    let s = fb.param("sig", dist(&[4, 1], DataType::INT32), Direction::InOut);
    fb.body(|b| b.eval_op("pld.tensor.allreduce", vec![Expr::var(data), Expr::var(s)], vec![])).unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    let t = lowered(p);
    check_in_order(
        &t,
        &[
            "pl.tensor.view(data, [4, 16], [3, 16])",
            "[src, 0], 1, cmp=",
            "pl.tile.load(target_2d, [0, 0], [3, 16], [3, 16]",
            "pld.tile.remote_load(target_2d, peer_1, [0, 0], [3, 16], [3, 16])",
            "[src_1, 0], 2, cmp=",
            "pl.tile.store(",
            ", -2, op=pld.NotifyOp.AtomicAdd)",
        ],
    );
}

fn check_ring(t: &str, size: i64, nr: i64, chunk: i64, max_seg: i64, fp16: bool) {
    let rows = 2 * (nr - 1);
    let boundary = if fp16 {
        format!(
            "seg_start: pl.Scalar[pl.INT32] = min({size}, (seg * {size} + {}) // {} * 16)",
            nr * 16 - 1,
            nr * 16
        )
    } else {
        format!("seg_start: pl.Scalar[pl.INT32] = seg * {size} // {nr}")
    };
    check_in_order(
        t,
        &[
            &format!("pl.tensor.view(data, [1, {size}], [1, {size}])"),
            &format!("left: pl.Scalar[pl.INT32] = (my_rank - 1 + {nr}) % {nr}"),
            // Reduce-scatter rounds on rows 0..NR-1.
            &format!("for step in pl.range(0, {}):", nr - 1),
            &format!("(my_rank - (step + 2) + {}) % {nr}", 2 * nr),
            &boundary,
            &format!("for rs_col in pl.range(0, {max_seg}, {chunk}):"),
            "pld.system.notify(sig, peer, [step, my_rank], 1, op=pld.NotifyOp.AtomicAdd)",
            &format!("pld.system.wait(sig, [step, src], 2 * (rs_col // {chunk}) + 1, cmp=pld.WaitCmp.Ge)"),
            "if active:",
            "pld.tile.remote_load(target_2d, left, [0, col]",
            "pl.tile.add(local, recv_full)",
            &format!("pld.system.wait(sig, [step, src_1], 2 * (rs_col // {chunk}) + 2, cmp=pld.WaitCmp.Ge)"),
            "pl.tile.store(store_value, [0, col], target_2d)",
            // Allgather rounds on rows NR-1..2(NR-1).
            &format!("(my_rank - (step_1 + 1) + {nr}) % {nr}"),
            &format!("[step_1 + {}, my_rank], 1, op=pld.NotifyOp.AtomicAdd", nr - 1),
            // Every row is cleared.
            &format!("for row in pl.range(0, {rows}):"),
            "pld.system.notify(sig, my_rank, [row, src_4], -2, op=pld.NotifyOp.AtomicAdd)",
        ],
    );
    assert_eq!(t.contains("allow_physical_tail_padding=True"), fp16, "{t}");
}

#[test]
fn ring_allreduce_fp32_and_fp16_schedules() {
    init();
    // FP32 SIZE=17 NR=4: max segment ceil(17/4)=5, chunk 8 (32-byte aligned).
    let t =
        lowered(allreduce_kernel(&[17], DataType::FP32, vec![("mode", Attr::Str("ring".into()))], &[6, 4]));
    check_ring(&t, 17, 4, 8, 5, false);
    // FP16: boundaries rounded up to 16 elements; max segment min(5 + 15, 17) = 17, chunk 32.
    let t =
        lowered(allreduce_kernel(&[17], DataType::FP16, vec![("mode", Attr::Str("ring".into()))], &[6, 4]));
    check_ring(&t, 17, 4, 32, 17, true);
    // A large FP32 input keeps the 16 KiB chunk: SIZE 1000003 over 8 ranks.
    let t = lowered(allreduce_kernel(
        &[1000003],
        DataType::FP32,
        vec![("mode", Attr::Str("ring".into()))],
        &[14, 8],
    ));
    assert!(t.contains("for rs_col in pl.range(0, 125001, 4096):"), "{t}");
    assert!(t.contains("for ag_col in pl.range(0, 125001, 4096):"), "{t}");
    assert!(t.contains(", -62, op=pld.NotifyOp.AtomicAdd)"), "2 * ceil(125001 / 4096) = 62:\n{t}");
}

#[test]
fn ring_boundaries_are_balanced_and_aligned() {
    use pld_ops::lowering::ring_boundary;
    for (size, nr) in [(17i64, 4i64), (256, 3), (4097, 8), (1, 2), (1000003, 7)] {
        let b = |dt: DataType, i: i64| {
            ring_boundary(dt, Expr::int(i), Expr::int(size), Expr::int(nr)).as_int().unwrap()
        };
        for i in 0..nr {
            let (a, c) = (b(DataType::FP32, i), b(DataType::FP32, i + 1));
            assert!(c - a == size / nr || c - a == size / nr + 1, "balanced FP32 segment");
            let (a16, c16) = (b(DataType::FP16, i), b(DataType::FP16, i + 1));
            assert!(a16 % 16 == 0 || a16 == size, "FP16 starts are 32-byte aligned");
            assert!(a16 <= c16 && c16 <= size);
        }
        assert_eq!(b(DataType::FP32, nr), size);
        assert_eq!(b(DataType::FP16, nr), size);
    }
}

#[test]
fn ring_rejects_bad_signal_and_unknown_mode() {
    init();
    let m = allreduce_error(&[64], vec![("mode", Attr::Str("ring".into()))], &[5, 4], true);
    assert!(m.contains("2*(NR-1)"), "{m}");
    let m = allreduce_error(&[64], vec![("mode", Attr::Str("tree".into()))], &[4, 1], true);
    assert!(m.contains("mode"), "{m}");
}

fn coll_kernel(
    body: impl FnOnce(&mut pld_ir::Builder<'_>, &[pld_ir::ValueId]) -> Result<(), pld_ir::Diagnostic>,
    params: &[(&str, pld_ir::Type)],
) -> Program {
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let vs: Vec<_> = params.iter().map(|(n, t)| fb.param(*n, t.clone(), Direction::In)).collect();
    fb.body(|b| body(b, &vs)).unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    p
}

#[test]
fn barrier_is_one_generation_and_clears_itself() {
    init();
    let p = coll_kernel(
        |b, v| b.eval_op("pld.tensor.barrier", vec![Expr::var(v[0])], vec![]),
        &[("sig", dist(&[8, 1], DataType::INT32))],
    );
    let t = lowered(p);
    check_in_order(
        &t,
        &[
            "pld.system.get_comm_ctx(sig)",
            "pld.system.notify(sig, peer, [my_rank, 0], 1, op=pld.NotifyOp.AtomicAdd)",
            "pld.system.wait(sig, [src, 0], 1, cmp=pld.WaitCmp.Ge)",
            "pld.system.notify(sig, my_rank, [src_1, 0], -1, op=pld.NotifyOp.AtomicAdd)",
        ],
    );
    // The signal param is read and written.
    assert!(t.contains("sig: pl.InOut["), "{t}");
}

#[test]
fn broadcast_pulls_from_root_through_a_stage() {
    init();
    let p = coll_kernel(
        |b, v| {
            b.eval_op(
                "pld.tensor.broadcast",
                vec![Expr::var(v[0]), Expr::var(v[1])],
                vec![("root", Attr::Int(2))],
            )
        },
        &[("data", dist(&[4, 32], DataType::FP32)), ("sig", dist(&[8, 1], DataType::INT32))],
    );
    let t = lowered(p);
    check_in_order(
        &t,
        &[
            "[src, 0], 1, cmp=",
            "bcast_stage: pl.Tile[[4, 32], pl.FP32, pl.MemorySpace.Vec] = pl.tile.create([4, 32]",
            "pld.tile.get(data, 2, data, bcast_stage)",
            ", -1, op=pld.NotifyOp.AtomicAdd)",
        ],
    );
}

#[test]
fn reduce_scatter_reduces_my_row_in_ub_chunks_then_passes_the_read_done_barrier() {
    // D-ops-12: a 5000-element FP32 row is two UB chunks (4096 + a ragged 904), each loaded,
    // summed with every peer's and stored before the next; the read-done barrier comes after
    // the last store. The reference holds the whole row in one tile (20 KB here, and beyond UB
    // from 48K FP32 elements) and stores it after that barrier.
    init();
    let p = coll_kernel(
        |b, v| {
            b.eval_op(
                "pld.tensor.reduce_scatter",
                vec![Expr::var(v[0]), Expr::var(v[1])],
                vec![("op", Attr::Int(0))],
            )
        },
        &[("data", dist(&[4, 5000], DataType::FP32)), ("sig", dist(&[4, 1], DataType::INT32))],
    );
    let t = lowered(p);
    check_in_order(
        &t,
        &[
            "[src, 0], 1, cmp=",
            "for col in pl.range(0, 5000, 4096):",
            "min(4096, 5000 - col)",
            "pl.tile.load(data, [my_rank, col], [1, 4096], [1, valid_cols]",
            "pld.tile.remote_load(data, peer_1, [my_rank, col], [1, 4096], [1, valid_cols])",
            "pl.tile.add(acc_1, recv_full)",
            "pl.tile.set_validshape(acc_2, 1, valid_cols)",
            "pl.tile.store(store_value, [my_rank, col], data)",
            "[src_1, 0], 2, cmp=",
            ", -2, op=pld.NotifyOp.AtomicAdd)",
        ],
    );
    assert!(!t.contains("[1, 5000]"), "no tile spans the whole row:\n{t}");
}

#[test]
fn allgather_and_all_to_all_push_rows_then_barrier() {
    init();
    let p = coll_kernel(
        |b, v| {
            b.eval_op("pld.tensor.allgather", vec![Expr::var(v[0]), Expr::var(v[1]), Expr::var(v[2])], vec![])
        },
        &[
            ("local", tensor(&[1, 64], DataType::FP32)),
            ("gathered", dist(&[4, 64], DataType::FP32)),
            ("sig", dist(&[4, 1], DataType::INT32)),
        ],
    );
    let t = lowered(p);
    check_in_order(
        &t,
        &[
            "gather_stage: pl.Tile[[1, 64]",
            "for peer in pl.range(0, nranks):",
            "pld.tile.put(gathered, peer, local, gather_stage, [my_rank, 0], [0, 0], [1, 64], atomic=pld.AtomicType.None_)",
            "[src, 0], 1, cmp=",
            ", -1, op=pld.NotifyOp.AtomicAdd)",
        ],
    );
    let p = coll_kernel(
        |b, v| {
            b.eval_op(
                "pld.tensor.all_to_all",
                vec![Expr::var(v[0]), Expr::var(v[1]), Expr::var(v[2])],
                vec![],
            )
        },
        &[
            ("input", tensor(&[4, 64], DataType::FP32)),
            ("recv", dist(&[4, 64], DataType::FP32)),
            ("sig", dist(&[4, 1], DataType::INT32)),
        ],
    );
    let t = lowered(p);
    check_in_order(
        &t,
        &[
            "a2a_stage: pl.Tile[[1, 64]",
            "pld.tile.put(recv, dest, input, a2a_stage, [my_rank, 0], [dest, 0], [1, 64], atomic=pld.AtomicType.None_)",
            "[src, 0], 1, cmp=",
            ", -1, op=pld.NotifyOp.AtomicAdd)",
        ],
    );
}

#[test]
fn collective_stages_never_outgrow_one_ub_chunk() {
    // D-ops-13: a put/get inside a collective stages through at most 16 KiB, and the transfer
    // keeps its full extent (pto-isa slides it through the smaller stage).
    init();
    let p = coll_kernel(
        |b, v| {
            b.eval_op("pld.tensor.allgather", vec![Expr::var(v[0]), Expr::var(v[1]), Expr::var(v[2])], vec![])
        },
        &[
            ("local", tensor(&[1, 10000], DataType::FP32)),
            ("gathered", dist(&[4, 10000], DataType::FP32)),
            ("sig", dist(&[4, 1], DataType::INT32)),
        ],
    );
    check_in_order(
        &lowered(p),
        &[
            "gather_stage: pl.Tile[[1, 4096]",
            "pld.tile.put(gathered, peer, local, gather_stage, [my_rank, 0], [0, 0], [1, 10000]",
        ],
    );
    // Broadcast: whole rows while they fit (3 rows of 1000 FP16 = 6 KB), else column pieces.
    // A 2000-byte row is padded to whole 32-byte blocks (1008 columns) and keeps 1000 valid.
    for (shape, stage) in [
        ([3i64, 1000], "[[3, 1008], pl.FP16, pl.MemorySpace.Vec, pl.TileView(valid_shape=[3, 1000])]"),
        ([3, 9000], "[[1, 8192]"),
    ] {
        let p = coll_kernel(
            |b, v| {
                b.eval_op(
                    "pld.tensor.broadcast",
                    vec![Expr::var(v[0]), Expr::var(v[1])],
                    vec![("root", Attr::Int(1))],
                )
            },
            &[("data", dist(&shape, DataType::FP16)), ("sig", dist(&[4, 1], DataType::INT32))],
        );
        check_in_order(
            &lowered(p),
            &[&format!("bcast_stage: pl.Tile{stage}"), "pld.tile.get(data, 1, data, bcast_stage)"],
        );
    }
}

#[test]
fn all_to_all_v_clamps_two_sided_publishes_with_set_and_sends_exactly_the_rows() {
    init();
    let p = coll_kernel(
        |b, v| {
            b.eval_op(
                "pld.tensor.all_to_all_v",
                vec![Expr::var(v[0]), Expr::var(v[1]), Expr::var(v[2]), Expr::var(v[3]), Expr::var(v[4])],
                vec![],
            )
        },
        &[
            ("input", tensor(&[32, 16], DataType::FP32)),
            ("recv", dist(&[32, 16], DataType::FP32)),
            ("sig", dist(&[4, 1], DataType::INT32)),
            ("send_counts", tensor(&[4], DataType::INT32)),
            ("recv_counts", dist(&[4, 1], DataType::INT32)),
        ],
    );
    let t = lowered(p);
    check_in_order(
        &t,
        &[
            "a2av_stage: pl.Tile[[1, 16]",
            "for dest in pl.range(0, nranks):",
            "count: pl.Scalar[pl.INT32] = pl.tensor.read(send_counts, [dest])",
            "rows: pl.Scalar[pl.INT32] = min(max(count, 0), 8)",
            "pld.system.notify(recv_counts, dest, [my_rank, 0], rows, op=pld.NotifyOp.Set)",
            "pld.tile.put(recv, dest, input, a2av_stage, [my_rank * 8, 0], [dest * 8, 0], [rows, 16], atomic=pld.AtomicType.None_)",
            "[src, 0], 1, cmp=",
            ", -1, op=pld.NotifyOp.AtomicAdd)",
        ],
    );
    // No loop bounded by MAX_RECV: the transfer is one put of `rows` rows.
    assert!(!t.contains("pl.range(0, 8"), "{t}");
    // send_counts stays In; recv_counts is written.
    assert!(
        t.contains("send_counts: pl.Tensor[") && t.contains("recv_counts: pl.Out[")
            || t.contains("recv_counts: pl.InOut["),
        "{t}"
    );
}

#[test]
fn chip_collective_becomes_one_aiv_task_expanded_in_place() {
    init();
    let mut fb = FunctionBuilder::new("orch", FunctionKind::ChipOrch);
    let data = fb.param("data", dist(&[64], DataType::FP32), Direction::InOut);
    let s = fb.param("sig", dist(&[4, 1], DataType::INT32), Direction::InOut);
    fb.body(|b| {
        let r = b.assign_op("out", "pld.tensor.allreduce", vec![Expr::var(data), Expr::var(s)], vec![])?;
        b.eval_op("pld.tensor.barrier", vec![Expr::var(s)], vec![])?;
        let _ = r;
        Ok(())
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    run(&mut p, &["LowerL2TensorCollectives"]).unwrap();
    let orch = func_text(&p, "orch");
    check_in_order(
        &orch,
        &[
            "self.orch_allreduce_l2_",
            "(data, sig)",
            "out: pld.DistributedTensor[[64], pl.FP32] = data",
            "self.orch_barrier_l2_",
        ],
    );
    assert!(!orch.contains("pld.tensor."), "{orch}");
    run(&mut p, &["LowerCompositeOps"]).unwrap();
    let kernels: Vec<_> = p.functions.iter().filter(|f| f.kind == FunctionKind::Aiv).collect();
    assert_eq!(kernels.len(), 2);
    let all = pld_ir::print_program(&p);
    // One AIV task each: the mesh schedule and the barrier, expanded in the kernels.
    assert!(all.contains("for col in pl.range(0, 64, 64):"), "{all}");
    assert_eq!(count(&all, "pld.tensor.allreduce("), 0, "{all}");
}

#[test]
fn two_chip_collectives_of_one_kind_get_distinct_kernels() {
    init();
    let mut fb = FunctionBuilder::new("orch", FunctionKind::ChipOrch);
    let s = fb.param("sig", dist(&[4, 1], DataType::INT32), Direction::InOut);
    fb.body(|b| {
        b.eval_op("pld.tensor.barrier", vec![Expr::var(s)], vec![])?;
        b.eval_op("pld.tensor.barrier", vec![Expr::var(s)], vec![])
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    run(&mut p, &["LowerL2TensorCollectives", "LowerCompositeOps"]).unwrap();
    assert_eq!(p.functions.len(), 3);
    let orch = func_text(&p, "orch");
    assert!(
        orch.contains("self.orch_barrier_l2_1(sig)") && orch.contains("self.orch_barrier_l2_1_1(sig)"),
        "{orch}"
    );
}

/// (for loops, ifs) in function `k`.
fn control_flow(p: &Program) -> (usize, usize) {
    let f = p.function("k").unwrap();
    let (mut fors, mut ifs) = (0, 0);
    f.body.walk(&mut |s| match s.kind {
        pld_ir::StmtKind::For { .. } => fors += 1,
        pld_ir::StmtKind::If { .. } => ifs += 1,
        _ => {}
    });
    (fors, ifs)
}

fn lowered_program(mut p: Program) -> Program {
    run(&mut p, &["ConvertTensorToTileOps", "LowerCompositeOps"])
        .unwrap_or_else(|e| panic!("{}", messages(&e)));
    p
}

#[test]
fn control_flow_shapes_match_the_reference() {
    init();
    // Mesh: notify-all, wait-all, chunk loop, peer loop, chunk notify, chunk wait, epilogue.
    let p = lowered_program(allreduce_kernel(&[16], DataType::FP32, vec![], &[2, 1]));
    assert_eq!(control_flow(&p), (7, 6));
    // Ring, P = 2: two phases of (step, sub-chunk, 2 barriers, 2 ifs) plus the row epilogue.
    let p = lowered_program(allreduce_kernel(
        &[16],
        DataType::FP32,
        vec![("mode", Attr::Str("ring".into()))],
        &[2, 2],
    ));
    assert_eq!(control_flow(&p), (14, 13));
    let t = pld_ir::print_program(&p);
    assert!(!t.contains("tile.create"), "{t}");
    // Barrier: 3/3; reduce_scatter: 7/6 (the reference's 6/6 plus our UB chunk loop, D-ops-12);
    // allgather: 4/3.
    let p = lowered_program(coll_kernel(
        |b, v| b.eval_op("pld.tensor.barrier", vec![Expr::var(v[0])], vec![]),
        &[("sig", dist(&[2, 1], DataType::INT32))],
    ));
    assert_eq!(control_flow(&p), (3, 3));
    let p = lowered_program(coll_kernel(
        |b, v| {
            b.eval_op(
                "pld.tensor.reduce_scatter",
                vec![Expr::var(v[0]), Expr::var(v[1])],
                vec![("op", Attr::Int(0))],
            )
        },
        &[("data", dist(&[2, 16], DataType::FP32)), ("sig", dist(&[2, 1], DataType::INT32))],
    ));
    assert_eq!(control_flow(&p), (7, 6));
    let p = lowered_program(coll_kernel(
        |b, v| {
            b.eval_op("pld.tensor.allgather", vec![Expr::var(v[0]), Expr::var(v[1]), Expr::var(v[2])], vec![])
        },
        &[
            ("local", tensor(&[1, 16], DataType::FP32)),
            ("gathered", dist(&[2, 16], DataType::FP32)),
            ("sig", dist(&[2, 1], DataType::INT32)),
        ],
    ));
    assert_eq!(control_flow(&p), (4, 3));
}

#[test]
fn barrier_protocol_never_uses_set_and_ends_with_a_negative_add() {
    init();
    for p in [
        allreduce_kernel(&[100], DataType::FP32, vec![], &[4, 1]),
        allreduce_kernel(&[100], DataType::FP16, vec![("mode", Attr::Str("ring".into()))], &[6, 4]),
    ] {
        let t = lowered(p);
        assert!(!t.contains("NotifyOp.Set"), "{t}");
        assert!(!t.contains("WaitCmp.Eq"), "{t}");
        let last = t.rfind("pld.system.notify(").unwrap();
        let tail = &t[last..];
        assert!(tail.contains(", -") && tail.contains("op=pld.NotifyOp.AtomicAdd"), "{tail}");
    }
}

#[test]
fn lowering_is_idempotent() {
    init();
    let mut p = lowered_program(allreduce_kernel(&[100], DataType::FP32, vec![], &[4, 1]));
    let once = pld_ir::print_program(&p);
    run(&mut p, &["LowerCompositeOps"]).unwrap();
    assert_eq!(once, pld_ir::print_program(&p));
}

#[test]
fn a_ring_signal_cannot_be_reused_by_a_mesh_collective() {
    init();
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let data = fb.param("data", dist(&[64], DataType::FP32), Direction::InOut);
    let s = fb.param("sig", dist(&[2, 2], DataType::INT32), Direction::InOut);
    let built = fb.body(|b| {
        b.eval_op(
            "pld.tensor.allreduce",
            vec![Expr::var(data), Expr::var(s)],
            vec![("mode", Attr::Str("ring".into()))],
        )?;
        b.eval_op("pld.tensor.barrier", vec![Expr::var(s)], vec![])
    });
    let msg = match built {
        Err(d) => d.message,
        Ok(()) => {
            let mut p = Program::new("p");
            p.add_function(fb.finish());
            messages(&run(&mut p, &["LowerCompositeOps"]).unwrap_err())
        }
    };
    assert!(msg.contains("[NR, 1]"), "{msg}");
}

#[test]
fn all_to_all_v_with_a_runtime_rank_count_derives_max_recv_at_run_time() {
    init();
    let nr = || Expr::sym("NR");
    let dt = |shape: Vec<Expr>, d| pld_ir::Type::dist_tensor(shape, d);
    let mut p = coll_kernel(
        |b, v| {
            b.eval_op(
                "pld.tensor.all_to_all_v",
                vec![Expr::var(v[0]), Expr::var(v[1]), Expr::var(v[2]), Expr::var(v[3]), Expr::var(v[4])],
                vec![],
            )
        },
        &[
            (
                "input",
                pld_ir::Type::tensor(
                    vec![pld_ir::Expr::binary(pld_ir::BinOp::Mul, nr(), Expr::int(2)), Expr::int(16)],
                    DataType::FP32,
                ),
            ),
            (
                "recv",
                dt(
                    vec![pld_ir::Expr::binary(pld_ir::BinOp::Mul, nr(), Expr::int(2)), Expr::int(16)],
                    DataType::FP32,
                ),
            ),
            ("sig", dt(vec![nr(), Expr::int(1)], DataType::INT32)),
            ("send_counts", pld_ir::Type::tensor(vec![nr()], DataType::INT32)),
            ("recv_counts", dt(vec![nr(), Expr::int(1)], DataType::INT32)),
        ],
    );
    p.dyn_syms.push("NR".into());
    let t = lowered(p);
    check_in_order(
        &t,
        &[
            "max_recv: pl.Scalar[pl.INDEX] = NR * 2 // nranks",
            "rows: pl.Scalar[pl.INT32] = min(max(count, 0), max_recv)",
            "[my_rank * max_recv, 0], [dest * max_recv, 0], [rows, 16]",
        ],
    );
}
