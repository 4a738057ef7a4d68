//! The window family (alloc_window_buffer, window, world_size, get_comm_ctx, rank, nranks):
//! tests_negative.md A.2–A.5 at op level.
#![allow(clippy::cloned_ref_to_slice_refs)]

mod common;
use common::*;
use pld_ir::{Attr, DataType::*, Expr, FunctionKind, Target, Type};

fn host(
    params: &[Type],
    op: &str,
    args: impl FnOnce(&[Expr]) -> Vec<Expr>,
    attrs: Vec<(&str, Attr)>,
) -> Result<Type, pld_ir::Diagnostic> {
    call_in(FunctionKind::Host, Target::A2A3, params, op, args, attrs)
}

/// A host `alloc_window_buffer` call built through the registry, canonicalizer included.
/// `args` gets a host scalar `n` to use.
fn alloc_call(
    args: impl FnOnce(Expr) -> Vec<Expr>,
    attrs: Vec<(&str, Attr)>,
) -> Result<Expr, pld_ir::Diagnostic> {
    let _ = pld_testkit::init();
    let mut values = pld_ir::value::Values::default();
    let n = values.add("n", Type::Scalar(INDEX), pld_ir::Span::default());
    let args = args(Expr::var(n));
    let env = pld_ir::DeduceEnv { func_kind: Some(FunctionKind::Host), ..pld_ir::DeduceEnv::new(&values) };
    let attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    Expr::op_call("pld.alloc_window_buffer", args, attrs, pld_ir::Span::default(), &env)
}

#[test]
fn a_shape_and_dtype_become_one_byte_size() {
    // #16, #17: static dims fold into one integer; the dtype is not kept on the op.
    let name = || ("name", Attr::Str("b".into()));
    for (shape, dtype, bytes) in
        [(vec![64, 128], FP32, 32768), (vec![32, 16], INT32, 2048), (vec![8], FP16, 16)]
    {
        let e = alloc_call(|_| vec![ints(&shape)], vec![name(), ("dtype", Attr::DType(dtype))]).unwrap();
        let c = e.as_call().unwrap();
        assert_eq!(c.args, vec![Expr::int(bytes)], "{shape:?} {dtype}");
        assert_eq!(c.attrs, vec![("name".to_string(), Attr::Str("b".into()))]);
        // Idempotent: the canonical form builds to itself.
        let again = alloc_call(|_| c.args.clone(), vec![name()]).unwrap();
        assert_eq!(again, e);
    }
    // #20: a symbolic dim multiplies onto the folded static ones (width 4 × 4, then × n).
    let e =
        alloc_call(|n| vec![Expr::tuple(vec![n, Expr::int(4)])], vec![name(), ("dtype", Attr::DType(FP32))])
            .unwrap();
    let size = &e.as_call().unwrap().args[0];
    assert!(size.as_int().is_none(), "{size:?}");
    assert_eq!(size.to_string(), "16 * %v0");
    // The forms it leaves alone are the deducer's errors.
    let no_dtype = alloc_call(|_| vec![ints(&[4, 8])], vec![name()]).unwrap_err();
    assert!(no_dtype.message.contains("with a shape needs dtype="), "{no_dtype:?}");
    let empty =
        alloc_call(|_| vec![Expr::tuple(vec![])], vec![name(), ("dtype", Attr::DType(FP32))]).unwrap_err();
    assert!(empty.message.contains("shape must be non-empty"), "{empty:?}");
    let bare = alloc_call(|_| vec![Expr::int(64)], vec![]).unwrap_err();
    assert_eq!(bare.message, "missing kwarg 'name' on pld.tensor.alloc_window_buffer");
}

#[test]
fn alloc_window_buffer_a2() {
    // #1, #8
    for op in ["pld.alloc_window_buffer", "pld.tensor.alloc_window_buffer"] {
        assert_eq!(
            ok(host(&[], op, |_| vec![Expr::int(1024)], vec![("name", Attr::Str("buf".into()))])),
            Type::Ptr
        );
    }
    // #2
    err(
        host(
            &[],
            "pld.alloc_window_buffer",
            |_| vec![Expr::int(1024)],
            vec![("name", Attr::Str(String::new()))],
        ),
        "non-empty 'name'",
    );
    // #4: not in a kernel.
    err(
        call(&[], "pld.alloc_window_buffer", |_| vec![Expr::int(64)], vec![("name", Attr::Str("b".into()))]),
        "HOST",
    );
    // Positive integer sizes only; no dtype kwarg on the op.
    err(
        host(&[], "pld.alloc_window_buffer", |_| vec![Expr::int(0)], vec![("name", Attr::Str("b".into()))]),
        "must be positive",
    );
    err(
        host(
            &[],
            "pld.alloc_window_buffer",
            |_| vec![Expr::float(1.0)],
            vec![("name", Attr::Str("b".into()))],
        ),
        "integer scalar",
    );
    err(
        host(
            &[],
            "pld.alloc_window_buffer",
            |_| vec![Expr::int(64)],
            vec![("name", Attr::Str("b".into())), ("dtype", Attr::DType(FP32))],
        ),
        "dtype=... is only valid with a shape list",
    );
    // #20: a dynamic size.
    ok(host(
        &[scalar(INT64)],
        "pld.alloc_window_buffer",
        |v| vec![Expr::binary(pld_ir::BinOp::Mul, v[0].clone(), Expr::int(256))],
        vec![("name", Attr::Str("b".into()))],
    ));
}

