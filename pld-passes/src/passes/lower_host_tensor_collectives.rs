//! `LowerHostTensorCollectives`: host collectives become per-device builtin dispatches.
//!
//! Afterwards: no op offering a `HostBuiltin` lowering remains in a host orchestration; each
//! became the dispatches its registered lowering emits for the ranks of the innermost comm
//! domain holding all its windows (the pass hands the domain's rank list to the lowering).
//! Before lowering, the pass rejects a collective whose window operands share an allocation
//! (naming both roles): two views of one buffer race under in-kernel TPUT/notify.

use crate::pass::{Pass, PassCx, Property};
use crate::util::{apply_lowerings_reporting, for_each_call};
use pld_ir::{Diagnostic, Diagnostics, FunctionKind, LoweringKind, Program, Type};

/// See the module docs.
pub struct LowerHostTensorCollectives;

impl Pass for LowerHostTensorCollectives {
    fn name(&self) -> &'static str {
        "LowerHostTensorCollectives"
    }
    fn required(&self) -> &'static [Property] {
        &[Property::CommDomainScopesMaterialized]
    }
    fn produced(&self) -> &'static [Property] {
        &[Property::HostCollectivesLowered, Property::CommDomainScopesMaterialized]
    }
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        let mut diags = Diagnostics::new();
        for f in program.functions.iter().filter(|f| f.kind == FunctionKind::Host) {
            for_each_call(&f.body, &mut |c, e| {
                let Some(def) = c.op().filter(|d| d.lowering(LoweringKind::HostBuiltin).is_some()) else {
                    return;
                };
                let mut seen: Vec<(String, &str)> = Vec::new();
                for (i, a) in c.args.iter().enumerate() {
                    let Type::DistTensor(d) = a.ty(&f.values) else { continue };
                    let Some(w) = d.window else { continue };
                    let role = def.params.get(i).map_or("operand", |p| p.name);
                    if let Some((_, first)) = seen.iter().find(|(x, _)| *x == w) {
                        diags.push(Diagnostic::error(
                            e.span,
                            format!("{} {first} and {role} must be different window allocations (two pld.window views over the same alloc_window_buffer are a cross-process data race under in-kernel TPUT/notify)", def.name),
                        ).about_call(c));
                    } else {
                        seen.push((w, role));
                    }
                }
            });
        }
        if diags.has_errors() {
            return Err(diags);
        }
        apply_lowerings_reporting(program, LoweringKind::HostBuiltin, cx, &|f| f.kind == FunctionKind::Host)?;
        Ok(())
    }
}
