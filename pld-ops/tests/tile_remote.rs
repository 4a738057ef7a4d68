//! remote_load / remote_store (both levels) and the `pld.remote_store` overload:
//! tests_negative.md A.8 and A.9 plus one negative per seed rule.
#![allow(clippy::cloned_ref_to_slice_refs)]

mod common;
use common::*;
use pld_ir::{Attr, DataType::*, Effect, Expr, Type};

fn rl(params: &[Type], offsets: Expr, shape: Expr, valid: Option<Expr>) -> Result<Type, pld_ir::Diagnostic> {
    call(
        params,
        "pld.tile.remote_load",
        |v| {
            let mut a = vec![v[0].clone(), v[1].clone(), offsets, shape];
            a.extend(valid);
            a
        },
        vec![],
    )
}

fn dt_valid(shape: &[i64], valid: &[i64], d: pld_ir::DataType) -> Type {
    match dt(shape, d) {
        Type::DistTensor(mut t) => {
            t.tensor = t.tensor.with_view(pld_ir::TensorView {
                valid_shape: valid.iter().map(|&v| Expr::int(v)).collect(),
                ..Default::default()
            });
            Type::DistTensor(t)
        }
        _ => unreachable!(),
    }
}

fn tile_valid(t: Type, valid: &[i64]) -> Type {
    Type::Tile(t.as_tile().unwrap().clone().with_valid_shape(valid.iter().map(|&v| Expr::int(v)).collect()))
}

#[test]
fn remote_load_a8() {
    let peer = scalar(INT32);
    // #1
    let t = ok(rl(&[dt(&[64], FP16), peer.clone()], ints(&[0]), ints(&[32]), None));
    assert_eq!(t, Type::tile(vec![Expr::int(32)], FP16, None));
    // #5
    err(
        rl(&[dt(&[1, 17], FP32), peer.clone()], ints(&[0, 0]), ints(&[1, 8192]), None),
        "reads past the end of dimension 1",
    );
    // #6: source view valid [1,8] narrows the result.
    let t = ok(rl(&[dt_valid(&[1, 16], &[1, 8], FP32), peer.clone()], ints(&[0, 0]), ints(&[1, 16]), None));
    assert_eq!(t.as_tile().unwrap().valid_shape, vec![Expr::int(1), Expr::int(8)]);
    // #7: ragged tail.
    let t =
        ok(rl(&[dt(&[1, 17], FP32), peer.clone()], ints(&[0, 0]), ints(&[1, 8192]), Some(ints(&[1, 17]))));
    let tt = t.as_tile().unwrap();
    assert_eq!(tt.shape, vec![Expr::int(1), Expr::int(8192)]);
    assert_eq!(tt.valid_shape, vec![Expr::int(1), Expr::int(17)]);
    // #8: physical tail padding (fp16, rank 2, explicit valid).
    let r = call(
        &[dt(&[1, 17], FP16), peer.clone()],
        "pld.tile.remote_load",
        |v| vec![v[0].clone(), v[1].clone(), ints(&[0, 0]), ints(&[1, 32]), ints(&[1, 32])],
        vec![("allow_physical_tail_padding", Attr::Bool(true))],
    );
    assert_eq!(ok(r), Type::tile(vec![Expr::int(1), Expr::int(32)], FP16, None));
    // Without the kwarg the same read is past the end.
    err(
        rl(&[dt(&[1, 17], FP16), peer.clone()], ints(&[0, 0]), ints(&[1, 32]), Some(ints(&[1, 32]))),
        "reads past the end",
    );
    // #9
    err(
        rl(&[dt(&[64, 32], FP32), peer.clone()], ints(&[0, 0]), ints(&[16, 16]), Some(ints(&[16]))),
        "valid_shape rank",
    );
    // #10
    err(
        rl(&[dt(&[64], FP32), peer.clone()], ints(&[0]), ints(&[16]), Some(ints(&[-1]))),
        "valid_shape 0 is provably negative",
    );
    // #11
    err(
        rl(
            &[dt(&[64], FP32), peer.clone()],
            ints(&[0]),
            ints(&[16]),
            Some(Expr::tuple(vec![Expr::float(1.0)])),
        ),
        "valid_shape 0 must be an integer scalar",
    );
    // #12
    err(rl(&[tensor(&[64], FP32), peer.clone()], ints(&[0]), ints(&[16]), None), "DistributedTensor");
    // #13
    err(
        call(
            &[dt(&[64], FP32)],
            "pld.tile.remote_load",
            |v| vec![v[0].clone(), ints(&[0]), ints(&[0]), ints(&[16])],
            vec![],
        ),
        "peer must be a scalar",
    );
    // #14, #15
    err(rl(&[dt(&[64, 32], FP32), peer.clone()], ints(&[0]), ints(&[16, 16]), None), "offsets rank");
    err(rl(&[dt(&[64, 32], FP32), peer.clone()], ints(&[0, 0]), ints(&[16]), None), "shape rank");
    // #16
    err(rl(&[dt(&[64], FP32), peer.clone()], Expr::int(0), ints(&[16]), None), "offsets must be a tuple");
    // #21/#22: arity.
    err(call(&[], "pld.tile.remote_load", |_| vec![], vec![]), "positional argument");
    // #29: short form.
    let t = ok(call(
        &[dt(&[64], FP16), peer.clone()],
        "pld.remote_load",
        |v| vec![v[0].clone(), v[1].clone(), ints(&[0]), ints(&[32])],
        vec![],
    ));
    assert!(matches!(t, Type::Tile(_)));
}

