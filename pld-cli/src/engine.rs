//! `pld run --engine`: which engine runs the program — the in-process simulator (default) or,
//! in a build with the `mpi` feature, the MPI engine (`mpirun -n P pld run … --engine mpi`).
//!
//! Guarantees: the in-process engine is exactly `pld_sim::run`; the MPI engine refuses what it
//! cannot do faithfully (a rank count other than the process count, `--trace`, another
//! schedule, `pld verify`) with a usage error, and only its rank 0 writes files or prints.

use crate::driver::Failure;
use pld_ir::Program;
use pld_sim::{Inputs, SimConfig, SimError, SimOutcome};

/// The engine named by `--engine`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineKind {
    /// Every rank in this process (the simulator's own schedules).
    Inproc,
    /// One MPI process per rank, windows as MPI-3 RMA windows (run under `mpirun`).
    Mpi,
}

/// A started engine.
pub enum Engine {
    /// In-process.
    Inproc,
    /// This process's MPI environment.
    #[cfg(feature = "mpi")]
    Mpi(pld_sim_mpi::engine::Mpi),
}

impl Engine {
    /// Starts `kind` for a run on `ranks` ranks (initialises MPI for the MPI engine).
    pub fn start(
        kind: EngineKind,
        ranks: usize,
        trace: bool,
        other_schedule: bool,
    ) -> Result<Engine, Failure> {
        match kind {
            EngineKind::Inproc => Ok(Engine::Inproc),
            EngineKind::Mpi => start_mpi(ranks, trace, other_schedule),
        }
    }

    /// Whether this process writes the run's files and summary (rank 0, or the only process).
    pub fn is_root(&self) -> bool {
        match self {
            Engine::Inproc => true,
            #[cfg(feature = "mpi")]
            Engine::Mpi(m) => m.rank() == 0,
        }
    }

    /// Whether the ranks run in several processes (each holds only the host-tensor bytes its
    /// rank touches: inputs are given as sources, `SimConfig::lazy_inputs`).
    pub fn is_distributed(&self) -> bool {
        !matches!(self, Engine::Inproc)
    }

    /// Runs the program; `Ok(None)` on an MPI process other than rank 0 (it has nothing to
    /// report: rank 0 reports the run, with every rank's output bytes gathered).
    pub fn run(
        &self,
        program: &Program,
        entry: &str,
        inputs: &Inputs,
        cfg: &SimConfig,
    ) -> Result<Option<SimOutcome>, SimError> {
        match self {
            Engine::Inproc => pld_sim::run(program, entry, inputs, cfg).map(Some),
            #[cfg(feature = "mpi")]
            Engine::Mpi(m) => m.run(program, entry, inputs, cfg, true),
        }
    }
}

#[cfg(feature = "mpi")]
fn start_mpi(ranks: usize, trace: bool, other_schedule: bool) -> Result<Engine, Failure> {
    if trace || other_schedule {
        return Err(Failure::usage(
            "--engine mpi runs each rank in its own process: --trace and --schedule other than det are in-process only",
        ));
    }
    let m = pld_sim_mpi::engine::init().ok_or_else(|| Failure::usage("MPI is already initialised"))?;
    if m.size() != ranks {
        return Err(Failure::usage(format!(
            "--engine mpi runs one process per rank: --ranks {ranks} under {} MPI process(es); run `mpirun -n {ranks} pld run … --engine mpi --ranks {ranks}`",
            m.size()
        )));
    }
    Ok(Engine::Mpi(m))
}

#[cfg(not(feature = "mpi"))]
fn start_mpi(_: usize, _: bool, _: bool) -> Result<Engine, Failure> {
    Err(Failure::usage(
        "this pld was built without the MPI engine; build it with `cargo build --release -p pld-cli --features mpi`",
    ))
}
