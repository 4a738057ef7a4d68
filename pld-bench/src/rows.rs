//! The simulator rows the bench times, in one place: the table's rows ([`table`]) and the
//! side-by-side rows of `cargo xtask bench --against` ([`against`]: the table's rows, plus the
//! parallel-schedule and race-checker-off runs of the 16 MiB P = 4 allreduces), each as the
//! `bench_table --sim` arguments that run it; and a digest of a run's outputs and traffic, so
//! two builds' (or two schedules') runs of a row can be checked byte-identical.
//!
//! Guarantees: [`SimRow::args`] is a command line every `bench_table` since the `--sim … race
//! RUNS` form accepts (older builds run it unchanged); [`digest`] depends only on the output
//! tensors (names, dtypes, shapes, bytes) and the per-rank remote and local traffic, never on
//! timing or on map iteration order.

use crate::coll::{Coll, Workload};
use pld_sim::{Schedule, SimOutcome};

/// The simulator table's rows: every collective at P = 2, 4, 8 with 4 KiB and 1 MiB, at P = 4
/// with 16 MiB, and (all but the slow mesh allreduce) 16 MiB at P = 8 and 64 MiB at P = 4.
pub fn table() -> Vec<Workload> {
    let mut rows = Vec::new();
    for coll in Coll::ALL {
        for p in [2usize, 4, 8] {
            for bytes in [4u64 << 10, 1 << 20] {
                rows.push(Workload::new(coll, p, bytes));
            }
        }
        rows.push(Workload::new(coll, 4, 16 << 20));
        if coll != Coll::MeshAllreduce {
            rows.push(Workload::new(coll, 8, 16 << 20));
            rows.push(Workload::new(coll, 4, 64 << 20));
        }
    }
    rows
}

/// The collectives whose 16 MiB P = 4 run the scheduler comparison and the race-checker cost
/// measure (and the yardstick is about).
pub const HEADLINE: [Coll; 2] = [Coll::MeshAllreduce, Coll::RingAllreduce];

/// One timed simulator run: a workload under a schedule, race checker on or off.
#[derive(Clone, Copy, Debug)]
pub struct SimRow {
    /// What runs.
    pub w: Workload,
    /// The schedule.
    pub schedule: Schedule,
    /// Race (and uninitialised-read) checking on, as the CLI runs.
    pub race: bool,
}

impl SimRow {
    /// `bench_table` arguments that time this row `runs` times in one process.
    pub fn args(&self, runs: usize) -> Vec<String> {
        let sched = if self.schedule == Schedule::Parallel { "parallel" } else { "det" };
        let mode = if self.race { "race" } else { "norace" };
        [
            "--sim",
            self.w.coll.name(),
            &self.w.p.to_string(),
            &self.w.bytes.to_string(),
            sched,
            &self.w.iters.to_string(),
            mode,
            &runs.to_string(),
        ]
        .map(str::to_string)
        .to_vec()
    }
}

/// The rows `cargo xtask bench --against` compares: [`table`]'s under the deterministic
/// schedule, then the [`HEADLINE`] 16 MiB P = 4 rows under the parallel schedule and with the
/// race checker off.
pub fn against() -> Vec<SimRow> {
    let det = |w| SimRow { w, schedule: Schedule::Deterministic, race: true };
    let mut rows: Vec<SimRow> = table().into_iter().map(det).collect();
    for coll in HEADLINE {
        let w = Workload::new(coll, 4, 16 << 20);
        rows.push(SimRow { schedule: Schedule::Parallel, ..det(w) });
        rows.push(SimRow { race: false, ..det(w) });
    }
    rows
}

/// FNV-1a over the outputs (sorted by name: dtype, shape, bytes) and the remote and local
/// traffic per (rank, op kind): equal digests mean byte-identical outputs and traffic (up to
/// a 64-bit collision).
pub fn digest(out: &SimOutcome) -> u64 {
    use std::hash::Hasher;
    let mut h = pld_sim::fnv::Fnv1a::default();
    let mut names: Vec<&String> = out.outputs.keys().collect();
    names.sort();
    for name in names {
        let t = &out.outputs[name];
        h.write(name.as_bytes());
        h.write(format!("{:?}{:?}", t.dtype, t.shape).as_bytes());
        h.write(&t.data);
    }
    for map in [&out.stats.remote_bytes, &out.stats.local_bytes] {
        for ((rank, kind), bytes) in map {
            h.write(&(*rank as u64).to_le_bytes());
            h.write(kind.as_bytes());
            h.write(&bytes.to_le_bytes());
        }
        h.write(b"|");
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    //! Row arguments and the digest's sensitivity.
    use super::*;

    #[test]
    fn rows_run_through_bench_tables_sim_form() {
        let rows = against();
        assert_eq!(rows.len(), table().len() + 4);
        let last = rows.last().expect("rows");
        assert_eq!(last.args(3).join(" "), "--sim allreduce_ring 4 16777216 det 1 norace 3");
    }

    #[test]
    fn the_digest_sees_one_output_byte_and_one_traffic_byte() {
        let t = pld_sim::HostTensor { dtype: pld_ir::DataType::FP32, shape: vec![2], data: vec![0; 8] };
        let mut out = SimOutcome {
            outputs: [("x".to_string(), t)].into_iter().collect(),
            stats: Default::default(),
            trace: None,
            warnings: Vec::new(),
            timing: Default::default(),
        };
        let base = digest(&out);
        out.outputs.get_mut("x").expect("x").data[7] = 1;
        let changed = digest(&out);
        assert_ne!(base, changed);
        out.stats.local_bytes.insert((0, "k".into()), 1);
        assert_ne!(changed, digest(&out));
    }
}
