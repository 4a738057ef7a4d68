//! put / get at both levels: tests_negative.md A.13 and A.14 plus one negative per seed rule
//! (window side exact, local side either, full-slice vs region, dynamic dims need chunks,
//! pipeline needs both chunks, atomic allow-list and bf16 on a5, stage rules, placement).
#![allow(clippy::cloned_ref_to_slice_refs)]

mod common;
use common::*;
use pld_ir::{Attr, DataType::*, Effect, Expr, Type};

const PUT: &str = "pld.tensor.put";
const GET: &str = "pld.tensor.get";
const TPUT: &str = "pld.tile.put";
const TGET: &str = "pld.tile.get";

fn dyn_dt(first: Expr, cols: i64, d: pld_ir::DataType) -> Type {
    Type::dist_tensor(vec![first, Expr::int(cols)], d)
}

/// `op(dst, peer, src, extra...)` with params `[dst, src]` (+ more) and an INT32 peer.
fn xfer(
    op: &str,
    params: &[Type],
    extra: Vec<Expr>,
    attrs: Vec<(&str, Attr)>,
) -> Result<Type, pld_ir::Diagnostic> {
    let mut ps = params.to_vec();
    ps.push(scalar(INT32));
    let n = params.len();
    call(
        &ps,
        op,
        |v| {
            let mut a = vec![v[0].clone(), v[n].clone(), v[1].clone()];
            a.extend(v[2..n].iter().cloned());
            a.extend(extra);
            a
        },
        attrs,
    )
}

fn atomic(v: i64) -> Vec<(&'static str, Attr)> {
    vec![("atomic", int(v))]
}

fn region(d: &[i64], s: &[i64], sh: &[i64]) -> Vec<Expr> {
    vec![ints(d), ints(s), ints(sh)]
}

/// A13 (put) #1-#4: transfer regions and dynamic leading dims.
#[test]
fn put_a13_regions() {
    let f16 = dt(&[16, 64], FP16);
    // #1
    assert_eq!(ok(xfer(PUT, &[f16.clone(), f16.clone()], vec![], atomic(1))), Type::Unknown);
    // #2
    ok(xfer(PUT, &[f16.clone(), dt(&[8, 64], FP16)], region(&[3, 0], &[1, 0], &[1, 64]), atomic(0)));
    // #3: dynamic region shape needs chunk_rows.
    let dynshape = |n: &Expr| vec![ints(&[0, 0]), ints(&[0, 0]), Expr::tuple(vec![n.clone(), Expr::int(64)])];
    let r = call(
        &[f16.clone(), f16.clone(), scalar(INT32), scalar(INDEX)],
        PUT,
        |v| {
            let mut a = vec![v[0].clone(), v[2].clone(), v[1].clone()];
            a.extend(dynshape(&v[3]));
            a
        },
        atomic(0),
    );
    err(r, "dynamic leading transfer dim needs a static chunk_rows");
    let r = call(
        &[f16.clone(), f16.clone(), scalar(INT32), scalar(INDEX)],
        PUT,
        |v| {
            let mut a = vec![v[0].clone(), v[2].clone(), v[1].clone()];
            a.extend(dynshape(&v[3]));
            a
        },
        vec![("atomic", int(0)), ("chunk_rows", int(4))],
    );
    ok(r);
    // #4: full slice with the same dynamic dim.
    let n = dyn_dt(Expr::sym("n"), 64, FP16);
    err(
        xfer(PUT, &[n.clone(), n.clone()], vec![], atomic(0)),
        "dynamic leading transfer dim needs a static chunk_rows",
    );
    ok(xfer(PUT, &[n.clone(), n.clone()], vec![], vec![("atomic", int(0)), ("chunk_rows", int(4))]));
    let m = dyn_dt(Expr::sym("m"), 64, FP16);
    err(
        xfer(PUT, &[n.clone(), m], vec![], vec![("atomic", int(0)), ("chunk_rows", int(4))]),
        "must have the same shape",
    );
}

