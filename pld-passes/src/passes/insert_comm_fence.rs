//! `InsertCommFence`: the PTOAS data-before-signal markers in device kernels.
//!
//! Afterwards, every InCore/AIC/AIV function (orchestration is untouched) carries the
//! markers `pld_ir::comm_fence` defines: a region invalidate and a fence after a local
//! publishing write into a window, a fence after a remote write, a whole-GM invalidate and a
//! fence after an opaque function call, a whole-GM invalidate after a blocking wait. The pass
//! is idempotent.

use crate::pass::{Pass, PassCx};
use pld_ir::{comm_fence, Diagnostics, Program};

/// See the module docs.
pub struct InsertCommFence;

impl Pass for InsertCommFence {
    crate::pass_info!("InsertCommFence");
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        cx.report_changes();
        crate::util::per_function(program, cx, |f| f.kind.is_incore(), comm_fence::insert_comm_fences)
            .into_result(())
    }
}
