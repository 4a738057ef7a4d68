//! InsertCommFence: cache-invalidate + fence after window publishing writes, fence after
//! remote writes, whole-GM invalidate after waits and opaque calls; idempotent.

mod common;
use common::*;
use pld_ir::{Attr, DataType, Direction, Expr, FunctionBuilder, FunctionKind, Program, Type};

fn kernel(kind: FunctionKind) -> Program {
    let mut fb = FunctionBuilder::new("k", kind);
    let x = fb.param("x", tensor(&[4, 8], DataType::FP32), Direction::In);
    let plain = fb.param("plain", tensor(&[4, 8], DataType::FP32), Direction::Out);
    let win = fb.param("win", dist(&[4, 8], DataType::FP32), Direction::Out);
    let sig = fb.param("sig", dist(&[4, 1], DataType::INT32), Direction::InOut);
    fb.body(|b| {
        let v = b.assign_op(
            "v",
            "tile.load",
            vec![Expr::var(x), Expr::ints(&[0, 0]), Expr::ints(&[4, 8])],
            vec![],
        )?;
        b.eval_op("tile.store", vec![Expr::var(v), Expr::ints(&[0, 0]), Expr::var(plain)], vec![])?;
        b.eval_op("tile.store", vec![Expr::var(v), Expr::ints(&[0, 0]), Expr::var(win)], vec![])?;
        b.eval_op(
            "pld.tile.remote_store",
            vec![Expr::var(v), Expr::var(win), Expr::int(1), Expr::ints(&[0, 0])],
            vec![],
        )?;
        b.eval_op(
            "pld.system.notify",
            vec![Expr::var(sig), Expr::int(1), Expr::ints(&[0, 0]), Expr::int(1)],
            vec![("op", Attr::Int(0))],
        )?;
        b.eval_op(
            "pld.system.wait",
            vec![Expr::var(sig), Expr::ints(&[1, 0]), Expr::int(1)],
            vec![("cmp", Attr::Int(1))],
        )?;
        let e = b.func_call("helper", vec![], None, Type::Unknown);
        b.eval(e);
        Ok(())
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    p.add_function(FunctionBuilder::new("helper", FunctionKind::Opaque).finish());
    p
}

#[test]
fn markers_follow_the_publishing_writes() {
    init();
    let mut p = kernel(FunctionKind::Aiv);
    run(&mut p, &["InsertCommFence"]).unwrap();
    let t = func_text(&p, "k");
    check_in_order(
        &t,
        &[
            "pl.tile.store(v, [0, 0], plain)\n",
            "pl.tile.store(v, [0, 0], win)\n",
            "pl.system.cacheinvalid(win, [4, 8], [0, 0])\n",
            "pl.system.fence()\n",
            "pld.tile.remote_store(v, win, 1, [0, 0])\n",
            "pl.system.fence()\n",
            "pld.system.notify(",
            "pld.system.wait(",
            "pl.system.cacheinvalid()\n",
            "self.helper()\n",
            "pl.system.cacheinvalid()\n",
            "pl.system.fence()\n",
        ],
    );
    // A plain-tensor store publishes nothing.
    assert!(!t.contains("plain)\n        pl.system.cacheinvalid"), "{t}");
    assert_eq!(count(&t, "pl.system.fence()"), 3, "{t}");
    assert_eq!(count(&t, "pl.system.cacheinvalid("), 3, "{t}");
}

#[test]
fn idempotent() {
    init();
    let mut p = kernel(FunctionKind::Aiv);
    run(&mut p, &["InsertCommFence"]).unwrap();
    let once = pld_ir::print_program(&p);
    run(&mut p, &["InsertCommFence"]).unwrap();
    assert_eq!(once, pld_ir::print_program(&p));
}

#[test]
fn orchestration_is_untouched() {
    init();
    let mut fb = FunctionBuilder::new("o", FunctionKind::ChipOrch);
    let sig = fb.param("sig", dist(&[4, 1], DataType::INT32), Direction::InOut);
    fb.body(|b| {
        b.eval_op(
            "pld.system.wait",
            vec![Expr::var(sig), Expr::ints(&[1, 0]), Expr::int(1)],
            vec![("cmp", Attr::Int(1))],
        )
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    let before = pld_ir::print_program(&p);
    run(&mut p, &["InsertCommFence"]).unwrap();
    assert_eq!(before, pld_ir::print_program(&p));
}
