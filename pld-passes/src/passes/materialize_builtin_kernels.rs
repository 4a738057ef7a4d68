//! `MaterializeBuiltinKernels`: every builtin collective dispatch becomes a call of its kernel.
//!
//! Not part of the default pipeline (codegen renders the builtin kernels itself, from the
//! same lowering, and dispatches them through the runtime's builtin entry points); it runs
//! after it, on request (`pld run --builtins lowered`, the cross-check tests), so the
//! simulator runs the kernels codegen emits instead of its protocol models.
//!
//! Afterwards: no op offering a `BuiltinKernel` lowering remains in a host or chip
//! orchestration; each became, by its registered lowering, `pld.system.get_comm_ctx` of every
//! peer-addressed window and one `device=` call of a new AIV kernel function (one per block of
//! a multi-block launch) whose body is the collective's composite expansion with its comm
//! fences in place.

use crate::pass::{Pass, PassCx, Property};
use crate::util::apply_lowerings_reporting;
use pld_ir::{Diagnostics, FunctionKind, LoweringKind, Program};

/// See the module docs.
pub struct MaterializeBuiltinKernels;

impl Pass for MaterializeBuiltinKernels {
    fn name(&self) -> &'static str {
        "MaterializeBuiltinKernels"
    }
    fn required(&self) -> &'static [Property] {
        &[Property::HostCollectivesLowered, Property::DistTensorCtxMaterialized]
    }
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        apply_lowerings_reporting(program, LoweringKind::BuiltinKernel, cx, &|f| {
            matches!(f.kind, FunctionKind::Host | FunctionKind::ChipOrch)
        })?;
        Ok(())
    }
}
