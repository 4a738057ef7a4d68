//! `run.py`: runs the directory on Simpler's Python API alone, no reference compiler
//! installed (`runtime_artifacts.md` §9).
//!
//! Guarantees: the script reads `distributed_meta.json`, loads every host input from
//! `<inputs>/<name>.npy` (Out parameters start at zero, or from their `.npy` when present),
//! compiles and registers one `ChipCallable` per `next_levels/*/kernel_config.py` keyed by
//! the directory name, registers the function of every `sub_workers/<name>.py` as `sub_ids[name]`
//! (with that many sub workers; each generated module is loaded as `_pld_generated.<stem>` and
//! registered with cloudpickle by value, since Simpler pickles every Python callable), allocates every host buffer shared before `Worker.init()`,
//! provides the `pypto.runtime` helpers `host_orch.py` and the sub-worker modules import
//! (`make_tensor_arg`, `_submit_chip`, `_tensor_from_continuous`), calls the tagged entry, and writes every
//! Out/InOut parameter to `<outputs>/<name>.npy`. `--ranks N` overrides the device ids with
//! `0..N`; `--platform` is `a2a3sim` or `a2a3` (also `a5sim`, `a5`).

use crate::RuntimeOptions;
use pld_ir::Function;

crate::template::template! {
    /// `templates/run.py`.
    pub struct RunPy = "run.py" {
        /// The default `--platform` (the directory's recorded platform).
        platform,
    }
}

/// Renders `run.py` for `host`.
pub fn render(host: &Function, opts: &RuntimeOptions) -> String {
    let _ = host;
    RunPy { platform: &opts.platform }.render()
}

/// This module's templates, for the hole checks of [`crate::template`].
#[cfg(test)]
pub(crate) fn all_templates() -> Vec<(&'static str, &'static str, &'static [&'static str])> {
    vec![(RunPy::FILE, RunPy::TEXT, RunPy::HOLES)]
}
