//! `LowerAutoVectorSplit`: consumes the `pl.split_aiv` regions of InCore kernels.
//!
//! Afterwards: no `split_aiv` region remains; each task-parallel (`mode=None`) region's body
//! is spliced in place, and every call inside it that the registry marks `no_duplicate` and
//! whose intrinsic affinity is SHARED carries the placement stamp (a `core_placement="aiv"`
//! scope around the statement) that `ExpandMixedKernel` reads and strips. Calls outside every
//! region are never stamped (they are duplicated onto both lanes, as the seed says). Kernels
//! that had regions carry the function attribute `split_aiv=True`. Data-parallel regions
//! (halving) are rejected with a diagnostic: this pipeline does not implement halving.

use crate::ops::PLACEMENT_ATTR;
use crate::pass::{Pass, PassCx};
use crate::passes::expand_mixed_kernel::{intrinsic_affinity, Affinity};
use crate::util::{call_stmt, is_placement_stamp};
use pld_ir::{
    Attr, Block, Diagnostic, Diagnostics, Function, FunctionKind, Program, ScopeKind, Stmt, StmtKind, Values,
};

/// See the module docs.
pub struct LowerAutoVectorSplit;

impl Pass for LowerAutoVectorSplit {
    crate::pass_info!("LowerAutoVectorSplit", produced: [SplitAivLowered]);
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        cx.report_changes();
        crate::util::per_function(
            program,
            cx,
            |_| true,
            |f, diags| {
                // Functions without a region are left untouched (no body rebuild).
                let mut any = false;
                f.body.walk(&mut |s| {
                    any |= matches!(s.kind, StmtKind::Scope { kind: ScopeKind::SplitAiv { .. }, .. })
                });
                if !any {
                    return false;
                }
                let mut found = false;
                let mut body = std::mem::take(&mut f.body);
                lower_regions(&mut body, f, &mut found, diags);
                f.body = body;
                if found {
                    if f.kind != FunctionKind::InCore {
                        diags.push(Diagnostic::error(
                            f.span,
                            format!(
                                "pl.split_aiv regions are only allowed in InCore kernels, but `{}` is {}",
                                f.name,
                                f.kind.dsl_name()
                            ),
                        ));
                    }
                    if !f.attrs.iter().any(|(k, _)| k == "split_aiv") {
                        f.attrs.push(("split_aiv".into(), Attr::Bool(true)));
                    }
                }
                true
            },
        )
        .into_result(())
    }
}

fn region_mode(attrs: &[(String, Attr)]) -> Option<String> {
    attrs.iter().find(|(k, _)| k == "mode" || k == "split").and_then(|(_, v)| match v {
        Attr::Str(s) if s != "None" && !s.is_empty() => Some(s.clone()),
        Attr::Int(n) if *n != 0 => Some(n.to_string()),
        _ => None,
    })
}

fn lower_regions(block: &mut Block, f: &Function, found: &mut bool, diags: &mut Diagnostics) {
    let old = std::mem::take(&mut block.stmts);
    for mut s in old {
        let is_region = matches!(s.kind, StmtKind::Scope { kind: ScopeKind::SplitAiv { .. }, .. });
        if !is_region {
            for b in s.blocks_mut() {
                lower_regions(b, f, found, diags);
            }
            block.stmts.push(s);
            continue;
        }
        *found = true;
        let StmtKind::Scope { kind: ScopeKind::SplitAiv { lane }, attrs, mut body, .. } = s.kind else {
            continue;
        };
        if let Some(mode) = region_mode(&attrs) {
            diags.push(Diagnostic::error(
                s.span,
                format!("pl.split_aiv data-parallel regions (mode={mode}) are not supported by this pipeline; use mode=None for comm phases"),
            ));
        }
        if let Some(l) = lane {
            if crate::util::used_values(&body).contains(&l) {
                diags.push(Diagnostic::error(
                    s.span,
                    format!("the split_aiv lane index `{}` is used inside a mode=None region; lane sharding by index is not supported yet", f.values.name(l)),
                ));
            }
        }
        let mut nested = Diagnostics::new();
        lower_regions(&mut body, f, found, &mut nested);
        diags.extend(nested);
        stamp_block(&mut body, &f.values);
        block.stmts.extend(body.stmts);
    }
}

/// Wraps every stampable call statement of `block` (recursively) in a placement stamp.
pub fn stamp_block(block: &mut Block, values: &Values) {
    let old = std::mem::take(&mut block.stmts);
    for mut s in old {
        if is_placement_stamp(&s) {
            block.stmts.push(s);
            continue;
        }
        let stamp = call_stmt(&s).is_some_and(|(c, _)| {
            c.op().is_some_and(|d| d.no_duplicate) && intrinsic_affinity(c, values) == Affinity::Shared
        });
        if stamp {
            let span = s.span;
            block.stmts.push(Stmt::new(
                StmtKind::Scope {
                    kind: ScopeKind::At { task: None },
                    attrs: vec![(PLACEMENT_ATTR.into(), Attr::Str("aiv".into()))],
                    args: Vec::new(),
                    body: Block { stmts: vec![s] },
                },
                span,
            ));
            continue;
        }
        for b in s.blocks_mut() {
            stamp_block(b, values);
        }
        block.stmts.push(s);
    }
}
