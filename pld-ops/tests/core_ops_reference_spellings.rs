//! The core ops in the reference's spellings: positional cast dtype and mode, scalar right
//! operands becoming the scalar forms, `valid_shape=`, lower-rank stores, scratch-tile
//! reductions and every canonicalizer naming a registered op; checked on the stored call
//! (callee, canonical arguments, attributes) and end to end through a simulated program.
#![allow(clippy::cloned_ref_to_slice_refs)]

mod common;
use common::*;
use pld_ir::{Attr, DataType::*, Expr, Type};

/// Builds one call like [`common::call`] and returns the stored call (callee, canonical
/// arguments and attributes) instead of only its type.
fn built(
    params: &[Type],
    op: &str,
    args: impl FnOnce(&[Expr]) -> Vec<Expr>,
    attrs: Vec<(&str, Attr)>,
) -> Result<pld_ir::Call, pld_ir::Diagnostic> {
    let _ = pld_testkit::init();
    let mut fb = pld_ir::FunctionBuilder::new("f", pld_ir::FunctionKind::InCore);
    let vars: Vec<Expr> = params
        .iter()
        .enumerate()
        .map(|(i, t)| Expr::var(fb.param(format!("p{i}"), t.clone(), pld_ir::Direction::InOut)))
        .collect();
    let args = args(&vars);
    let mut out = None;
    fb.body(|b| {
        let e = b.op(op, args, attrs)?;
        if let pld_ir::ExprKind::Call(c) = &e.kind {
            out = Some((**c).clone());
        }
        Ok(())
    })?;
    Ok(out.expect("an op call builds a Call expression"))
}

fn lit(kind: pld_ir::ExprKind) -> Expr {
    Expr::new(kind, Default::default())
}

fn attr_names(c: &pld_ir::Call) -> Vec<&str> {
    c.attrs.iter().map(|(k, _)| k.as_str()).collect()
}

#[test]
fn cast_accepts_the_reference_spellings() {
    // pl.cast(x, pl.FP32): a positional dtype becomes the dtype attribute, for all three forms.
    for (ty, op, want) in [
        (tile(&[2, 8], FP16), "tile.cast", tile(&[2, 8], FP32)),
        (tensor(&[2, 8], FP16), "tensor.cast", tensor(&[2, 8], FP32)),
        (scalar(INT32), "scalar.cast", scalar(FP32)),
    ] {
        let c = ok_call(built(&[ty], op, |v| vec![v[0].clone(), lit(pld_ir::ExprKind::DType(FP32))], vec![]));
        assert_eq!(c.callee.name(), op);
        assert_eq!(c.args.len(), 1, "{op}: the dtype left the positional arguments");
        assert_eq!(c.attrs, vec![("dtype".to_string(), Attr::DType(FP32))], "{op}");
        assert_eq!(c.ty, want, "{op}");
    }
    // target_type= is the reference's keyword: stored as dtype.
    let c = ok_call(built(
        &[scalar(INT32)],
        "scalar.cast",
        |v| vec![v[0].clone()],
        vec![("target_type", Attr::DType(INDEX))],
    ));
    assert_eq!(c.attrs, vec![("dtype".to_string(), Attr::DType(INDEX))]);
    assert_eq!(c.ty, scalar(INDEX));
    // A positional mode (name or the reference's integer code) becomes mode="…", after dtype.
    let c = ok_call(built(
        &[tile(&[2, 8], FP32)],
        "tile.cast",
        |v| vec![v[0].clone(), lit(pld_ir::ExprKind::DType(FP16)), lit(pld_ir::ExprKind::Str("rint".into()))],
        vec![],
    ));
    assert_eq!(attr_names(&c), vec!["dtype", "mode"]);
    assert_eq!(c.attrs[1].1, Attr::Str("rint".into()));
    let c = ok_call(built(
        &[tile(&[2, 8], FP32)],
        "tile.cast",
        |v| vec![v[0].clone(), lit(pld_ir::ExprKind::DType(FP16)), Expr::int(3)],
        vec![],
    ));
    assert_eq!(c.args.len(), 1);
    assert_eq!(c.attrs[1], ("mode".to_string(), Attr::Str("floor".into())));
    let c = ok_call(built(
        &[tensor(&[2, 8], FP32)],
        "tensor.cast",
        |v| vec![v[0].clone()],
        vec![("mode", int(5)), ("target_type", Attr::DType(BF16))],
    ));
    assert_eq!(attr_names(&c), vec!["dtype", "mode"]);
    assert_eq!(c.attrs[1].1, Attr::Str("trunc".into()));
    assert_eq!(c.ty, tensor(&[2, 8], BF16));
    // Canonical calls are left alone (passes rebuild them).
    let c = ok_call(built(
        &[tile(&[2, 8], FP32)],
        "tile.cast",
        |v| vec![v[0].clone()],
        vec![("dtype", Attr::DType(FP16))],
    ));
    assert_eq!(c.attrs, vec![("dtype".to_string(), Attr::DType(FP16))]);
}

