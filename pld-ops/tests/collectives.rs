//! The collectives and their internal builtin forms: tests_negative.md A.6 and A.7 (the
//! seed's all_to_all_v contract) plus one negative per rule for every collective.
#![allow(clippy::cloned_ref_to_slice_refs)]

mod common;
use common::*;
use pld_ir::{Attr, DataType::*, Effect, Expr, FunctionKind, Target, Type};

fn host(
    params: &[Type],
    op: &str,
    args: impl FnOnce(&[Expr]) -> Vec<Expr>,
    attrs: Vec<(&str, Attr)>,
) -> Result<Type, pld_ir::Diagnostic> {
    call_in(FunctionKind::Host, Target::A2A3, params, op, args, attrs)
}

const AR: &str = "pld.tensor.allreduce";

#[test]
fn allreduce_a6() {
    let src = dt(&[16], FP32);
    let sig = dt(&[4], INT32);
    // #1: result is exactly src's type.
    assert_eq!(ok(host(&[src.clone(), sig.clone()], AR, |v| v.to_vec(), vec![("op", int(0))])), src);
    // #2, #4
    for op in 0..4 {
        ok(host(&[src.clone(), sig.clone()], AR, |v| v.to_vec(), vec![("op", int(op))]));
    }
    ok(host(&[src.clone(), sig.clone()], AR, |v| v.to_vec(), vec![]));
    // #3
    err(
        host(
            &[src.clone(), sig.clone()],
            AR,
            |v| v.to_vec(),
            vec![("op", int(99)), ("mode", Attr::Str("mesh".into()))],
        ),
        "op must be ReduceOp.Sum",
    );
    // #5: signal omitted on the host.
    ok(host(&[src.clone()], AR, |v| v.to_vec(), vec![]));
    // #6
    ok(host(&[src.clone(), dt(&[4, 8], INT32)], AR, |v| v.to_vec(), vec![("core_num", int(4))]));
    // #7/#9: core_num must be an int.
    err(
        host(&[src.clone(), sig.clone()], AR, |v| v.to_vec(), vec![("core_num", Attr::Bool(true))]),
        "incompatible type",
    );
    // #8
    for n in [0, -1] {
        err(
            host(&[src.clone(), sig.clone()], AR, |v| v.to_vec(), vec![("core_num", int(n))]),
            "must be positive",
        );
    }
    // #11: dynamic src.
    let dynsrc = Type::dist_tensor(vec![Expr::sym("n")], FP32);
    assert_eq!(ok(host(&[dynsrc.clone(), sig.clone()], AR, |v| v.to_vec(), vec![])), dynsrc);
    // #12, #13
    err(host(&[tensor(&[16], FP32), sig.clone()], AR, |v| v.to_vec(), vec![]), "DistributedTensor");
    err(
        host(&[src.clone(), dt(&[4], FP32)], AR, |v| v.to_vec(), vec![]),
        "signal must have INT32 element type",
    );
    // #14, #15, #16
    ok(host(&[src.clone(), dt(&[2, 2], INT32)], AR, |v| v.to_vec(), vec![]));
    ok(host(&[dt(&[16], FP16), sig.clone()], AR, |v| v.to_vec(), vec![]));
    err(
        host(&[dt(&[16], BF16), sig.clone()], AR, |v| v.to_vec(), vec![]),
        "target dtype must be FP16 or FP32",
    );
}

