//! Checkers for the IR properties passes declare as produced.
//!
//! Each checker answers from the registry (lowering kinds) or from the IR shape alone; a
//! violation is reported with the span of the offending statement.

use crate::pass::Property;
use crate::util::{call_stmt, is_placement_stamp};
use pld_ir::{Diagnostic, Diagnostics, FunctionKind, LoweringKind, Program, ScopeKind, StmtKind};
use std::collections::HashMap;

/// Checks that `prop` holds for `program`.
pub fn check(program: &Program, prop: Property) -> Result<(), Diagnostics> {
    let mut diags = Diagnostics::new();
    match prop {
        Property::SplitIncoreOrch => {
            for f in program.functions.iter().filter(|f| !f.kind.is_incore()) {
                f.body.walk(&mut |s| {
                    if matches!(s.kind, StmtKind::Scope { kind: ScopeKind::At { .. }, .. })
                        && !is_placement_stamp(s)
                    {
                        diags.push(Diagnostic::error(
                            s.span,
                            format!("a pl.at region is still inline in `{}`", f.name),
                        ));
                    }
                });
            }
        }
        Property::IncoreTileOps => {
            remaining(program, LoweringKind::TensorToTile, |k| k.is_incore(), &mut diags)
        }
        Property::CompositesLowered => {
            remaining(program, LoweringKind::Composite, |k| k.is_incore(), &mut diags)
        }
        Property::HostCollectivesLowered => {
            remaining(program, LoweringKind::HostBuiltin, |k| k == FunctionKind::Host, &mut diags)
        }
        Property::ChipCollectivesLowered => {
            remaining(program, LoweringKind::ChipBuiltin, |k| k == FunctionKind::ChipOrch, &mut diags)
        }
        Property::SplitAivLowered => {
            for f in &program.functions {
                f.body.walk(&mut |s| {
                    if matches!(s.kind, StmtKind::Scope { kind: ScopeKind::SplitAiv { .. }, .. }) {
                        diags.push(Diagnostic::error(
                            s.span,
                            format!("a pl.split_aiv region remains in `{}`", f.name),
                        ));
                    }
                });
            }
        }
        Property::MixedKernelExpanded => {
            for f in &program.functions {
                if f.kind == FunctionKind::InCore {
                    diags.push(Diagnostic::error(
                        f.span,
                        format!("InCore function `{}` was not split", f.name),
                    ));
                }
                f.body.walk(&mut |s| {
                    if is_placement_stamp(s) {
                        diags.push(Diagnostic::error(
                            s.span,
                            format!("a placement stamp remains in `{}`", f.name),
                        ));
                    }
                });
            }
        }
        Property::CommDomainScopesMaterialized => {
            let mut owner: HashMap<String, String> = HashMap::new();
            for f in &program.functions {
                f.body.walk(&mut |s| {
                    if let StmtKind::Scope { kind: ScopeKind::CommDomain { name, windows, .. }, .. } = &s.kind {
                        if windows.is_empty() {
                            diags.push(Diagnostic::error(s.span, format!("comm domain `{name}` has no window")));
                        }
                        for w in windows {
                            if let Some(prev) = owner.insert(w.clone(), name.clone()) {
                                diags.push(Diagnostic::error(
                                    s.span,
                                    format!("window buffer `{w}` belongs to two comm domains (`{prev}` and `{name}`)"),
                                ));
                            }
                        }
                    }
                });
            }
        }
        Property::DistTensorCtxMaterialized => {
            for f in program.functions.iter().filter(|f| f.kind != FunctionKind::Host) {
                crate::util::for_each_call(&f.body, &mut |c, e| {
                    if c.callee.name() == crate::ops::GET_COMM_CTX {
                        diags.push(Diagnostic::error(
                            e.span,
                            format!("pld.system.get_comm_ctx remains in non-host function `{}`", f.name),
                        ));
                    }
                });
            }
        }
    }
    diags.into_result(())
}

fn remaining(
    program: &Program,
    kind: LoweringKind,
    sel: impl Fn(FunctionKind) -> bool,
    diags: &mut Diagnostics,
) {
    for f in program.functions.iter().filter(|f| sel(f.kind)) {
        f.body.walk(&mut |s| {
            if let Some((c, _)) = call_stmt(s) {
                if c.op().is_some_and(|d| d.lowering(kind).is_some()) {
                    diags.push(
                        Diagnostic::error(
                            s.span,
                            format!(
                                "{} has a {} lowering but remains in `{}`",
                                c.callee.name(),
                                kind.name(),
                                f.name
                            ),
                        )
                        .about_call(c),
                    );
                }
            }
        });
    }
}