#[test]
fn cast_rejects_malformed_reference_spellings() {
    err(
        call(
            &[tile(&[2, 8], FP32)],
            "tile.cast",
            |v| vec![v[0].clone()],
            vec![("dtype", Attr::DType(FP16)), ("target_type", Attr::DType(BF16))],
        ),
        "give dtype= or target_type=, not both",
    );
    // A second positional that is not a dtype is not guessed at.
    err(
        call(&[tile(&[2, 8], FP32), scalar(INT32)], "tile.cast", |v| v.to_vec(), vec![]),
        "tile.cast takes 1 positional argument, but got 2",
    );
    err(call(&[tile(&[2, 8], FP32)], "tile.cast", |v| vec![v[0].clone()], vec![]), "missing kwarg 'dtype'");
    err(
        call(
            &[tile(&[2, 8], FP32)],
            "tile.cast",
            |v| vec![v[0].clone()],
            vec![("dtype", Attr::DType(FP16)), ("mode", Attr::Str("sideways".into()))],
        ),
        "tile.cast mode must be one of none, rint, round, floor, ceil, trunc, odd",
    );
    err(
        call(
            &[tensor(&[2, 8], FP32)],
            "tensor.cast",
            |v| vec![v[0].clone()],
            vec![("dtype", Attr::DType(FP16)), ("mode", int(9))],
        ),
        "kwarg 'mode' for operator 'tensor.cast' has incompatible type: expected str, got int",
    );
    let d = err(
        call(
            &[scalar(INT32)],
            "scalar.cast",
            |v| vec![v[0].clone()],
            vec![("dtype", Attr::DType(FP32)), ("mode", Attr::Str("floor".into()))],
        ),
        "scalar.cast supports only the default rounding mode",
    );
    assert!(d.notes.iter().any(|n| n.contains("tile.cast")), "{:?}", d.notes);
}

