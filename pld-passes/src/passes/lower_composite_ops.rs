//! `LowerCompositeOps`: InCore collectives expand into communication primitives.
//!
//! Afterwards: no op offering a `Composite` lowering remains in a device kernel (InCore,
//! AIC, AIV). Each op's registered expansion decides the schedule; collectives in host or
//! chip orchestration are left for `LowerHostTensorCollectives` / `LowerL2TensorCollectives`.
//! The expansions are idempotent (they emit only non-composite ops).

use crate::pass::{Pass, PassCx};
use crate::util::apply_lowerings_reporting;
use pld_ir::{LoweringKind, Program};

/// See the module docs.
pub struct LowerCompositeOps;

impl Pass for LowerCompositeOps {
    crate::pass_info!("LowerCompositeOps", produced: [CompositesLowered]);
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), pld_ir::Diagnostics> {
        apply_lowerings_reporting(program, LoweringKind::Composite, cx, &|f| f.kind.is_incore())?;
        Ok(())
    }
}
