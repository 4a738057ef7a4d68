//! `LowerL2TensorCollectives`: the CHIP rail of the collectives.
//!
//! Afterwards: no op offering a `ChipBuiltin` lowering remains in a chip orchestration;
//! each was replaced, by its registered lowering, with a call of a synthesized single-task
//! AIV kernel that the composite lowering (which runs after this pass) expands in place.

use crate::pass::{Pass, PassCx};
use crate::util::apply_lowerings_reporting;
use pld_ir::{Diagnostics, FunctionKind, LoweringKind, Program};

/// See the module docs.
pub struct LowerL2TensorCollectives;

impl Pass for LowerL2TensorCollectives {
    crate::pass_info!("LowerL2TensorCollectives", produced: [ChipCollectivesLowered]);
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        apply_lowerings_reporting(program, LoweringKind::ChipBuiltin, cx, &|f| {
            f.kind == FunctionKind::ChipOrch
        })?;
        Ok(())
    }
}
