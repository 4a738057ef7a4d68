//! The end-to-end harness: parse a DSL program, optionally run the pass pipeline, run it on
//! the simulator with stacked per-rank host tensors, and compare against the references.
//!
//! Guarantees: helpers panic with a message naming the scenario, rank and element on any
//! mismatch (they are test support); the simulator itself is called through its public API
//! only, exactly as the CLI does.

use pld_ir::{DataType, Program};
use pld_sim::{HostTensor, Inputs, Schedule, SimConfig, SimError, SimOutcome};

/// Parses DSL text (with every op registered), panicking with the diagnostics on failure.
pub fn parse(text: &str) -> Program {
    crate::init();
    match pld_frontend::parse_str(text) {
        Ok(p) => p,
        Err(d) => {
            let msgs: Vec<String> = d.iter().map(|x| x.message.clone()).collect();
            panic!("DSL program does not parse:\n{}", msgs.join("\n"))
        }
    }
}

/// Runs the pass pipeline on a copy of `program`.
pub fn lower(program: &Program) -> Result<Program, pld_ir::Diagnostics> {
    let mut p = program.clone();
    pld_passes::run_pipeline(&mut p, &pld_passes::PipelineOptions::default())?;
    Ok(p)
}

/// Stacks per-rank buffers into one `[P, ..shape]` host tensor of `dt`.
pub fn stack(dt: DataType, per_rank: &[Vec<f64>], shape: &[usize]) -> HostTensor {
    let mut full = vec![per_rank.len()];
    full.extend_from_slice(shape);
    let flat: Vec<f64> = per_rank.concat();
    HostTensor::from_f64(dt, full, &flat)
}

/// Splits a `[P, ...]` host tensor into per-rank buffers.
pub fn unstack(t: &HostTensor) -> Vec<Vec<f64>> {
    let v = t.to_f64();
    let p = t.shape.first().copied().unwrap_or(1).max(1);
    let n = v.len() / p;
    (0..p).map(|r| v[r * n..(r + 1) * n].to_vec()).collect()
}

/// Inputs from `(name, tensor)` pairs.
pub fn inputs(pairs: Vec<(&str, HostTensor)>) -> Inputs {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// Runs `entry` on `p` ranks under `schedule`.
pub fn run(
    program: &Program,
    entry: &str,
    p: usize,
    inputs: &Inputs,
    schedule: Schedule,
) -> Result<SimOutcome, SimError> {
    let cfg = SimConfig { schedule, ..SimConfig::ranks(p) };
    pld_sim::run(program, entry, inputs, &cfg)
}

/// Runs and panics with the report on failure.
pub fn run_ok(
    program: &Program,
    entry: &str,
    p: usize,
    inputs: &Inputs,
    schedule: Schedule,
    what: &str,
) -> SimOutcome {
    match run(program, entry, p, inputs, schedule) {
        Ok(o) => o,
        Err(e) => panic!("{what}: simulation failed:\n{e}"),
    }
}

/// Asserts `|got - want| <= atol + rtol·|want|` elementwise (NaN never matches).
pub fn assert_close(got: &[f64], want: &[f64], rtol: f64, atol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (g - w).abs() <= atol + rtol * w.abs();
        assert!(ok, "{what}: element {i}: got {g}, want {w}");
    }
}

/// Asserts per-rank buffers match the reference.
pub fn assert_ranks(got: &[Vec<f64>], want: &[Vec<f64>], rtol: f64, atol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: rank count");
    for (r, (g, w)) in got.iter().zip(want).enumerate() {
        assert_close(g, w, rtol, atol, &format!("{what} rank {r}"));
    }
}

/// Tolerances of a dtype: exact-ish for FP32, 2e-2 for FP16/BF16.
pub fn tol(dt: DataType) -> (f64, f64) {
    match dt {
        DataType::FP16 | DataType::BF16 => (2e-2, 2e-2),
        _ => (1e-5, 1e-5),
    }
}
