//! Shared test support for pld-codegen-pto: building kernels with the IR builder, running
//! codegen, CHECK-line assertions (`pld_testkit::filecheck`, the workspace's one matcher) and
//! structural queries on emitted PTO text.
#![allow(dead_code)]

use pld_codegen_pto::{emit_program, CodegenOptions, CodegenOutput};
use pld_ir::{
    Attr, Builder, DataType, Diagnostic, Diagnostics, Direction, Expr, Function, FunctionBuilder,
    FunctionKind, Program, Target, Type, ValueId,
};

/// Links pld-ops and checks the registry.
pub fn init() {
    let reg = pld_ops::registry();
    if let Err(e) = reg.check() {
        panic!("op registry is inconsistent: {e:?}");
    }
}

/// A plain tensor type.
pub fn tensor(shape: &[i64], d: DataType) -> Type {
    Type::tensor(shape.iter().map(|&v| Expr::int(v)).collect(), d)
}

/// A window-bound tensor type.
pub fn dist(shape: &[i64], d: DataType) -> Type {
    Type::dist_tensor(shape.iter().map(|&v| Expr::int(v)).collect(), d)
}

/// A variable reference.
pub fn v(id: ValueId) -> Expr {
    Expr::var(id)
}

/// Integer tuple.
pub fn ints(xs: &[i64]) -> Expr {
    Expr::ints(xs)
}

/// An integer attribute.
pub fn ai(x: i64) -> Attr {
    Attr::Int(x)
}

/// Parameters declared by a kernel under construction.
pub struct Params {
    /// The ids, in declaration order.
    pub ids: Vec<ValueId>,
}

/// Builds a kernel: `params` are `(name, type)`; for every DistributedTensor parameter a
/// CommCtx parameter `<name>_ctx` is appended at the tail (what MaterializeDistTensorCtx does).
pub fn kernel<F>(name: &str, kind: FunctionKind, params: &[(&str, Type)], body: F) -> Function
where
    F: FnOnce(&mut Builder<'_>, &[ValueId]) -> Result<(), Diagnostic>,
{
    let mut fb = FunctionBuilder::new(name, kind);
    let mut ids = Vec::new();
    let mut dists = Vec::new();
    for (n, t) in params {
        let id = fb.param(*n, t.clone(), Direction::InOut);
        if matches!(t, Type::DistTensor(_)) {
            dists.push(n.to_string());
        }
        ids.push(id);
    }
    for n in dists {
        ids.push(fb.param(format!("{n}_ctx"), Type::CommCtx, Direction::In));
    }
    if let Err(d) = fb.body(|b| body(b, &ids)) {
        panic!("building kernel {name} failed: {}", d.message);
    }
    fb.finish()
}

/// A program of the given functions.
pub fn program(funcs: Vec<Function>) -> Program {
    let mut p = Program::new("P");
    for f in funcs {
        p.add_function(f);
    }
    p
}

/// Runs codegen for `target`.
pub fn emit_for(p: &Program, target: Target) -> Result<CodegenOutput, Diagnostics> {
    emit_program(p, &CodegenOptions { target })
}

/// Runs codegen with defaults; panics with the messages on error.
pub fn emit(p: &Program) -> CodegenOutput {
    match emit_program(p, &CodegenOptions::default()) {
        Ok(o) => o,
        Err(d) => panic!("codegen failed: {:?}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>()),
    }
}

/// The text of module `name` (`kernel.pto`).
pub fn module<'a>(out: &'a CodegenOutput, name: &str) -> &'a str {
    match out.modules.iter().find(|(n, _)| n == name) {
        Some((_, t)) => t,
        None => panic!("no module {name}; have {:?}", out.modules.iter().map(|m| &m.0).collect::<Vec<_>>()),
    }
}

/// The only module's text.
pub fn only(out: &CodegenOutput) -> &str {
    assert_eq!(
        out.modules.len(),
        1,
        "expected one module, got {:?}",
        out.modules.iter().map(|m| &m.0).collect::<Vec<_>>()
    );
    &out.modules[0].1
}

/// Asserts `// CHECK:`-style directives against `text`.
#[track_caller]
pub fn check(text: &str, checks: &str) {
    pld_testkit::filecheck::assert_checks(text, checks);
}

/// Codegen error messages.
pub fn errors(p: &Program, target: Target) -> Vec<String> {
    match emit_for(p, target) {
        Ok(o) => panic!(
            "expected codegen to fail, got:\n{}",
            o.modules.iter().map(|m| m.1.clone()).collect::<String>()
        ),
        Err(d) => d.iter().map(|x| x.message.clone()).collect(),
    }
}

