//! The ergonomic collectives and the private signals of host collectives: each ergonomic op
//! is built as its `pld.tensor.*` op (same operands and keywords; for `all_to_all_v` a
//! `[nranks, 1]` shape in the signal slot), host collectives may omit their signal in a
//! host orchestrator only, `nranks=` belongs to a ring allreduce, and every op that may omit
//! its signal has exactly one private-signal rule.
#![allow(clippy::cloned_ref_to_slice_refs)]

mod common;
use common::*;
use pld_ir::auto_signal::private_signal;
use pld_ir::{Attr, DataType::*, Direction, Expr, FunctionBuilder, FunctionKind, Target, Type};

/// Builds `op(args)` in a function of `kind` and returns the built call's op name and type.
fn built(
    kind: FunctionKind,
    params: &[Type],
    op: &str,
    args: impl FnOnce(&[Expr]) -> Vec<Expr>,
    attrs: Vec<(&str, Attr)>,
) -> Result<(String, Type), pld_ir::Diagnostic> {
    let _ = pld_testkit::init();
    let mut fb = FunctionBuilder::new("f", kind).target(Target::A2A3);
    let vars: Vec<Expr> = params
        .iter()
        .enumerate()
        .map(|(i, t)| Expr::var(fb.param(format!("p{i}"), t.clone(), Direction::InOut)))
        .collect();
    let args = args(&vars);
    let mut out = (String::new(), Type::Unknown);
    fb.body(|b| {
        let e = b.op(op, args, attrs)?;
        let name = e.as_call().map(|c| c.callee.name().to_string()).unwrap_or_default();
        out = (name, b.type_of(&e));
        Ok(())
    })?;
    Ok(out)
}

fn host(params: &[Type], op: &str, attrs: Vec<(&str, Attr)>) -> Result<(String, Type), pld_ir::Diagnostic> {
    built(FunctionKind::Host, params, op, |v| v.to_vec(), attrs)
}

/// An op, its parameter types and its keywords.
type Case<'a> = (&'a str, Vec<Type>, Vec<(&'a str, Attr)>);

#[track_caller]
fn rejected(r: Result<(String, Type), pld_ir::Diagnostic>, needle: &str) {
    match r {
        Ok((op, t)) => panic!("accepted as {op}: {t}; expected {needle:?}"),
        Err(d) => assert!(d.message.contains(needle), "{:?} does not contain {needle:?}", d.message),
    }
}

#[test]
fn ergonomic_ops_are_built_as_their_tensor_ops() {
    let row = dt(&[1, 40], FP32);
    let rows = dt(&[4, 40], FP32);
    let cases: Vec<(Case<'_>, &str)> = vec![
        (("pld.all_reduce", vec![row.clone()], vec![("op", int(1))]), "pld.tensor.allreduce"),
        (("pld.all_gather", vec![row.clone(), rows.clone()], vec![]), "pld.tensor.allgather"),
        (("pld.reduce_scatter", vec![rows.clone()], vec![]), "pld.tensor.reduce_scatter"),
        (("pld.broadcast", vec![row.clone()], vec![("root", int(0))]), "pld.tensor.broadcast"),
        (("pld.all_to_all", vec![rows.clone(), dt(&[4, 40], FP32)], vec![]), "pld.tensor.all_to_all"),
        (("pld.barrier", vec![dt(&[4], INT32)], vec![]), "pld.tensor.barrier"),
    ];
    for ((op, params, attrs), want) in cases {
        let (name, ty) = host(&params, op, attrs).unwrap_or_else(|d| panic!("{op}: {}", d.message));
        assert_eq!(name, want, "{op}");
        // Window-as-result: the target's (for barrier the signal's) type comes back.
        let back = if op == "pld.all_gather" || op == "pld.all_to_all" { &params[1] } else { &params[0] };
        assert_eq!(&ty, back, "{op}");
    }
}

#[test]
fn a_host_collective_may_omit_its_signal_only_in_a_host_orchestrator() {
    let rows = dt(&[4, 40], FP32);
    let row = dt(&[1, 40], FP32);
    let cases: Vec<Case<'_>> = vec![
        ("pld.tensor.broadcast", vec![row.clone()], vec![("root", int(0))]),
        ("pld.tensor.reduce_scatter", vec![rows.clone()], vec![]),
        ("pld.tensor.allgather", vec![row.clone(), rows.clone()], vec![]),
        ("pld.tensor.all_to_all", vec![rows.clone(), dt(&[4, 40], FP32)], vec![]),
    ];
    for (op, params, attrs) in cases {
        assert!(host(&params, op, attrs.clone()).is_ok(), "{op} on the host");
        for kind in [FunctionKind::InCore, FunctionKind::ChipOrch] {
            let mut params = params.clone();
            if kind == FunctionKind::InCore && op == "pld.tensor.allgather" {
                params[0] = tensor(&[1, 40], FP32); // the InCore path gathers a plain tensor
            }
            rejected(
                built(kind, &params, op, |v| v.to_vec(), attrs.clone()),
                &format!("{op} requires an explicit signal outside host orchestrator functions"),
            );
        }
    }
}