/// A13 (put) #5, #7: atomic-add dtypes per target.
#[test]
fn put_a13_atomic_dtypes() {
    // #5
    let i64t = dt(&[16, 64], INT64);
    err(xfer(PUT, &[i64t.clone(), i64t.clone()], vec![], atomic(1)), "hardware atomic-add dtypes");
    ok(xfer(PUT, &[i64t.clone(), i64t.clone()], vec![], atomic(0)));
    // #7: bf16 atomic fine on the default a2a3 target...
    let bf = dt(&[16, 64], BF16);
    ok(xfer(PUT, &[bf.clone(), bf.clone()], vec![], atomic(1)));
    // ...and rejected on a5 (AtomicAddDtypeValid), naming Ascend910B.
    let r = call_in(
        pld_ir::FunctionKind::InCore,
        pld_ir::Target::A5,
        &[bf.clone(), bf.clone(), scalar(INT32)],
        PUT,
        |v| vec![v[0].clone(), v[2].clone(), v[1].clone()],
        atomic(1),
    );
    let d = err(r, "bf16");
    assert!(d.message.contains("a5") && d.message.contains("Ascend910B"));
}

/// A13 (put) #10-#14: chunk_rows, chunk_cols and pipeline.
#[test]
fn put_a13_chunking() {
    let f16 = dt(&[16, 64], FP16);
    // #10
    err(
        xfer(PUT, &[f16.clone(), f16.clone()], vec![], vec![("atomic", int(0)), ("chunk_rows", int(-1))]),
        "chunk_rows must be non-negative",
    );
    ok(xfer(PUT, &[f16.clone(), f16.clone()], vec![], vec![("atomic", int(0)), ("chunk_rows", int(0))]));
    // chunk_rows must be an int (a bool is refused by the schema).
    err(
        xfer(
            PUT,
            &[f16.clone(), f16.clone()],
            vec![],
            vec![("atomic", int(0)), ("chunk_rows", Attr::Bool(true))],
        ),
        "incompatible type",
    );
    // #12/#14
    ok(xfer(
        PUT,
        &[f16.clone(), f16.clone()],
        vec![],
        vec![
            ("atomic", int(0)),
            ("chunk_rows", int(4)),
            ("chunk_cols", int(32)),
            ("pipeline", Attr::Bool(true)),
        ],
    ));
    for (r, c) in [(4, 0), (0, 32), (0, 0)] {
        err(
            xfer(
                PUT,
                &[f16.clone(), f16.clone()],
                vec![],
                vec![
                    ("atomic", int(0)),
                    ("chunk_rows", int(r)),
                    ("chunk_cols", int(c)),
                    ("pipeline", Attr::Bool(true)),
                ],
            ),
            "pipeline=True requires both chunk_rows>0 and chunk_cols>0",
        );
    }
}

/// A13 (put) #23-#31: operand kinds, dtypes, shapes and region tuples.
#[test]
fn put_a13_operands() {
    let f16 = dt(&[16, 64], FP16);
    // #23, #24
    err(xfer(PUT, &[tensor(&[16], FP16), tensor(&[16], FP16)], vec![], atomic(0)), "DistributedTensor");
    ok(xfer(PUT, &[dt(&[16], FP16), tensor(&[16], FP16)], vec![], atomic(0)));
    // #25, #26
    err(xfer(PUT, &[f16.clone(), dt(&[16, 64], FP32)], vec![], atomic(0)), "element type");
    err(xfer(PUT, &[f16.clone(), dt(&[16, 32], FP16)], vec![], atomic(0)), "static shape");
    // #27..#30
    err(
        xfer(PUT, &[f16.clone(), f16.clone()], vec![ints(&[0]), ints(&[0, 0]), ints(&[1, 64])], atomic(0)),
        "dst_offsets rank",
    );
    err(
        xfer(PUT, &[f16.clone(), f16.clone()], region(&[-1, 0], &[0, 0], &[1, 64]), atomic(0)),
        "dst_offsets dimension 0 must be non-negative",
    );
    err(
        xfer(PUT, &[f16.clone(), f16.clone()], region(&[15, 0], &[0, 0], &[2, 64]), atomic(0)),
        "dst subregion dimension 0 exceeds dst shape",
    );
    err(
        xfer(PUT, &[f16.clone(), f16.clone()], region(&[0, 0], &[15, 0], &[2, 64]), atomic(0)),
        "src subregion dimension 0 exceeds src shape",
    );
    // #31
    err(call(&[f16.clone(), f16.clone(), f16.clone()], PUT, |v| v.to_vec(), atomic(0)), "scalar");
    // atomic defaults to None_ on the DSL-facing op (required on the internal tile.put);
    // 4 or 5 args is neither form.
    ok(xfer(PUT, &[f16.clone(), f16.clone()], vec![], vec![]));
    err(
        xfer(TPUT, &[f16.clone(), f16.clone(), tile(&[16, 64], FP16)], vec![], vec![]),
        "missing kwarg 'atomic' on pld.tile.put",
    );
    err(
        xfer(PUT, &[f16.clone(), f16.clone()], vec![ints(&[0, 0])], atomic(0)),
        "requires 3 positional arguments (dst, peer, src) or 6",
    );
    // A tile src is a computed value: the note names remote_store.
    let d = err(
        xfer(PUT, &[f16.clone(), tile(&[16, 64], FP16)], vec![], atomic(0)),
        "src must be a Tensor or DistributedTensor",
    );
    assert!(d.notes.iter().any(|n| n.contains("pld.tensor.remote_store")));
    // Region shape must be positive; region tuples must be tuples.
    err(
        xfer(PUT, &[f16.clone(), f16.clone()], region(&[0, 0], &[0, 0], &[0, 64]), atomic(0)),
        "shape dimension 0 must be positive",
    );
    err(
        xfer(PUT, &[f16.clone(), f16.clone()], vec![Expr::int(0), ints(&[0, 0]), ints(&[1, 64])], atomic(0)),
        "dst_offsets must be a tuple",
    );
    // Dynamic innermost dim needs chunk_cols.
    let w = Type::dist_tensor(vec![Expr::int(16), Expr::sym("w")], FP16);
    err(
        xfer(PUT, &[w.clone(), w.clone()], vec![], atomic(0)),
        "dynamic innermost transfer dim needs a static chunk_cols",
    );
}