#[test]
fn binary_ops_with_a_scalar_rhs_become_their_scalar_forms() {
    for (ty, op, scalar_op) in [
        (tensor(&[1, 32], FP32), "tensor.add", "tensor.adds"),
        (tensor(&[1, 32], FP32), "tensor.sub", "tensor.subs"),
        (dt(&[1, 32], FP32), "tensor.mul", "tensor.muls"),
        (tensor(&[1, 32], FP32), "tensor.div", "tensor.divs"),
        (tile(&[1, 32], FP32), "tile.add", "tile.adds"),
        (tile(&[1, 32], FP32), "tile.sub", "tile.subs"),
        (tile(&[1, 32], FP32), "tile.mul", "tile.muls"),
        (tile(&[1, 32], FP32), "tile.div", "tile.divs"),
    ] {
        // A literal and a scalar value both count.
        let c = ok_call(built(&[ty.clone()], op, |v| vec![v[0].clone(), Expr::float(1.0)], vec![]));
        assert_eq!(c.callee.name(), scalar_op, "{op} with a literal");
        let c = ok_call(built(&[ty.clone(), scalar(FP32)], op, |v| v.to_vec(), vec![]));
        assert_eq!(c.callee.name(), scalar_op, "{op} with a scalar value");
        assert_eq!(
            c.ty.as_tensor_like().map(|t| t.shape.len()).or(c.ty.as_tile().map(|t| t.shape.len())),
            Some(2)
        );
        // Two tensors/tiles keep the binary op.
        let c = ok_call(built(&[ty.clone(), ty.clone()], op, |v| v.to_vec(), vec![]));
        assert_eq!(c.callee.name(), op);
    }
    // Through the unified spelling, as the reference programs write it.
    let c = ok_call(built(
        &[tensor(&[1, 32], FP32)],
        "pl.tensor.add",
        |v| vec![v[0].clone(), Expr::float(1.0)],
        vec![],
    ));
    assert_eq!(c.callee.name(), "tensor.adds");
    assert_eq!(c.ty, tensor(&[1, 32], FP32));
}

#[test]
fn binary_ops_without_a_scalar_form_reject_a_scalar_rhs() {
    err(
        call(&[tile(&[1, 8], FP32)], "tile.maximum", |v| vec![v[0].clone(), Expr::float(0.0)], vec![]),
        "tile.maximum rhs must be a TileType, got ScalarType",
    );
    err(
        call(&[tensor(&[1, 8], FP32)], "tensor.minimum", |v| vec![v[0].clone(), Expr::float(0.0)], vec![]),
        "tensor.minimum rhs must be a Tensor or DistributedTensor",
    );
    // A tuple is not a scalar operand.
    err(
        call(&[tensor(&[1, 8], FP32)], "tensor.add", |v| vec![v[0].clone(), ints(&[1, 2])], vec![]),
        "tensor.add rhs must be a Tensor or DistributedTensor",
    );
    // The scalar lhs is not silently swapped.
    err(call(&[scalar(FP32), tile(&[1, 8], FP32)], "tile.add", |v| v.to_vec(), vec![]), "tile.add");
}

#[test]
fn load_valid_shape_is_the_reference_keyword() {
    let reg = pld_testkit::init();
    let load = reg.lookup("tile.load").expect("tile.load");
    assert_eq!(
        load.params.iter().map(|p| p.name).collect::<Vec<_>>(),
        ["tensor", "offsets", "shapes", "valid_shape"]
    );
    assert!(load.params[3].optional);
    let t = ok(call(
        &[tensor(&[1, 64], FP32), scalar(INDEX)],
        "pl.load",
        |v| vec![v[0].clone(), ints(&[0, 0]), ints(&[1, 64]), Expr::tuple(vec![Expr::int(1), v[1].clone()])],
        vec![],
    ));
    assert_eq!(t.as_tile().unwrap().valid_shape.len(), 2);
    err(
        call(
            &[tensor(&[1, 64], FP32)],
            "tile.load",
            |v| vec![v[0].clone(), ints(&[0, 0]), ints(&[1, 64]), ints(&[1, 65])],
            vec![],
        ),
        "tile.load valid_shape[1] = 65 exceeds the tile shape 64",
    );
}