#[test]
fn nranks_belongs_to_a_ring_allreduce() {
    let row = dt(&[1, 40], FP32);
    let ring = || ("mode", Attr::Str("ring".into()));
    assert!(host(&[row.clone()], "pld.all_reduce", vec![ring(), ("nranks", int(4))]).is_ok());
    rejected(host(&[row.clone()], "pld.all_reduce", vec![ring()]), "mode=ring requires an explicit signal");
    rejected(
        host(&[row.clone()], "pld.all_reduce", vec![("nranks", int(4))]),
        "nranks is only used with mode=\"ring\"",
    );
    rejected(
        host(&[row.clone()], "pld.all_reduce", vec![ring(), ("nranks", int(-2))]),
        "positive static int",
    );
    // With an explicit ring signal, nranks must agree with it.
    rejected(
        host(&[row.clone(), dt(&[7, 3], INT32)], "pld.tensor.allreduce", vec![ring(), ("nranks", int(4))]),
        "nranks (4) must equal the signal's second dimension (3)",
    );
}

fn a2av_ergonomic() -> Vec<Type> {
    vec![dt(&[8, 64], FP32), dt(&[8, 64], FP32), dt(&[2, 1], INT32), dt(&[2, 1], INT32)]
}

#[test]
fn all_to_all_v_gets_a_shape_in_its_signal_slot() {
    let (name, ty) = host(&a2av_ergonomic(), "pld.all_to_all_v", vec![("nranks", int(2))]).expect("accepted");
    assert_eq!((name.as_str(), ty), ("pld.tensor.all_to_all_v", dt(&[8, 64], FP32)));
    // The same checks as with a signal: NR must divide the target rows.
    rejected(
        host(&a2av_ergonomic(), "pld.all_to_all_v", vec![("nranks", int(3))]),
        "signal dim 0 (3) must divide target dim 0 (8)",
    );
    rejected(host(&a2av_ergonomic(), "pld.all_to_all_v", vec![("nranks", int(0))]), "positive static int");
    rejected(host(&a2av_ergonomic(), "pld.all_to_all_v", vec![]), "missing kwarg 'nranks'");
    rejected(
        host(&a2av_ergonomic(), "pld.all_to_all_v", vec![("nranks", Attr::Bool(true))]),
        "kwarg 'nranks' for operator 'pld.all_to_all_v' has incompatible type: expected int, got bool",
    );
    rejected(
        built(
            FunctionKind::InCore,
            &a2av_ergonomic(),
            "pld.all_to_all_v",
            |v| v.to_vec(),
            vec![("nranks", int(2))],
        ),
        "requires an explicit signal window outside host orchestrator functions, not a shape",
    );
    // A shape that is not [NR, 1] in the slot of the tensor op.
    let p = a2av_ergonomic();
    let bad = |v: &[Expr]| {
        vec![
            v[0].clone(),
            v[1].clone(),
            Expr::tuple(vec![Expr::int(2), Expr::int(2)]),
            v[2].clone(),
            v[3].clone(),
        ]
    };
    rejected(
        built(FunctionKind::Host, &p, "pld.tensor.all_to_all_v", bad, vec![]),
        "signal shape must be [NR, 1] with a static NR > 0",
    );
}

#[test]
fn every_op_that_may_omit_its_signal_has_one_private_signal_rule() {
    let _ = pld_testkit::init();
    assert_eq!(pld_ops::registry().check(), Ok(()), "the private-signal table collects without errors");
    for op in [
        "pld.tensor.allreduce",
        "pld.tensor.broadcast",
        "pld.tensor.reduce_scatter",
        "pld.tensor.allgather",
        "pld.tensor.all_to_all",
        "pld.tensor.all_to_all_v",
    ] {
        assert!(private_signal(op).is_some(), "{op}");
    }
    // A barrier's signal is the caller's: no rule, and it cannot be left off.
    assert!(private_signal("pld.tensor.barrier").is_none());
    rejected(host(&[], "pld.barrier", vec![]), "positional argument");
}