#[test]
fn remote_load_window_rules() {
    let peer = scalar(INT32);
    err(
        rl(&[dt(&[64], FP32), peer.clone()], ints(&[-1]), ints(&[16]), None),
        "offset 0 is provably negative",
    );
    err(
        rl(&[dt(&[64], FP32), peer.clone()], ints(&[0]), ints(&[16]), Some(ints(&[17]))),
        "exceeds the window extent 16",
    );
    err(
        rl(&[dt(&[64], FP32), peer.clone()], ints(&[60]), ints(&[8]), None),
        "reads past the end of dimension 0",
    );
    // A dynamic offset into a partially valid source gives a runtime min.
    let t = ok(call(
        &[dt_valid(&[1, 64], &[1, 40], FP32), peer.clone(), scalar(INDEX)],
        "pld.tile.remote_load",
        |v| vec![v[0].clone(), v[1].clone(), Expr::tuple(vec![Expr::int(0), v[2].clone()]), ints(&[1, 16])],
        vec![],
    ));
    let valid = &t.as_tile().unwrap().valid_shape;
    assert!(matches!(valid[1].kind, pld_ir::ExprKind::Binary(pld_ir::BinOp::Min, _, _)), "{valid:?}");
    // The tail-padding kwarg needs an fp16 rank-2 target with an explicit valid_shape.
    err(
        call(
            &[dt(&[1, 17], FP32), peer.clone()],
            "pld.tile.remote_load",
            |v| vec![v[0].clone(), v[1].clone(), ints(&[0, 0]), ints(&[1, 32]), ints(&[1, 17])],
            vec![("allow_physical_tail_padding", Attr::Bool(true))],
        ),
        "allow_physical_tail_padding requires",
    );
    // Placement: SHARED (known gap), writes nothing.
    let d = pld_testkit::init().lookup("pld.tile.remote_load").unwrap();
    assert_eq!(d.affinity, pld_ir::Affinity::Shared);
    assert!(d.params.iter().all(|p| !p.effect.writes()));
}

fn rs(
    op: &str,
    params: &[Type],
    offsets: Expr,
    attrs: Vec<(&str, Attr)>,
) -> Result<Type, pld_ir::Diagnostic> {
    call(params, op, |v| vec![v[0].clone(), v[1].clone(), v[2].clone(), offsets], attrs)
}

const T: &str = "pld.tile.remote_store";
const N: &str = "pld.tensor.remote_store";