#[test]
fn tile_put_a13() {
    let f16 = dt(&[16, 64], FP16);
    let st = |s: &[i64]| tile(s, FP16);
    // #16
    assert_eq!(ok(xfer(TPUT, &[f16.clone(), f16.clone(), st(&[16, 64])], vec![], atomic(1))), Type::Unknown);
    // #6
    let i64t = dt(&[16, 64], INT64);
    err(
        xfer(TPUT, &[i64t.clone(), i64t.clone(), tile(&[16, 64], INT64)], vec![], atomic(1)),
        "hardware atomic-add dtypes",
    );
    // #17
    err(
        xfer(TPUT, &[f16.clone(), f16.clone(), st(&[1, 1, 64])], vec![], atomic(0)),
        "stage must be a 2D VEC staging tile",
    );
    // #18, #19
    ok(xfer(TPUT, &[f16.clone(), f16.clone(), st(&[4, 32])], vec![], atomic(0)));
    err(xfer(TPUT, &[f16.clone(), f16.clone(), st(&[16, 128])], vec![], atomic(0)), "must fit within");
    // #20, #21, #22
    ok(xfer(TPUT, &[f16.clone(), f16.clone(), st(&[4, 32]), st(&[4, 32])], vec![], atomic(0)));
    err(
        xfer(TPUT, &[f16.clone(), f16.clone(), st(&[4, 32]), st(&[8, 32])], vec![], atomic(0)),
        "ping/pong staging tiles must have identical shape",
    );
    err(
        xfer(TPUT, &[f16.clone(), f16.clone(), st(&[4, 32]), tile(&[4, 32], FP32)], vec![], atomic(0)),
        "stage2 dtype must match dst dtype",
    );
    // Region forms: 7 and 8 args.
    ok(xfer(
        TPUT,
        &[f16.clone(), dt(&[8, 64], FP16), st(&[1, 64])],
        region(&[3, 0], &[1, 0], &[1, 64]),
        atomic(0),
    ));
    ok(xfer(
        TPUT,
        &[f16.clone(), dt(&[8, 64], FP16), st(&[1, 32]), st(&[1, 32])],
        region(&[3, 0], &[1, 0], &[1, 64]),
        atomic(0),
    ));
    // 6 args is no form of tile.put.
    err(
        xfer(TPUT, &[f16.clone(), f16.clone(), st(&[4, 32])], vec![ints(&[0, 0]), ints(&[0, 0])], atomic(0)),
        "requires 4/5",
    );
    // Stage must be a tile; chunk kwargs are schema errors on the tile form.
    err(xfer(TPUT, &[f16.clone(), f16.clone(), f16.clone()], vec![], atomic(0)), "stage must be a TileType");
    err(
        xfer(
            TPUT,
            &[f16.clone(), f16.clone(), st(&[4, 32])],
            vec![],
            vec![("atomic", int(0)), ("chunk_rows", int(4))],
        ),
        "unknown kwarg 'chunk_rows'",
    );
    // A dynamic region is fine at tile level with an explicit static stage (all_to_all_v).
    let r = call(
        &[f16.clone(), f16.clone(), st(&[1, 64]), scalar(INT32), scalar(INDEX)],
        TPUT,
        |v| {
            vec![
                v[0].clone(),
                v[3].clone(),
                v[1].clone(),
                v[2].clone(),
                ints(&[0, 0]),
                ints(&[0, 0]),
                Expr::tuple(vec![v[4].clone(), Expr::int(64)]),
            ]
        },
        atomic(0),
    );
    ok(r);
}

