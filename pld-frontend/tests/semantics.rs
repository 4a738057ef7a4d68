//! What the frontend builds, beyond round-tripping: program units and names, function
//! kinds, dispatch calls with devices, per-rank slices, call result types, symbols.

use pld_ir::{Callee, ExprKind, FunctionKind, StmtKind, Type};

fn parse(name: &str) -> pld_ir::Program {
    let _ = pld_ops::registry();
    let path = format!("{}/tests/corpus/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("corpus file");
    pld_frontend::parse_str(&text).unwrap_or_else(|d| panic!("{name}: {d}"))
}

#[test]
fn jit_unit_is_named_after_its_host_entry_and_keeps_kinds() {
    let p = parse("three_level.py");
    assert_eq!(p.name, "entry");
    assert_eq!(p.dyn_syms, vec!["NR".to_string()]);
    let kinds: Vec<(&str, FunctionKind)> = p.functions.iter().map(|f| (f.name.as_str(), f.kind)).collect();
    assert_eq!(
        kinds,
        vec![
            ("bump", FunctionKind::InCore),
            ("per_device", FunctionKind::ChipOrch),
            ("entry", FunctionKind::Host)
        ]
    );
    // The chip orchestration returns what the kernel returns (inferred, not annotated).
    let chip = &p.functions[1];
    assert_eq!(chip.ret, p.functions[0].ret);
    assert!(matches!(&chip.ret[..], [Type::Tensor(_)]), "{:?}", chip.ret);
}

#[test]
fn host_dispatch_slices_per_rank_and_carries_the_device() {
    let p = parse("three_level.py");
    let host = p.function("entry").expect("host");
    let StmtKind::Assign { value: alloc, .. } = &host.body.stmts[0].kind else { panic!("alloc first") };
    let call = alloc.as_call().expect("alloc call");
    assert_eq!(call.callee.name(), "pld.tensor.alloc_window_buffer");
    assert_eq!(call.attr("name").and_then(|a| a.as_str()), Some("signal_buf"));
    // bytes = 4 * NR * 1, symbolic
    assert!(call.args[0].as_int().is_none());
    let StmtKind::For { var, body, .. } = &host.body.stmts[1].kind else { panic!("rank loop") };
    let StmtKind::Eval(dispatch) = &body.stmts[1].kind else { panic!("dispatch") };
    let d = dispatch.as_call().expect("call");
    assert_eq!(d.callee, Callee::Func("per_device".into()));
    assert_eq!(d.device.as_ref().and_then(|e| e.as_var()), Some(*var));
    let x_r = d.args[0].as_call().expect("x[r] is an op call");
    assert_eq!(x_r.callee.name(), "tensor.reshape");
    let inner = x_r.args[0].as_call().expect("slice inside");
    assert_eq!(inner.callee.name(), "tensor.slice");
    assert_eq!(
        d.args[0].ty(&host.values),
        Type::tensor(vec![pld_ir::Expr::int(8), pld_ir::Expr::int(16)], pld_ir::DataType::FP32)
    );
    assert!(matches!(d.args[3].kind, ExprKind::Float(_)));
}

#[test]
fn kernel_reassignment_creates_new_values_and_symbols_stay_symbolic() {
    let p = parse("three_level.py");
    let k = &p.functions[0];
    let tiles: Vec<_> = k.values.iter().filter(|(_, d)| d.name == "tile").collect();
    assert_eq!(tiles.len(), 2, "`tile = ...` twice defines two values");
    let signal_ty = k.values.ty(k.params[2].value);
    let shape = signal_ty.shape().expect("shaped");
    assert_eq!(shape[0].kind, ExprKind::Sym("NR".into()));
    let notify = k
        .body
        .stmts
        .iter()
        .find_map(|s| match &s.kind {
            StmtKind::For { body, .. } => body.stmts.first(),
            _ => None,
        })
        .expect("loop");
    let StmtKind::If { then_body, .. } = &notify.kind else { panic!("if") };
    let call = then_body.stmts[0].call().expect("notify");
    assert_eq!(call.callee.name(), "pld.system.notify");
    assert_eq!(call.attr_int("op"), Some(0), "NotifyOp.AtomicAdd is 0");
}

#[test]
fn each_host_entry_is_its_own_program() {
    let _ = pld_ops::registry();
    let path = format!("{}/tests/corpus/two_hosts.py", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("corpus file");
    let mut sm = pld_ir::SourceMap::new();
    let opts = pld_frontend::ParseOptions::default();
    let ps = pld_frontend::parse_programs(&mut sm, "two_hosts.py", &text, &opts).expect("parses");
    let units: Vec<(&str, Vec<&str>)> =
        ps.iter().map(|p| (p.name.as_str(), p.functions.iter().map(|f| f.name.as_str()).collect())).collect();
    assert_eq!(
        units,
        vec![("host_fill", vec!["fill", "chip_fill", "host_fill"]), ("host_ping", vec!["ping", "host_ping"])]
    );
    let err = pld_frontend::parse_program(&mut sm, "two_hosts.py", &text, &opts).expect_err("ambiguous");
    assert_eq!(err.0[0].message, "two_hosts.py defines 2 programs; select one");
    assert_eq!(err.0[0].notes, vec!["programs defined: host_fill, host_ping".to_string()]);
    let pick = pld_frontend::ParseOptions { program: Some("host_ping".into()), ..opts };
    let p = pld_frontend::parse_program(&mut sm, "two_hosts.py", &text, &pick).expect("selected");
    assert_eq!(p.functions.len(), 2);
}

#[test]
fn nested_overloaded_calls_lower_each_argument_once() {
    let _ = pld_ops::registry();
    // 40 nested unified calls: exponential re-lowering would never finish.
    let mut e = String::from("a");
    for _ in 0..40 {
        e = format!("pl.add({e}, a)");
    }
    let src = format!(
        "import pypto.language as pl\n\n@pl.jit.incore\ndef k(x: pl.Tensor[[8, 8], pl.FP32]):\n    a = pl.load(x, [0, 0], [8, 8])\n    b = {e}\n    return\n"
    );
    let p = pld_frontend::parse_str(&src).unwrap_or_else(|d| panic!("{d}"));
    let StmtKind::Assign { value, .. } = &p.functions[0].body.stmts[1].kind else { panic!("assign") };
    assert_eq!(value.as_call().map(|c| c.callee.name()), Some("tile.add"));
}

#[test]
fn constants_fold_and_typed_literals_keep_their_dtype() {
    let p = parse("constants.py");
    let k = &p.functions[0];
    // Shapes from module constants are static: [ROWS, COLS] = [8, 32].
    let a = k.values.ty(k.params[0].value);
    assert_eq!(a.shape().and_then(pld_ir::types::static_dims), Some(vec![8, 32]));
    let ty_of =
        |name: &str| k.values.iter().find(|(_, d)| d.name == name).map(|(_, d)| d.ty.clone()).expect("value");
    assert_eq!(ty_of("w"), Type::Scalar(pld_ir::DataType::INT32));
    assert_eq!(ty_of("neg"), Type::Scalar(pld_ir::DataType::INT32));
    assert_eq!(ty_of("big"), Type::Scalar(pld_ir::DataType::INT64));
    // HALF = 8 * 32 * 2 // 2 - 1 = 255 folded into `x = HALF + s`.
    let StmtKind::Assign { value, .. } = &k.body.stmts[0].kind else { panic!("assign") };
    let ExprKind::Binary(_, l, _) = &value.kind else { panic!("binary: {value}") };
    assert_eq!(l.as_int(), Some(255));
}

/// The `alloc_window_buffer` calls of a host orchestrator whose body is `stmts`, as
/// `(size, name)`.
fn allocs(stmts: &str) -> Vec<(String, Option<String>)> {
    let _ = pld_ops::registry();
    let src = format!(
        "import pypto.language as pl\nimport pypto.language.distributed as pld\n\n\n@pl.program\nclass P:\n    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n    def h(self):\n{stmts}"
    );
    let p = pld_frontend::parse_str(&src).unwrap_or_else(|d| panic!("{d}"));
    let h = p.function("h").expect("host");
    let mut out = Vec::new();
    h.body.walk_exprs(&mut |e| {
        if let Some(c) = e.as_call().filter(|c| c.callee.name() == "pld.tensor.alloc_window_buffer") {
            out.push((c.args[0].to_string(), c.attr("name").and_then(|a| a.as_str()).map(str::to_owned)));
        }
    });
    out
}

#[test]
fn every_spelling_of_a_window_buffer_builds_one_canonical_call() {
    // The assignment names the buffer; `name=` overrides it; the shape form (positional or
    // `shape=`) is the byte size; the long and short op names are one op.
    let got = allocs(
        "        a = pld.alloc_window_buffer(256)\n        b: pld.Ptr = pld.tensor.alloc_window_buffer([4, 16], dtype=pl.FP32)\n        c = pld.alloc_window_buffer(shape=[2, 8], dtype=pl.INT32, name=\"sig\")\n        d = pld.alloc_window_buffer(size=64)\n",
    );
    let want = [("256", "a"), ("256", "b"), ("64", "sig"), ("64", "d")];
    let want: Vec<(String, Option<String>)> =
        want.iter().map(|(s, n)| (s.to_string(), Some(n.to_string()))).collect();
    assert_eq!(got, want);
    // A call nested in another call's arguments takes the assignment's name too (the
    // outer `pld.window` names nothing).
    let got = allocs("        w = pld.window(pld.alloc_window_buffer(64), [4, 4], dtype=pl.FP32)\n");
    assert_eq!(got, vec![("64".to_string(), Some("w".to_string()))]);
}