#[test]
fn allreduce_rails() {
    let src = dt(&[1, 64], FP32);
    // InCore needs an explicit [NR, 1] signal, core_num 1, and a known mode.
    err(
        call(&[src.clone()], AR, |v| v.to_vec(), vec![]),
        "requires an explicit signal outside host orchestrator functions",
    );
    ok(call(&[src.clone(), dt(&[4, 1], INT32)], AR, |v| v.to_vec(), vec![]));
    err(call(&[src.clone(), dt(&[4, 1], INT32)], AR, |v| v.to_vec(), vec![("core_num", int(2))]), "pl.spmd");
    err(
        call(
            &[src.clone(), dt(&[4, 1], INT32)],
            AR,
            |v| v.to_vec(),
            vec![("mode", Attr::Str("tree".into()))],
        ),
        "mode must be \"ring\" or \"mesh\"",
    );
    err(call(&[src.clone(), dt(&[4], INT32)], AR, |v| v.to_vec(), vec![]), "signal must be 2D [NR, 1]");
    err(call(&[src.clone(), dt(&[6, 4], INT32)], AR, |v| v.to_vec(), vec![]), "ring layout");
    // Ring: explicit [2(NR-1), NR] signal.
    let ring = vec![("mode", Attr::Str("ring".into()))];
    ok(call(&[src.clone(), dt(&[6, 4], INT32)], AR, |v| v.to_vec(), ring.clone()));
    err(
        call(&[src.clone(), dt(&[5, 4], INT32)], AR, |v| v.to_vec(), ring.clone()),
        "mode=ring signal shape[0] (5) must equal 2*(NR-1) = 6",
    );
    err(host(&[src.clone()], AR, |v| v.to_vec(), ring.clone()), "mode=ring requires an explicit signal");
    // Extreme static dims never overflow (regression: 2*(NR-1) with NR = i64::MIN).
    let huge = Type::dist_tensor(vec![Expr::int(4), Expr::int(i64::MIN)], INT32);
    err(call(&[src.clone(), huge], AR, |v| v.to_vec(), ring.clone()), "out of range");
    err(
        host(
            &[src.clone(), dt(&[7, 4], INT32)],
            AR,
            |v| v.to_vec(),
            vec![("mode", Attr::Str("ring".into())), ("core_num", int(2))],
        ),
        "does not support core_num > 1",
    );
    // Signal and target must be different windows.
    err(
        call(&[dt(&[4, 1], INT32)], AR, |v| vec![v[0].clone(), v[0].clone()], vec![]),
        "target dtype must be FP16 or FP32",
    );
    err(
        call(&[dt(&[4, 1], FP32)], AR, |v| vec![v[0].clone(), v[0].clone()], vec![]),
        "signal must have INT32",
    );
}

#[test]
fn barrier_broadcast_reduce_scatter() {
    let sig = dt(&[4, 1], INT32);
    assert_eq!(ok(call(&[sig.clone()], "pld.tensor.barrier", |v| v.to_vec(), vec![])), sig);
    err(
        call(&[dt(&[4, 1], FP32)], "pld.tensor.barrier", |v| v.to_vec(), vec![]),
        "pld.tensor.barrier signal must have INT32 element type",
    );
    err(
        call(&[tensor(&[4, 1], INT32)], "pld.tensor.barrier", |v| v.to_vec(), vec![]),
        "pld.tensor.barrier signal must be a DistributedTensor",
    );
    err(
        call(&[sig.clone(), sig.clone()], "pld.tensor.barrier", |v| v.to_vec(), vec![]),
        "1 positional argument",
    );
    // Stray kwargs are rejected (D3), unlike the reference.
    err(
        call(&[sig.clone()], "pld.tensor.barrier", |v| v.to_vec(), vec![("op", int(0))]),
        "unknown kwarg 'op'",
    );

    let t = dt(&[1, 64], FP32);
    assert_eq!(
        ok(call(&[t.clone(), sig.clone()], "pld.tensor.broadcast", |v| v.to_vec(), vec![("root", int(0))])),
        t
    );
    err(
        call(&[t.clone(), sig.clone()], "pld.tensor.broadcast", |v| v.to_vec(), vec![]),
        "missing kwarg 'root' on pld.tensor.broadcast",
    );
    err(
        call(&[t.clone(), sig.clone()], "pld.tensor.broadcast", |v| v.to_vec(), vec![("root", int(-1))]),
        "root rank must be non-negative",
    );
    err(
        call(&[t.clone(), dt(&[4, 1], FP32)], "pld.tensor.broadcast", |v| v.to_vec(), vec![("root", int(0))]),
        "signal must have INT32 element type",
    );
    err(
        call(
            &[tensor(&[1, 64], FP32), sig.clone()],
            "pld.tensor.broadcast",
            |v| v.to_vec(),
            vec![("root", int(0))],
        ),
        "target must be a DistributedTensor",
    );

    let rs = dt(&[4, 64], FP32);
    assert_eq!(ok(call(&[rs.clone(), sig.clone()], "pld.tensor.reduce_scatter", |v| v.to_vec(), vec![])), rs);
    err(
        call(&[dt(&[256], FP32), sig.clone()], "pld.tensor.reduce_scatter", |v| v.to_vec(), vec![]),
        "target must be 2D [NR, SIZE], got 1 dims",
    );
    let d = err(
        call(&[rs.clone(), sig.clone()], "pld.tensor.reduce_scatter", |v| v.to_vec(), vec![("op", int(1))]),
        "op must be ReduceOp.Sum (got int 1)",
    );
    assert!(d.notes.iter().any(|n| n.contains("pld.tensor.allreduce")));
    err(
        call(&[rs.clone(), sig.clone()], "pld.tensor.reduce_scatter", |v| v.to_vec(), vec![("op", int(9))]),
        "op must be ReduceOp.Sum",
    );
}

