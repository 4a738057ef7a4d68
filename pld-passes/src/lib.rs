//! # pld-passes — the pass pipeline that places, lowers and materialises distributed ops
//!
//! Turns a verified [`Program`] into the form codegen and the simulator consume. Passes are
//! plain code ([`Pass`]); the order is written out in [`pipeline`]; the [`manager`] re-runs
//! the structural verifier (on the functions the pass reported changing, or on everything)
//! and checks every produced [`Property`] after each pass when verification is on, naming
//! the pass on failure.
//!
//! No pass names an op family: this crate depends only on `pld-ir`, and passes ask the
//! registry for affinity, `no_duplicate`, effects and lowerings (the lowerings themselves
//! are registered by the op crate).

pub mod manager;
pub mod ops;
pub mod pass;
pub mod passes;
pub mod pipeline;
pub mod properties;
pub mod rank_dependence;
pub mod util;
pub mod waiter;

pub use pass::{Pass, PassCx, Property};

use pld_ir::{Diagnostic, Diagnostics, Program, Span, Target};

/// How to run the pipeline.
#[derive(Clone, Debug)]
pub struct PipelineOptions {
    /// The compilation target.
    pub target: Target,
    /// Re-verify the IR and check produced properties after every pass (default on).
    pub verify: bool,
    /// Stop after the pass with this name.
    pub stop_after: Option<String>,
}

impl Default for PipelineOptions {
    fn default() -> PipelineOptions {
        PipelineOptions { target: Target::default(), verify: true, stop_after: None }
    }
}

/// The pass names, in execution order (read from the pipeline itself).
pub fn pass_names() -> &'static [&'static str] {
    static NAMES: std::sync::LazyLock<Vec<&'static str>> =
        std::sync::LazyLock::new(|| pipeline::PIPELINE.iter().map(|p| p.name()).collect());
    &NAMES
}

/// The pass named `name`, or a diagnostic listing the valid names.
pub fn pass_by_name(name: &str) -> Result<&'static dyn Pass, Diagnostics> {
    pipeline::PIPELINE.iter().copied().find(|p| p.name() == name).ok_or_else(|| unknown_pass(name))
}

fn unknown_pass(name: &str) -> Diagnostics {
    Diagnostics::from(
        Diagnostic::error(Span::DUMMY, format!("unknown pass `{name}`"))
            .with_note(format!("valid passes: {}", pass_names().join(", "))),
    )
}

fn selected(opts: &PipelineOptions) -> Result<&'static [&'static dyn Pass], Diagnostics> {
    match &opts.stop_after {
        None => Ok(pipeline::PIPELINE),
        Some(stop) => {
            let i =
                pipeline::PIPELINE.iter().position(|p| p.name() == stop).ok_or_else(|| unknown_pass(stop))?;
            Ok(&pipeline::PIPELINE[..=i])
        }
    }
}

/// Runs the pipeline (up to `stop_after`) over `program`.
pub fn run_pipeline(program: &mut Program, opts: &PipelineOptions) -> Result<(), Diagnostics> {
    let passes = selected(opts)?;
    let mut cx = PassCx::new(opts.target);
    manager::run_passes(program, passes, &mut cx, opts.verify, &mut |_, _| {})
}

/// Runs the pipeline and returns the printed IR right after the pass named `dump_after`.
pub fn run_pipeline_with_dumps(
    program: &mut Program,
    opts: &PipelineOptions,
    dump_after: &str,
) -> Result<String, Diagnostics> {
    pass_by_name(dump_after)?;
    let passes = selected(opts)?;
    if !passes.iter().any(|p| p.name() == dump_after) {
        return Err(Diagnostics::from(Diagnostic::error(
            Span::DUMMY,
            format!("pass `{dump_after}` does not run before the pipeline stops"),
        )));
    }
    let mut cx = PassCx::new(opts.target);
    let mut dump = String::new();
    manager::run_passes(program, passes, &mut cx, opts.verify, &mut |name, p| {
        if name == dump_after {
            dump = pld_ir::print_program(p);
        }
    })?;
    Ok(dump)
}

/// Runs `MaterializeBuiltinKernels` on a program the pipeline lowered: every builtin
/// collective dispatch becomes a call of the kernel codegen renders for it, so the simulator
/// runs that kernel instead of its protocol model (with verification as in `opts`).
pub fn materialize_builtin_kernels(program: &mut Program, opts: &PipelineOptions) -> Result<(), Diagnostics> {
    let mut cx = PassCx::new(opts.target);
    manager::run_passes(program, &[&passes::MaterializeBuiltinKernels], &mut cx, opts.verify, &mut |_, _| {})
}

/// Runs the single pass named `name` (with verification as in `opts`).
pub fn run_pass(program: &mut Program, name: &str, opts: &PipelineOptions) -> Result<(), Diagnostics> {
    let pass = pass_by_name(name)?;
    let mut cx = PassCx::new(opts.target);
    manager::run_passes(program, &[pass], &mut cx, opts.verify, &mut |_, _| {})
}
