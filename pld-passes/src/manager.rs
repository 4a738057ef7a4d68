//! The pass manager: runs passes in order and, with verification on, re-runs the structural
//! verifier and checks every produced property after each pass.
//!
//! A verification failure is reported as the verifier's diagnostics with a note naming the
//! pass after which it appeared, so a broken invariant points at the pass that broke it.
//!
//! Incremental verification (DECISIONS D-passes-10): after a pass that reported the
//! functions it changed ([`PassCx::report_changes`]), only those and the functions it added
//! are re-verified, unless it removed or renamed a function or lowered a parameter count
//! (then everything is, since an unchanged caller may now be wrong). A pass that does not
//! report is followed by a full verification. With [`PassCx::audit_reports`] on (debug
//! builds) the manager also checks each report against a copy of the program taken before
//! the pass; and after the last pass, if any pass was verified incrementally, the whole
//! program is verified once more. So every function a pass changed is verified right after
//! it, and nothing that escaped a wrong report leaves the pipeline unverified.

use crate::pass::{Changes, Pass, PassCx};
use crate::properties;
use pld_ir::{Diagnostic, Diagnostics, Function, Program, Span};
use std::collections::{BTreeSet, HashMap};

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
    // Which dimensions take the rank count is read from the program as written (D-cli-10).
    program.record_rank_counts();
    if verify {
        pld_ir::verify_program_for(program, cx.target).map_err(|d| annotate(d, "the pipeline input"))?;
    }
    let mut partial = false;
    for pass in passes {
        if verify {
            for &p in pass.required() {
                properties::check(program, p).map_err(|d| {
                    annotate(d, &format!("the input of {} (which requires {})", pass.name(), p.name()))
                })?;
            }
        }
        let before = if verify { Some(Signatures::of(program)) } else { None };
        let copy = (verify && cx.audit_reports).then(|| program.functions.clone());
        cx.take_changes();
        let ran = pass.run(program, cx);
        let changes = cx.take_changes();
        ran?;
        if let Some(before) = before {
            if let (Some(copy), Changes::Functions(names)) = (&copy, &changes) {
                audit(pass.name(), copy, program, names)?;
            }
            match scope(&before, program, &changes) {
                Scope::All => pld_ir::verify_program_for(program, cx.target),
                Scope::Some(names) => {
                    partial = true;
                    pld_ir::verify::verify_functions_for(program, cx.target, &|f| {
                        names.contains(f.name.as_str()) || !before.arity.contains_key(f.name.as_str())
                    })
                }
            }
            .map_err(|d| annotate(d, pass.name()))?;
            for &p in pass.produced() {
                properties::check(program, p).map_err(|d| {
                    annotate(d, &format!("{} (property {} does not hold)", pass.name(), p.name()))
                })?;
            }
        }
        after_each(pass.name(), program);
    }
    if verify && partial {
        pld_ir::verify_program_for(program, cx.target)
            .map_err(|d| annotate(d, "the last pass (final whole-program verification)"))?;
    }
    Ok(())
}

/// Function names and parameter counts before a pass (first definition of a name wins, as
/// call resolution does).
struct Signatures {
    arity: HashMap<String, usize>,
}

impl Signatures {
    fn of(program: &Program) -> Signatures {
        let mut arity = HashMap::with_capacity(program.functions.len());
        for f in &program.functions {
            arity.entry(f.name.clone()).or_insert(f.params.len());
        }
        Signatures { arity }
    }
}

/// Which functions to re-verify after a pass.
enum Scope<'a> {
    All,
    Some(&'a BTreeSet<String>),
}

/// Everything, unless the pass reported its changes and every function that existed before
/// still exists with at least as many parameters (callers that did not change still
/// resolve); then the reported ones (the caller adds the new ones).
fn scope<'a>(before: &Signatures, program: &Program, changes: &'a Changes) -> Scope<'a> {
    let Changes::Functions(names) = changes else { return Scope::All };
    let mut after: HashMap<&str, usize> = HashMap::with_capacity(program.functions.len());
    for f in &program.functions {
        after.entry(f.name.as_str()).or_insert(f.params.len());
    }
    let kept = before.arity.iter().all(|(name, &n)| after.get(name.as_str()).is_some_and(|&m| m >= n));
    if kept {
        Scope::Some(names)
    } else {
        Scope::All
    }
}

/// Fails if a function that existed before the pass and is not in its report differs from
/// its copy: the report would have let a change go unverified.
fn audit(
    pass: &str,
    copy: &[Function],
    program: &Program,
    reported: &BTreeSet<String>,
) -> Result<(), Diagnostics> {
    let mut old: HashMap<&str, &Function> = HashMap::with_capacity(copy.len());
    for f in copy {
        old.entry(f.name.as_str()).or_insert(f);
    }
    let mut diags = Diagnostics::new();
    for f in &program.functions {
        if reported.contains(&f.name) {
            continue;
        }
        if let Some(o) = old.get(f.name.as_str()) {
            if *o != f {
                diags.push(
                    Diagnostic::error(
                        f.span,
                        format!("{pass} changed function `{}` but did not report it", f.name),
                    )
                    .with_note("a pass that calls PassCx::report_changes must call PassCx::changed for every function it modifies"),
                );
            }
        }
    }
    diags.into_result(())
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