#[test]
fn allgather_rules() {
    const AG: &str = "pld.tensor.allgather";
    let input = tensor(&[1, 64], FP32);
    let target = dt(&[4, 64], FP32);
    let sig = dt(&[4, 1], INT32);
    assert_eq!(ok(call(&[input.clone(), target.clone(), sig.clone()], AG, |v| v.to_vec(), vec![])), target);
    ok(call(&[input.clone(), target.clone(), dt(&[4], INT32)], AG, |v| v.to_vec(), vec![]));
    err(
        call(&[target.clone(), sig.clone()], AG, |v| vec![v[0].clone(), v[0].clone(), v[1].clone()], vec![]),
        "input and target must be different buffers",
    );
    err(
        call(&[tensor(&[64], FP32), target.clone(), sig.clone()], AG, |v| v.to_vec(), vec![]),
        "input must be 2D [1, SIZE]",
    );
    err(
        call(&[tensor(&[2, 64], FP32), target.clone(), sig.clone()], AG, |v| v.to_vec(), vec![]),
        "got first dim 2",
    );
    err(
        call(&[input.clone(), dt(&[256], FP32), sig.clone()], AG, |v| v.to_vec(), vec![]),
        "target must be 2D [NR, SIZE]",
    );
    err(
        call(&[input.clone(), dt(&[4, 64], FP16), sig.clone()], AG, |v| v.to_vec(), vec![]),
        "target dtype fp16 must match input dtype fp32",
    );
    err(
        call(&[input.clone(), dt(&[4, 32], FP32), sig.clone()], AG, |v| v.to_vec(), vec![]),
        "target SIZE must equal input SIZE",
    );
    err(
        call(&[input.clone(), target.clone(), dt(&[4, 1, 1], INT32)], AG, |v| v.to_vec(), vec![]),
        "signal must be 1D [NR] or 2D [NR, 1]",
    );
    err(
        call(&[input.clone(), target.clone(), dt(&[4, 2], INT32)], AG, |v| v.to_vec(), vec![]),
        "signal second dimension must be 1, got 2",
    );
    err(
        call(&[input.clone(), target.clone(), dt(&[2, 1], INT32)], AG, |v| v.to_vec(), vec![]),
        "signal first dimension (2) must equal target first dimension (4)",
    );
    err(
        call(&[input.clone(), tensor(&[4, 64], FP32), sig.clone()], AG, |v| v.to_vec(), vec![]),
        "target must be a DistributedTensor",
    );
    // InCore: the local chunk must be a plain tensor; on the host a window is fine.
    err(
        call(&[dt(&[1, 64], FP32), target.clone(), sig.clone()], AG, |v| v.to_vec(), vec![]),
        "local_data must be a plain Tensor",
    );
    ok(host(&[dt(&[1, 64], FP32), target.clone(), dt(&[4], INT32)], AG, |v| v.to_vec(), vec![]));
    // Effects: target Write (not ReadWrite), signal ReadWrite.
    let d = pld_testkit::init().lookup(AG).unwrap();
    assert_eq!(
        d.params.iter().map(|p| p.effect).collect::<Vec<_>>(),
        vec![Effect::Read, Effect::Write, Effect::ReadWrite]
    );
}

