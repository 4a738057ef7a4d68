//! The library (`pld_sim::run`) binds dynamic dimensions by the rule `pld run` applies
//! (D-cli-10, one implementation in `pld_ir::rank_count`): `SimConfig::bindings` first, then
//! the rank count only for a dimension the program uses as one (here `NR`, the extent the
//! device loop indexes), then the inputs' shapes. A data dimension nothing binds (`ROWS`) is an
//! error value naming `--bind ROWS=VALUE`, never a silent rank count.

use pld_sim::{Schedule, SimConfig};
use pld_testkit::e2e::{inputs, lower, parse, stack};

/// Every rank doubles its `[ROWS, COLS]` block of rows.
const PROGRAM: &str = r#"import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
ROWS = pl.dynamic("ROWS")
COLS = 32


@pl.program
class ScaleRows:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        t = pl.load(x, [0, 0], [4, COLS])
        u = pl.mul(t, 2.0)
        y = pl.store(u, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        y = self.scale(x, y)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.chip(x[r], y[r], device=r)
"#;

fn cfg(ranks: usize) -> SimConfig {
    SimConfig { schedule: Schedule::Deterministic, ..SimConfig::ranks(ranks) }
}

#[test]
fn a_data_dimension_nothing_binds_is_an_error_value() {
    let p = lower(&parse(PROGRAM)).expect("lowers");
    assert_eq!(p.rank_counts(), vec!["NR".to_string()], "recorded before lowering");
    let err = pld_sim::run(&p, "host", &inputs(vec![]), &cfg(3)).expect_err("ROWS is unbound");
    let msg = err.to_string();
    assert!(msg.contains("`ROWS` is not bound") && msg.contains("--bind ROWS=VALUE"), "{msg}");
    assert!(!msg.contains("`NR`"), "NR is the rank count: {msg}");
}

#[test]
fn a_binding_or_an_input_shape_binds_it_and_the_rank_count_binds_nr() {
    let p = lower(&parse(PROGRAM)).expect("lowers");
    // An explicit binding, with an input of that shape.
    let mut c = cfg(3);
    c.bindings.insert("ROWS".into(), 8);
    let x = stack(pld_ir::DataType::FP32, &vec![vec![1.0; 8 * 32]; 3], &[8, 32]);
    let out = pld_sim::run(&p, "host", &inputs(vec![("x", x)]), &c).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.outputs["y"].shape, vec![3, 8, 32]);
    // An input's shape: ROWS = 4 from `x`, and every rank doubles its rows.
    let per_rank: Vec<Vec<f64>> =
        (0..2).map(|r| (0..4 * 32).map(|i| f64::from(r * 1000 + i)).collect()).collect();
    let x = stack(pld_ir::DataType::FP32, &per_rank, &[4, 32]);
    let out = pld_sim::run(&p, "host", &inputs(vec![("x", x)]), &cfg(2)).unwrap_or_else(|e| panic!("{e}"));
    let y = &out.outputs["y"];
    assert_eq!(y.shape, vec![2, 4, 32]);
    let want: Vec<f64> = per_rank.concat().iter().map(|v| 2.0 * v).collect();
    assert_eq!(y.to_f64(), want);
}
