//! Programs built directly as IR (the shapes passes produce: comm-domain scopes, bound
//! window types, views, attributes with awkward strings, floats, precedence) print to DSL
//! text that parses back structurally equal.

use pld_frontend::structurally_equal;
use pld_ir::expr::FloatBits;
use pld_ir::{
    Attr, BinOp, Block, DataType, Direction, DistTensorType, Expr, ExprKind, Function, FunctionKind, Param,
    Program, ScopeKind, Span, Stmt, StmtKind, TensorType, TensorView, Type, UnOp,
};

fn stmt(kind: StmtKind) -> Stmt {
    Stmt::new(kind, Span::DUMMY)
}

fn var(v: pld_ir::ValueId) -> Expr {
    Expr::var(v)
}

fn round_trip(p: &Program) {
    let _ = pld_ops::registry();
    pld_ir::verify_program(p).unwrap_or_else(|d| panic!("fixture does not verify: {d}"));
    let text = pld_ir::print_program(p);
    let q =
        pld_frontend::parse_str(&text).unwrap_or_else(|d| panic!("printed form does not parse: {d}\n{text}"));
    structurally_equal(p, &q).unwrap_or_else(|e| panic!("round trip differs: {e}\n{text}"));
    assert_eq!(text, pld_ir::print_program(&q), "print is not a fixed point");
}

#[test]
fn scalar_expressions_keep_their_shape() {
    let mut f = Function::new("arith", FunctionKind::Aiv);
    let a = f.values.add("a", Type::Scalar(DataType::INT32), Span::DUMMY);
    let b = f.values.add("b", Type::Scalar(DataType::INT32), Span::DUMMY);
    let c = f.values.add("c", Type::Scalar(DataType::INT32), Span::DUMMY);
    f.params = vec![
        Param { value: a, dir: Direction::In },
        Param { value: b, dir: Direction::In },
        Param { value: c, dir: Direction::In },
    ];
    let bin = |op, x, y| Expr::new(ExprKind::Binary(op, Box::new(x), Box::new(y)), Span::DUMMY);
    let exprs = vec![
        bin(BinOp::Sub, var(a), bin(BinOp::Sub, var(b), var(c))),
        bin(BinOp::Mul, var(a), bin(BinOp::Add, var(b), var(c))),
        bin(BinOp::Min, var(a), bin(BinOp::Max, var(b), Expr::int(-3))),
        bin(
            BinOp::Or,
            bin(BinOp::And, bin(BinOp::Lt, var(a), var(b)), bin(BinOp::Ge, var(b), var(c))),
            Expr::bool(false),
        ),
        Expr::new(ExprKind::Unary(UnOp::Not, Box::new(bin(BinOp::Eq, var(a), var(c)))), Span::DUMMY),
        Expr::new(ExprKind::Unary(UnOp::Neg, Box::new(var(a))), Span::DUMMY),
        bin(BinOp::FloorDiv, bin(BinOp::Mod, var(a), Expr::int(7)), Expr::int(2)),
        Expr::float(0.25),
        Expr::float(1e-7),
        Expr::float(f64::INFINITY),
        Expr::float(f64::NEG_INFINITY),
    ];
    for (i, e) in exprs.into_iter().enumerate() {
        let ty = e.ty(&f.values);
        let t = f.values.add(format!("t{i}"), ty, Span::DUMMY);
        f.body.stmts.push(stmt(StmtKind::Assign { targets: vec![t], value: e }));
    }
    let mut p = Program::new("Arith");
    p.add_function(f);
    round_trip(&p);
}