#[test]
fn all_to_all_rules() {
    const A2A: &str = "pld.tensor.all_to_all";
    let input = tensor(&[4, 64], FP32);
    let target = dt(&[4, 64], FP32);
    let sig = dt(&[4, 1], INT32);
    assert_eq!(ok(call(&[input.clone(), target.clone(), sig.clone()], A2A, |v| v.to_vec(), vec![])), target);
    err(
        call(&[target.clone(), sig.clone()], A2A, |v| vec![v[0].clone(), v[0].clone(), v[1].clone()], vec![]),
        "input and target must be different windows",
    );
    err(
        call(&[tensor(&[256], FP32), target.clone(), sig.clone()], A2A, |v| v.to_vec(), vec![]),
        "input must be 2D [NR, SIZE]",
    );
    err(
        call(&[input.clone(), dt(&[2, 64], FP32), sig.clone()], A2A, |v| v.to_vec(), vec![]),
        "target first dimension (2) must equal input first dimension (4)",
    );
    err(
        call(&[input.clone(), dt(&[4, 32], FP32), sig.clone()], A2A, |v| v.to_vec(), vec![]),
        "target shape must equal input shape",
    );
    err(call(&[input.clone(), dt(&[4, 64], FP16), sig.clone()], A2A, |v| v.to_vec(), vec![]), "dtype");
    err(
        call(&[input.clone(), target.clone(), dt(&[2, 1], INT32)], A2A, |v| v.to_vec(), vec![]),
        "signal first dimension (2) must equal input first dimension (4)",
    );
    err(call(&[input.clone(), target.clone(), dt(&[4, 1], FP32)], A2A, |v| v.to_vec(), vec![]), "INT32");
    // Only a host orchestrator synthesizes an omitted signal (collective_api.rs).
    err(
        call(&[input.clone(), target.clone()], A2A, |v| v.to_vec(), vec![]),
        "pld.tensor.all_to_all requires an explicit signal outside host orchestrator functions",
    );
    err(call(&[input.clone()], A2A, |v| v.to_vec(), vec![]), "positional arguments");
}

const A2AV: &str = "pld.tensor.all_to_all_v";

fn a2av_base() -> Vec<Type> {
    vec![
        tensor(&[8, 64], FP32),
        dt(&[8, 64], FP32),
        dt(&[2, 1], INT32),
        tensor(&[2, 1], INT32),
        dt(&[2, 1], INT32),
    ]
}

fn a2av(params: Vec<Type>, attrs: Vec<(&str, Attr)>) -> Result<Type, pld_ir::Diagnostic> {
    call(&params, A2AV, |v| v.to_vec(), attrs)
}

fn with(i: usize, t: Type) -> Vec<Type> {
    let mut p = a2av_base();
    p[i] = t;
    p
}

