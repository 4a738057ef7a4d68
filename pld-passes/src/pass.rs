//! The pass abstraction: a named program transform with the IR properties it requires and
//! the ones it establishes.
//!
//! A [`Pass`] is plain code over a [`Program`]; it reports problems with the user's program
//! as [`Diagnostics`] (never panics). [`Property`] values name invariants that
//! [`crate::properties::check`] can verify after a pass claims to produce them.

use pld_ir::{Diagnostics, Program, Target};

/// An invariant of the IR that a pass may require or establish.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Property {
    /// No `pl.at(...)` InCore region remains in an orchestration or host body.
    SplitIncoreOrch,
    /// No op with a tensor-to-tile lowering remains in an InCore kernel.
    IncoreTileOps,
    /// No op with a composite lowering remains in a device kernel.
    CompositesLowered,
    /// No `pl.split_aiv` region remains.
    SplitAivLowered,
    /// No InCore function and no placement stamp remains.
    MixedKernelExpanded,
    /// Every window buffer belongs to exactly one comm-domain scope.
    CommDomainScopesMaterialized,
    /// No op with a host-builtin lowering remains in a host orchestration.
    HostCollectivesLowered,
    /// No op with a chip-builtin lowering remains in a chip orchestration.
    ChipCollectivesLowered,
    /// No `pld.system.get_comm_ctx` query remains outside host orchestration.
    DistTensorCtxMaterialized,
}

impl Property {
    /// Name for diagnostics.
    pub fn name(self) -> &'static str {
        match self {
            Property::SplitIncoreOrch => "SplitIncoreOrch",
            Property::IncoreTileOps => "IncoreTileOps",
            Property::CompositesLowered => "CompositesLowered",
            Property::SplitAivLowered => "SplitAivLowered",
            Property::MixedKernelExpanded => "MixedKernelExpanded",
            Property::CommDomainScopesMaterialized => "CommDomainScopesMaterialized",
            Property::HostCollectivesLowered => "HostCollectivesLowered",
            Property::ChipCollectivesLowered => "ChipCollectivesLowered",
            Property::DistTensorCtxMaterialized => "DistTensorCtxMaterialized",
        }
    }
}

/// What a pass may consult while it runs.
#[derive(Clone, Debug, Default)]
pub struct PassCx {
    /// The compilation target (deducers see it).
    pub target: Target,
}

/// A program transform.
pub trait Pass: Sync {
    /// The pass name (`ConvertTensorToTileOps`), as `--dump-after` spells it.
    fn name(&self) -> &'static str;
    /// Properties that must hold before it runs.
    fn required(&self) -> &'static [Property] {
        &[]
    }
    /// Properties that hold after it ran.
    fn produced(&self) -> &'static [Property] {
        &[]
    }
    /// Transforms the program.
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics>;
}
