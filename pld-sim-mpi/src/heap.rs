//! The heap of an MPI engine process: a large block goes back to the system when it is freed,
//! so the process's resident memory follows the values it holds (docs/decisions/mpi.md D-mpi-8).
//!
//! Guarantees: after [`return_large_blocks`], every allocation of at least [`LARGE`] bytes is
//! its own mapping, unmapped when freed (glibc's `mallopt(M_MMAP_THRESHOLD)`, which also turns
//! off glibc's raising of that threshold as large blocks are freed); on other C libraries
//! nothing changes. Only where blocks come from changes, never what they hold.
#![allow(unsafe_code)]

/// Bytes from which an allocation is a mapping of its own (a tile or a row of a large run;
/// small values stay in the heap).
pub const LARGE: usize = 1 << 20;

/// Makes every later allocation of at least [`LARGE`] bytes a mapping of its own.
pub fn return_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` takes two integers and changes only the allocator's own settings
    // (under its lock); no pointer is involved.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, LARGE as libc::c_int);
    }
}