#[test]
fn all_to_all_v_a7_seed_contract() {
    // #1..#4
    assert_eq!(ok(a2av(a2av_base(), vec![])), dt(&[8, 64], FP32));
    ok(a2av(with(3, tensor(&[2], INT32)), vec![]));
    ok(a2av(with(3, dt(&[2, 1], INT32)), vec![]));
    ok(a2av(with(0, dt(&[8, 64], FP32)), vec![]));
    // #5..#11
    err(a2av(with(2, dt(&[2], INT32)), vec![]), "signal must be 2D");
    err(call(&a2av_base()[..4], A2AV, |v| v.to_vec(), vec![]), "5 positional arguments");
    err(a2av(with(4, dt(&[2, 8], INT32)), vec![]), "recv_counts second dimension must be 1");
    err(a2av(with(3, tensor(&[2, 1], FP32)), vec![]), "send_counts must have INT32 element type");
    err(a2av(with(3, tensor(&[3, 1], INT32)), vec![]), "send_counts dim 0");
    err(a2av(with(3, tensor(&[2, 1, 1], INT32)), vec![]), "send_counts must be 1D");
    let mut p = a2av_base();
    p[0] = tensor(&[9, 64], FP32);
    p[1] = dt(&[9, 64], FP32);
    err(a2av(p, vec![]), "must divide target dim 0");
    // Seed: core_num must be 1, naming the CHIP rail.
    let d = err(a2av(a2av_base(), vec![("core_num", int(2))]), "core_num must be 1");
    assert!(d.notes.iter().any(|n| n.contains("CHIP")));
    // Seed: packed row-major, fully valid, distinct operands.
    let strided = match dt(&[8, 64], FP32) {
        Type::DistTensor(mut t) => {
            t.tensor = t.tensor.with_view(pld_ir::TensorView {
                stride: vec![Expr::int(128), Expr::int(1)],
                ..Default::default()
            });
            Type::DistTensor(t)
        }
        _ => unreachable!(),
    };
    err(a2av(with(1, strided), vec![]), "must be packed row-major");
    let dn = match tensor(&[8, 64], FP32) {
        Type::Tensor(t) => {
            Type::Tensor(t.with_view(pld_ir::TensorView { layout: pld_ir::Layout::Dn, ..Default::default() }))
        }
        _ => unreachable!(),
    };
    err(a2av(with(0, dn), vec![]), "packed row-major (ND)");
    let narrow = match dt(&[8, 64], FP32) {
        Type::DistTensor(mut t) => {
            t.tensor = t.tensor.with_view(pld_ir::TensorView {
                valid_shape: vec![Expr::int(8), Expr::int(32)],
                ..Default::default()
            });
            Type::DistTensor(t)
        }
        _ => unreachable!(),
    };
    err(a2av(with(1, narrow), vec![]), "valid_shape must cover the whole shape");
    let same = call(
        &[dt(&[8, 64], FP32), dt(&[2, 1], INT32), tensor(&[2, 1], INT32), dt(&[2, 1], INT32)],
        A2AV,
        |v| vec![v[0].clone(), v[0].clone(), v[1].clone(), v[2].clone(), v[3].clone()],
        vec![],
    );
    err(same, "input and target must be different buffers");
    let same_ctl = call(
        &[tensor(&[8, 64], FP32), dt(&[8, 64], FP32), dt(&[2, 1], INT32), tensor(&[2, 1], INT32)],
        A2AV,
        |v| vec![v[0].clone(), v[1].clone(), v[2].clone(), v[3].clone(), v[2].clone()],
        vec![],
    );
    err(same_ctl, "signal and recv_counts must be different buffers");
    // Seed, not reference: NR may be dynamic (the HOST kernel derives MAX_RECV =
    // target.shape[0] / nranks at entry), so a symbolic NR is accepted; static shape
    // relations are still checked where they are provable.
    let nr = || Expr::sym("NR");
    let mr = || Expr::binary(pld_ir::BinOp::Mul, Expr::sym("NR"), Expr::int(4));
    let dynamic = call(
        &[
            Type::tensor(vec![mr(), Expr::int(64)], FP32),
            Type::dist_tensor(vec![mr(), Expr::int(64)], FP32),
            Type::dist_tensor(vec![nr(), Expr::int(1)], INT32),
            Type::tensor(vec![nr(), Expr::int(1)], INT32),
            Type::dist_tensor(vec![nr(), Expr::int(1)], INT32),
        ],
        A2AV,
        |v| v.to_vec(),
        vec![],
    );
    assert!(dynamic.is_ok(), "dynamic NR must be accepted: {dynamic:?}");
    err(a2av(with(2, dt(&[3, 1], INT32)), vec![]), "signal dim 0 (3) must divide target dim 0 (8)");
    err(a2av(with(4, tensor(&[2, 1], INT32)), vec![]), "recv_counts must be a DistributedTensor");
    err(a2av(with(4, dt(&[3, 1], INT32)), vec![]), "recv_counts dim 0 (3) must equal signal dim 0 (NR = 2)");
    // Effects: target Write, signal ReadWrite, recv_counts Write, send_counts Read.
    let d = pld_testkit::init().lookup(A2AV).unwrap();
    let eff: Vec<Effect> = d.params.iter().map(|p| p.effect).collect();
    assert_eq!(eff, vec![Effect::Read, Effect::Write, Effect::ReadWrite, Effect::Read, Effect::Write]);
}

