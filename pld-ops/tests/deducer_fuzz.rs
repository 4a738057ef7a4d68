//! No panic on any malformed call: every registered op's deducer (through the generic
//! schema checks of `registry::deduce`) is fed random argument kinds, ranks, shapes, tuple
//! contents and kwarg values, in random function kinds and targets. A panic fails the case;
//! the result itself (type or diagnostic) is not constrained.

use pld_ir::registry::{DeduceEnv, Target};
use pld_ir::{
    Attr, BinOp, DataType, DistTensorType, Expr, ExprKind, FunctionKind, Layout, MemorySpace, Span,
    TensorType, TensorView, TileType, Type, Values,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

fn dtype() -> impl Strategy<Value = DataType> {
    prop::sample::select(DataType::ALL.to_vec())
}

fn dim() -> impl Strategy<Value = Expr> {
    prop_oneof![
        6 => (-2i64..70).prop_map(Expr::int),
        1 => Just(Expr::int(i64::MAX)),
        1 => Just(Expr::int(i64::MIN)),
        2 => "[a-z]{1,3}".prop_map(Expr::sym),
    ]
}

fn shape() -> impl Strategy<Value = Vec<Expr>> {
    prop::collection::vec(dim(), 0..5)
}

fn view() -> impl Strategy<Value = Option<TensorView>> {
    prop::option::of(
        (shape(), shape(), prop::sample::select(vec![Layout::Nd, Layout::Dn, Layout::Nz]))
            .prop_map(|(stride, valid_shape, layout)| TensorView { stride, layout, valid_shape }),
    )
}

fn tensor() -> impl Strategy<Value = TensorType> {
    (shape(), dtype(), view()).prop_map(|(shape, dtype, view)| TensorType { dtype, shape, view })
}

fn ty() -> impl Strategy<Value = Type> {
    prop_oneof![
        1 => Just(Type::Unknown),
        2 => dtype().prop_map(Type::Scalar),
        3 => tensor().prop_map(Type::Tensor),
        4 => tensor().prop_map(|tensor| Type::DistTensor(DistTensorType { tensor, window: None })),
        3 => (shape(), dtype(), shape(), prop::option::of(prop::sample::select(MemorySpace::ALL.to_vec())))
            .prop_map(|(shape, dtype, valid_shape, memory)| Type::Tile(TileType { dtype, shape, valid_shape, memory })),
        1 => Just(Type::CommCtx),
        1 => Just(Type::Ptr),
        1 => Just(Type::Tuple(vec![])),
    ]
}

/// An argument: a parameter reference (index into the params), a literal, or a tuple.
#[derive(Clone, Debug)]
enum Arg {
    Param(usize),
    Int(i64),
    Float(f64),
    Str(String),
    Tuple(Vec<Arg>),
    MinOfParam(usize, i64),
}

fn leaf() -> impl Strategy<Value = Arg> {
    prop_oneof![
        4 => (0usize..6).prop_map(Arg::Param),
        4 => prop_oneof![-3i64..80, Just(i64::MAX), Just(i64::MIN), Just(1i64 << 31)].prop_map(Arg::Int),
        1 => (-2.0f64..2.0).prop_map(Arg::Float),
        1 => "[a-z]{0,4}".prop_map(Arg::Str),
        1 => ((0usize..6), (-2i64..9)).prop_map(|(p, k)| Arg::MinOfParam(p, k)),
    ]
}

fn arg() -> impl Strategy<Value = Arg> {
    prop_oneof![3 => leaf(), 2 => prop::collection::vec(leaf(), 0..5).prop_map(Arg::Tuple)]
}

fn to_expr(a: &Arg, params: &[pld_ir::ValueId]) -> Expr {
    let var = |i: usize| params.get(i % params.len().max(1)).map_or(Expr::int(0), |&v| Expr::var(v));
    match a {
        Arg::Param(i) => var(*i),
        Arg::Int(v) => Expr::int(*v),
        Arg::Float(v) => Expr::float(*v),
        Arg::Str(s) => Expr::new(ExprKind::Str(s.clone()), Span::DUMMY),
        Arg::Tuple(items) => Expr::tuple(items.iter().map(|i| to_expr(i, params)).collect()),
        Arg::MinOfParam(i, k) => Expr::binary(BinOp::Min, var(*i), Expr::int(*k)),
    }
}

fn attr_value() -> impl Strategy<Value = Attr> {
    prop_oneof![
        5 => prop_oneof![-3i64..20, Just(i64::MAX), Just(i64::MIN)].prop_map(Attr::Int),
        2 => any::<bool>().prop_map(Attr::Bool),
        2 => prop::sample::select(vec!["mesh", "ring", "tree", "", "Vec", "Mat", "DDR", "ND", "NZ", "x"])
            .prop_map(|s| Attr::Str(s.to_string())),
        2 => dtype().prop_map(Attr::DType),
        1 => (-1.0f64..1.0).prop_map(|f| Attr::Float(pld_ir::expr::FloatBits::new(f))),
        1 => prop::collection::vec(-2i64..5, 0..3).prop_map(Attr::Ints),
    ]
}

#[derive(Clone, Debug)]
struct Case {
    params: Vec<Type>,
    args: Vec<Arg>,
    /// (index into the op's declared attrs, or past the end for an unknown key, value)
    attrs: Vec<(usize, Attr)>,
    kind: Option<FunctionKind>,
    a5: bool,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(ty(), 0..6),
        prop::collection::vec(arg(), 0..9),
        prop::collection::vec((0usize..6, attr_value()), 0..4),
        prop::option::of(prop::sample::select(vec![
            FunctionKind::Host,
            FunctionKind::ChipOrch,
            FunctionKind::InCore,
            FunctionKind::Aiv,
            FunctionKind::Opaque,
        ])),
        any::<bool>(),
    )
        .prop_map(|(params, args, attrs, kind, a5)| Case { params, args, attrs, kind, a5 })
}

