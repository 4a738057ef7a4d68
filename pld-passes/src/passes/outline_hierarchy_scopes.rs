//! `OutlineHierarchyScopes`: `pl.at(level=pl.Level.CHIP, ...)` regions of host functions
//! become chip orchestration functions.
//!
//! Afterwards: no CHIP-level `pl.at` region remains in a host function. Each became a fresh
//! `ChipOrch` function `<caller>_chip_<k>` (parameters: the values it reads from outside;
//! results: the values it defines that are used after it) called in its place with no
//! `device=`, i.e. a comm-less dispatch the runtime places on a chip (round-robin in submit
//! order, as the reference runner does). The CORE_GROUP regions inside move with it and are
//! outlined from the chip function by `OutlineIncoreScopes`, which runs next.

use super::outline_incore_scopes::{outline_program, Outlined};
use crate::pass::{Pass, PassCx};
use pld_ir::{Diagnostics, Program};

/// See the module docs.
pub struct OutlineHierarchyScopes;

impl Pass for OutlineHierarchyScopes {
    crate::pass_info!("OutlineHierarchyScopes");
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        outline_program(program, Outlined::Chip, cx)
    }
}