#[test]
fn get_a14() {
    let f16 = dt(&[16, 64], FP16);
    // #1, #2
    assert_eq!(ok(xfer(GET, &[f16.clone(), f16.clone()], vec![], vec![])), Type::Unknown);
    ok(xfer(GET, &[f16.clone(), dt(&[8, 64], FP16)], region(&[3, 0], &[1, 0], &[1, 64]), vec![]));
    // #3
    let r = |attrs: Vec<(&'static str, Attr)>| {
        call(
            &[f16.clone(), f16.clone(), scalar(INT32), scalar(INDEX)],
            GET,
            |v| {
                vec![
                    v[0].clone(),
                    v[2].clone(),
                    v[1].clone(),
                    ints(&[0, 0]),
                    ints(&[0, 0]),
                    Expr::tuple(vec![Expr::int(16), v[3].clone()]),
                ]
            },
            attrs,
        )
    };
    err(r(vec![]), "dynamic innermost transfer dim needs a static chunk_cols");
    ok(r(vec![("chunk_cols", int(32))]));
    // #4
    let n = dyn_dt(Expr::sym("n"), 64, FP16);
    err(
        xfer(GET, &[n.clone(), n.clone()], vec![], vec![]),
        "dynamic leading transfer dim needs a static chunk_rows",
    );
    ok(xfer(GET, &[n.clone(), n.clone()], vec![], vec![("chunk_rows", int(4))]));
    // #10, pipeline
    err(
        xfer(GET, &[f16.clone(), f16.clone()], vec![], vec![("chunk_cols", int(-1))]),
        "chunk_cols must be non-negative",
    );
    err(
        xfer(
            GET,
            &[f16.clone(), f16.clone()],
            vec![],
            vec![("chunk_cols", int(32)), ("pipeline", Attr::Bool(true))],
        ),
        "pipeline=True requires both chunk_rows>0 and chunk_cols>0",
    );
    // #12
    err(xfer(GET, &[f16.clone(), f16.clone()], vec![], atomic(0)), "unknown kwarg 'atomic'");
    // #13
    ok(xfer(GET, &[tensor(&[16], FP16), dt(&[16], FP16)], vec![], vec![]));
    ok(xfer(TGET, &[tensor(&[16], FP16), dt(&[16], FP16), tile(&[1, 16], FP16)], vec![], vec![]));
    // #16..#25
    err(xfer(GET, &[f16.clone(), tensor(&[16, 64], FP16)], vec![], vec![]), "DistributedTensor");
    err(xfer(GET, &[f16.clone(), dt(&[16, 64], FP32)], vec![], vec![]), "element type");
    err(xfer(GET, &[f16.clone(), dt(&[16, 32], FP16)], vec![], vec![]), "static shape");
    err(
        xfer(GET, &[f16.clone(), f16.clone()], vec![ints(&[0]), ints(&[0, 0]), ints(&[1, 64])], vec![]),
        "dst_offsets rank",
    );
    err(
        xfer(GET, &[f16.clone(), f16.clone()], region(&[-1, 0], &[0, 0], &[1, 64]), vec![]),
        "dst_offsets dimension 0 must be non-negative",
    );
    err(
        xfer(GET, &[f16.clone(), f16.clone()], region(&[15, 0], &[0, 0], &[2, 64]), vec![]),
        "dst subregion dimension 0 exceeds dst shape",
    );
    err(
        xfer(GET, &[f16.clone(), f16.clone()], region(&[0, 0], &[15, 0], &[2, 64]), vec![]),
        "src subregion dimension 0 exceeds src shape",
    );
    err(xfer(GET, &[f16.clone(), dt(&[1, 16, 64], FP16)], vec![], vec![]), "rank");
    err(xfer(GET, &[dt(&[16, 0], FP16), dt(&[16, 0], FP16)], vec![], vec![]), "positive");
    err(call(&[f16.clone(), f16.clone(), f16.clone()], GET, |v| v.to_vec(), vec![]), "scalar");
    // The local side of get is the dst; the window side is src. A tile dst is refused.
    err(
        xfer(GET, &[tile(&[16, 64], FP16), f16.clone()], vec![], vec![]),
        "dst must be a Tensor or DistributedTensor",
    );
}

