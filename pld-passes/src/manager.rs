//! The pass manager: runs passes in order and, with verification on, re-runs the structural
//! verifier and checks every produced property after each pass.
//!
//! A verification failure is reported as the verifier's diagnostics with a note naming the
//! pass after which it appeared, so a broken invariant points at the pass that broke it.

use crate::pass::{Pass, PassCx};
use crate::properties;
use pld_ir::{Diagnostic, Diagnostics, Program, Span};

/// Runs `passes` in order over `program`.
///
/// `after_each(name, program)` is called after every pass (after verification).
pub fn run_passes(
    program: &mut Program,
    passes: &[&dyn Pass],
    cx: &mut PassCx,
    verify: bool,
    after_each: &mut dyn FnMut(&str, &Program),
) -> Result<(), Diagnostics> {
    if verify {
        pld_ir::verify_program_for(program, cx.target).map_err(|d| annotate(d, "the pipeline input"))?;
    }
    for pass in passes {
        if verify {
            for &p in pass.required() {
                properties::check(program, p).map_err(|d| {
                    annotate(d, &format!("the input of {} (which requires {})", pass.name(), p.name()))
                })?;
            }
        }
        pass.run(program, cx)?;
        if verify {
            pld_ir::verify_program_for(program, cx.target).map_err(|d| annotate(d, pass.name()))?;
            for &p in pass.produced() {
                properties::check(program, p).map_err(|d| {
                    annotate(d, &format!("{} (property {} does not hold)", pass.name(), p.name()))
                })?;
            }
        }
        after_each(pass.name(), program);
    }
    Ok(())
}

fn annotate(diags: Diagnostics, after: &str) -> Diagnostics {
    let mut out = Diagnostics::new();
    for d in diags {
        out.push(d.with_note(format!("ir verification failed after {after}")));
    }
    if out.is_empty() {
        out.push(Diagnostic::error(Span::DUMMY, format!("ir verification failed after {after}")));
    }
    out
}
