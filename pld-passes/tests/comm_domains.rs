//! MaterializeCommDomainScopes: device-set inference, window binding, grouping, errors.

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

/// Host with windows `a` (dispatched to all ranks), `b` (dispatched to device 0 and 1 by a
/// constant loop), `c` (device 3), `dead` (no dispatch) when `with_dead`.
fn host(with_dead: bool) -> Program {
    let mut cb = FunctionBuilder::new("chip", FunctionKind::ChipOrch);
    cb.param("w", dist(&[4, 8], DataType::FP32), Direction::InOut);
    let chip = cb.finish();
    let mut hb = FunctionBuilder::new("host", FunctionKind::Host);
    hb.body(|b| {
        let a = alloc(b, "a", &[4, 8], DataType::FP32)?;
        let a2 = alloc(b, "a2", &[4, 8], DataType::FP32)?;
        let bw = alloc(b, "b", &[4, 8], DataType::FP32)?;
        let c = alloc(b, "c", &[4, 8], DataType::FP32)?;
        if with_dead {
            alloc(b, "dead", &[4, 8], DataType::FP32)?;
        }
        let ws = b.assign_op("ws", "pld.system.world_size", vec![], vec![])?;
        b.for_range("r", (Expr::int(0), Expr::var(ws), Expr::int(1)), vec![], |b, r, _| {
            for w in [a, a2] {
                let e = b.func_call("chip", vec![Expr::var(w)], Some(Expr::var(r)), Type::Unknown);
                b.eval(e);
            }
            Ok(vec![])
        })?;
        b.for_range("r", (Expr::int(0), Expr::int(2), Expr::int(1)), vec![], |b, r, _| {
            let e = b.func_call("chip", vec![Expr::var(bw)], Some(Expr::var(r)), Type::Unknown);
            b.eval(e);
            Ok(vec![])
        })?;
        let e = b.func_call("chip", vec![Expr::var(c)], Some(Expr::int(3)), Type::Unknown);
        b.eval(e);
        Ok(())
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(hb.finish());
    p.add_function(chip);
    p
}

#[test]
fn windows_are_grouped_by_device_set_and_bound() {
    init();
    let mut p = host(false);
    run(&mut p, &["MaterializeCommDomainScopes"]).unwrap();
    let t = func_text(&p, "host");
    check_in_order(
        &t,
        &[
            r#"with pld.comm_domain(name="comm_d0", devices=[], windows=["a", "a2"]):"#,
            r#"with pld.comm_domain(name="comm_d1", devices=[0, 1], windows=["b"]):"#,
            r#"with pld.comm_domain(name="comm_d2", devices=[3], windows=["c"]):"#,
            "window_buffer=a\"",
        ],
    );
    // Chip parameters stay unbound.
    assert!(!func_text(&p, "chip").contains("window_buffer"));
    // Idempotent.
    let once = pld_ir::print_program(&p);
    run(&mut p, &["MaterializeCommDomainScopes"]).unwrap();
    assert_eq!(once, pld_ir::print_program(&p));
}

#[test]
fn dead_allocation_is_reported() {
    init();
    let mut p = host(true);
    let err = run(&mut p, &["MaterializeCommDomainScopes"]).unwrap_err();
    assert!(
        messages(&err).contains("window buffer `dead` is not consumed by any chip orchestration dispatch"),
        "{}",
        messages(&err)
    );
}

/// A host that dispatches `chip` (one `[4, 8]` window parameter) with `device=r` for `r` in
/// the range `bounds` builds (start, end, step), then the result of `MaterializeCommDomainScopes`.
fn device_loop(bounds: &dyn Fn(&mut pld_ir::Builder<'_>) -> (Expr, Expr, Expr)) -> String {
    init();
    let mut cb = FunctionBuilder::new("chip", FunctionKind::ChipOrch);
    cb.param("w", dist(&[4, 8], DataType::FP32), Direction::InOut);
    let chip = cb.finish();
    let mut hb = FunctionBuilder::new("host", FunctionKind::Host);
    hb.body(|b| {
        let a = alloc(b, "a", &[4, 8], DataType::FP32)?;
        let range = bounds(b);
        b.for_range("r", range, vec![], |b, r, _| {
            let e = b.func_call("chip", vec![Expr::var(a)], Some(Expr::var(r)), Type::Unknown);
            b.eval(e);
            Ok(vec![])
        })?;
        Ok(())
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(hb.finish());
    p.add_function(chip);
    messages(&run(&mut p, &["MaterializeCommDomainScopes"]).unwrap_err())
}

#[test]
fn a_device_loop_with_a_non_unit_step_is_rejected() {
    let m = device_loop(&|_| (Expr::int(0), Expr::int(4), Expr::int(2)));
    assert!(m.contains("step 1"), "{m}");
}

/// `range(1, world_size())` and `range(0, world_size(), 2)` are parts of the runtime rank
/// count, not every rank: each is refused at its `device=` (they used to be taken as every
/// rank, so a window only those devices staged was read, uninitialised, on the others).
#[test]
fn a_device_loop_over_part_of_world_size_is_rejected_not_taken_as_every_rank() {
    for (start, step) in [(1, 1), (0, 2)] {
        let m = device_loop(&|b| {
            let ws = b.assign_op("ws", "pld.system.world_size", vec![], vec![]).unwrap();
            (Expr::int(start), Expr::var(ws), Expr::int(step))
        });
        assert!(m.contains("is not a static device set"), "{m}");
        // One root error: the window the dispatch orphans is a label on it, not a second error.
        assert!(!m.contains("is not consumed"), "no cascade: {m}");
        assert_eq!(m.lines().count(), 1, "{m}");
    }
}