/// Number of lines containing `pat`.
pub fn count(text: &str, pat: &str) -> usize {
    text.lines().filter(|l| l.contains(pat)).count()
}

/// For every `pto.addptr` line: its result feeds a `pto.make_tensor_view` within the next
/// three lines, and at least three `pto.load_scalar` precede it since the previous addptr.
#[track_caller]
pub fn assert_peer_sequences(text: &str, expected: usize) {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = 0;
    let mut loads_since = 0;
    for (i, l) in lines.iter().enumerate() {
        if l.contains("pto.load_scalar") {
            loads_since += 1;
        }
        if l.contains("= pto.addptr") {
            found += 1;
            assert!(
                loads_since >= 3,
                "addptr at line {i} preceded by only {loads_since} load_scalar:\n{text}"
            );
            loads_since = 0;
            let res = l.trim().split(" = ").next().unwrap_or("");
            let feeds = lines[i + 1..(i + 4).min(lines.len())].iter().any(|n| {
                n.contains("pto.make_tensor_view") && n.contains(&format!("make_tensor_view {res},"))
            });
            assert!(
                feeds,
                "addptr {res} at line {i} does not feed a make_tensor_view within 3 lines:\n{text}"
            );
        }
    }
    assert_eq!(found, expected, "expected {expected} peer sequences:\n{text}");
}

/// Every non-private `func.func` carries `pto.kernel_kind`; no `func.call` except the
/// deferred-wait adapter; no CommRemoteOffset helper.
#[track_caller]
pub fn assert_no_helpers(text: &str) {
    for l in text.lines() {
        if l.contains("func.func") && !l.contains("func.func private") {
            assert!(l.contains("pto.kernel_kind"), "function without pto.kernel_kind: {l}");
        }
        if l.contains("func.call") {
            assert!(l.contains("@pypto_register_counter_completion"), "helper call: {l}");
        }
    }
    assert!(!text.contains("CommRemoteOffset"));
}

/// The §2 reference kernel with every comm op: load, remote_store(atomic add), put, notify,
/// wait, remote_load, store, get (tile level, as the pipeline leaves it).
pub fn full_kernel() -> Program {
    init();
    use pld_ir::Attr;
    let f = kernel(
        "kernel",
        FunctionKind::Aiv,
        &[
            ("x", tensor(&[16, 64], DataType::FP32)),
            ("y", tensor(&[16, 64], DataType::FP32)),
            ("win", dist(&[16, 64], DataType::FP32)),
            ("sig", dist(&[4, 1], DataType::INT32)),
            ("peer", Type::Scalar(DataType::INT32)),
        ],
        |b, p| {
            let (x, y, win, sig, peer) = (p[0], p[1], p[2], p[3], p[4]);
            let t = b.assign_op("t", "tile.load", vec![v(x), ints(&[0, 0]), ints(&[16, 64])], vec![])?;
            b.eval_op(
                "pld.tile.remote_store",
                vec![v(t), v(win), v(peer), ints(&[0, 0])],
                vec![("atomic", ai(1))],
            )?;
            b.eval_op("system.fence", vec![], vec![])?;
            let st = b.assign_op(
                "tput_stage",
                "tile.create",
                vec![ints(&[16, 64])],
                vec![("dtype", Attr::DType(DataType::FP32)), ("target_memory", Attr::Str("Vec".into()))],
            )?;
            b.eval_op("pld.tile.put", vec![v(win), v(peer), v(x), v(st)], vec![("atomic", ai(0))])?;
            b.eval_op("system.fence", vec![], vec![])?;
            b.eval_op(
                "pld.system.notify",
                vec![v(sig), v(peer), ints(&[0, 0]), Expr::int(1)],
                vec![("op", ai(0))],
            )?;
            b.eval_op("pld.system.wait", vec![v(sig), ints(&[0, 0]), Expr::int(1)], vec![("cmp", ai(1))])?;
            b.eval_op("system.cacheinvalid", vec![], vec![])?;
            let r = b.assign_op(
                "r",
                "pld.tile.remote_load",
                vec![v(win), v(peer), ints(&[0, 0]), ints(&[16, 64])],
                vec![],
            )?;
            let y1 = b.assign_op("y1", "tile.store", vec![v(r), ints(&[0, 0]), v(y)], vec![])?;
            let gs = b.assign_op(
                "tget_stage",
                "tile.create",
                vec![ints(&[16, 64])],
                vec![("dtype", Attr::DType(DataType::FP32)), ("target_memory", Attr::Str("Vec".into()))],
            )?;
            b.eval_op("pld.tile.get", vec![v(y1), v(peer), v(win), v(gs)], vec![])?;
            Ok(())
        },
    );
    program(vec![f])
}