#[test]
fn store_puts_a_lower_rank_tile_into_the_trailing_dims() {
    // test_l3_host_tensor_allgather: a [1, N] row at [0, j, 0] of a [1, R, N] tensor.
    let t = ok(call(
        &[tile(&[1, 64], FP32), tensor(&[1, 4, 64], FP32)],
        "pl.store",
        |v| vec![v[0].clone(), ints(&[0, 3, 0]), v[1].clone()],
        vec![],
    ));
    assert_eq!(t, tensor(&[1, 4, 64], FP32));
    ok(call(
        &[tile(&[64], FP32), dt(&[2, 4, 64], FP32)],
        "tile.store",
        |v| vec![v[0].clone(), ints(&[1, 3, 0]), v[1].clone()],
        vec![],
    ));
    // The leading dims have extent 1: bounds are checked on the padded region.
    err(
        call(
            &[tile(&[2, 64], FP32), tensor(&[1, 4, 64], FP32)],
            "tile.store",
            |v| vec![v[0].clone(), ints(&[0, 3, 0]), v[1].clone()],
            vec![],
        ),
        "out of bounds",
    );
    // The offsets still have the tensor's rank.
    err(
        call(
            &[tile(&[1, 64], FP32), tensor(&[1, 4, 64], FP32)],
            "tile.store",
            |v| vec![v[0].clone(), ints(&[3, 0]), v[1].clone()],
            vec![],
        ),
        "offsets must have 3",
    );
    err(
        call(
            &[tile(&[1, 1, 64], FP32), tensor(&[4, 64], FP32)],
            "tile.store",
            |v| vec![v[0].clone(), ints(&[0, 0]), v[1].clone()],
            vec![],
        ),
        "tile.store tile rank 3 exceeds output tensor rank 2",
    );
    err(
        call(
            &[tile(&[1, 2, 64], FP32), tensor(&[1, 1, 2, 64], FP32)],
            "tile.store",
            |v| vec![v[0].clone(), ints(&[0, 0, 0, 0]), v[1].clone()],
            vec![],
        ),
        "only a 1-D or 2-D tile",
    );
}

#[test]
fn reductions_take_the_reference_scratch_tile() {
    for op in ["tile.row_sum", "tile.row_max", "pl.row_min", "tile.col_sum"] {
        let t = ok(call(&[tile(&[4, 16], FP32), tile(&[4, 16], FP32)], op, |v| v.to_vec(), vec![]));
        assert_eq!(t.as_tile().unwrap().shape.len(), 2, "{op}");
    }
    let t = ok(call(&[tile(&[4, 16], FP32), tile(&[8, 16], FP32)], "tile.row_sum", |v| v.to_vec(), vec![]));
    assert_eq!(t, tile(&[4, 1], FP32));
    err(
        call(&[tile(&[4, 16], FP32), tile(&[4, 16], FP16)], "tile.row_sum", |v| v.to_vec(), vec![]),
        "tile.row_sum tmp_tile dtype fp16 does not match the tile dtype fp32",
    );
    err(
        call(&[tile(&[4, 16], FP32), tile(&[4, 8], FP32)], "tile.row_max", |v| v.to_vec(), vec![]),
        "tile.row_max tmp_tile dim 1 is 8, smaller than the tile's 16",
    );
    err(
        call(&[tile(&[4, 16], FP32), tile(&[64], FP32)], "tile.row_sum", |v| v.to_vec(), vec![]),
        "tmp_tile must be 2-D",
    );
    err(
        call(&[tile(&[4, 16], FP32), tensor(&[4, 16], FP32)], "tile.row_sum", |v| v.to_vec(), vec![]),
        "tmp_tile",
    );
    // The reference's col_max/col_min take no scratch tile.
    err(
        call(&[tile(&[4, 16], FP32), tile(&[4, 16], FP32)], "tile.col_max", |v| v.to_vec(), vec![]),
        "tile.col_max takes 1 positional argument, but got 2",
    );
    let reg = pld_testkit::init();
    let row_sum = reg.lookup("tile.row_sum").expect("tile.row_sum");
    assert!(row_sum.params[1].effect.writes(), "the scratch tile is written");
}

#[test]
fn every_canonicalizer_names_a_registered_op() {
    let reg = pld_testkit::init();
    let mut n = 0;
    for c in reg.canonicalizers() {
        assert!(reg.lookup(c.op).is_some(), "canonicalizer for unknown op {} at {}", c.op, c.site);
        n += 1;
    }
    assert!(n >= 11, "the core canonicalizers are registered ({n})");
}

