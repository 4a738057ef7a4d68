//! What a run is given: the rank count, the schedule, the checks, the budgets and limits, the
//! cost model and the hooks ([`SimConfig`]), with the defaults `pld run` uses.
//!
//! Guarantees: [`SimConfig::default`] runs 2 ranks deterministically with races checked, no
//! total step budget and the liveness budget [`DEFAULT_MAX_IDLE_STEPS`] ([`crate::budget`]
//! enforces both), and the memory cap of [`crate::limits::default_max_memory`].

use crate::callback::HostCallbacks;
use crate::{cost, drive, lazy, limits};
use pld_ir::SourceMap;
use std::collections::HashMap;
use std::str::FromStr;
use std::sync::atomic::AtomicU64;

pub use crate::world::DEFAULT_PROTOCOL_GRAIN;

/// How ranks interleave.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Schedule {
    /// Fixed round robin over runnable cores.
    #[default]
    Deterministic,
    /// Seeded random interleaving.
    Random(u64),
    /// Worker threads (one, or one per core while that runs faster; at most one per rank)
    /// sharing a ready queue of ranks, windows shared behind one lock per window
    /// (non-deterministic interleaving; see `sched/parallel.rs`).
    Parallel,
    /// Seeded PCT: random core priorities with priority change points ([`crate::pct`]).
    Pct(u64),
}

impl FromStr for Schedule {
    type Err = String;
    fn from_str(s: &str) -> Result<Schedule, String> {
        match s {
            "det" | "deterministic" => Ok(Schedule::Deterministic),
            "parallel" => Ok(Schedule::Parallel),
            _ => {
                if let Some(seed) = s.strip_prefix("random:") {
                    seed.parse().map(Schedule::Random).map_err(|_| format!("bad random seed '{seed}'"))
                } else if let Some(seed) = s.strip_prefix("pct:") {
                    seed.parse().map(Schedule::Pct).map_err(|_| format!("bad pct seed '{seed}'"))
                } else {
                    Err(format!("unknown schedule '{s}' (expected det, random:SEED, pct:SEED or parallel)"))
                }
            }
        }
    }
}

/// Simulator configuration.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Number of ranks (1..=64).
    pub nranks: usize,
    /// Interleaving policy.
    pub schedule: Schedule,
    /// Worker threads of the parallel schedule: `None` (the default) lets it run one worker
    /// or one per core (at most one per rank), window by window, whichever runs more steps
    /// per second (`sched/governor.rs`); `Some(k)` runs `k` (at most one per rank) throughout,
    /// whether they pay or not (tests of the threaded paths, benchmarks).
    pub parallel_workers: Option<usize>,
    /// Record a Chrome trace.
    pub trace: bool,
    /// Step budget of the whole run: every statement, micro instruction and loop iteration
    /// is a step ([`crate::budget`]); unlimited by default.
    pub max_steps: u64,
    /// Liveness budget: steps in a row without progress (no data moved, no signal cell
    /// changed) before the run stops ([`crate::budget`]).
    pub max_idle_steps: u64,
    /// Wall-clock limit: the run stops with a budget report at this instant.
    pub deadline: Option<std::time::Instant>,
    /// Set (e.g. by a Ctrl-C handler) to stop the run with an interrupt report.
    pub interrupt: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Most bytes the run may allocate for host tensors, windows (× ranks) and tiles
    /// ([`limits`]).
    pub max_memory: u64,
    /// Cores (kernels running at once) per rank.
    pub cores_per_rank: usize,
    /// Check races.
    pub check_races: bool,
    /// Require a `system.fence` between window writes and the next notify (off by default:
    /// programs that did not go through the pipeline carry no fences).
    pub check_fences: bool,
    /// Zero every window allocation (as a fresh hardware allocation would) instead of garbage.
    pub zero_windows: bool,
    /// Run `dual_aiv_dispatch` kernels on both vector sub-lanes (the whole AIV kernel twice,
    /// as the hardware does); off by default.
    pub dual_aiv: bool,
    /// Reads of window bytes nothing wrote are warnings instead of faults.
    pub allow_uninit_reads: bool,
    /// Extra bindings of symbolic dims.
    pub bindings: HashMap<String, i64>,
    /// Where each binding came from (`--bind M=4`, `--ranks`), for reports; a binding not
    /// named here is reported as `the binding M=4`.
    pub binding_sources: HashMap<String, String>,
    /// Sources, to render spans as `file:line:col`.
    pub sources: Option<SourceMap>,
    /// Runs host callbacks (`role=pl.Role.SubWorker`); without it a callback call is a fault.
    pub host_callbacks: Option<std::sync::Arc<dyn HostCallbacks>>,
    /// The cost model of modeled time ([`cost`]).
    pub cost: cost::CostModel,
    /// Keep every trace slice (no aggregation of short ones).
    pub trace_all: bool,
    /// Live counters of the run (steps, bytes moved) for a progress display ([`crate::budget`]).
    pub progress: Option<std::sync::Arc<Progress>>,
    /// Picks the thread of every step instead of `schedule` ([`crate::explore`]: exhaustive
    /// exploration, replay files).
    pub driver: Option<drive::DriverCell>,
    /// Bytes of data one step of a builtin collective's protocol moves per rank: consecutive
    /// tiles of the rendered kernel (the host mesh allreduce's 256-element tiles, the ring's
    /// and the InCore lowerings' UB chunks) are taken together, between one pair of barriers,
    /// up to this many bytes; `0` runs the kernel's protocol tile by tile. Outputs, traffic
    /// and final signal values do not depend on it (docs/DECISIONS.md D-sim-37).
    pub protocol_grain: u64,
    /// Inputs given as sources instead of bytes (an input named in `Inputs` too takes those
    /// bytes): a distributed run's process fills only the chunks it touches, an in-process
    /// run fills every byte before it starts ([`lazy`]).
    pub lazy_inputs: HashMap<String, lazy::LazyInput>,
}