#[test]
fn builtins_are_internal_with_their_rules() {
    let reg = pld_testkit::init();
    let mut n = 0;
    for r in reg.ops() {
        let d = r.def;
        if d.name.starts_with("builtin.tensor.") {
            n += 1;
            assert!(d.internal, "{} must be internal-only", d.name);
            assert_eq!(d.affinity, pld_ir::Affinity::Shared);
        } else if d.family == "collectives" {
            assert!(!d.internal, "{}", d.name);
        }
    }
    assert_eq!(n, 8);
    let fp32 = || ("dtype", Attr::DType(FP32));
    // allreduce builtin: rank-1 signal only for core_num 1; rank-2 stride >= core_num.
    let b = "builtin.tensor.allreduce";
    ok(host(
        &[dt(&[16], FP32), dt(&[4], INT32)],
        b,
        |v| v.to_vec(),
        vec![("op", int(0)), fp32(), ("core_num", int(1))],
    ));
    err(
        host(
            &[dt(&[16], FP32), dt(&[4], INT32)],
            b,
            |v| v.to_vec(),
            vec![("op", int(0)), fp32(), ("core_num", int(2))],
        ),
        "rank-1 signal supports only core_num == 1",
    );
    err(
        host(
            &[dt(&[16], FP32), dt(&[4, 2], INT32)],
            b,
            |v| v.to_vec(),
            vec![("op", int(0)), fp32(), ("core_num", int(4))],
        ),
        "signal stride (2) must be >= core_num (4)",
    );
    err(
        host(
            &[dt(&[16], FP32), dt(&[4], INT32)],
            b,
            |v| v.to_vec(),
            vec![("op", int(0)), ("dtype", Attr::DType(FP16)), ("core_num", int(1))],
        ),
        "dtype kwarg (fp16) must match src dtype (fp32)",
    );
    // ring builtin: Sum + FP32 only, [2(NR-1)+1, NR] signal.
    let r = "builtin.tensor.allreduce_ring";
    ok(host(&[dt(&[1, 64], FP32), dt(&[7, 4], INT32)], r, |v| v.to_vec(), vec![("op", int(0)), fp32()]));
    err(
        host(&[dt(&[1, 64], FP32), dt(&[6, 4], INT32)], r, |v| v.to_vec(), vec![("op", int(0)), fp32()]),
        "2*(NR-1)+1",
    );
    err(
        host(&[dt(&[1, 64], FP32), dt(&[7, 4], INT32)], r, |v| v.to_vec(), vec![("op", int(1)), fp32()]),
        "currently supports only (op=ReduceOp.Sum, dtype=FP32)",
    );
    err(
        host(&[dt(&[1, 66], FP32), dt(&[7, 4], INT32)], r, |v| v.to_vec(), vec![("op", int(0)), fp32()]),
        "divisible by NR",
    );
    // barrier / broadcast / reduce_scatter builtins need a rank-1 signal.
    err(
        host(&[dt(&[4, 1], INT32)], "builtin.tensor.barrier", |v| v.to_vec(), vec![]),
        "signal must be a rank-1 DistributedTensor, got rank 2",
    );
    ok(host(&[dt(&[4], INT32)], "builtin.tensor.barrier", |v| v.to_vec(), vec![]));
    ok(host(
        &[dt(&[1, 64], FP32), dt(&[4], INT32)],
        "builtin.tensor.broadcast",
        |v| v.to_vec(),
        vec![("root", int(0)), fp32()],
    ));
    err(
        host(
            &[dt(&[1, 64], FP16), dt(&[4], INT32)],
            "builtin.tensor.broadcast",
            |v| v.to_vec(),
            vec![("root", int(0)), ("dtype", Attr::DType(FP16))],
        ),
        "only FP32",
    );
    err(
        host(
            &[dt(&[256], FP32), dt(&[4], INT32)],
            "builtin.tensor.reduce_scatter",
            |v| v.to_vec(),
            vec![("op", int(0)), fp32()],
        ),
        "target must be 2D",
    );
    // allgather / all_to_all builtins: windows only, distinct.
    ok(host(
        &[dt(&[1, 64], FP32), dt(&[4, 64], FP32), dt(&[4, 1], INT32)],
        "builtin.tensor.allgather",
        |v| v.to_vec(),
        vec![fp32()],
    ));
    err(
        host(
            &[tensor(&[1, 64], FP32), dt(&[4, 64], FP32), dt(&[4, 1], INT32)],
            "builtin.tensor.allgather",
            |v| v.to_vec(),
            vec![fp32()],
        ),
        "input must be a DistributedTensor",
    );
    err(
        host(
            &[dt(&[4, 64], FP32), dt(&[4, 1], INT32)],
            "builtin.tensor.all_to_all",
            |v| vec![v[0].clone(), v[0].clone(), v[1].clone()],
            vec![fp32()],
        ),
        "different buffers",
    );
    // all_to_all_v builtin: input and send_counts must be windows (narrower than the public op).
    let mut p = a2av_base();
    p[0] = dt(&[8, 64], FP32);
    p[3] = dt(&[2, 1], INT32);
    ok(host(&p, "builtin.tensor.all_to_all_v", |v| v.to_vec(), vec![fp32()]));
    err(
        host(&a2av_base(), "builtin.tensor.all_to_all_v", |v| v.to_vec(), vec![fp32()]),
        "input must be a DistributedTensor",
    );
}

