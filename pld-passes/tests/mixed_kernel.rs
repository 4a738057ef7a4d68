//! ExpandMixedKernel and LowerAutoVectorSplit: lane placement by registry affinity, the
//! split_aiv no-duplicate stamp, and the duplication of comm ops written outside regions.

mod common;
use common::*;
use pld_ir::{
    Attr, DataType, Direction, Expr, FunctionBuilder, FunctionKind, MemorySpace, Program, ScopeKind, Type,
};

const ATOMIC_ADD: i64 = 0;

/// A mixed kernel `k`: cube matmul + store, vector load + store, and a notify either
/// outside every region or inside a `split_aiv` region; plus a chip orchestration calling it.
fn mixed(notify_in_region: bool) -> Program {
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let a = fb.param("a", tile(&[16, 16], DataType::FP16, MemorySpace::Left), Direction::In);
    let bt = fb.param("b", tile(&[16, 16], DataType::FP16, MemorySpace::Right), Direction::In);
    let out = fb.param("out", tensor(&[16, 16], DataType::FP32), Direction::Out);
    let x = fb.param("x", tensor(&[16, 16], DataType::FP32), Direction::In);
    let y = fb.param("y", tensor(&[16, 16], DataType::FP32), Direction::Out);
    let sig = fb.param("sig", dist(&[4, 1], DataType::INT32), Direction::InOut);
    fb.body(|b| {
        let c = b.assign_op("c", "tile.matmul", vec![Expr::var(a), Expr::var(bt)], vec![])?;
        b.eval_op("tile.store", vec![Expr::var(c), Expr::ints(&[0, 0]), Expr::var(out)], vec![])?;
        let v = b.assign_op(
            "v",
            "tile.load",
            vec![Expr::var(x), Expr::ints(&[0, 0]), Expr::ints(&[16, 16])],
            vec![],
        )?;
        b.eval_op("tile.store", vec![Expr::var(v), Expr::ints(&[0, 0]), Expr::var(y)], vec![])?;
        let notify = |b: &mut pld_ir::Builder<'_>| {
            b.eval_op(
                "pld.system.notify",
                vec![Expr::var(sig), Expr::int(1), Expr::ints(&[0, 0]), Expr::int(1)],
                vec![("op", Attr::Int(ATOMIC_ADD))],
            )
        };
        if notify_in_region {
            b.scope(ScopeKind::SplitAiv { lane: None }, vec![], notify)?;
        } else {
            notify(b)?;
        }
        b.eval_op(
            "pld.system.wait",
            vec![Expr::var(sig), Expr::ints(&[1, 0]), Expr::int(1)],
            vec![("cmp", Attr::Int(1))],
        )?;
        b.ret(vec![]);
        Ok(())
    })
    .unwrap();
    let k = fb.finish();
    let mut ob = FunctionBuilder::new("orch", FunctionKind::ChipOrch);
    let params: Vec<_> =
        k.params.iter().map(|p| (k.values.name(p.value).to_string(), k.values.ty(p.value).clone())).collect();
    let vals: Vec<_> = params.iter().map(|(n, t)| ob.param(n.clone(), t.clone(), Direction::In)).collect();
    ob.body(|b| {
        let e = b.func_call("k", vals.iter().map(|&v| Expr::var(v)).collect(), None, Type::Unknown);
        b.eval(e);
        Ok(())
    })
    .unwrap();
    let mut p = Program::new("mixed");
    p.add_function(k);
    p.add_function(ob.finish());
    p
}

#[test]
fn notify_outside_regions_is_duplicated_onto_both_lanes() {
    init();
    let mut p = mixed(false);
    run(&mut p, &["LowerAutoVectorSplit", "ExpandMixedKernel"]).unwrap();
    assert!(p.function("k").is_none(), "the mixed kernel is replaced by its lanes");
    let aic = func_text(&p, "k_aic");
    let aiv = func_text(&p, "k_aiv");
    assert!(aic.contains("FunctionType.AIC"), "{aic}");
    assert!(aiv.contains("FunctionType.AIV"), "{aiv}");
    // Cube work on AIC only, vector work on AIV only.
    assert_eq!(count(&aic, "tile.matmul"), 1, "{aic}");
    assert_eq!(count(&aiv, "tile.matmul"), 0, "{aiv}");
    assert_eq!(count(&aic, "tile.load"), 0, "{aic}");
    assert_eq!(count(&aiv, "tile.load"), 1, "{aiv}");
    // The unstamped notify and the wait are SHARED: both lanes.
    assert_eq!(count(&aic, "pld.system.notify"), 1, "{aic}");
    assert_eq!(count(&aiv, "pld.system.notify"), 1, "{aiv}");
    assert_eq!(count(&aic, "pld.system.wait"), 1);
    assert_eq!(count(&aiv, "pld.system.wait"), 1);
    // The chip orchestration launches both lanes.
    let orch = func_text(&p, "orch");
    check_in_order(&orch, &["self.k_aic(", "self.k_aiv("]);
}

