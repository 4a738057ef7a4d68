//! # pld-sim-mpi — the MPI engine of the pld simulator
//!
//! `mpirun -n P pld run FILE --engine mpi --ranks P` runs one MPI process per simulated rank:
//! every process interprets the same program (the host orchestrator replicated), executes
//! only its own rank's device work, and keeps its rank's comm-domain windows and signal cells
//! in MPI-3 RMA windows that the other ranks reach with one-sided operations (see
//! docs/decisions/mpi.md).
//!
//! Guarantees: without the `mpi` feature this crate needs no MPI and holds only [`wire`], the
//! MPI-free format of what ranks send rank 0 at the end; with it, `engine` runs a process,
//! and `rma` (a checked wrapper of the MPI window calls) and `heap` (one allocator setting)
//! hold the engine's only `unsafe` code.

#[cfg(feature = "mpi")]
pub mod engine;
#[cfg(feature = "mpi")]
pub mod heap;
#[cfg(feature = "mpi")]
pub mod rma;
pub mod wire;