#[test]
fn window_a3() {
    // #1, #12
    for op in ["pld.window", "pld.tensor.window"] {
        assert_eq!(
            ok(host(
                &[Type::Ptr],
                op,
                |v| vec![v[0].clone(), ints(&[64])],
                vec![("dtype", Attr::DType(FP16))]
            )),
            dt(&[64], FP16)
        );
    }
    // #2
    err(
        host(
            &[tensor(&[64], FP32)],
            "pld.window",
            |v| vec![v[0].clone(), ints(&[64])],
            vec![("dtype", Attr::DType(FP32))],
        ),
        "Ptr",
    );
    // #3
    err(
        host(
            &[Type::Ptr],
            "pld.window",
            |v| vec![v[0].clone(), Expr::int(8)],
            vec![("dtype", Attr::DType(FP32))],
        ),
        "shape tuple",
    );
    // #8, #9, #10
    err(
        host(
            &[Type::Ptr],
            "pld.window",
            |v| vec![v[0].clone(), ints(&[8])],
            vec![("dtype", Attr::DType(FP32)), ("target_memory", Attr::Str("Vec".into()))],
        ),
        "unknown kwarg 'target_memory'",
    );
    err(
        host(&[Type::Ptr], "pld.window", |v| vec![v[0].clone()], vec![("dtype", Attr::DType(FP32))]),
        "2 positional arguments",
    );
    err(host(&[Type::Ptr], "pld.window", |v| vec![v[0].clone(), ints(&[8])], vec![]), "dtype");
    err(
        host(
            &[Type::Ptr],
            "pld.window",
            |v| vec![v[0].clone(), ints(&[0, 8])],
            vec![("dtype", Attr::DType(FP32))],
        ),
        "must be positive",
    );
}

#[test]
fn world_size_a4() {
    // #1, #11
    for op in ["pld.world_size", "pld.system.world_size"] {
        assert_eq!(ok(host(&[], op, |_| vec![], vec![])), scalar(INT64));
    }
    // #2, #3
    err(host(&[], "pld.world_size", |_| vec![Expr::int(1)], vec![]), "positional argument");
    err(host(&[], "pld.world_size", |_| vec![], vec![("foo", int(1))]), "unknown kwarg 'foo'");
    // #8: not in a kernel; names the in-kernel way.
    let d = err(call(&[], "pld.world_size", |_| vec![], vec![]), "HOST");
    assert!(d.message.contains("pld.system.nranks"));
}

#[test]
fn comm_ctx_rank_nranks_a5() {
    let w = dt(&[64], FP32);
    // #1, #2, #3, #4
    assert_eq!(ok(call(&[w.clone()], "pld.get_comm_ctx", |v| vec![v[0].clone()], vec![])), Type::CommCtx);
    err(
        call(&[tensor(&[64], FP32)], "pld.system.get_comm_ctx", |v| vec![v[0].clone()], vec![]),
        "DistributedTensor",
    );
    err(
        call(&[w.clone()], "pld.system.get_comm_ctx", |v| vec![v[0].clone()], vec![("peer", int(0))]),
        "unknown kwarg 'peer'",
    );
    err(
        call(&[w.clone()], "pld.system.get_comm_ctx", |v| vec![v[0].clone(), Expr::int(0)], vec![]),
        "takes 1 positional argument",
    );
    // #5, #6, #10
    for op in ["pld.system.rank", "pld.system.nranks", "pld.rank", "pld.nranks"] {
        assert_eq!(ok(call(&[Type::CommCtx], op, |v| vec![v[0].clone()], vec![])), scalar(INT32));
        err(call(&[scalar(INT64)], op, |v| vec![v[0].clone()], vec![]), "CommCtx");
    }
    // #14
    err(call(&[w], "pld.rank", |v| vec![v[0].clone()], vec![]), "CommCtx");
}
