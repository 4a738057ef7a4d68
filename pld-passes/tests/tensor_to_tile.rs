//! ConvertTensorToTileOps: registry-driven tensor→tile lowerings and the In→Out/InOut
//! direction upgrade of written window parameters.

mod common;
use common::*;
use pld_ir::{Attr, DataType, Direction, Expr, FunctionBuilder, FunctionKind, Program};

fn one(f: pld_ir::Function) -> Program {
    let mut p = Program::new("p");
    p.add_function(f);
    p
}

fn dirs(p: &Program) -> Vec<Direction> {
    p.functions[0].params.iter().map(|p| p.dir).collect()
}

#[test]
fn remote_store_of_gm_tensor_gets_vec_bridge_and_target_becomes_out() {
    init();
    let mut fb = FunctionBuilder::new("push", FunctionKind::InCore);
    let x = fb.param("x", tensor(&[16, 64], DataType::FP32), Direction::In);
    let dst = fb.param("dst", dist(&[16, 64], DataType::FP32), Direction::In);
    fb.body(|b| {
        b.eval_op(
            "pld.tensor.remote_store",
            vec![Expr::var(x), Expr::var(dst), Expr::int(1), Expr::ints(&[0, 0])],
            vec![("atomic", Attr::Int(1))],
        )
    })
    .unwrap();
    let mut p = one(fb.finish());
    run(&mut p, &["ConvertTensorToTileOps"]).unwrap();
    let t = pld_ir::print_program(&p);
    check_in_order(
        &t,
        &[
            "x_vec: pl.Tile[[16, 64], pl.FP32, pl.MemorySpace.Vec] = pl.tile.load(x",
            "pld.tile.remote_store(x_vec, dst, 1, [0, 0], atomic=pld.AtomicType.Add)",
        ],
    );
    assert!(!t.contains("pld.tensor.remote_store"), "{t}");
    assert!(!t.contains("tile.create"), "{t}");
    // An atomic add reads the peer region too (the registry's effect): InOut.
    assert_eq!(dirs(&p), vec![Direction::In, Direction::InOut]);
}

#[test]
fn plain_remote_store_target_becomes_out() {
    init();
    let mut fb = FunctionBuilder::new("push", FunctionKind::InCore);
    let x = fb.param("x", tensor(&[16, 64], DataType::FP32), Direction::In);
    let dst = fb.param("dst", dist(&[16, 64], DataType::FP32), Direction::In);
    fb.body(|b| {
        b.eval_op(
            "pld.tensor.remote_store",
            vec![Expr::var(x), Expr::var(dst), Expr::int(1), Expr::ints(&[0, 0])],
            vec![],
        )
    })
    .unwrap();
    let mut p = one(fb.finish());
    run(&mut p, &["ConvertTensorToTileOps"]).unwrap();
    assert_eq!(dirs(&p), vec![Direction::In, Direction::Out]);
}

#[test]
fn remote_store_of_computed_tile_is_one_to_one() {
    init();
    let mut fb = FunctionBuilder::new("push", FunctionKind::InCore);
    let x = fb.param("x", tensor(&[16, 64], DataType::FP32), Direction::In);
    let dst = fb.param("dst", dist(&[16, 64], DataType::FP32), Direction::In);
    fb.body(|b| {
        let w = b.assign_op("w", "tensor.adds", vec![Expr::var(x), Expr::float(1.0)], vec![])?;
        b.eval_op(
            "pld.tensor.remote_store",
            vec![Expr::var(w), Expr::var(dst), Expr::int(0), Expr::ints(&[0, 0])],
            vec![],
        )
    })
    .unwrap();
    let mut p = one(fb.finish());
    run(&mut p, &["ConvertTensorToTileOps"]).unwrap();
    let t = pld_ir::print_program(&p);
    // The computed value became a tile and flows in as-is: one load (of x), no stage.
    check_in_order(
        &t,
        &[
            "pl.tile.load(x",
            "w: pl.Tile[[16, 64], pl.FP32, pl.MemorySpace.Vec] = pl.tile.adds(",
            "pld.tile.remote_store(w, dst, 0, [0, 0])",
        ],
    );
    assert_eq!(count(&t, "pl.tile.load("), 1, "no extra bridge:\n{t}");
    assert!(!t.contains("tile.create"));
}

