//! notify / wait / defer_wait: tests_negative.md A.10–A.12 plus one negative per seed rule,
//! the notify effect flip (Set → Write, AtomicAdd → ReadWrite) and the placement flags.
#![allow(clippy::cloned_ref_to_slice_refs)]

mod common;
use common::*;
use pld_ir::{Attr, DataType::*, Effect, Expr, FunctionBuilder, FunctionKind, Type};

fn notify(params: &[Type], offsets: Expr, op: i64) -> Result<Type, pld_ir::Diagnostic> {
    call(
        params,
        "pld.system.notify",
        |v| vec![v[0].clone(), v[1].clone(), offsets, v[2].clone()],
        vec![("op", int(op))],
    )
}

#[test]
fn notify_a10() {
    let sig = dt(&[4], INT32);
    // A.10 #1
    assert_eq!(ok(notify(&[sig.clone(), scalar(INT32), scalar(INT32)], ints(&[0]), 0)), Type::Unknown);
    // A.10 #2
    err(notify(&[tensor(&[4], INT32), scalar(INT32), scalar(INT32)], ints(&[0]), 1), "DistributedTensor");
    // A.10 #3
    err(
        notify(&[dt(&[4, 2], INT32), scalar(INT32), scalar(INT32)], ints(&[0]), 0),
        "offsets rank (1) must match target tensor rank (2)",
    );
}

#[test]
fn notify_rules() {
    let sig = dt(&[4, 1], INT32);
    err(
        notify(&[sig.clone(), tensor(&[1], INT32), scalar(INT32)], ints(&[0, 0]), 0),
        "pld.system.notify peer must be a scalar",
    );
    err(
        notify(&[sig.clone(), scalar(INT32), tensor(&[1], INT32)], ints(&[0, 0]), 0),
        "pld.system.notify value must be a scalar",
    );
    // A rank index of 1.5 is no rank: the simulator used to truncate it to rank 1.
    err(
        notify(&[sig.clone(), scalar(FP32), scalar(INT32)], ints(&[0, 0]), 0),
        "pld.system.notify peer must be an integer scalar (rank index), got a fp32 scalar",
    );
    err(notify(&[sig.clone(), scalar(INT32), scalar(INT32)], Expr::int(0), 0), "offsets must be a tuple");
    err(
        notify(&[sig.clone(), scalar(INT32), scalar(INT32)], ints(&[0, 0]), 2),
        "pld.system.notify op must be NotifyOp.AtomicAdd or NotifyOp.Set (got int 2)",
    );
    err(
        call(
            &[sig.clone(), scalar(INT32), scalar(INT32)],
            "pld.system.notify",
            |v| vec![v[0].clone(), v[1].clone(), ints(&[0, 0]), v[2].clone()],
            vec![],
        ),
        "missing kwarg 'op' on pld.system.notify",
    );
    err(
        call(
            &[sig.clone(), scalar(INT32)],
            "pld.system.notify",
            |v| vec![v[0].clone(), v[1].clone(), ints(&[0, 0])],
            vec![("op", int(0))],
        ),
        "4 positional argument",
    );
    // A plain tensor target gets a note on how to make a window.
    let d = err(
        notify(&[tensor(&[4, 1], INT32), scalar(INT32), scalar(INT32)], ints(&[0, 0]), 0),
        "window-bound",
    );
    assert!(d.notes.iter().any(|n| n.contains("pld.window")));
    // Signal dtype is not checked by notify.
    ok(notify(&[dt(&[4, 1], FP32), scalar(INT32), scalar(INT32)], ints(&[0, 0]), 1));
}

#[test]
fn notify_flags_and_effects() {
    let reg = pld_testkit::init();
    let def = reg.lookup("pld.system.notify").unwrap();
    assert!(def.no_duplicate);
    assert_eq!(def.affinity, pld_ir::Affinity::Shared);
    for name in ["pld.system.wait", "pld.system.defer_wait"] {
        let d = reg.lookup(name).unwrap();
        assert!(!d.no_duplicate, "{name}");
        assert_eq!(d.affinity, pld_ir::Affinity::Shared);
    }
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let s = Expr::var(fb.param("sig", dt(&[4, 1], INT32), pld_ir::Direction::InOut));
    let p = Expr::var(fb.param("peer", scalar(INT32), pld_ir::Direction::In));
    fb.body(|b| {
        for (op, want) in [(1, Effect::Write), (0, Effect::ReadWrite)] {
            let e = b.op(
                "pld.system.notify",
                vec![s.clone(), p.clone(), ints(&[0, 0]), Expr::int(1)],
                vec![("op", Attr::Int(op))],
            )?;
            let c = e.as_call().unwrap();
            assert_eq!(def.arg_effects(c)[0], want, "op={op}");
            assert_eq!(def.arg_effects(c)[1], Effect::None);
        }
        let w = b.op(
            "pld.system.wait",
            vec![s.clone(), ints(&[0, 0]), Expr::int(1)],
            vec![("cmp", Attr::Int(1))],
        )?;
        let wd = reg.lookup("pld.system.wait").unwrap();
        assert!(wd.arg_effects(w.as_call().unwrap()).iter().all(|e| !e.writes()));
        Ok(())
    })
    .unwrap();
}

fn wait(params: &[Type], offsets: Expr, expected: Expr, cmp: i64) -> Result<Type, pld_ir::Diagnostic> {
    call(params, "pld.system.wait", |v| vec![v[0].clone(), offsets, expected], vec![("cmp", int(cmp))])
}

