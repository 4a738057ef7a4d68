//! OutlineIncoreScopes and the deferred-waiter contract (outliner and ExpandMixedKernel).

mod common;
use common::*;
use pld_ir::{
    Attr, Builder, DataType, Diagnostic, Direction, Expr, FunctionBuilder, FunctionKind, Program, ScopeKind,
};

fn chip(
    body: impl FnOnce(&mut Builder<'_>, pld_ir::ValueId, pld_ir::ValueId) -> Result<(), Diagnostic>,
) -> Program {
    let mut fb = FunctionBuilder::new("orch", FunctionKind::ChipOrch);
    let x = fb.param("x", tensor(&[8, 8], DataType::FP32), Direction::In);
    let sig = fb.param("sig", dist(&[4, 1], DataType::INT32), Direction::InOut);
    fb.body(|b| body(b, x, sig)).unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    p
}

fn at(
    b: &mut Builder<'_>,
    attrs: Vec<(&str, Attr)>,
    body: impl FnOnce(&mut Builder<'_>) -> Result<(), Diagnostic>,
) -> Result<(), Diagnostic> {
    b.scope(ScopeKind::At { task: None }, attrs, body)
}

fn defer(b: &mut Builder<'_>, sig: pld_ir::ValueId, expected: Expr) -> Result<(), Diagnostic> {
    b.eval_op(
        "pld.system.defer_wait",
        vec![Expr::var(sig), Expr::ints(&[0, 0]), expected],
        vec![("cmp", Attr::Int(1))],
    )
}

#[test]
fn region_becomes_an_incore_function_with_params_and_results() {
    init();
    let mut p = chip(|b, x, _| {
        let mut out = None;
        at(b, vec![], |b| {
            let v = b.assign_op(
                "v",
                "tile.load",
                vec![Expr::var(x), Expr::ints(&[0, 0]), Expr::ints(&[8, 8])],
                vec![],
            )?;
            out = Some(b.assign_op("w", "tile.adds", vec![Expr::var(v), Expr::float(1.0)], vec![])?);
            Ok(())
        })?;
        let w = out.unwrap();
        b.ret(vec![Expr::var(w)]);
        Ok(())
    });
    run(&mut p, &["OutlineIncoreScopes"]).unwrap();
    let orch = func_text(&p, "orch");
    assert!(
        orch.contains("w: pl.Tile[[8, 8], pl.FP32, pl.MemorySpace.Vec] = self.orch_incore_0(x)"),
        "{orch}"
    );
    assert!(!orch.contains("pl.at("), "{orch}");
    let k = func_text(&p, "orch_incore_0");
    check_in_order(
        &k,
        &[
            "FunctionType.InCore",
            "def orch_incore_0(self, x: pl.Tensor[[8, 8], pl.FP32])",
            "pl.tile.load(x",
            "return w",
        ],
    );
}

#[test]
fn waiter_region_is_marked_and_validated() {
    init();
    let mut p = chip(|b, _, sig| {
        at(b, vec![], |b| {
            b.for_range("i", (Expr::int(0), Expr::int(4), Expr::int(1)), vec![], |b, i, _| {
                defer(b, sig, Expr::var(i))?;
                Ok(vec![])
            })?;
            Ok(())
        })
    });
    run(&mut p, &["OutlineIncoreScopes"]).unwrap();
    let k = p.function("orch_incore_0").unwrap();
    assert_eq!(k.attr("deferred_completion_waiter"), Some(&Attr::Bool(true)));
    // ExpandMixedKernel accepts it (a chip orchestration calls it) and makes it AIV.
    run(&mut p, &["ExpandMixedKernel"]).unwrap();
    assert_eq!(p.function("orch_incore_0").map(|f| f.kind), Some(FunctionKind::Aiv));
}

fn waiter_error(
    body: impl FnOnce(&mut Builder<'_>, pld_ir::ValueId, pld_ir::ValueId) -> Result<(), Diagnostic>,
) -> String {
    let mut p = chip(body);
    match run(&mut p, &["OutlineIncoreScopes"]) {
        Err(e) => messages(&e),
        Ok(()) => panic!("accepted:\n{}", pld_ir::print_program(&p)),
    }
}

#[test]
fn waiter_contract_violations_are_rejected() {
    init();
    let m = waiter_error(|b, _, sig| {
        at(b, vec![("allow_early_resolve", Attr::Bool(true))], |b| defer(b, sig, Expr::int(1)))
    });
    assert!(m.contains("allow_early_resolve"), "{m}");
    // A waiter under a launch scope is not its own task (one in a loop is: see task_deps.rs).
    let m = waiter_error(|b, _, sig| {
        b.scope(ScopeKind::Spmd, vec![], |b| at(b, vec![], |b| defer(b, sig, Expr::int(1))))
    });
    assert!(m.contains("not nested in pl.spmd"), "{m}");
    // 65 static registrations: over budget; 64 is fine.
    let m = waiter_error(|b, _, sig| {
        at(b, vec![], |b| {
            b.for_range("i", (Expr::int(0), Expr::int(65), Expr::int(1)), vec![], |b, _, _| {
                defer(b, sig, Expr::int(1))?;
                Ok(vec![])
            })?;
            Ok(())
        })
    });
    assert!(m.contains("at most 64"), "{m}");
    let mut ok = chip(|b, _, sig| {
        at(b, vec![], |b| {
            b.for_range("i", (Expr::int(0), Expr::int(64), Expr::int(1)), vec![], |b, _, _| {
                defer(b, sig, Expr::int(1))?;
                Ok(vec![])
            })?;
            Ok(())
        })
    });
    run(&mut ok, &["OutlineIncoreScopes"]).unwrap();
    // A dynamic registration loop.
    let m = waiter_error(|b, x, sig| {
        at(b, vec![], |b| {
            let n = b.assign_op("n", "tensor.read", vec![Expr::var(x), Expr::ints(&[0, 0])], vec![])?;
            b.for_range("i", (Expr::int(0), Expr::var(n), Expr::int(1)), vec![], |b, _, _| {
                defer(b, sig, Expr::int(1))?;
                Ok(vec![])
            })?;
            Ok(())
        })
    });
    assert!(m.contains("static positive trip count") || m.contains("scalars"), "{m}");
    // A tensor read after the first registration.
    let m = waiter_error(|b, x, sig| {
        at(b, vec![], |b| {
            defer(b, sig, Expr::int(1))?;
            b.assign_op("late", "tensor.read", vec![Expr::var(x), Expr::ints(&[0, 0])], vec![])?;
            Ok(())
        })
    });
    assert!(m.contains("after its first registration"), "{m}");
    // Any other operation.
    let m = waiter_error(|b, x, sig| {
        at(b, vec![], |b| {
            b.assign_op(
                "v",
                "tile.load",
                vec![Expr::var(x), Expr::ints(&[0, 0]), Expr::ints(&[8, 8])],
                vec![],
            )?;
            defer(b, sig, Expr::int(1))
        })
    });
    assert!(m.contains("deferred waiter"), "{m}");
}

#[test]
fn hand_written_or_forged_waiters_are_rejected_by_expand_mixed_kernel() {
    init();
    // A hand-written AIV kernel with defer_wait and no marker.
    let mut fb = FunctionBuilder::new("w", FunctionKind::Aiv);
    let sig = fb.param("sig", dist(&[4, 1], DataType::INT32), Direction::In);
    fb.body(|b| defer(b, sig, Expr::int(1))).unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    let e = run(&mut p, &["ExpandMixedKernel"]).unwrap_err();
    assert!(messages(&e).contains("bypasses the deferred-waiter task contract"), "{}", messages(&e));
    // A forged marker without any orchestration call site.
    let mut fb = FunctionBuilder::new("w", FunctionKind::InCore);
    let sig = fb.param("sig", dist(&[4, 1], DataType::INT32), Direction::In);
    fb.attr("deferred_completion_waiter", Attr::Bool(true));
    fb.body(|b| defer(b, sig, Expr::int(1))).unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    let e = run(&mut p, &["ExpandMixedKernel"]).unwrap_err();
    assert!(messages(&e).contains("no task-level Orchestration call site"), "{}", messages(&e));
}