#[test]
fn tile_remote_store_a9() {
    let p = scalar(INT32);
    // #1
    assert_eq!(
        ok(rs(T, &[tile(&[32, 16], FP16), dt(&[64, 32], FP16), p.clone()], ints(&[0, 0]), vec![])),
        Type::Unknown
    );
    // #2
    err(
        rs(T, &[tile(&[1, 16], FP32), tensor(&[64], FP32), p.clone()], ints(&[0]), vec![]),
        "DistributedTensor",
    );
    // #3
    err(
        call(
            &[tile(&[32, 16], FP16), dt(&[64, 32], FP16)],
            T,
            |v| vec![v[0].clone(), v[1].clone(), ints(&[0]), ints(&[0, 0])],
            vec![],
        ),
        "peer must be a scalar",
    );
    // #4, #5
    err(rs(T, &[tile(&[32, 16], FP16), dt(&[64, 32], FP16), p.clone()], ints(&[0]), vec![]), "offsets rank");
    err(
        rs(T, &[tile(&[32, 16], FP16), dt(&[64, 32], FP16), p.clone()], Expr::int(0), vec![]),
        "offsets must be a tuple",
    );
    // #6 names the sibling
    let d = err(
        rs(T, &[tensor(&[32, 16], FP16), dt(&[64, 32], FP16), p.clone()], ints(&[0, 0]), vec![]),
        "src_tile must be a TileType",
    );
    assert!(d.message.contains("pld.tensor.remote_store"));
    // #7
    err(rs(T, &[tile(&[32, 16], FP32), dt(&[64, 32], FP16), p.clone()], ints(&[0, 0]), vec![]), "dtype");
    // #8
    err(
        call(
            &[tile(&[32, 16], FP16), dt(&[64, 32], FP16), p.clone()],
            T,
            |v| vec![v[0].clone(), v[1].clone(), v[2].clone(), ints(&[0, 0]), ints(&[1, 1])],
            vec![],
        ),
        "4 positional argument",
    );
    // #9
    err(
        rs(T, &[tile(&[2, 32, 16], FP16), dt(&[2, 64, 32], FP16), p.clone()], ints(&[0, 0, 0]), vec![]),
        "src leading dimension 0 must be 1",
    );
    // #10, #11
    ok(rs(T, &[tile(&[1, 16, 32], FP16), dt(&[1, 16, 32], FP16), p.clone()], ints(&[0, 0, 0]), vec![]));
    err(
        rs(T, &[tile(&[1, 16, 32], FP16), dt(&[1, 16, 32], FP16), p.clone()], ints(&[0, 0, 8]), vec![]),
        "push exceeds the peer's target region in dimension 2",
    );
    // #12, #13
    err(
        rs(T, &[tile(&[32], FP16), dt(&[64, 32], FP16), p.clone()], ints(&[0, 0]), vec![]),
        "src must be at least 2-D",
    );
    err(
        rs(T, &[tile(&[1, 16], FP16), dt(&[64], FP16), p.clone()], ints(&[0]), vec![]),
        "target rank must be >= 2",
    );
    // #14, #15
    err(
        rs(T, &[tile(&[32, 16], FP16), dt(&[64, 32], FP16), p.clone()], ints(&[40, 0]), vec![]),
        "push exceeds the peer's target region in dimension 0",
    );
    ok(rs(T, &[tile(&[16, 32], FP16), dt(&[4, 16, 32], FP16), p.clone()], ints(&[3, 0, 0]), vec![]));
    err(
        rs(T, &[tile(&[16, 32], FP16), dt(&[4, 16, 32], FP16), p.clone()], ints(&[4, 0, 0]), vec![]),
        "dimension 0",
    );
    // #16: dynamic offset skips the check.
    ok(call(
        &[tile(&[32, 16], FP16), dt(&[64, 32], FP16), p.clone(), scalar(INDEX)],
        T,
        |v| vec![v[0].clone(), v[1].clone(), v[2].clone(), Expr::tuple(vec![v[3].clone(), Expr::int(0)])],
        vec![],
    ));
    // #17, #18, #20
    ok(rs(
        T,
        &[tile(&[32, 16], FP32), dt(&[64, 32], FP32), p.clone()],
        ints(&[0, 0]),
        vec![("atomic", int(1))],
    ));
    err(
        rs(
            T,
            &[tile(&[32, 16], UINT8), dt(&[64, 32], UINT8), p.clone()],
            ints(&[0, 0]),
            vec![("atomic", int(1))],
        ),
        "requires an fp32/bf16/fp16/int32/int16/int8 dtype",
    );
    ok(rs(T, &[tile(&[32, 16], UINT8), dt(&[64, 32], UINT8), p.clone()], ints(&[0, 0]), vec![]));
    err(
        rs(
            T,
            &[tile(&[32, 16], FP32), dt(&[64, 32], FP32), p.clone()],
            ints(&[0, 0]),
            vec![("atomic", int(7))],
        ),
        "atomic must be",
    );
    // Negative static offset.
    err(
        rs(T, &[tile(&[32, 16], FP32), dt(&[64, 32], FP32), p.clone()], ints(&[-1, 0]), vec![]),
        "offsets dimension 0 must be non-negative",
    );
    // The pushed extent is the tile's valid region, not its physical shape.
    let ragged = tile_valid(tile(&[64, 32], FP32), &[8, 32]);
    ok(rs(T, &[ragged, dt(&[64, 32], FP32), p.clone()], ints(&[56, 0]), vec![]));
}

