//! # pld-sim — the multi-rank simulator for pld programs
//!
//! Runs a [`Program`](pld_ir::Program) on N simulated ranks (1 ≤ N ≤ 64) at whatever level its IR arrives —
//! tensor-level put/get and unlowered collectives as well as the pipeline's tile-level
//! protocols and `builtin.tensor.*` dispatches — and gives either the outputs with traffic
//! accounting (and an optional Chrome trace) or a precise [`Report`]: deadlock, race,
//! out-of-bounds window or host tensor access, peer out of range, Set/AtomicAdd mixing, credit leak, stale
//! credit, read of uninitialised window bytes, deferred-completion misuse, duplicate notify
//! from a mixed kernel, unfenced notify (opt-in). [`verify`] explores PCT schedules.
//!
//! Guarantees: [`run`] never panics on a program and never hangs (deadlocks are detected, a
//! step budget bounds livelocks); the deterministic schedule gives byte-identical outputs and
//! traces for the same input; op semantics are registered by op name in the family modules of
//! [`sem`] (`register_semantics!`, `register_collective!`), so the simulator depends only on
//! `pld-ir` and `pld-runtime-abi`.
//!
//! ## Model
//!
//! - **World** ([`world`]): comm domains (from `CommDomain` scopes, else one domain of all
//!   ranks) with named buffers carved at 32-byte-aligned offsets; each member gets a real
//!   `CommContext` with its own virtual addresses, and every remote access is translated
//!   `local + windowsIn[peer] - windowsIn[me]` and resolved back (bounds = the named buffer).
//!   Window bytes start as `0xFF` (NaN) except integer-only buffers (signals), which start at 0;
//!   reading bytes that nothing wrote and that are not signal cells is a fault whatever the dtype.
//! - **Execution** ([`interp`], [`sched`]): the host function runs once and fills per-rank
//!   FIFO queues (a host callback, [`callback`], is a fence: the queued work runs to the end,
//!   then the callback through [`SimConfig::host_callbacks`]); a chip orchestrator launches kernels as tasks ordered by overlapping tensor
//!   arguments (the two lanes of a split mixed kernel form one task), on at most
//!   `cores_per_rank` cores; a kernel is a resumable frame-stack interpreter that parks on a
//!   failed `wait` and resumes when its cell satisfies the predicate; `defer_wait` retires the
//!   kernel and gates the task (≤ 64 conditions, ≤ 64 deferred tasks). Protocol ops (TPUT/TGET
//!   chunk sequences, collectives) run as flat micro programs ([`micro`]).
//! - **Checks**: per-rank vector clocks with notify→wait edges (races; a wait acquires the
//!   clock of the credit that satisfied it, [`credit`]), per-cell Set/AtomicAdd epochs, credit
//!   origins per self-clearing call (stale credits), every notified cell of a self-clearing
//!   signal zero at the end of the run (leaks), reads of bytes nobody wrote.
//! - **Persistent workers** ([`Persistent`]): windows kept across calls, optionally reset.
//! - **Schedules** ([`Schedule`]): deterministic round robin, seeded random, seeded PCT
//!   ([`pct`]), or one OS thread per rank with one lock per window. A scheduling turn runs a core until it parks, ends
//!   or has executed [`sched::QUANTUM_OPS`] ops (a seeded length under `Random`).
//!
//! ## Not modelled
//!
//! Cache incoherence and pipe-level reordering (fences are checked only with
//! `SimConfig::check_fences`), the second vector sub-lane of `dual_aiv_dispatch` kernels
//! unless `SimConfig::dual_aiv` is set,
//! SPMD grids of InCore kernels, explicit TaskId dependencies (`deps=[...]`).

pub mod aggregate;
pub mod arena;
pub mod budget;
pub mod callback;
pub mod cellhist;
pub mod clock;
pub mod config;
pub mod cost;
pub mod credit;
pub mod divergence;
pub mod drive;
pub mod elem;
mod entry;
pub mod explore;
pub mod fnv;
pub mod host;
pub mod interp;
pub mod lazy;
pub mod limits;
pub mod micro;
pub mod pct;
pub mod report;
pub mod sched;
pub mod sem;
pub mod timeline;
pub mod trace;
pub mod value;
pub mod verify;
pub mod world;

#[doc(hidden)]
pub use inventory;
#[doc(hidden)]
pub use pld_ir;

pub use callback::{CallbackArg, CallbackError, CallbackParam, HostCall, HostCallbacks};
pub use config::{Schedule, SimConfig, DEFAULT_PROTOCOL_GRAIN};
pub use entry::{
    deadlock_report, run, run_distributed, OutputWrites, Persistent, RankShare, SimError, SimOutcome,
};
pub use host::{HostTensor, Inputs};
pub use report::{ParkedCore, Report, ReportKind};
pub use world::Stats;
