//! The AtomicAddDtypeValid rule (tests_negative.md B.7) through the verifier: a program built
//! for the default target (a2a3) with a bf16 atomic add in each of the six ops that can
//! carry one verifies on a2a3, and on a5 yields exactly one diagnostic naming `bf16`, `a5`
//! and `Ascend910B`; fp32 atomics and bf16 plain stores are fine on both.

use pld_ir::{
    Attr, DataType, Direction, Expr, FunctionBuilder, FunctionKind, MemorySpace, Program, Target, Type,
};

fn ints(v: &[i64]) -> Expr {
    Expr::ints(v)
}

/// One InCore kernel with a single `op` call of dtype `d` and the given `atomic`.
fn program(op: &str, d: DataType, atomic: i64) -> Program {
    pld_testkit::init();
    let shape = || vec![Expr::int(16), Expr::int(64)];
    let mut fb = FunctionBuilder::new("kernel", FunctionKind::InCore);
    let win = Expr::var(fb.param("win", Type::dist_tensor(shape(), d), Direction::InOut));
    let x = Expr::var(fb.param("x", Type::tensor(shape(), d), Direction::In));
    let t = Expr::var(fb.param("t", Type::tile(shape(), d, Some(MemorySpace::Vec)), Direction::In));
    let peer = Expr::var(fb.param("peer", Type::Scalar(DataType::INT32), Direction::In));
    let a = vec![("atomic", Attr::Int(atomic))];
    fb.body(|b| {
        let args = match op {
            "tile.store" => vec![t.clone(), ints(&[0, 0]), win.clone()],
            "tensor.assemble" => vec![win.clone(), x.clone(), ints(&[0, 0])],
            "pld.tensor.put" => vec![win.clone(), peer.clone(), x.clone()],
            "pld.tile.put" => vec![win.clone(), peer.clone(), x.clone(), t.clone()],
            "pld.tensor.remote_store" => vec![x.clone(), win.clone(), peer.clone(), ints(&[0, 0])],
            "pld.tile.remote_store" => vec![t.clone(), win.clone(), peer.clone(), ints(&[0, 0])],
            other => panic!("unexpected op {other}"),
        };
        b.eval_op(op, args, a)
    })
    .expect("builds on the default target");
    let mut p = Program::new("P");
    p.add_function(fb.finish());
    p
}

const OPS: [&str; 6] = [
    "tile.store",
    "tensor.assemble",
    "pld.tensor.put",
    "pld.tile.put",
    "pld.tensor.remote_store",
    "pld.tile.remote_store",
];

#[test]
fn bf16_atomic_add_is_rejected_on_a5_only() {
    for op in OPS {
        let p = program(op, DataType::BF16, 1);
        assert!(pld_ir::verify_program_for(&p, Target::A2A3).is_ok(), "{op} on a2a3");
        let diags = pld_ir::verify_program_for(&p, Target::A5).expect_err(op);
        assert_eq!(diags.len(), 1, "{op}: {diags}");
        let m = &diags.iter().next().unwrap().message;
        for needle in ["bf16", "a5", "Ascend910B", op] {
            assert!(m.contains(needle), "{op}: {m:?} lacks {needle:?}");
        }
    }
}

#[test]
fn fp32_atomics_and_plain_bf16_are_fine_everywhere() {
    for op in OPS {
        for target in [Target::A2A3, Target::A5] {
            assert!(pld_ir::verify_program_for(&program(op, DataType::FP32, 1), target).is_ok(), "{op} fp32");
            assert!(
                pld_ir::verify_program_for(&program(op, DataType::BF16, 0), target).is_ok(),
                "{op} bf16 plain"
            );
        }
    }
}