#[test]
fn notify_inside_split_aiv_region_lands_on_aiv_only() {
    init();
    let mut p = mixed(true);
    run(&mut p, &["LowerAutoVectorSplit"]).unwrap();
    let k = func_text(&p, "k");
    assert!(k.contains("core_placement"), "the notify carries the placement stamp:\n{k}");
    assert!(!k.contains("split_aiv("), "the region is consumed:\n{k}");
    run(&mut p, &["ExpandMixedKernel"]).unwrap();
    let all = pld_ir::print_program(&p);
    assert_eq!(count(&all, "pld.system.notify"), 1, "exactly one notify program-wide:\n{all}");
    assert_eq!(count(&func_text(&p, "k_aiv"), "pld.system.notify"), 1);
    assert!(!all.contains("core_placement"), "the stamp is stripped:\n{all}");
    // The wait is never stamped: it stays on both lanes.
    assert_eq!(count(&all, "pld.system.wait"), 2);
}

#[test]
fn stamp_only_applies_to_no_duplicate_calls_and_is_idempotent() {
    init();
    let mut p = mixed(true);
    // Put the wait inside the region too: it is not no_duplicate, so it is not stamped.
    run(&mut p, &["LowerAutoVectorSplit", "LowerAutoVectorSplit"]).unwrap();
    let k = func_text(&p, "k");
    assert_eq!(count(&k, "core_placement"), 1, "{k}");
}

