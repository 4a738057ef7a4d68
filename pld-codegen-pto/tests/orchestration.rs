//! The orchestration description: kernels with their runtime argument order, window buffers
//! with aligned sizes, comm domains with buffer offsets, per-rank dispatches, builtin variants.

mod common;
use common::*;
use pld_ir::{
    Attr, BinOp, DataType, Direction, Expr, FunctionBuilder, FunctionKind, Program, ScopeKind, Type,
};

fn push_program() -> Program {
    init();
    // InCore kernel: push(inp, data, signal, peer) + ctxs.
    let push = kernel(
        "push",
        FunctionKind::Aiv,
        &[
            ("inp", tensor(&[1, 64], DataType::FP32)),
            ("data", dist(&[1, 64], DataType::FP32)),
            ("signal", dist(&[2, 1], DataType::INT32)),
            ("peer", Type::Scalar(DataType::INT32)),
        ],
        |b, p| {
            let t = b.assign_op("t", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[1, 64])], vec![])?;
            b.eval_op("pld.tile.remote_store", vec![v(t), v(p[1]), v(p[3]), ints(&[0, 0])], vec![])?;
            b.eval_op(
                "pld.system.notify",
                vec![v(p[2]), v(p[3]), ints(&[0, 0]), Expr::int(1)],
                vec![("op", ai(0))],
            )?;
            Ok(())
        },
    );
    // Chip orchestration forwarding to the kernel.
    let mut chip = FunctionBuilder::new("chip_orch", FunctionKind::ChipOrch);
    let ci = chip.param("inp", tensor(&[1, 64], DataType::FP32), Direction::In);
    let cd = chip.param("data", dist(&[1, 64], DataType::FP32), Direction::InOut);
    let cs = chip.param("signal", dist(&[2, 1], DataType::INT32), Direction::InOut);
    let cp = chip.param("peer", Type::Scalar(DataType::INT32), Direction::In);
    let cdc = chip.param("data_ctx", Type::CommCtx, Direction::In);
    let csc = chip.param("signal_ctx", Type::CommCtx, Direction::In);
    chip.body(|b| {
        let call = b.func_call("push", vec![v(ci), v(cd), v(cs), v(cp), v(cdc), v(csc)], None, Type::Unknown);
        b.eval(call);
        Ok(())
    })
    .unwrap();
    // Host: two window buffers in one domain, a dispatch loop over two ranks.
    let mut host = FunctionBuilder::new("host_orch", FunctionKind::Host);
    let inputs = host.param("inputs", tensor(&[1, 64], DataType::FP32), Direction::In);
    host.body(|b| {
        let db = b.assign_op(
            "data_buf",
            "pld.tensor.alloc_window_buffer",
            vec![Expr::int(256)],
            vec![("name", Attr::Str("data_buf".into()))],
        )?;
        let sb = b.assign_op(
            "signal_buf",
            "pld.tensor.alloc_window_buffer",
            vec![Expr::int(8)],
            vec![("name", Attr::Str("signal_buf".into()))],
        )?;
        let domain = ScopeKind::CommDomain {
            name: "comm_d0".into(),
            devices: vec![0, 1],
            windows: vec!["data_buf".into(), "signal_buf".into()],
        };
        b.scope(domain, vec![], |b| {
            let data = b.assign_op(
                "data",
                "pld.tensor.window",
                vec![v(db), ints(&[1, 64])],
                vec![("dtype", Attr::DType(DataType::FP32))],
            )?;
            let sig = b.assign_op(
                "signal",
                "pld.tensor.window",
                vec![v(sb), ints(&[2, 1])],
                vec![("dtype", Attr::DType(DataType::INT32))],
            )?;
            b.for_range("r", (Expr::int(0), Expr::int(2), Expr::int(1)), vec![], |b, r, _| {
                let dctx = b.assign_op("data_ctx", "pld.system.get_comm_ctx", vec![v(data)], vec![])?;
                let sctx = b.assign_op("signal_ctx", "pld.system.get_comm_ctx", vec![v(sig)], vec![])?;
                let peer = Expr::binary(BinOp::Sub, Expr::int(1), v(r));
                let call = b.func_call(
                    "chip_orch",
                    vec![v(inputs), v(data), v(sig), peer, v(dctx), v(sctx)],
                    Some(v(r)),
                    Type::Unknown,
                );
                b.eval(call);
                Ok(vec![])
            })?;
            Ok(())
        })
    })
    .unwrap();
    program(vec![host.finish(), chip.finish(), push])
}