#[test]
fn builtin_rules_one_negative_each() {
    pld_testkit::init();
    let fp32 = || ("dtype", Attr::DType(FP32));
    let b = "builtin.tensor.allreduce";
    let req = |core: i64| vec![("op", int(0)), fp32(), ("core_num", int(core))];
    err(host(&[dt(&[16], FP32), dt(&[4], INT32)], b, |v| v.to_vec(), req(0)), "core_num must be positive");
    err(
        host(
            &[dt(&[16], BF16), dt(&[4], INT32)],
            b,
            |v| v.to_vec(),
            vec![("op", int(0)), ("dtype", Attr::DType(BF16)), ("core_num", int(1))],
        ),
        "FP16 or FP32",
    );
    err(host(&[dt(&[16], FP32), dt(&[4], FP32)], b, |v| v.to_vec(), req(1)), "INT32");
    err(host(&[dt(&[16], FP32), dt(&[4, 2, 1], INT32)], b, |v| v.to_vec(), req(1)), "rank 1 or 2");
    err(
        host(&[dt(&[16], FP32), dt(&[4], INT32)], b, |v| v.to_vec(), vec![("op", int(0)), fp32()]),
        "missing kwarg 'core_num'",
    );
    err(
        host(
            &[dt(&[16], FP32), dt(&[4], INT32)],
            b,
            |v| v.to_vec(),
            vec![("op", int(7)), fp32(), ("core_num", int(1))],
        ),
        "op must be ReduceOp.Sum",
    );
    let r = "builtin.tensor.allreduce_ring";
    err(
        host(&[dt(&[1, 64], FP32), dt(&[35, 17], INT32)], r, |v| v.to_vec(), vec![("op", int(0)), fp32()]),
        "at most 16 ranks",
    );
    err(
        host(&[dt(&[1, 64], FP32), dt(&[7], INT32)], r, |v| v.to_vec(), vec![("op", int(0)), fp32()]),
        "rank 2",
    );
    let dyn_src = Type::dist_tensor(vec![Expr::int(1), Expr::sym("n")], FP32);
    err(
        host(&[dyn_src, dt(&[7, 4], INT32)], r, |v| v.to_vec(), vec![("op", int(0)), fp32()]),
        "fully static",
    );
    err(host(&[dt(&[4], FP32)], "builtin.tensor.barrier", |v| v.to_vec(), vec![]), "INT32");
    err(
        host(&[tensor(&[4], INT32)], "builtin.tensor.barrier", |v| v.to_vec(), vec![]),
        "signal must be a DistributedTensor",
    );
    let bc = "builtin.tensor.broadcast";
    err(
        host(&[dt(&[1, 64], FP32), dt(&[4], INT32)], bc, |v| v.to_vec(), vec![("root", int(-1)), fp32()]),
        "root rank must be non-negative",
    );
    err(
        host(&[dt(&[1, 64], FP32), dt(&[4, 1], INT32)], bc, |v| v.to_vec(), vec![("root", int(0)), fp32()]),
        "rank-1",
    );
    let rs = "builtin.tensor.reduce_scatter";
    err(
        host(&[dt(&[4, 64], FP32), dt(&[4], INT32)], rs, |v| v.to_vec(), vec![("op", int(1)), fp32()]),
        "only ReduceOp.Sum",
    );
    err(
        host(
            &[dt(&[4, 64], FP16), dt(&[4], INT32)],
            rs,
            |v| v.to_vec(),
            vec![("op", int(0)), ("dtype", Attr::DType(FP16))],
        ),
        "only FP32",
    );
    err(
        host(&[dt(&[4, 64], FP32), dt(&[4, 1], INT32)], rs, |v| v.to_vec(), vec![("op", int(0)), fp32()]),
        "rank-1",
    );
    let ag = "builtin.tensor.allgather";
    err(
        host(&[dt(&[2, 64], FP32), dt(&[4, 64], FP32), dt(&[4], INT32)], ag, |v| v.to_vec(), vec![fp32()]),
        "[1, SIZE]",
    );
    err(
        host(&[dt(&[1, 32], FP32), dt(&[4, 64], FP32), dt(&[4], INT32)], ag, |v| v.to_vec(), vec![fp32()]),
        "SIZE",
    );
    err(
        host(
            &[dt(&[1, 64], FP16), dt(&[4, 64], FP16), dt(&[4], INT32)],
            ag,
            |v| v.to_vec(),
            vec![("dtype", Attr::DType(FP16))],
        ),
        "only FP32",
    );
    err(
        host(&[dt(&[1, 64], FP32), dt(&[4, 64], FP32), dt(&[4], INT32)], ag, |v| v.to_vec(), vec![]),
        "missing kwarg 'dtype'",
    );
    let a2a = "builtin.tensor.all_to_all";
    err(
        host(&[dt(&[4, 64], FP32), dt(&[2, 64], FP32), dt(&[4], INT32)], a2a, |v| v.to_vec(), vec![fp32()]),
        "first dimension",
    );
    err(
        host(
            &[dt(&[4, 64], FP32), dt(&[4, 64], FP32), dt(&[4, 3], INT32)],
            a2a,
            |v| v.to_vec(),
            vec![fp32()],
        ),
        "second dimension must be 1",
    );
    let mut p = a2av_base();
    p[0] = dt(&[8, 64], FP32);
    err(
        host(&p, "builtin.tensor.all_to_all_v", |v| v.to_vec(), vec![fp32()]),
        "send_counts must be a DistributedTensor",
    );
    p[3] = dt(&[2, 1], INT32);
    err(
        host(&p, "builtin.tensor.all_to_all_v", |v| v.to_vec(), vec![("dtype", Attr::DType(FP16))]),
        "dtype kwarg (fp16) must match target dtype (fp32)",
    );
}

