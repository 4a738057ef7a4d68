//! MaterializeDistTensorCtx: ctx parameters, call-site forwarding, host-side queries and
//! device-side query replacement.

mod common;
use common::*;
use pld_ir::{Attr, DataType, Direction, Expr, FunctionBuilder, FunctionKind, Program, Type};

pub fn three_level() -> Program {
    // Kernel: reads its rank through the context of its window.
    let mut kb = FunctionBuilder::new("kern", FunctionKind::Aiv);
    let w = kb.param("win", dist(&[4, 8], DataType::FP32), Direction::InOut);
    kb.body(|b| {
        let ctx = b.assign_op("ctx", "pld.system.get_comm_ctx", vec![Expr::var(w)], vec![])?;
        let r = b.assign_op("me", "pld.system.rank", vec![Expr::var(ctx)], vec![])?;
        let _ = r;
        Ok(())
    })
    .unwrap();
    // Chip orchestration: forwards its window.
    let mut ob = FunctionBuilder::new("chip", FunctionKind::ChipOrch);
    let ow = ob.param("w", dist(&[4, 8], DataType::FP32), Direction::InOut);
    ob.body(|b| {
        let e = b.func_call("kern", vec![Expr::var(ow)], None, Type::Unknown);
        b.eval(e);
        Ok(())
    })
    .unwrap();
    // Host: allocates, views, dispatches per rank.
    let mut hb = FunctionBuilder::new("host", FunctionKind::Host);
    hb.body(|b| {
        let buf = b.assign_op(
            "buf",
            "pld.tensor.alloc_window_buffer",
            vec![Expr::int(128)],
            vec![("name", Attr::Str("buf".into()))],
        )?;
        let win = b.assign_op(
            "data",
            "pld.tensor.window",
            vec![Expr::var(buf), Expr::ints(&[4, 8])],
            vec![("dtype", Attr::DType(DataType::FP32))],
        )?;
        let ws = b.assign_op("ws", "pld.system.world_size", vec![], vec![])?;
        b.for_range("r", (Expr::int(0), Expr::var(ws), Expr::int(1)), vec![], |b, r, _| {
            let e = b.func_call("chip", vec![Expr::var(win)], Some(Expr::var(r)), Type::Unknown);
            b.eval(e);
            Ok(vec![])
        })?;
        Ok(())
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(hb.finish());
    p.add_function(ob.finish());
    p.add_function(kb.finish());
    p
}

#[test]
fn contexts_become_parameters_and_arguments() {
    init();
    let mut p = three_level();
    run(&mut p, &["MaterializeDistTensorCtx"]).unwrap();
    let host = func_text(&p, "host");
    check_in_order(
        &host,
        &["data_ctx: pld.CommCtx = pld.system.get_comm_ctx(data)", "self.chip(data, data_ctx, device=r)"],
    );
    let chip = func_text(&p, "chip");
    check_in_order(&chip, &["w_ctx: pld.CommCtx", "self.kern(w, w_ctx)"]);
    let kern = func_text(&p, "kern");
    assert!(kern.contains("win_ctx: pld.CommCtx"), "{kern}");
    assert!(kern.contains("pld.system.rank(win_ctx)"), "{kern}");
    assert!(!kern.contains("get_comm_ctx"), "{kern}");
}

#[test]
fn device_query_without_a_parameter_is_rejected() {
    init();
    // A chip orchestration calling a kernel with a window it cannot trace to a parameter.
    let mut p = three_level();
    let chip = p.function_mut("chip").unwrap();
    let ghost = chip.values.add("ghost", dist(&[4, 8], DataType::FP32), pld_ir::Span::DUMMY);
    let b = pld_ir::Builder::new(&mut chip.values, FunctionKind::ChipOrch);
    let bad = b.func_call("kern", vec![Expr::var(ghost)], None, Type::Unknown);
    chip.body.stmts.insert(0, pld_ir::Stmt::new(pld_ir::StmtKind::Eval(bad), pld_ir::Span::DUMMY));
    let err = pld_passes::run_pass(
        &mut p,
        "MaterializeDistTensorCtx",
        &pld_passes::PipelineOptions { verify: false, ..Default::default() },
    )
    .unwrap_err();
    assert!(messages(&err).contains("only host orchestration can query a context"), "{}", messages(&err));
}

#[test]
fn merging_two_windows_in_an_if_is_rejected() {
    init();
    let mut kb = FunctionBuilder::new("kern", FunctionKind::Aiv);
    let a = kb.param("a", dist(&[4, 8], DataType::FP32), Direction::InOut);
    let b2 = kb.param("b", dist(&[4, 8], DataType::FP32), Direction::InOut);
    let flag = kb.param("flag", Type::Scalar(DataType::BOOL), Direction::In);
    kb.body(|b| {
        let m =
            b.if_else(Expr::var(flag), &["m"], |_| Ok(vec![Expr::var(a)]), |_| Ok(vec![Expr::var(b2)]))?;
        let ctx = b.assign_op("ctx", "pld.system.get_comm_ctx", vec![Expr::var(m[0])], vec![])?;
        let _ = ctx;
        Ok(())
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(kb.finish());
    let e = run(&mut p, &["MaterializeDistTensorCtx"]).unwrap_err();
    let m = messages(&e);
    assert!(m.contains("different windows"), "{m}");
}

#[test]
fn a_query_nested_in_an_expression_reads_the_context_parameter() {
    init();
    // `pld.rank(pld.get_comm_ctx(win))` written as one expression.
    let mut p = three_level();
    let kern = p.function_mut("kern").unwrap();
    let w = kern.params[0].value;
    kern.body.stmts.clear();
    let mut b = pld_ir::Builder::new(&mut kern.values, FunctionKind::Aiv);
    let ctx = b.op("pld.system.get_comm_ctx", vec![Expr::var(w)], vec![]).unwrap();
    let me = b.op("pld.system.rank", vec![ctx], vec![]).unwrap();
    b.assign("me", me);
    kern.body.stmts = b.finish().0;
    run(&mut p, &["MaterializeDistTensorCtx"]).unwrap();
    let kern = func_text(&p, "kern");
    assert!(kern.contains("pld.system.rank(win_ctx)"), "{kern}");
    assert!(!kern.contains("get_comm_ctx"), "{kern}");
}

#[test]
fn a_context_parameter_name_avoids_the_function_s_value_names() {
    init();
    // The kernel already has a value named `win_ctx` (its own query) and two windows whose
    // context names would collide with it and with each other's suffix.
    let mut kb = FunctionBuilder::new("kern", FunctionKind::Aiv);
    let w = kb.param("win", dist(&[4, 8], DataType::FP32), Direction::InOut);
    let _w1 = kb.param("win_ctx", dist(&[4, 8], DataType::FP32), Direction::InOut);
    kb.body(|b| {
        let ctx = b.assign_op("win_ctx_1", "pld.system.get_comm_ctx", vec![Expr::var(w)], vec![])?;
        b.assign_op("me", "pld.system.rank", vec![Expr::var(ctx)], vec![])?;
        Ok(())
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(kb.finish());
    run(&mut p, &["MaterializeDistTensorCtx"]).unwrap();
    let kern = func_text(&p, "kern");
    // `win_ctx` and `win_ctx_1` are taken: the first window's context is `win_ctx_2`; the
    // second window (`win_ctx`) gets `win_ctx_ctx`.
    check_in_order(
        &kern,
        &["win_ctx_2: pld.CommCtx", "win_ctx_ctx: pld.CommCtx", "pld.system.rank(win_ctx_2)"],
    );
}