#[test]
fn push_program_description() {
    let out = emit(&push_program());
    assert_eq!(out.modules.len(), 1);
    check(
        &out.orchestration,
        r#"
        CHECK: "format": "pld-orchestration/1",
        CHECK: "target": "a2a3",
        CHECK: "kernels": [
        CHECK: "name": "push",
        CHECK-NEXT: "module": "push.pto",
        CHECK-NEXT: "kind": "vector",
        CHECK: "name": "inp",
        CHECK-NEXT: "kind": "tensor",
        CHECK: "name": "data",
        CHECK-NEXT: "kind": "window",
        CHECK: "name": "signal",
        CHECK: "name": "peer",
        CHECK-NEXT: "kind": "scalar",
        CHECK: "name": "data_ctx",
        CHECK-NEXT: "kind": "comm_ctx",
        CHECK-NEXT: "pairs": "data"
        CHECK: "name": "signal_ctx",
        CHECK-NEXT: "kind": "comm_ctx",
        CHECK-NEXT: "pairs": "signal"
        CHECK: "window_buffers": [
        CHECK: "name": "data_buf",
        CHECK-NEXT: "domain": "comm_d0",
        CHECK-NEXT: "size": 256,
        CHECK-NEXT: "nbytes": 256
        CHECK: "name": "signal_buf",
        CHECK-NEXT: "domain": "comm_d0",
        CHECK-NEXT: "size": 8,
        CHECK-NEXT: "nbytes": 32
        CHECK: "comm_domains": [
        CHECK: "name": "comm_d0",
        CHECK-NEXT: "function": "host_orch",
        CHECK-NEXT: "devices": [
        CHECK-NEXT: 0,
        CHECK-NEXT: 1
        CHECK: "window_size": 288,
        CHECK: "name": "data_buf",
        CHECK-NEXT: "offset": 0,
        CHECK: "name": "signal_buf",
        CHECK-NEXT: "offset": 256,
        CHECK: "dispatches": [
        CHECK: "caller": "host_orch",
        CHECK-NEXT: "callee": "chip_orch",
        CHECK-NEXT: "level": "chip",
        CHECK-NEXT: "device": "r",
        CHECK: "var": "r",
        CHECK: "ranks": [
        CHECK-NEXT: 0,
        CHECK-NEXT: 1
        CHECK: "kind": "window",
        CHECK-NEXT: "expr": "data",
        CHECK-NEXT: "buffer": "data_buf",
        CHECK-NEXT: "domain": "comm_d0",
        CHECK: "kind": "scalar",
        CHECK-NEXT: "expr": "(1 - r)",
        CHECK: "kind": "comm_ctx",
        CHECK-NEXT: "expr": "data_ctx",
        CHECK-NEXT: "buffer": "data_buf",
        CHECK: "caller": "chip_orch",
        CHECK-NEXT: "callee": "push",
        CHECK-NEXT: "level": "core",
        CHECK-NEXT: "device": null,
        CHECK: "kind": "window",
        CHECK-NEXT: "expr": "data",
        CHECK-NEXT: "buffer": "data_buf",
        CHECK-NEXT: "domain": "comm_d0",
        CHECK: "kind": "comm_ctx",
        CHECK-NEXT: "expr": "data_ctx",
        CHECK-NEXT: "buffer": "data_buf",
        CHECK: "builtins": []
        "#,
    );
    // Deterministic.
    assert_eq!(emit(&push_program()).orchestration, out.orchestration);
}

#[test]
fn symbolic_buffer_sizes_are_expressions() {
    init();
    let mut host = FunctionBuilder::new("host", FunctionKind::Host);
    let n = host.param("n", Type::Scalar(DataType::INT64), Direction::In);
    host.body(|b| {
        let size = Expr::binary(BinOp::Mul, v(n), Expr::int(4));
        b.assign_op(
            "buf",
            "pld.tensor.alloc_window_buffer",
            vec![size],
            vec![("name", Attr::Str("buf".into()))],
        )?;
        let domain =
            ScopeKind::CommDomain { name: "comm_d0".into(), devices: vec![], windows: vec!["buf".into()] };
        b.scope(domain, vec![], |_| Ok(()))
    })
    .unwrap();
    let out = emit(&program(vec![host.finish()]));
    check(
        &out.orchestration,
        r#"
        CHECK: "size": "(n * 4)",
        CHECK-NEXT: "nbytes": "((((n * 4) + 31) // 32) * 32)"
        CHECK: "devices": "all",
        CHECK-NEXT: "window_size": "((((n * 4) + 31) // 32) * 32)",
        "#,
    );
}