/// A row-push collective (allgather, all_to_all) in a chip orchestration runs as the InCore
/// composite, so a window input is refused there too, at the input, naming the CHIP rail
/// and the HOST orchestrator as the place that takes one (it used to surface only from the
/// synthesized kernel, at the whole statement, saying "on the InCore path").
#[test]
fn chip_rail_row_pushes_name_the_rail_at_the_input() {
    let sig = dt(&[4, 1], INT32);
    let cases = [
        ("pld.tensor.allgather", dt(&[1, 64], FP32), tensor(&[1, 64], FP32), "local_data"),
        ("pld.tensor.all_to_all", dt(&[4, 64], FP32), tensor(&[4, 64], FP32), "input"),
    ];
    for (op, window, plain, what) in cases {
        let target = dt(&[4, 64], FP32);
        let chip = |input: Type| {
            call_in(
                FunctionKind::ChipOrch,
                Target::A2A3,
                &[input, target.clone(), sig.clone()],
                op,
                |v| v.to_vec(),
                vec![],
            )
        };
        let d = err(chip(window.clone()), &format!("{what} must be a plain Tensor"));
        assert!(d.message.contains("on the CHIP rail"), "{}", d.message);
        assert!(d.message.contains("HOST orchestrator"), "{}", d.message);
        ok(chip(plain));
        // InCore keeps its wording; the host takes the window.
        let d = err(
            call(&[window.clone(), target.clone(), sig.clone()], op, |v| v.to_vec(), vec![]),
            "on the InCore path",
        );
        assert!(!d.message.contains("CHIP"), "{}", d.message);
    }
}
