//! The host-rows workload of `cargo xtask bench --mpi`: a program written as users write one,
//! whose host tensors are indexed by rank — `examples/quickstart_allreduce.py`, where the host
//! hands `inputs[r]` and `outputs[r]` (`[NR, 1, SIZE]` host tensors) to `device=r` — at a
//! given row size.
//!
//! Guarantees: [`HostRows::text`] is that example with only its `SIZE` changed; its input is the
//! seeded source `pld run` uses for an input not given (`pld_sim::lazy::Seeded`), handed to the
//! simulator as a lazy input ([`HostRows::config`]), so a distributed process reads only the
//! rows its rank touches; [`HostRows::must_hold`] counts the bytes the whole run holds (host
//! input and output, every rank's windows).

use pld_ir::DataType;
use pld_sim::lazy::{LazyInput, Seeded};
use pld_sim::{Schedule, SimConfig};
use std::sync::Arc;

/// The example this workload runs.
const EXAMPLE: &str = include_str!("../../examples/quickstart_allreduce.py");

/// The host-rows workload at `p` ranks, `bytes` of FP32 per rank's row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostRows {
    /// Rank count.
    pub p: usize,
    /// Bytes of one rank's row (rounded down to whole FP32 elements).
    pub bytes: u64,
}

impl HostRows {
    /// Its name in the tables.
    pub const NAME: &'static str = "host_rows";

    /// The program's host function.
    pub const ENTRY: &'static str = "host_orch";

    /// FP32 elements per row.
    pub fn size(&self) -> usize {
        (self.bytes / 4).max(1) as usize
    }

    /// Bytes of one row.
    pub fn payload(&self) -> u64 {
        self.size() as u64 * 4
    }

    /// The program text, or why the example no longer has the `SIZE = 256` line it changes.
    pub fn text(&self) -> Result<String, String> {
        let line = "\nSIZE = 256\n";
        if EXAMPLE.matches(line).count() != 1 {
            return Err("examples/quickstart_allreduce.py no longer has one `SIZE = 256` line".into());
        }
        Ok(EXAMPLE.replace(line, &format!("\nSIZE = {}\n", self.size())))
    }

    /// The configuration: `p` ranks, the input as a lazy seeded source (as `pld run --seed 0`
    /// makes it), the output left for the simulator to zero.
    pub fn config(&self, schedule: Schedule) -> SimConfig {
        let input = LazyInput {
            dtype: DataType::FP32,
            shape: vec![self.p, 1, self.size()],
            source: Arc::new(Seeded { dtype: DataType::FP32, state: 0 }),
        };
        let mut cfg = SimConfig { schedule, max_steps: u64::MAX / 2, ..SimConfig::ranks(self.p) };
        cfg.lazy_inputs.insert("inputs".to_string(), input);
        cfg
    }

    /// Bytes the whole run holds: the `[P, 1, SIZE]` input and output, and per rank its data
    /// window (one row) and its `[NR, 1]` INT32 signal.
    pub fn must_hold(&self) -> u64 {
        let (p, row) = (self.p as u64, self.payload());
        2 * p * row + p * (row + 4 * p)
    }
}