#[test]
fn pure_vector_kernel_is_retyped_aiv() {
    init();
    let mut fb = FunctionBuilder::new("vk", FunctionKind::InCore);
    let x = fb.param("x", tensor(&[8, 8], DataType::FP32), Direction::In);
    let y = fb.param("y", tensor(&[8, 8], DataType::FP32), Direction::Out);
    fb.body(|b| {
        let v = b.assign_op(
            "v",
            "tile.load",
            vec![Expr::var(x), Expr::ints(&[0, 0]), Expr::ints(&[8, 8])],
            vec![],
        )?;
        b.eval_op("tile.store", vec![Expr::var(v), Expr::ints(&[0, 0]), Expr::var(y)], vec![])?;
        Ok(())
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    run(&mut p, &["ExpandMixedKernel"]).unwrap();
    assert_eq!(p.function("vk").map(|f| f.kind), Some(FunctionKind::Aiv));
}

#[test]
fn data_parallel_region_is_rejected() {
    init();
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let sig = fb.param("sig", dist(&[4, 1], DataType::INT32), Direction::InOut);
    fb.body(|b| {
        b.scope(ScopeKind::SplitAiv { lane: None }, vec![("mode", Attr::Str("UpDown".into()))], |b| {
            b.eval_op(
                "pld.system.notify",
                vec![Expr::var(sig), Expr::int(0), Expr::ints(&[0, 0]), Expr::int(1)],
                vec![("op", Attr::Int(ATOMIC_ADD))],
            )
        })
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    let err = run(&mut p, &["LowerAutoVectorSplit"]).unwrap_err();
    assert!(messages(&err).contains("data-parallel"), "{}", messages(&err));
}

#[test]
fn cube_result_used_by_vector_work_is_diagnosed() {
    init();
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let a = fb.param("a", tile(&[16, 16], DataType::FP16, MemorySpace::Left), Direction::In);
    let bt = fb.param("b", tile(&[16, 16], DataType::FP16, MemorySpace::Right), Direction::In);
    let y = fb.param("y", tensor(&[16, 16], DataType::FP32), Direction::Out);
    fb.body(|b| {
        let c = b.assign_op("c", "tile.matmul", vec![Expr::var(a), Expr::var(bt)], vec![])?;
        let v = b.assign_op(
            "v",
            "tile.move",
            vec![Expr::var(c)],
            vec![("target_memory", Attr::Str("Vec".into()))],
        )?;
        let w = b.assign_op("w", "tile.adds", vec![Expr::var(v), Expr::float(1.0)], vec![])?;
        b.eval_op("tile.store", vec![Expr::var(w), Expr::ints(&[0, 0]), Expr::var(y)], vec![])
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    let e = run(&mut p, &["ExpandMixedKernel"]).unwrap_err();
    assert!(messages(&e).contains("passes a value between the cube and vector lanes"), "{}", messages(&e));
}

#[test]
fn notify_in_a_loop_inside_a_region_is_stamped_and_the_aiv_lane_is_dual_dispatched() {
    init();
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let x = fb.param("x", tensor(&[8, 8], DataType::FP32), Direction::In);
    let y = fb.param("y", tensor(&[8, 8], DataType::FP32), Direction::Out);
    let sig = fb.param("sig", dist(&[4, 1], DataType::INT32), Direction::InOut);
    fb.body(|b| {
        let v = b.assign_op(
            "v",
            "tile.load",
            vec![Expr::var(x), Expr::ints(&[0, 0]), Expr::ints(&[8, 8])],
            vec![],
        )?;
        b.eval_op("tile.store", vec![Expr::var(v), Expr::ints(&[0, 0]), Expr::var(y)], vec![])?;
        b.scope(ScopeKind::SplitAiv { lane: None }, vec![], |b| {
            b.for_range("p", (Expr::int(0), Expr::int(4), Expr::int(1)), vec![], |b, p, _| {
                b.eval_op(
                    "pld.system.notify",
                    vec![Expr::var(sig), Expr::var(p), Expr::ints(&[0, 0]), Expr::int(1)],
                    vec![("op", Attr::Int(ATOMIC_ADD))],
                )?;
                Ok(vec![])
            })?;
            Ok(())
        })
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    run(&mut p, &["LowerAutoVectorSplit"]).unwrap();
    let t = func_text(&p, "k");
    check_in_order(
        &t,
        &["for p in pl.range(0, 4):", "with pl.at(core_placement=\"aiv\"):", "pld.system.notify("],
    );
    // The vector load is not stamped (only no_duplicate SHARED calls are).
    assert_eq!(count(&t, "core_placement"), 1, "{t}");
    run(&mut p, &["ExpandMixedKernel"]).unwrap();
    let f = p.function("k").unwrap();
    assert_eq!(f.kind, FunctionKind::Aiv);
    assert_eq!(f.attr("dual_aiv_dispatch"), Some(&Attr::Bool(true)));
    assert!(!func_text(&p, "k").contains("core_placement"));
}

#[test]
fn remote_load_is_shared_and_its_dead_cube_copy_is_removed() {
    init();
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let a = fb.param("a", tile(&[16, 16], DataType::FP16, MemorySpace::Left), Direction::In);
    let bt = fb.param("b", tile(&[16, 16], DataType::FP16, MemorySpace::Right), Direction::In);
    let out = fb.param("out", tensor(&[16, 16], DataType::FP32), Direction::Out);
    let win = fb.param("win", dist(&[16, 16], DataType::FP32), Direction::In);
    let y = fb.param("y", tensor(&[16, 16], DataType::FP32), Direction::Out);
    fb.body(|b| {
        let c = b.assign_op("c", "tile.matmul", vec![Expr::var(a), Expr::var(bt)], vec![])?;
        b.eval_op("tile.store", vec![Expr::var(c), Expr::ints(&[0, 0]), Expr::var(out)], vec![])?;
        let mine = b.assign_op(
            "mine",
            "tile.load",
            vec![Expr::var(win), Expr::ints(&[0, 0]), Expr::ints(&[16, 16])],
            vec![],
        )?;
        let peer = b.assign_op(
            "theirs",
            "pld.tile.remote_load",
            vec![Expr::var(win), Expr::int(1), Expr::ints(&[0, 0]), Expr::ints(&[16, 16])],
            vec![],
        )?;
        let s = b.assign_op("s", "tile.add", vec![Expr::var(mine), Expr::var(peer)], vec![])?;
        b.eval_op("tile.store", vec![Expr::var(s), Expr::ints(&[0, 0]), Expr::var(y)], vec![])
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    run(&mut p, &["ExpandMixedKernel"]).unwrap();
    assert_eq!(count(&func_text(&p, "k_aiv"), "pld.tile.remote_load("), 1);
    assert_eq!(count(&func_text(&p, "k_aic"), "pld.tile.remote_load("), 0, "{}", func_text(&p, "k_aic"));
}

/// The kernel of tests_e2e.md §6.3 as one InCore function: a zero tile stored into a comm
/// window (the anchor, vector work) and a GEMM whose operands are loaded into `Mat`,
/// moved to `Left`/`Right`, multiplied and stored from `Acc` (cube work).
fn anchored_gemm() -> Program {
    let mut fb = FunctionBuilder::new("gemm", FunctionKind::InCore);
    let a = fb.param("a", tensor(&[64, 64], DataType::FP16), Direction::In);
    let bm = fb.param("b", tensor(&[64, 64], DataType::FP16), Direction::In);
    let c = fb.param("c", tensor(&[64, 64], DataType::FP32), Direction::Out);
    let scratch = fb.param("scratch", dist(&[1, 8], DataType::INT32), Direction::InOut);
    fb.body(|b| {
        let z = b.assign_op(
            "z",
            "tile.full",
            vec![Expr::ints(&[1, 8]), Expr::int(0)],
            vec![("dtype", Attr::DType(DataType::INT32))],
        )?;
        b.eval_op("tile.store", vec![Expr::var(z), Expr::ints(&[0, 0]), Expr::var(scratch)], vec![])?;
        let mat = |b: &mut pld_ir::Builder<'_>, name: &str, t| {
            b.assign_op(
                name,
                "tile.load",
                vec![Expr::var(t), Expr::ints(&[0, 0]), Expr::ints(&[64, 64])],
                vec![("target_memory", Attr::Str("Mat".into()))],
            )
        };
        let am = mat(b, "a_mat", a)?;
        let bmat = mat(b, "b_mat", bm)?;
        let al = b.assign_op(
            "a_l",
            "tile.move",
            vec![Expr::var(am)],
            vec![("target_memory", Attr::Str("Left".into()))],
        )?;
        let br = b.assign_op(
            "b_r",
            "tile.move",
            vec![Expr::var(bmat)],
            vec![("target_memory", Attr::Str("Right".into()))],
        )?;
        let acc = b.assign_op("acc", "tile.matmul", vec![Expr::var(al), Expr::var(br)], vec![])?;
        b.eval_op("tile.store", vec![Expr::var(acc), Expr::ints(&[0, 0]), Expr::var(c)], vec![])
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    p
}

#[test]
fn load_into_mat_is_cube_work_so_an_anchored_gemm_splits() {
    init();
    let mut p = anchored_gemm();
    run(&mut p, &["ExpandMixedKernel"]).unwrap();
    let aic = func_text(&p, "gemm_aic");
    let aiv = func_text(&p, "gemm_aiv");
    // The Mat loads feed the cube lane's moves, so they must live on the cube lane.
    assert_eq!(count(&aic, "pl.tile.load("), 2, "{aic}");
    check_in_order(
        &aic,
        &["pl.tile.load(a,", "pl.tile.load(b,", "pl.tile.move(", "pl.tile.matmul(", "pl.tile.store(acc"],
    );
    assert_eq!(count(&aic, "pl.tile.full("), 0, "{aic}");
    // The anchor store is the vector lane's only work.
    assert_eq!(count(&aiv, "pl.tile.load("), 0, "{aiv}");
    assert_eq!(count(&aiv, "pl.tile.matmul("), 0, "{aiv}");
    check_in_order(&aiv, &["pl.tile.full(", "pl.tile.store(z, [0, 0], scratch)"]);
}

#[test]
fn a_vec_load_feeding_the_cube_lane_is_still_diagnosed_with_the_lane_and_value() {
    init();
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let x = fb.param("x", tensor(&[16, 16], DataType::FP16), Direction::In);
    let y = fb.param("y", tensor(&[16, 16], DataType::FP32), Direction::Out);
    let bt = fb.param("b", tile(&[16, 16], DataType::FP16, MemorySpace::Right), Direction::In);
    fb.body(|b| {
        // A Vec load moved into Left: the load is vector work, the move is cube work.
        let v = b.assign_op(
            "v",
            "tile.load",
            vec![Expr::var(x), Expr::ints(&[0, 0]), Expr::ints(&[16, 16])],
            vec![],
        )?;
        let l = b.assign_op(
            "l",
            "tile.move",
            vec![Expr::var(v)],
            vec![("target_memory", Attr::Str("Left".into()))],
        )?;
        let acc = b.assign_op("acc", "tile.matmul", vec![Expr::var(l), Expr::var(bt)], vec![])?;
        b.eval_op("tile.store", vec![Expr::var(acc), Expr::ints(&[0, 0]), Expr::var(y)], vec![])
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    let e = run(&mut p, &["ExpandMixedKernel"]).unwrap_err();
    let m = messages(&e);
    assert!(m.contains("passes a value between the cube and vector lanes"), "{m}");
    assert!(m.contains("in the `k_aic` lane: "), "the note names the lane and the verifier's finding: {m}");
}
