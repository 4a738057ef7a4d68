//! LowerHostTensorCollectives (and the comm-domain evidence it relies on): host
//! collectives become per-device builtin dispatches; window aliasing and explicit-subset
//! checks are diagnosed.

mod common;
use common::*;
use pld_ir::{
    Attr, Builder, DataType, Diagnostic, Direction, Expr, FunctionBuilder, FunctionKind, Program, Type,
    ValueId,
};

fn alloc(b: &mut Builder<'_>, name: &str, shape: &[i64], dt: DataType) -> Result<ValueId, Diagnostic> {
    let buf = b.assign_op(
        format!("{name}_buf"),
        "pld.tensor.alloc_window_buffer",
        vec![Expr::int(4096)],
        vec![("name", Attr::Str(name.into()))],
    )?;
    b.assign_op(
        name,
        "pld.tensor.window",
        vec![Expr::var(buf), Expr::ints(shape)],
        vec![("dtype", Attr::DType(dt))],
    )
}

/// Host: window `data` [8, 64] dispatched to `devices` (None = all ranks), then
/// `collective(data, sig, ...)` built by `coll`.
fn host(
    devices: Option<&[i64]>,
    sig_shape: &[i64],
    coll: impl FnOnce(&mut Builder<'_>, ValueId, ValueId) -> Result<(), Diagnostic>,
) -> Program {
    let mut cb = FunctionBuilder::new("chip", FunctionKind::ChipOrch);
    cb.param("w", dist(&[8, 64], DataType::FP32), Direction::InOut);
    let chip = cb.finish();
    let mut hb = FunctionBuilder::new("host", FunctionKind::Host);
    hb.body(|b| {
        let data = alloc(b, "data", &[8, 64], DataType::FP32)?;
        let sig = alloc(b, "sig", sig_shape, DataType::INT32)?;
        match devices {
            None => {
                let ws = b.assign_op("ws", "pld.system.world_size", vec![], vec![])?;
                b.for_range("r", (Expr::int(0), Expr::var(ws), Expr::int(1)), vec![], |b, r, _| {
                    let e = b.func_call("chip", vec![Expr::var(data)], Some(Expr::var(r)), Type::Unknown);
                    b.eval(e);
                    Ok(vec![])
                })?;
            }
            Some(ds) => {
                for &d in ds {
                    let e = b.func_call("chip", vec![Expr::var(data)], Some(Expr::int(d)), Type::Unknown);
                    b.eval(e);
                }
            }
        }
        coll(b, data, sig)
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(hb.finish());
    p.add_function(chip);
    p
}

fn lower(mut p: Program) -> Result<String, String> {
    run(&mut p, &["MaterializeCommDomainScopes", "LowerHostTensorCollectives"]).map_err(|e| messages(&e))?;
    Ok(func_text(&p, "host"))
}

#[test]
fn allreduce_becomes_a_builtin_per_rank_in_a_world_size_loop() {
    init();
    let p = host(None, &[8], |b, data, sig| {
        b.assign_op("out", "pld.tensor.allreduce", vec![Expr::var(data), Expr::var(sig)], vec![])?;
        Ok(())
    });
    let t = lower(p).unwrap();
    check_in_order(
        &t,
        &[
            r#"with pld.comm_domain(name="comm_d0", devices=[], windows=["data", "sig"]):"#,
            "world_size: pl.Scalar",
            "for r_1 in pl.range(0, world_size):",
            "builtin.tensor.allreduce(data, sig, op=pld.ReduceOp.Sum, dtype=pl.FP32, core_num=1, device=r_1)",
            "out: pld.DistributedTensor[[8, 64], pl.FP32, \"window_buffer=data\"] = data",
        ],
    );
    assert!(!t.contains("pld.tensor.allreduce"), "{t}");
}

#[test]
fn explicit_subset_dispatches_each_device_and_checks_root() {
    init();
    let p = host(Some(&[0, 2]), &[8], |b, data, sig| {
        b.eval_op("pld.tensor.broadcast", vec![Expr::var(data), Expr::var(sig)], vec![("root", Attr::Int(1))])
    });
    let t = lower(p).unwrap();
    check_in_order(
        &t,
        &[
            r#"devices=[0, 2]"#,
            "builtin.tensor.broadcast(data, sig, root=1, dtype=pl.FP32, device=0)",
            "builtin.tensor.broadcast(data, sig, root=1, dtype=pl.FP32, device=2)",
        ],
    );
    let p = host(Some(&[0, 2]), &[8], |b, data, sig| {
        b.eval_op("pld.tensor.broadcast", vec![Expr::var(data), Expr::var(sig)], vec![("root", Attr::Int(2))])
    });
    let m = lower(p).unwrap_err();
    assert!(m.contains("root (2) must be a valid rank in [0, 2) for this explicit device subset"), "{m}");
}

#[test]
fn signal_smaller_than_the_device_set_is_rejected() {
    init();
    let p = host(Some(&[0, 1, 2]), &[2], |b, data, sig| {
        b.eval_op("pld.tensor.allreduce", vec![Expr::var(data), Expr::var(sig)], vec![])
    });
    let m = lower(p).unwrap_err();
    assert!(m.contains("signal first dimension (2) is smaller than the 3 participating devices"), "{m}");
}

#[test]
fn aliased_windows_are_rejected_naming_both_roles() {
    init();
    let p = host(None, &[8], |b, data, sig| {
        // A second view of the data allocation used as the signal.
        let buf = b.values.iter().find(|(_, d)| d.name == "data_buf").map(|(v, _)| v).unwrap();
        let alias = b.assign_op(
            "alias",
            "pld.tensor.window",
            vec![Expr::var(buf), Expr::ints(&[8])],
            vec![("dtype", Attr::DType(DataType::INT32))],
        )?;
        b.eval_op("pld.tensor.allreduce", vec![Expr::var(data), Expr::var(sig)], vec![])?;
        b.eval_op("pld.tensor.allreduce", vec![Expr::var(data), Expr::var(alias)], vec![])
    });
    let m = lower(p).unwrap_err();
    assert!(m.contains("target and signal must be different window allocations"), "{m}");
}

#[test]
fn omitted_signal_is_synthesized_once_at_the_top_and_lowered() {
    init();
    let p = host(None, &[8], |b, data, _sig| {
        // The synthesized signal is allocated at the top of the function.
        b.eval_op("pld.tensor.allreduce", vec![Expr::var(data)], vec![("core_num", Attr::Int(2))])?;
        let sig = b.values.iter().find(|(_, d)| d.name == "sig").map(|(v, _)| v).unwrap();
        b.eval_op("pld.tensor.allreduce", vec![Expr::var(data), Expr::var(sig)], vec![])
    });
    let mut p = p;
    run(&mut p, &["SynthesizeAllReduceSignals"]).unwrap();
    let t = func_text(&p, "host");
    check_in_order(
        &t,
        &[
            "__allreduce_signal_world_size_0: pl.Scalar[pl.INT64] = pld.system.world_size()",
            "pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 2 * 4, name=\"__allreduce_signal_buf_0\")",
            "pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 2], dtype=pl.INT32)",
            "data_buf",
            "pld.tensor.allreduce(data, __allreduce_signal_0, core_num=2)",
            // The explicit signal is kept.
            "pld.tensor.allreduce(data, sig)",
        ],
    );
    assert_eq!(count(&t, "__allreduce_signal_buf_0 ="), 0);
    assert_eq!(count(&t, "alloc_window_buffer("), 3, "{t}");
    // The synthesized signal joins the data's comm domain and the call lowers.
    run(&mut p, &["MaterializeCommDomainScopes", "LowerHostTensorCollectives"]).unwrap();
    let t = func_text(&p, "host");
    assert!(t.contains(r#"windows=["__allreduce_signal_buf_0", "data", "sig"]"#), "{t}");
    assert!(t.contains("builtin.tensor.allreduce(data, __allreduce_signal_0, op=pld.ReduceOp.Sum, dtype=pl.FP32, core_num=2, device=r_1)"), "{t}");
}

/// The seed: host code may omit a collective's signal only outside for and while loops.
#[test]
fn omitted_signal_inside_a_loop_is_refused_at_the_call() {
    init();
    let p = host(None, &[8], |b, data, _sig| {
        b.for_range("it", (Expr::int(0), Expr::int(3), Expr::int(1)), vec![], |b, _, _| {
            b.eval_op("pld.tensor.allreduce", vec![Expr::var(data)], vec![])?;
            Ok(vec![])
        })?;
        Ok(())
    });
    let mut p = p;
    let m = run(&mut p, &["SynthesizeAllReduceSignals"]).map_err(|e| messages(&e)).unwrap_err();
    assert!(m.contains("pld.tensor.allreduce without a signal inside a `for`/`while` loop"), "{m}");
}

#[test]
fn host_all_to_all_v_inside_a_loop_is_rejected_outside_is_lowered() {
    init();
    let build = |in_loop: bool| {
        let mut cb = FunctionBuilder::new("chip", FunctionKind::ChipOrch);
        for (n, t) in [
            ("i", dist(&[8, 16], DataType::FP32)),
            ("t", dist(&[8, 16], DataType::FP32)),
            ("s", dist(&[2, 1], DataType::INT32)),
            ("sc", dist(&[2, 1], DataType::INT32)),
            ("rc", dist(&[2, 1], DataType::INT32)),
        ] {
            cb.param(n, t, Direction::InOut);
        }
        let chip = cb.finish();
        let mut hb = FunctionBuilder::new("host", FunctionKind::Host);
        hb.body(|b| {
            let input = alloc(b, "input", &[8, 16], DataType::FP32)?;
            let target = alloc(b, "target", &[8, 16], DataType::FP32)?;
            let sig = alloc(b, "sig", &[2, 1], DataType::INT32)?;
            let send = alloc(b, "send", &[2, 1], DataType::INT32)?;
            let recv = alloc(b, "recv", &[2, 1], DataType::INT32)?;
            let all =
                vec![Expr::var(input), Expr::var(target), Expr::var(sig), Expr::var(send), Expr::var(recv)];
            let ws = b.assign_op("ws", "pld.system.world_size", vec![], vec![])?;
            b.for_range("r", (Expr::int(0), Expr::var(ws), Expr::int(1)), vec![], |b, r, _| {
                let e = b.func_call("chip", all.clone(), Some(Expr::var(r)), Type::Unknown);
                b.eval(e);
                Ok(vec![])
            })?;
            if in_loop {
                b.for_range("it", (Expr::int(0), Expr::int(2), Expr::int(1)), vec![], |b, _, _| {
                    b.eval_op("pld.tensor.all_to_all_v", all.clone(), vec![])?;
                    Ok(vec![])
                })?;
                Ok(())
            } else {
                b.eval_op("pld.tensor.all_to_all_v", all, vec![])
            }
        })
        .unwrap();
        let mut p = Program::new("p");
        p.add_function(hb.finish());
        p.add_function(chip);
        p
    };
    let m = lower(build(true)).unwrap_err();
    assert!(m.contains("not supported inside a for/while loop in a HOST orchestrator"), "{m}");
    let t = lower(build(false)).unwrap();
    assert!(t.contains("builtin.tensor.all_to_all_v(input, target, sig, send, recv, dtype=pl.FP32, core_num=1, device=r_1)"), "{t}");
}