/// A program written in the reference's spellings: positional cast dtype and mode,
/// `valid_shape=`, `pl.add`/`pl.mul` with a scalar, a scratch-tile `row_sum` and a 2-D tile
/// stored into a 3-D tensor. It parses, survives the pass pipeline and simulates correctly.
const REFERENCE_SPELLINGS: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")

@pl.program
class ReferenceSpellings:
    @pl.function(type=pl.FunctionType.InCore)
    def step(self, x: pl.Tensor[[2, 8], pl.FP16], y: pl.Out[pl.Tensor[[1, 3, 8], pl.FP32]]) -> pl.Tensor[[1, 3, 8], pl.FP32]:
        t = pl.load(x, [0, 0], [2, 8], valid_shape=[2, 8])
        f = pl.cast(t, pl.FP32, "round")
        g = pl.add(f, 1.0)
        h = pl.mul(g, 2.0)
        y = pl.store(h, [0, 0, 0], y)
        tmp = pl.tile.create([2, 8], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        s = pl.tile.row_sum(h, tmp)
        s_row = pl.tile.reshape(s, [1, 2])
        y = pl.store(s_row, [0, 2, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[2, 8], pl.FP16], y: pl.Out[pl.Tensor[[1, 3, 8], pl.FP32]]) -> pl.Tensor[[1, 3, 8], pl.FP32]:
        y = self.step(x, y)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, 2, 8], pl.FP16], outputs: pl.Out[pl.Tensor[[NR, 1, 3, 8], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.chip(inputs[r], outputs[r], device=r)
"#;

#[test]
fn reference_spellings_parse_lower_and_simulate() {
    use pld_testkit::e2e::{assert_ranks, inputs, lower, parse, run_ok, stack, unstack};
    let prog = parse(REFERENCE_SPELLINGS);
    let text = pld_ir::print_program(&prog);
    for want in ["tile.cast(", "dtype=pl.FP32", "mode=\"round\"", "tile.adds(", "tile.muls(", "tile.row_sum("]
    {
        assert!(text.contains(want), "{want} missing from the parsed program:\n{text}");
    }
    assert!(!text.contains("tile.add(") && !text.contains("tile.mul("), "binary forms kept:\n{text}");
    let lowered = match lower(&prog) {
        Ok(p) => p,
        Err(d) => panic!("pipeline failed: {:?}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>()),
    };
    let p = 2;
    let per: Vec<Vec<f64>> = (0..p).map(|r| (0..16).map(|i| (r * 16 + i) as f64 * 0.5).collect()).collect();
    let want: Vec<Vec<f64>> = per
        .iter()
        .map(|x| {
            let h: Vec<f64> = x.iter().map(|v| (v + 1.0) * 2.0).collect();
            let mut out = h.clone();
            out.push(h[..8].iter().sum());
            out.push(h[8..].iter().sum());
            out.extend(std::iter::repeat_n(0.0, 6));
            out
        })
        .collect();
    for (what, program) in [("as parsed", &prog), ("lowered", &lowered)] {
        let inp = inputs(vec![
            ("inputs", stack(FP16, &per, &[2, 8])),
            ("outputs", stack(FP32, &vec![vec![0.0; 24]; p], &[1, 3, 8])),
        ]);
        let out = run_ok(program, "host", p, &inp, Default::default(), what);
        assert_ranks(&unstack(&out.outputs["outputs"]), &want, 1e-5, 1e-5, what);
    }
}

#[track_caller]
fn ok_call(r: Result<pld_ir::Call, pld_ir::Diagnostic>) -> pld_ir::Call {
    match r {
        Ok(c) => c,
        Err(d) => panic!("expected success, got error: {} (notes: {:?})", d.message, d.notes),
    }
}
