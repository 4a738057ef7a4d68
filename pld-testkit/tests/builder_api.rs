//! The builder API a downstream toolchain uses: a host orchestrator that allocates a window
//! and dispatches one chip function per rank prints as DSL text and verifies; malformed
//! programs come back as collected diagnostics, never a panic.

use pld_ir::{
    Attr, Block, DataType, Direction, Expr, ExprKind, FunctionBuilder, FunctionKind, IterArg, Program, Span,
    Stmt, StmtKind, Type, ValueId,
};

fn chip_function() -> pld_ir::Function {
    let mut f = FunctionBuilder::new("chip_orch", FunctionKind::ChipOrch);
    f.param("data", Type::dist_tensor(vec![Expr::int(1), Expr::int(256)], DataType::FP32), Direction::InOut);
    f.finish()
}

fn host_program() -> Program {
    let mut host = FunctionBuilder::new("host_orch", FunctionKind::Host);
    host.body(|b| {
        let buf = b.op(
            "pld.tensor.alloc_window_buffer",
            vec![Expr::int(1024)],
            vec![("name", Attr::Str("data_buf".into()))],
        )?;
        let buf = b.assign("data_buf", buf);
        let view = b.assign_op(
            "data",
            "pld.tensor.window",
            vec![Expr::var(buf), Expr::ints(&[1, 256])],
            vec![("dtype", Attr::DType(DataType::FP32))],
        )?;
        let ws = b.assign_op("ws", "pld.system.world_size", vec![], vec![])?;
        b.for_range("r", (Expr::int(0), Expr::var(ws), Expr::int(1)), vec![], |b, r, _| {
            let call = b.func_call("chip_orch", vec![Expr::var(view)], Some(Expr::var(r)), Type::Unknown);
            b.eval(call);
            Ok(vec![])
        })?;
        Ok(())
    })
    .expect("host body builds");
    let mut p = Program::new("HostDispatch");
    p.add_function(chip_function());
    p.add_function(host.finish());
    p
}

#[test]
fn host_dispatch_program_prints_and_verifies() {
    pld_testkit::init();
    let p = host_program();
    pld_ir::verify_program(&p).expect("verifies");
    let text = pld_ir::print_program(&p);
    let expected = r#"import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class HostDispatch:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, data: pl.InOut[pld.DistributedTensor[[1, 256], pl.FP32]]):
        pass

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self):
        data_buf: pld.Ptr = pld.tensor.alloc_window_buffer(1024, name="data_buf")
        data: pld.DistributedTensor[[1, 256], pl.FP32] = pld.tensor.window(data_buf, [1, 256], dtype=pl.FP32)
        ws: pl.Scalar[pl.INT64] = pld.system.world_size()
        for r in pl.range(0, ws):
            self.chip_orch(data, device=r)
"#;
    assert_eq!(text, expected);
}

#[test]
fn deducer_rejects_window_of_non_pointer() {
    pld_testkit::init();
    let mut host = FunctionBuilder::new("h", FunctionKind::Host);
    let err = host
        .body(|b| {
            b.assign_op(
                "v",
                "pld.tensor.window",
                vec![Expr::int(3), Expr::ints(&[4])],
                vec![("dtype", Attr::DType(DataType::FP32))],
            )?;
            Ok(())
        })
        .expect_err("window of an int must be rejected");
    assert!(err.message.contains("pld.tensor.window 'buf' must have type Ptr"), "{}", err.message);
}

fn stmt(kind: StmtKind) -> Stmt {
    Stmt::new(kind, Span::DUMMY)
}

#[test]
fn malformed_programs_give_collected_diagnostics() {
    pld_testkit::init();
    let mut f = pld_ir::Function::new("bad", FunctionKind::InCore);
    let x = f.values.add("x", Type::Scalar(DataType::INDEX), Span::DUMMY);
    let y = f.values.add("y", Type::Scalar(DataType::INDEX), Span::DUMMY);
    let i = f.values.add("i", Type::Scalar(DataType::INDEX), Span::DUMMY);
    let acc = f.values.add("acc", Type::Scalar(DataType::INDEX), Span::DUMMY);
    let out = f.values.add("out", Type::Scalar(DataType::INDEX), Span::DUMMY);
    f.body.stmts = vec![
        // use before def: y is read before it is assigned
        stmt(StmtKind::Assign { targets: vec![x], value: Expr::var(y) }),
        stmt(StmtKind::Assign { targets: vec![y], value: Expr::int(1) }),
        // double definition of x
        stmt(StmtKind::Assign { targets: vec![x], value: Expr::int(2) }),
        // wrong yield arity: one iter-arg, two yielded values
        stmt(StmtKind::For {
            var: i,
            start: Expr::int(0),
            stop: Expr::int(4),
            step: Expr::int(1),
            iter_args: vec![IterArg { value: acc, init: Expr::int(0) }],
            body: Block { stmts: vec![stmt(StmtKind::Yield(vec![Expr::var(acc), Expr::var(acc)]))] },
            results: vec![out],
            kind: Default::default(),
        }),
        // the induction variable escapes its loop
        stmt(StmtKind::Return(vec![Expr::new(ExprKind::Var(i), Span::DUMMY), Expr::var(ValueId(99))])),
    ];
    let diags = pld_ir::verify_function(&f).expect_err("malformed");
    let msgs: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
    assert!(msgs.iter().any(|m| m.contains("`y` (%v1) is used before its definition")), "{msgs:#?}");
    assert!(msgs.iter().any(|m| m.contains("`x` (%v0) is defined twice")), "{msgs:#?}");
    assert!(msgs.iter().any(|m| m.contains("yield carries 2 value(s), but 1 are expected")), "{msgs:#?}");
    assert!(msgs.iter().any(|m| m.contains("`i` (%v2) is used outside the scope")), "{msgs:#?}");
    assert!(msgs.iter().any(|m| m.contains("value %v99 is out of range")), "{msgs:#?}");
    assert_eq!(diags.len(), 5, "{msgs:#?}");
}

#[test]
fn unknown_op_suggests_nearest_name() {
    let reg = pld_testkit::init();
    let err = reg.lookup_or_error("pld.tensor.windw", Span::DUMMY).expect_err("unknown");
    assert_eq!(err.message, "unknown op `pld.tensor.windw`");
    assert_eq!(err.help, ["did you mean `pld.tensor.window`?"]);
    assert_eq!(err.code(), Some("E0001"));
}

#[test]
fn bad_kwargs_are_diagnosed() {
    pld_testkit::init();
    let mut host = FunctionBuilder::new("h", FunctionKind::Host);
    let err = host
        .body(|b| {
            b.assign_op(
                "p",
                "pld.tensor.alloc_window_buffer",
                vec![Expr::int(64)],
                vec![("nam", Attr::Str("x".into()))],
            )?;
            Ok(())
        })
        .expect_err("unknown kwarg");
    assert!(
        err.message.contains("unknown kwarg 'nam' for operator 'pld.tensor.alloc_window_buffer'"),
        "{}",
        err.message
    );
    let err = host
        .body(|b| {
            b.assign_op("p", "pld.tensor.alloc_window_buffer", vec![Expr::int(64)], vec![])?;
            Ok(())
        })
        .expect_err("missing kwarg");
    assert_eq!(err.message, "missing kwarg 'name' on pld.tensor.alloc_window_buffer");
}