fn run(def: &'static pld_ir::OpDef, c: &Case) -> bool {
    let mut values = Values::default();
    let ids: Vec<_> = c
        .params
        .iter()
        .enumerate()
        .map(|(i, t)| values.add(format!("p{i}"), t.clone(), Span::DUMMY))
        .collect();
    let args: Vec<Expr> = c.args.iter().map(|a| to_expr(a, &ids)).collect();
    let mut attrs: Vec<(String, Attr)> = Vec::new();
    for (i, v) in &c.attrs {
        let key = def.attrs.get(*i).map_or_else(|| "zz_unknown".to_string(), |a| a.name.to_string());
        if !attrs.iter().any(|(k, _)| *k == key) {
            attrs.push((key, v.clone()));
        }
    }
    let env = DeduceEnv {
        values: &values,
        target: if c.a5 { Target::A5 } else { Target::A2A3 },
        func_kind: c.kind,
    };
    pld_ir::registry::deduce(def, &args, &attrs, Span::DUMMY, &env).is_ok()
}

/// Well-formed arities get extra weight: most deducer code runs only past the arity check.
fn fit_arity(def: &pld_ir::OpDef, mut c: Case, pick: usize) -> Case {
    let (min, max) = def.arity();
    if pick % 3 != 0 {
        let n = min + pick % (max - min + 1);
        c.args.resize(n, Arg::Param(pick));
    }
    // Required kwargs present most of the time, with in-range enum values half of it.
    if pick % 4 != 0 {
        for (i, a) in def.attrs.iter().enumerate() {
            if a.required && !c.attrs.iter().any(|(k, _)| *k == i) {
                let v = match a.ty {
                    pld_ir::AttrType::DType => Attr::DType(DataType::FP32),
                    pld_ir::AttrType::Str => Attr::Str("mesh".into()),
                    pld_ir::AttrType::Bool => Attr::Bool(false),
                    pld_ir::AttrType::Ints => Attr::Ints(vec![1]),
                    _ => Attr::Int((pick % 2) as i64),
                };
                c.attrs.push((i, v));
            }
        }
    }
    c
}

#[test]
fn every_deducer_survives_random_calls() {
    let reg = pld_testkit::init();
    let ops: Vec<&'static pld_ir::OpDef> = reg.ops().map(|r| r.def).collect();
    assert!(ops.len() > 60, "expected the full registry, got {}", ops.len());
    // About 2000 cases in all by default; PLD_FUZZ_CASES raises it for a deeper local run.
    let total: usize = std::env::var("PLD_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    let per_op = (total / ops.len()).max(12) as u32;
    let accepted = std::cell::Cell::new(0usize);
    for def in ops {
        let mut runner =
            TestRunner::new(Config { cases: per_op, failure_persistence: None, ..Config::default() });
        runner
            .run(&(case(), any::<usize>()), |(c, pick)| {
                if run(def, &fit_arity(def, c, pick)) {
                    accepted.set(accepted.get() + 1);
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("deducer of {} panicked: {e}", def.name));
    }
    // The generator is not so hostile that every call dies at the schema check.
    assert!(accepted.get() > 0, "no random call was ever accepted");
}

#[test]
fn well_typed_window_calls_still_fuzzed_on_shapes() {
    // Focused: plausible kinds in every slot (windows, tensors, tiles, scalars, tuples),
    // so the shape/bounds arithmetic of the distributed deducers is exercised deeply.
    let reg = pld_testkit::init();
    let names = [
        "pld.tile.remote_load",
        "pld.tile.remote_store",
        "pld.tensor.remote_store",
        "pld.tensor.put",
        "pld.tensor.get",
        "pld.tile.put",
        "pld.tile.get",
        "pld.tensor.all_to_all_v",
        "pld.tensor.allgather",
        "pld.tensor.allreduce",
        "tile.load",
        "tile.store",
    ];
    for name in names {
        let def = reg.lookup(name).unwrap();
        let mut runner =
            TestRunner::new(Config { cases: 40, failure_persistence: None, ..Config::default() });
        let params = prop::collection::vec(
            prop_oneof![
                (shape(), dtype()).prop_map(|(s, d)| Type::dist_tensor(s, d)),
                (shape(), dtype()).prop_map(|(s, d)| Type::tensor(s, d)),
                (shape(), dtype()).prop_map(|(s, d)| Type::tile(s, d, Some(MemorySpace::Vec))),
                Just(Type::Scalar(DataType::INT32)),
            ],
            3..6,
        );
        runner
            .run(&(params, prop::collection::vec(arg(), 3..9), any::<usize>()), |(params, args, pick)| {
                let c =
                    Case { params, args, attrs: vec![], kind: Some(FunctionKind::InCore), a5: pick % 2 == 0 };
                run(def, &fit_arity(def, c, pick));
                Ok(())
            })
            .unwrap_or_else(|e| panic!("deducer of {name} panicked: {e}"));
    }
}