fn notify_kernel(op: i64) -> Program {
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let sig = fb.param("sig", dist(&[4, 1], DataType::INT32), Direction::In);
    let w = fb.param("w", dist(&[4, 1], DataType::INT32), Direction::In);
    fb.body(|b| {
        b.eval_op(
            "pld.system.notify",
            vec![Expr::var(sig), Expr::int(1), Expr::ints(&[0, 0]), Expr::int(1)],
            vec![("op", Attr::Int(op))],
        )?;
        b.eval_op(
            "pld.system.wait",
            vec![Expr::var(w), Expr::ints(&[0, 0]), Expr::int(1)],
            vec![("cmp", Attr::Int(1))],
        )
    })
    .unwrap();
    one(fb.finish())
}

#[test]
fn notify_atomic_add_upgrades_to_inout_and_set_to_out_wait_stays_in() {
    init();
    let mut p = notify_kernel(0);
    run(&mut p, &["ConvertTensorToTileOps"]).unwrap();
    assert_eq!(dirs(&p), vec![Direction::InOut, Direction::In]);
    let mut p = notify_kernel(1);
    run(&mut p, &["ConvertTensorToTileOps"]).unwrap();
    assert_eq!(dirs(&p), vec![Direction::Out, Direction::In]);
}

#[test]
fn writes_through_a_view_upgrade_the_viewed_parameter() {
    init();
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let x = fb.param("x", tensor(&[4, 8], DataType::FP32), Direction::In);
    let y = fb.param("y", dist(&[4, 8], DataType::FP32), Direction::In);
    fb.body(|b| {
        let v = b.assign_op(
            "v",
            "tile.load",
            vec![Expr::var(y), Expr::ints(&[0, 0]), Expr::ints(&[4, 8])],
            vec![],
        )?;
        let view = b.assign_op("flat", "tensor.view", vec![Expr::var(x), Expr::ints(&[4, 8])], vec![])?;
        b.eval_op("tile.store", vec![Expr::var(v), Expr::ints(&[0, 0]), Expr::var(view)], vec![])?;
        b.eval_op("tile.store", vec![Expr::var(v), Expr::ints(&[0, 0]), Expr::var(y)], vec![])
    })
    .unwrap();
    let mut p = one(fb.finish());
    run(&mut p, &["ConvertTensorToTileOps"]).unwrap();
    // x: written through the view only → Out; y: read and written → InOut.
    assert_eq!(dirs(&p), vec![Direction::Out, Direction::InOut]);
}