#[test]
fn tensor_remote_store_a9() {
    let p = scalar(INT32);
    // #21
    assert_eq!(
        ok(rs(N, &[tensor(&[32, 16], FP16), dt(&[64, 32], FP16), p.clone()], ints(&[0, 0]), vec![])),
        Type::Unknown
    );
    // #22, #23: wrong level names the sibling.
    err(
        rs(N, &[tile(&[32, 16], FP16), dt(&[64, 32], FP16), p.clone()], ints(&[0, 0]), vec![]),
        "pld.tile.remote_store",
    );
    err(
        rs(N, &[dt(&[32, 16], FP16), dt(&[64, 32], FP16), p.clone()], ints(&[0, 0]), vec![]),
        "pld.tensor.put",
    );
    // #24
    err(
        rs(N, &[tensor(&[32, 16], FP16), tensor(&[64, 32], FP16), p.clone()], ints(&[0, 0]), vec![]),
        "DistributedTensor",
    );
    // #25, #26, #27, #28
    err(
        rs(N, &[tensor(&[2, 32, 16], FP16), dt(&[2, 64, 32], FP16), p.clone()], ints(&[0, 0, 0]), vec![]),
        "src leading dimension 0 must be 1",
    );
    ok(rs(N, &[tensor(&[1, 16, 32], FP16), dt(&[1, 16, 32], FP16), p.clone()], ints(&[0, 0, 0]), vec![]));
    err(rs(N, &[tensor(&[32, 16], FP32), dt(&[64, 32], FP16), p.clone()], ints(&[0, 0]), vec![]), "dtype");
    err(
        rs(N, &[tensor(&[32, 16], FP16), dt(&[64, 32], FP16), p.clone()], ints(&[0, 20]), vec![]),
        "push exceeds the peer's target region in dimension 1",
    );
    // #19
    err(
        rs(
            N,
            &[tensor(&[32, 16], UINT8), dt(&[64, 32], UINT8), p.clone()],
            ints(&[0, 0]),
            vec![("atomic", int(1))],
        ),
        "requires an fp32/bf16/fp16/int32/int16/int8 dtype",
    );
    // #36: physical shape is the extent.
    err(
        rs(N, &[tensor(&[16, 8], FP16), dt(&[64, 32], FP16), p.clone()], ints(&[56, 0]), vec![]),
        "push exceeds the peer's target region",
    );
    // bf16 atomic add: fine on a2a3, rejected on a5 naming Ascend910B.
    ok(rs(
        N,
        &[tensor(&[32, 16], BF16), dt(&[64, 32], BF16), p.clone()],
        ints(&[0, 0]),
        vec![("atomic", int(1))],
    ));
    let r = call_in(
        pld_ir::FunctionKind::InCore,
        pld_ir::Target::A5,
        &[tensor(&[32, 16], BF16), dt(&[64, 32], BF16), p.clone()],
        N,
        |v| vec![v[0].clone(), v[1].clone(), v[2].clone(), ints(&[0, 0])],
        vec![("atomic", int(1))],
    );
    let d = err(r, "bf16");
    assert!(d.message.contains("a5") && d.message.contains("Ascend910B"));
}

#[test]
fn remote_store_overload_placement_and_effects() {
    let reg = pld_testkit::init();
    // #29
    let o = reg.overload("pld.remote_store").unwrap();
    assert_eq!((o.pick)(&tile(&[1, 1], FP32)), T);
    assert_eq!((o.pick)(&tensor(&[1, 1], FP32)), N);
    assert_eq!((o.pick)(&dt(&[1, 1], FP32)), N);
    assert_eq!(reg.lookup(T).unwrap().affinity, pld_ir::Affinity::FromFirstTileArg);
    assert_eq!(reg.lookup(N).unwrap().affinity, pld_ir::Affinity::Shared);
    let mut fb = pld_ir::FunctionBuilder::new("k", pld_ir::FunctionKind::InCore);
    let s = Expr::var(fb.param("t", tile(&[1, 16], FP32), pld_ir::Direction::In));
    let w = Expr::var(fb.param("w", dt(&[1, 16], FP32), pld_ir::Direction::InOut));
    fb.body(|b| {
        for (atomic, want) in [(0, Effect::Write), (1, Effect::ReadWrite)] {
            let e = b.op(
                T,
                vec![s.clone(), w.clone(), Expr::int(0), ints(&[0, 0])],
                vec![("atomic", Attr::Int(atomic))],
            )?;
            let c = e.as_call().unwrap();
            assert_eq!(c.op().unwrap().arg_effects(c), vec![Effect::Read, want, Effect::None, Effect::None]);
        }
        Ok(())
    })
    .unwrap();
}