#[test]
fn wait_a11_and_rules() {
    // A.11 #1
    assert_eq!(
        ok(call(
            &[dt(&[4], INT32), scalar(INT32)],
            "pld.system.wait",
            |v| vec![v[0].clone(), ints(&[0]), v[1].clone()],
            vec![("cmp", int(1))]
        )),
        Type::Unknown
    );
    // A.11 #2
    err(wait(&[tensor(&[4], INT32)], ints(&[0]), Expr::int(1), 0), "DistributedTensor");
    // A.11 #3: wait does not force INT32.
    ok(wait(&[dt(&[64], FP32)], ints(&[0]), Expr::int(1), 0));
    err(
        wait(&[dt(&[4, 1], INT32)], ints(&[0]), Expr::int(1), 1),
        "offsets rank (1) must match target tensor rank (2)",
    );
    err(wait(&[dt(&[4], INT32)], Expr::int(0), Expr::int(1), 1), "offsets must be a tuple");
    // Offsets and expected value swapped: the error says which argument is which.
    let d = err(wait(&[dt(&[4], INT32)], Expr::int(1), ints(&[0]), 1), "arguments 2 and 3 look swapped");
    assert!(
        d.message.contains("argument 2 is the offsets")
            && d.message.contains("argument 3 the expected value")
    );
    assert_eq!(d.help, ["write pld.system.wait(signal, [offsets...], expected, cmp=...)"]);
    assert_eq!(d.code(), Some("E0102"), "a signal rule");
    err(
        call(
            &[dt(&[4], INT32), tensor(&[1], INT32)],
            "pld.system.wait",
            |v| vec![v[0].clone(), ints(&[0]), v[1].clone()],
            vec![("cmp", int(1))],
        ),
        "pld.system.wait expected must be a scalar",
    );
    err(
        wait(&[dt(&[4], INT32)], ints(&[0]), Expr::int(1), 5),
        "pld.system.wait cmp must be WaitCmp.Eq or WaitCmp.Ge (got int 5)",
    );
    err(
        call(&[dt(&[4], INT32)], "pld.system.wait", |v| vec![v[0].clone(), ints(&[0]), Expr::int(1)], vec![]),
        "missing kwarg 'cmp' on pld.system.wait",
    );
}

fn defer(params: &[Type], offsets: Expr, expected: Expr, cmp: i64) -> Result<Type, pld_ir::Diagnostic> {
    call(params, "pld.system.defer_wait", |v| vec![v[0].clone(), offsets, expected], vec![("cmp", int(cmp))])
}

#[test]
fn defer_wait_a12() {
    let sig = dt(&[4], INT32);
    // #1
    assert_eq!(ok(defer(&[sig.clone()], ints(&[0]), Expr::int(1), 1)), Type::Unknown);
    // #2: INDEX vars for offset and expected.
    ok(call(
        &[sig.clone(), scalar(INDEX), scalar(INDEX)],
        "pld.system.defer_wait",
        |v| vec![v[0].clone(), Expr::tuple(vec![v[1].clone()]), v[2].clone()],
        vec![("cmp", int(1))],
    ));
    // #3
    let d = err(defer(&[sig.clone()], ints(&[0]), Expr::int(1), 0), "only supports WaitCmp.Ge");
    assert!(d.notes.iter().any(|n| n.contains("pld.system.wait")), "names the sibling op");
    // #4
    err(defer(&[dt(&[], INT32)], ints(&[]), Expr::int(1), 1), "signal rank must be at least 1");
    // #5
    err(
        defer(&[sig.clone()], Expr::tuple(vec![Expr::float(0.0)]), Expr::int(1), 1),
        "offset 0 must be an integer or index scalar",
    );
    // #6
    err(
        defer(&[sig.clone()], ints(&[0]), Expr::float(1.0), 1),
        "expected must be an integer or index scalar",
    );
    // #7
    for v in [-1i64, 1 << 31] {
        err(defer(&[sig.clone()], ints(&[0]), Expr::int(v), 1), "expected must be in [0, INT32_MAX]");
    }
    // #8
    err(defer(&[dt(&[4], FP32)], ints(&[0]), Expr::int(1), 1), "signal dtype must be INT32");
    // #9
    err(defer(&[tensor(&[4], INT32)], ints(&[0]), Expr::int(1), 1), "DistributedTensor");
    // #13: FP32 scalar expected
    err(
        call(
            &[sig.clone(), scalar(FP32)],
            "pld.system.defer_wait",
            |v| vec![v[0].clone(), ints(&[0]), v[1].clone()],
            vec![("cmp", int(1))],
        ),
        "expected must be an integer or index scalar",
    );
}

#[test]
fn defer_wait_layout_and_directness() {
    let nz = match dt(&[4, 4], INT32) {
        Type::DistTensor(mut d) => {
            d.tensor =
                d.tensor.with_view(pld_ir::TensorView { layout: pld_ir::Layout::Nz, ..Default::default() });
            Type::DistTensor(d)
        }
        _ => unreachable!(),
    };
    err(defer(&[nz], ints(&[0, 0]), Expr::int(1), 1), "NZ");
    // A signal that is a computed view (a call), not a direct parameter.
    err(
        call(
            &[dt(&[8], INT32)],
            "pld.system.defer_wait",
            |v| vec![slice_call(&v[0]), ints(&[0]), Expr::int(1)],
            vec![("cmp", int(1))],
        ),
        "direct window-bound parameter",
    );
}

fn slice_call(src: &Expr) -> Expr {
    // Build `tensor.slice(src, [4], [0])` against a throwaway arena with the same param type.
    let mut values = pld_ir::Values::default();
    let _ = values.add("p0", dt(&[8], INT32), pld_ir::Span::DUMMY);
    let env = pld_ir::DeduceEnv::new(&values);
    Expr::op_call(
        "tensor.slice",
        vec![src.clone(), ints(&[4]), ints(&[0])],
        vec![],
        pld_ir::Span::DUMMY,
        &env,
    )
    .unwrap()
}