/// `put(dst [16, 64] window, peer 1, src [16, 64])` with the given kwargs, optionally with
/// `src` computed by `tensor.adds` first.
fn put_kernel(attrs: Vec<(&'static str, Attr)>, computed_src: bool, get: bool) -> Program {
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let dst = fb.param("dst", dist(&[16, 64], DataType::FP32), Direction::In);
    let src = fb.param("src", tensor(&[16, 64], DataType::FP32), Direction::In);
    fb.body(|b| {
        let s = if computed_src {
            b.assign_op("s", "tensor.adds", vec![Expr::var(src), Expr::float(1.0)], vec![])?
        } else {
            src
        };
        if get {
            b.eval_op("pld.tensor.get", vec![Expr::var(s), Expr::int(1), Expr::var(dst)], attrs)
        } else {
            b.eval_op("pld.tensor.put", vec![Expr::var(dst), Expr::int(1), Expr::var(s)], attrs)
        }
    })
    .unwrap();
    one(fb.finish())
}

#[test]
fn put_gets_a_full_vec_stage_and_dst_becomes_out() {
    init();
    let mut p = put_kernel(vec![("atomic", Attr::Int(0))], false, false);
    run(&mut p, &["ConvertTensorToTileOps"]).unwrap();
    let t = pld_ir::print_program(&p);
    check_in_order(
        &t,
        &[
            "tput_stage: pl.Tile[[16, 64], pl.FP32, pl.MemorySpace.Vec] = pl.tile.create([16, 64], dtype=pl.FP32",
            "pld.tile.put(dst, 1, src, tput_stage, atomic=pld.AtomicType.None_)",
        ],
    );
    assert!(!t.contains("pld.tensor.put"), "{t}");
    assert_eq!(dirs(&p), vec![Direction::Out, Direction::In]);
}

#[test]
fn put_chunks_shrink_the_stage_and_are_not_forwarded() {
    init();
    let mut p = put_kernel(
        vec![("atomic", Attr::Int(0)), ("chunk_rows", Attr::Int(4)), ("chunk_cols", Attr::Int(32))],
        false,
        false,
    );
    run(&mut p, &["ConvertTensorToTileOps"]).unwrap();
    let t = pld_ir::print_program(&p);
    assert!(t.contains("pl.tile.create([4, 32]"), "{t}");
    assert!(!t.contains("chunk_rows") && !t.contains("chunk_cols"), "{t}");
    // Oversized chunks clamp to the transfer extent.
    let mut p = put_kernel(
        vec![("atomic", Attr::Int(0)), ("chunk_rows", Attr::Int(100)), ("chunk_cols", Attr::Int(1000))],
        false,
        false,
    );
    run(&mut p, &["ConvertTensorToTileOps"]).unwrap();
    assert!(pld_ir::print_program(&p).contains("pl.tile.create([16, 64]"));
}

#[test]
fn pipelined_put_gets_two_distinct_stages() {
    init();
    let mut p = put_kernel(
        vec![
            ("atomic", Attr::Int(0)),
            ("chunk_rows", Attr::Int(4)),
            ("chunk_cols", Attr::Int(32)),
            ("pipeline", Attr::Bool(true)),
        ],
        false,
        false,
    );
    run(&mut p, &["ConvertTensorToTileOps"]).unwrap();
    let t = pld_ir::print_program(&p);
    check_in_order(
        &t,
        &[
            "tput_stage_ping: pl.Tile[[4, 32]",
            "tput_stage_pong: pl.Tile[[4, 32]",
            "pld.tile.put(dst, 1, src, tput_stage_ping, tput_stage_pong, atomic=",
        ],
    );
    assert!(!t.contains("pipeline="), "{t}");
}

#[test]
fn get_gets_a_stage_and_dst_becomes_out() {
    init();
    let mut p = put_kernel(vec![], false, true);
    run(&mut p, &["ConvertTensorToTileOps"]).unwrap();
    let t = pld_ir::print_program(&p);
    check_in_order(&t, &["tget_stage: pl.Tile[[16, 64]", "pld.tile.get(src, 1, dst, tget_stage)"]);
    // get's dst is the local tensor (param 1 here), written only.
    assert_eq!(dirs(&p), vec![Direction::In, Direction::Out]);
}

#[test]
fn subregion_get_sizes_the_stage_from_the_shape() {
    init();
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let dst = fb.param("dst", tensor(&[16, 64], DataType::FP32), Direction::In);
    let src = fb.param("src", dist(&[16, 64], DataType::FP32), Direction::In);
    fb.body(|b| {
        b.eval_op(
            "pld.tensor.get",
            vec![
                Expr::var(dst),
                Expr::int(1),
                Expr::var(src),
                Expr::ints(&[3, 0]),
                Expr::ints(&[5, 0]),
                Expr::ints(&[1, 64]),
            ],
            vec![],
        )
    })
    .unwrap();
    let mut p = one(fb.finish());
    run(&mut p, &["ConvertTensorToTileOps"]).unwrap();
    let t = pld_ir::print_program(&p);
    check_in_order(
        &t,
        &["pl.tile.create([1, 64]", "pld.tile.get(dst, 1, src, tget_stage, [3, 0], [5, 0], [1, 64])"],
    );
}

#[test]
fn put_of_a_computed_value_points_at_remote_store() {
    init();
    let mut p = put_kernel(vec![("atomic", Attr::Int(0))], true, false);
    let err = run(&mut p, &["ConvertTensorToTileOps"]).unwrap_err();
    let m = messages(&err);
    assert!(m.contains("pld.tensor.put src must be a GM tensor"), "{m}");
    assert!(m.contains("pld.tensor.remote_store"), "{m}");
}

#[test]
fn flatten_reshapes_an_nd_remote_store_source_with_unit_leading_dims() {
    init();
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let x = fb.param("x", tensor(&[1, 4, 16], DataType::FP32), Direction::In);
    let dst = fb.param("dst", dist(&[2, 4, 16], DataType::FP32), Direction::In);
    fb.body(|b| {
        let v = b.assign_op(
            "v",
            "tile.load",
            vec![Expr::var(x), Expr::ints(&[0, 0, 0]), Expr::ints(&[1, 4, 16])],
            vec![],
        )?;
        b.eval_op(
            "pld.tile.remote_store",
            vec![Expr::var(v), Expr::var(dst), Expr::int(1), Expr::ints(&[1, 0, 0])],
            vec![],
        )
    })
    .unwrap();
    let mut p = one(fb.finish());
    run(&mut p, &["FlattenTileNdTo2D"]).unwrap();
    let t = pld_ir::print_program(&p);
    check_in_order(
        &t,
        &[
            "v_2d: pl.Tile[[4, 16], pl.FP32, pl.MemorySpace.Vec] = pl.tile.reshape(v, [4, 16])",
            "pld.tile.remote_store(v_2d, dst, 1, [1, 0, 0])",
        ],
    );
    // Already 2-D: unchanged.
    run(&mut p, &["FlattenTileNdTo2D"]).unwrap();
    assert_eq!(count(&pld_ir::print_program(&p), "tile.reshape"), 1);
}

#[test]
fn mixed_bulk_and_scalar_stores_to_one_tensor_are_rejected() {
    init();
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let x = fb.param("x", tensor(&[4, 8], DataType::FP32), Direction::In);
    let y = fb.param("y", tensor(&[4, 8], DataType::FP32), Direction::In);
    fb.body(|b| {
        let v = b.assign_op(
            "v",
            "tile.load",
            vec![Expr::var(x), Expr::ints(&[0, 0]), Expr::ints(&[4, 8])],
            vec![],
        )?;
        b.eval_op("tile.store", vec![Expr::var(v), Expr::ints(&[0, 0]), Expr::var(y)], vec![])?;
        b.eval_op("tensor.write", vec![Expr::var(y), Expr::ints(&[0, 0]), Expr::float(1.0)], vec![])
    })
    .unwrap();
    let mut p = one(fb.finish());
    let e = run(&mut p, &["ConvertTensorToTileOps"]).unwrap_err();
    assert!(
        messages(&e).contains("`y` is written both by a bulk tile store and by a scalar tensor.write"),
        "{}",
        messages(&e)
    );
}

#[test]
fn a_returned_computed_value_gets_an_exit_store_and_callers_allocate_it() {
    init();
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let x = fb.param("x", tensor(&[4, 8], DataType::FP32), Direction::In);
    fb.returns(tensor(&[4, 8], DataType::FP32));
    fb.body(|b| {
        let w = b.assign_op("w", "tensor.adds", vec![Expr::var(x), Expr::float(1.0)], vec![])?;
        b.ret(vec![Expr::var(w)]);
        Ok(())
    })
    .unwrap();
    let k = fb.finish();
    let mut ob = FunctionBuilder::new("orch", FunctionKind::ChipOrch);
    let ox = ob.param("x", tensor(&[4, 8], DataType::FP32), Direction::In);
    ob.body(|b| {
        let e = b.func_call("k", vec![Expr::var(ox)], None, tensor(&[4, 8], DataType::FP32));
        b.assign("y", e);
        Ok(())
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(k);
    p.add_function(ob.finish());
    run(&mut p, &["ConvertTensorToTileOps"]).unwrap();
    let k = func_text(&p, "k");
    check_in_order(
        &k,
        &[
            "ret0_out: pl.Out[pl.Tensor[[4, 8], pl.FP32]]",
            "pl.tile.adds(",
            "ret0: pl.Tensor[[4, 8], pl.FP32] = pl.tile.store(w, [0, 0], ret0_out)",
            "return ret0",
        ],
    );
    let o = func_text(&p, "orch");
    check_in_order(
        &o,
        &[
            "kernel_out: pl.Tensor[[4, 8], pl.FP32] = pl.tensor.create([4, 8], dtype=pl.FP32)",
            "self.k(x, kernel_out)",
        ],
    );
}