#[test]
fn tile_get_a14() {
    let f16 = dt(&[16, 64], FP16);
    let st = |s: &[i64]| tile(s, FP16);
    // #6, #7
    ok(xfer(TGET, &[f16.clone(), f16.clone(), st(&[16, 64])], vec![], vec![]));
    ok(xfer(
        TGET,
        &[f16.clone(), dt(&[8, 64], FP16), st(&[1, 64])],
        region(&[3, 0], &[1, 0], &[1, 64]),
        vec![],
    ));
    // #8..#11
    err(
        xfer(TGET, &[f16.clone(), f16.clone(), tile(&[16, 64], FP32)], vec![], vec![]),
        "stage dtype must match dst dtype",
    );
    ok(xfer(TGET, &[f16.clone(), f16.clone(), st(&[8, 64])], vec![], vec![]));
    err(xfer(TGET, &[f16.clone(), f16.clone(), st(&[32, 64])], vec![], vec![]), "must fit within");
    err(
        xfer(TGET, &[f16.clone(), f16.clone(), st(&[1, 1, 64])], vec![], vec![]),
        "stage must be a 2D VEC staging tile",
    );
    // #14, #15
    ok(xfer(TGET, &[f16.clone(), f16.clone(), st(&[4, 32]), st(&[4, 32])], vec![], vec![]));
    err(
        xfer(TGET, &[f16.clone(), f16.clone(), st(&[4, 32]), st(&[4, 16])], vec![], vec![]),
        "ping/pong staging tiles must have identical shape",
    );
    // tile.get accepts no kwargs at all.
    err(
        xfer(TGET, &[f16.clone(), f16.clone(), st(&[16, 64])], vec![], vec![("chunk_rows", int(4))]),
        "unknown kwarg 'chunk_rows' for operator 'pld.tile.get'",
    );
}

#[test]
fn placement_effects_and_internal_flags() {
    let reg = pld_testkit::init();
    for name in [PUT, GET, TPUT, TGET] {
        let d = reg.lookup(name).unwrap();
        assert_eq!(d.affinity, pld_ir::Affinity::Vector, "{name}");
        assert!(!d.no_duplicate);
        assert_eq!(d.internal, name.starts_with("pld.tile."), "{name}");
        assert_eq!(d.params[0].effect, Effect::Write);
    }
    let mut fb = pld_ir::FunctionBuilder::new("k", pld_ir::FunctionKind::InCore);
    let w = Expr::var(fb.param("w", dt(&[4, 4], FP32), pld_ir::Direction::InOut));
    let x = Expr::var(fb.param("x", tensor(&[4, 4], FP32), pld_ir::Direction::In));
    fb.body(|b| {
        for (a, want) in [(0, Effect::Write), (1, Effect::ReadWrite)] {
            let e = b.op(PUT, vec![w.clone(), Expr::int(1), x.clone()], vec![("atomic", Attr::Int(a))])?;
            let c = e.as_call().unwrap();
            assert_eq!(c.op().unwrap().arg_effects(c), vec![want, Effect::None, Effect::Read]);
        }
        let e = b.op(GET, vec![x.clone(), Expr::int(1), w.clone()], vec![])?;
        let c = e.as_call().unwrap();
        assert_eq!(c.op().unwrap().arg_effects(c)[0], Effect::Write);
        Ok(())
    })
    .unwrap();
}