#[test]
fn pass_shaped_host_program_round_trips() {
    let _ = pld_ops::registry();
    let mut host = Function::new("host_orch", FunctionKind::Host);
    host.attrs = vec![("note".into(), Attr::Str("quote \" back\\slash\nnewline\ttab".into()))];
    let env_values = pld_ir::Values::default();
    let env = pld_ir::DeduceEnv::new(&env_values);
    let alloc = Expr::op_call(
        "pld.tensor.alloc_window_buffer",
        vec![Expr::int(1024)],
        vec![("name".into(), Attr::Str("data_buf".into()))],
        Span::DUMMY,
        &env,
    )
    .expect("alloc");
    let buf = host.values.add("data_buf", Type::Ptr, Span::DUMMY);
    let bound = Type::DistTensor(DistTensorType {
        tensor: TensorType::new(vec![Expr::int(1), Expr::int(256)], DataType::FP32),
        window: Some("data_buf".into()),
    });
    let view = host.values.add("data", bound, Span::DUMMY);
    let window = Expr::op_call(
        "pld.tensor.window",
        vec![var(buf), Expr::ints(&[1, 256])],
        vec![("dtype".into(), Attr::DType(DataType::FP32))],
        Span::DUMMY,
        &pld_ir::DeduceEnv::new(&host.values),
    )
    .expect("window");
    // MaterializeCommDomainScopes binds the view value's type to its buffer.
    let inner = Block {
        stmts: vec![
            stmt(StmtKind::Assign { targets: vec![buf], value: alloc }),
            stmt(StmtKind::Assign { targets: vec![view], value: window }),
        ],
    };
    host.body.stmts.push(stmt(StmtKind::Scope {
        kind: ScopeKind::CommDomain {
            name: "d0".into(),
            devices: vec![0, 1],
            windows: vec!["data_buf".into()],
        },
        attrs: Vec::new(),
        args: Vec::new(),
        body: inner,
    }));
    let mut k = Function::new("kernel", FunctionKind::InCore);
    k.attrs = vec![("core_num".into(), Attr::Int(2)), ("ratio".into(), Attr::Float(FloatBits::new(0.5)))];
    let viewed = TensorType::new(vec![Expr::int(16), Expr::int(64)], DataType::BF16).with_view(TensorView {
        stride: vec![Expr::int(128), Expr::int(1)],
        layout: pld_ir::Layout::Dn,
        valid_shape: vec![Expr::int(8), Expr::int(64)],
    });
    let t = k.values.add("t", Type::Tensor(viewed), Span::DUMMY);
    let tile = k.values.add(
        "tl",
        Type::Tile(
            pld_ir::TileType::new(
                vec![Expr::int(16), Expr::int(64)],
                DataType::FP16,
                Some(pld_ir::MemorySpace::Mat),
            )
            .with_valid_shape(vec![Expr::int(8), Expr::int(64)]),
        ),
        Span::DUMMY,
    );
    let tup = k.values.add("tp", Type::Tuple(vec![Type::Scalar(DataType::INT8), Type::CommCtx]), Span::DUMMY);
    k.params = vec![
        Param { value: t, dir: Direction::InOut },
        Param { value: tile, dir: Direction::In },
        Param { value: tup, dir: Direction::Out },
    ];
    let lane = k.values.add("lane", Type::Scalar(DataType::INDEX), Span::DUMMY);
    let x = k.values.add("x", Type::Scalar(DataType::INDEX), Span::DUMMY);
    k.body.stmts.push(stmt(StmtKind::Scope {
        kind: ScopeKind::SplitAiv { lane: Some(lane) },
        attrs: vec![("mode".into(), Attr::Str("UpDown".into()))],
        args: vec![Expr::int(2)],
        body: Block { stmts: vec![stmt(StmtKind::Assign { targets: vec![x], value: var(lane) })] },
    }));
    k.body.stmts.push(stmt(StmtKind::Scope {
        kind: ScopeKind::SplitAiv { lane: None },
        attrs: Vec::new(),
        args: vec![Expr::int(2)],
        body: Block::new(),
    }));
    let mut p = Program::new("Bound");
    p.dyn_syms = vec!["NR".into()];
    p.add_function(k);
    p.add_function(host);
    round_trip(&p);
}