impl Default for SimConfig {
    fn default() -> SimConfig {
        SimConfig {
            nranks: 2,
            schedule: Schedule::Deterministic,
            parallel_workers: None,
            trace: false,
            max_steps: DEFAULT_MAX_STEPS,
            max_idle_steps: DEFAULT_MAX_IDLE_STEPS,
            deadline: None,
            interrupt: None,
            max_memory: limits::default_max_memory(),
            cores_per_rank: 48,
            check_races: true,
            check_fences: false,
            zero_windows: false,
            dual_aiv: false,
            allow_uninit_reads: false,
            bindings: HashMap::new(),
            binding_sources: HashMap::new(),
            sources: None,
            host_callbacks: None,
            cost: cost::CostModel::default(),
            trace_all: false,
            progress: None,
            driver: None,
            lazy_inputs: HashMap::new(),
            protocol_grain: DEFAULT_PROTOCOL_GRAIN,
        }
    }
}

impl SimConfig {
    /// The default configuration for `nranks` ranks.
    pub fn ranks(nranks: usize) -> SimConfig {
        SimConfig { nranks, ..SimConfig::default() }
    }
}

/// Live counters of a run, read by a progress display while it runs.
#[derive(Debug, Default)]
pub struct Progress {
    /// Steps taken (in multiples of [`crate::budget::CHECK_EVERY`]).
    pub steps: AtomicU64,
    /// Bytes moved (read or written by data ops, local and remote).
    pub bytes: AtomicU64,
    /// Executions an exhaustive exploration ran so far ([`crate::explore::Tally::executions`]),
    /// or schedules `pld verify` finished ([`crate::verify::verify`]).
    pub executions: AtomicU64,
    /// Of them, the complete ones ([`crate::explore::Tally::classes`]).
    pub classes: AtomicU64,
}

/// The default liveness budget: steps in a row without progress (no window or host bytes
/// written that change them, no signal cell changed). A runaway loop of cheap statements stops after about half a
/// second of a release build, a notify loop that keeps setting the same value after a few
/// seconds; a correct program of any size never meets it (docs/DECISIONS.md D-sim-28).
pub const DEFAULT_MAX_IDLE_STEPS: u64 = 5_000_000;

/// The default total step budget: none (`SimConfig::max_steps`, `--max-steps`, caps the
/// whole run's work when asked to).
pub const DEFAULT_MAX_STEPS: u64 = u64::MAX;
