//! # pld-bench — benchmarks of the pld compiler and simulator
//!
//! Workload generators shared by the criterion benches (`benches/`) and the
//! `bench_table` binary that `cargo xtask bench` runs: [`gen`] emits DSL programs of growing
//! size for the compiler, [`coll`] emits collective programs for the simulator,
//! [`hostrows`] a user-style program whose host tensors are indexed by rank (the MPI engine's
//! memory rows), [`kernel`] a
//! hand-written kernel for the simulator's interpreter, [`model`] is
//! the slice-based yardstick for the simulator's data rate (and the protocol's step
//! structure on raw slices), [`rows`] the simulator rows the
//! table and `cargo xtask bench --against` time. [`compile`]
//! and [`simulate`] run them through the public APIs exactly as the CLI does.
//!
//! Guarantees: every helper returns errors as values (diagnostic text); nothing here times
//! anything or asserts on timings — measuring is the callers' business.

pub mod coll;
pub mod gen;
pub mod hostrows;
pub mod kernel;
pub mod model;
pub mod passes;
pub mod rows;

use pld_ir::Program;
use pld_sim::{Inputs, SimConfig, SimOutcome};

/// Links the op families and checks the registry; call once before parsing.
pub fn init() -> Result<(), String> {
    let reg = pld_ops::registry();
    reg.check().map_err(|errs| errs.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))
}

fn diag_text(d: &pld_ir::Diagnostics) -> String {
    d.iter().map(|x| x.message.clone()).collect::<Vec<_>>().join("\n")
}

/// Parses DSL text.
pub fn parse(text: &str) -> Result<Program, String> {
    pld_frontend::parse_str(text).map_err(|d| diag_text(&d))
}

/// Runs the default pass pipeline on `program` in place.
pub fn lower(program: &mut Program) -> Result<(), String> {
    pld_passes::run_pipeline(program, &pld_passes::PipelineOptions::default()).map_err(|d| diag_text(&d))
}

/// Emits PTO for a lowered program; returns the total text length (modules + orchestration).
pub fn emit(program: &Program) -> Result<usize, String> {
    let out = pld_codegen_pto::emit_program(program, &pld_codegen_pto::CodegenOptions::default())
        .map_err(|d| diag_text(&d))?;
    Ok(out.modules.iter().map(|(_, t)| t.len()).sum::<usize>() + out.orchestration.len())
}

/// Parse + pipeline: the program the simulator and the emitter take.
pub fn compile(text: &str) -> Result<Program, String> {
    let mut p = parse(text)?;
    lower(&mut p)?;
    Ok(p)
}

/// Runs `entry` of `program` on the simulator.
pub fn simulate(program: &Program, inputs: &Inputs, cfg: &SimConfig) -> Result<SimOutcome, String> {
    pld_sim::run(program, "host", inputs, cfg).map_err(|e| e.to_string())
}

/// Bytes read plus bytes written by the tile operations of op kinds containing `kind`, over all
/// ranks, on both sides of each operation (`pld_sim::Stats::rw_bytes`: a copy of `n` bytes
/// counts `2n`, as the memcpy rate it is compared with does).
pub fn rw_bytes(stats: &pld_sim::Stats, kind: &str) -> u64 {
    stats.rw_bytes.iter().filter(|((_, k), _)| k.contains(kind)).map(|(_, b)| b).sum()
}

/// Statements of a program: every statement node in every function body, nested ones included.
pub fn count_stmts(program: &Program) -> usize {
    program.functions.iter().map(|f| gen::stmts_in_block(&f.body)).sum()
}

/// Per-pass cost of the pipeline on `program`: `(pass name, seconds in the pass, seconds in
/// the IR verification and property checks after it)`, running the passes one by one exactly as
/// `run_pipeline` does (first entry: verification of the input, named `<input>`).
pub fn pass_times(program: &mut Program) -> Result<Vec<(&'static str, f64, f64)>, String> {
    use std::time::Instant;
    let mut cx = pld_passes::PassCx::default();
    let mut out = Vec::new();
    let t = Instant::now();
    pld_ir::verify_program_for(program, cx.target).map_err(|d| diag_text(&d))?;
    out.push(("<input>", 0.0, t.elapsed().as_secs_f64()));
    for pass in pld_passes::pipeline::PIPELINE {
        let t = Instant::now();
        pld_passes::manager::run_passes(program, std::slice::from_ref(pass), &mut cx, false, &mut |_, _| {})
            .map_err(|d| diag_text(&d))?;
        let run = t.elapsed().as_secs_f64();
        let t = Instant::now();
        pld_ir::verify_program_for(program, cx.target).map_err(|d| diag_text(&d))?;
        for &p in pass.produced() {
            pld_passes::properties::check(program, p).map_err(|d| diag_text(&d))?;
        }
        out.push((pass.name(), run, t.elapsed().as_secs_f64()));
    }
    Ok(out)
}
