//! The pass abstraction: a named program transform with the IR properties it requires and
//! the ones it establishes.
//!
//! A [`Pass`] is plain code over a [`Program`]; it reports problems with the user's program
//! as [`Diagnostics`] (never panics). [`Property`] values name invariants that
//! [`crate::properties::check`] can verify after a pass claims to produce them.
//!
//! A pass may report which functions it changed ([`PassCx::report_changes`] and
//! [`PassCx::changed`]) so the manager re-verifies only those; a pass that does not report
//! is treated as having changed every function.

use pld_ir::{Diagnostics, Program, Target};
use std::collections::BTreeSet;

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

/// What a pass may consult while it runs, and where it reports what it changed.
#[derive(Clone, Debug)]
pub struct PassCx {
    /// The compilation target (deducers see it).
    pub target: Target,
    /// Whether the manager checks a pass's change report (see [`PassCx::report_changes`]):
    /// it keeps a copy of the program and fails the pass if a function it did not report
    /// differs from the copy. On by default in debug builds (so every test checks every
    /// reporting pass), off in release builds (where the full verification at the end of
    /// the pipeline still catches a broken function, naming no pass).
    pub audit_reports: bool,
    /// The running pass's report; reset by the manager before each pass.
    changes: Changes,
}

impl Default for PassCx {
    fn default() -> PassCx {
        PassCx::new(Target::default())
    }
}

/// What the running pass reported changing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Changes {
    /// Nothing reported: any function may have changed (everything is re-verified).
    #[default]
    Unreported,
    /// Only the functions with these names changed (functions the pass added count as
    /// changed whether reported or not).
    Functions(BTreeSet<String>),
}

impl PassCx {
    /// A context for `target`, with reports audited in debug builds.
    pub fn new(target: Target) -> PassCx {
        PassCx { target, audit_reports: cfg!(debug_assertions), changes: Changes::Unreported }
    }

    /// Declares that the running pass reports, through [`PassCx::changed`], every existing
    /// function it changes in any way (body, values, parameters, results, kind, attributes);
    /// the manager then re-verifies only those and the functions the pass added. A pass that
    /// never calls this is assumed to have changed everything.
    pub fn report_changes(&mut self) {
        if self.changes == Changes::Unreported {
            self.changes = Changes::Functions(BTreeSet::new());
        }
    }

    /// Records that the function named `name` changed (no effect unless the pass called
    /// [`PassCx::report_changes`]).
    pub fn changed(&mut self, name: &str) {
        if let Changes::Functions(names) = &mut self.changes {
            if !names.contains(name) {
                names.insert(name.to_string());
            }
        }
    }

    /// Withdraws the running pass's report: everything is re-verified after it.
    pub fn changed_everything(&mut self) {
        self.changes = Changes::Unreported;
    }

    /// The running pass's report so far.
    pub fn changes(&self) -> &Changes {
        &self.changes
    }

    /// Takes the report, leaving [`Changes::Unreported`] for the next pass.
    pub fn take_changes(&mut self) -> Changes {
        std::mem::take(&mut self.changes)
    }
}

/// The identity of a pass inside its `impl Pass` block, in one line: its name (as
/// `--dump-after` spells it) and the properties it requires and produces.
///
/// `pass_info!("DeadCodeElimination");`,
/// `pass_info!("ExpandMixedKernel", produced: [MixedKernelExpanded]);`,
/// `pass_info!("X", required: [A], produced: [B, C]);` (names of [`Property`] variants).
#[macro_export]
macro_rules! pass_info {
    ($name:literal $(, required: [$($req:ident),* $(,)?])? $(, produced: [$($prod:ident),* $(,)?])? $(,)?) => {
        fn name(&self) -> &'static str {
            $name
        }
        $(fn required(&self) -> &'static [$crate::pass::Property] {
            &[$($crate::pass::Property::$req),*]
        })?
        $(fn produced(&self) -> &'static [$crate::pass::Property] {
            &[$($crate::pass::Property::$prod),*]
        })?
    };
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
