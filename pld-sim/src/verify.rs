//! Schedule exploration (`pld verify`): one program, one input, many interleavings.
//!
//! Guarantees: [`verify`] runs the deterministic schedule, then `n` PCT schedules (seeds 1..=n,
//! [`crate::pct`]) on the same inputs, and fails on the first schedule that faults, or whose
//! outputs (byte for byte) or traffic (remote and local bytes per rank and op, notifies and
//! waits per rank) differ from the deterministic run's — naming both schedules and, for
//! outputs, the first differing tensor, byte and values. Outputs that depend on the schedule
//! are a protocol bug even when no check fires.

use crate::{run, HostTensor, Inputs, Report, Schedule, SimConfig, SimError, SimOutcome};
use pld_ir::Program;

/// Why a verification failed.
#[derive(Debug)]
pub enum VerifyFailure {
    /// A schedule faulted.
    Fault {
        /// The schedule (`det`, `pct:SEED`).
        schedule: String,
        /// Its report.
        report: Report,
    },
    /// Two schedules disagree.
    Differ {
        /// The reference schedule.
        first: String,
        /// The schedule that disagrees.
        second: String,
        /// What differs (tensor, byte, values; or the traffic entry).
        what: String,
    },
    /// The run could not start.
    Invalid(SimError),
}

impl std::fmt::Display for VerifyFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VerifyFailure::Fault { schedule, report } => {
                writeln!(f, "{report}  = under schedule {schedule} (replay: pld run --schedule {schedule})")
            }
            VerifyFailure::Differ { first, second, what } => write!(
                f,
                "error: schedule-dependent result: schedules {first} and {second} disagree: {what}\n  = replay each with pld run --schedule {first} / --schedule {second}\n  = a correct protocol gives the same bytes under every interleaving\n"
            ),
            VerifyFailure::Invalid(e) => write!(f, "{e}"),
        }
    }
}

/// The name of a schedule as `pld run --schedule` takes it.
pub fn schedule_name(s: Schedule) -> String {
    match s {
        Schedule::Deterministic => "det".into(),
        Schedule::Random(x) => format!("random:{x}"),
        Schedule::Parallel => "parallel".into(),
        Schedule::Pct(x) => format!("pct:{x}"),
    }
}

/// Runs `entry` under the deterministic schedule and `n` PCT schedules (`cfg.schedule` is
/// ignored), counting each finished one in `cfg.progress`'s executions; returns the
/// deterministic outcome and the number of schedules run.
pub fn verify(
    program: &Program,
    entry: &str,
    inputs: &Inputs,
    cfg: &SimConfig,
    n: usize,
) -> Result<(SimOutcome, usize), VerifyFailure> {
    let one = |s: Schedule| -> Result<SimOutcome, VerifyFailure> {
        let c = SimConfig { schedule: s, trace: false, ..cfg.clone() };
        match run(program, entry, inputs, &c) {
            Ok(o) => Ok(o),
            Err(SimError::Fault(report)) => Err(VerifyFailure::Fault { schedule: schedule_name(s), report }),
            Err(e) => Err(VerifyFailure::Invalid(e)),
        }
    };
    let done = || {
        if let Some(p) = &cfg.progress {
            p.executions.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    };
    let base = one(Schedule::Deterministic)?;
    done();
    for seed in 1..=n as u64 {
        let s = Schedule::Pct(seed);
        let o = one(s)?;
        done();
        if let Some(what) = difference(&base, &o) {
            return Err(VerifyFailure::Differ { first: "det".into(), second: schedule_name(s), what });
        }
    }
    Ok((base, n + 1))
}

/// The first difference between two outcomes' outputs or traffic.
pub fn difference(a: &SimOutcome, b: &SimOutcome) -> Option<String> {
    let mut names: Vec<&String> = a.outputs.keys().collect();
    names.sort();
    for name in names {
        let (x, y) = (&a.outputs[name], b.outputs.get(name)?);
        if let Some(d) = first_byte(x, y) {
            return Some(format!("output '{name}' {d}"));
        }
    }
    let (s, t) = (&a.stats, &b.stats);
    for (label, m, n) in
        [("remote", &s.remote_bytes, &t.remote_bytes), ("local", &s.local_bytes, &t.local_bytes)]
    {
        if m != n {
            let k = m.iter().find(|(k, v)| n.get(*k) != Some(*v)).map(|(k, _)| k.clone());
            let k = k.or_else(|| n.keys().find(|k| !m.contains_key(*k)).cloned());
            return Some(match k {
                Some((r, op)) => format!(
                    "{label} traffic of rank {r} for {op}: {} vs {} bytes",
                    m.get(&(r, op.clone())).copied().unwrap_or(0),
                    n.get(&(r, op.clone())).copied().unwrap_or(0)
                ),
                None => format!("{label} traffic differs"),
            });
        }
    }
    for (label, m, n) in [("notifies", &s.notifies, &t.notifies), ("waits", &s.waits, &t.waits)] {
        if let Some(r) = (0..m.len().max(n.len())).find(|&r| m.get(r) != n.get(r)) {
            return Some(format!("{label} of rank {r}: {:?} vs {:?}", m.get(r), n.get(r)));
        }
    }
    None
}

fn first_byte(x: &HostTensor, y: &HostTensor) -> Option<String> {
    if x.shape != y.shape || x.dtype != y.dtype {
        return Some(format!("is {} {:?} vs {} {:?}", x.dtype, x.shape, y.dtype, y.shape));
    }
    let i = x.data.iter().zip(&y.data).position(|(a, b)| a != b)?;
    let eb = (x.dtype.bytes() as usize).max(1);
    let e = i / eb;
    let (xv, yv) = (x.to_f64(), y.to_f64());
    Some(format!(
        "first differs at byte {i} (element {e}): {:?} vs {:?} ({:#04x} vs {:#04x})",
        xv.get(e).copied().unwrap_or(f64::NAN),
        yv.get(e).copied().unwrap_or(f64::NAN),
        x.data[i],
        y.data[i]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pld_ir::DataType;

    fn outcome(vals: &[f32]) -> SimOutcome {
        let mut outputs = std::collections::HashMap::new();
        outputs.insert("out".to_string(), HostTensor::from_f32(vec![vals.len()], vals));
        SimOutcome {
            outputs,
            stats: crate::Stats::default(),
            trace: None,
            warnings: Vec::new(),
            timing: Default::default(),
        }
    }

    #[test]
    fn the_first_differing_output_byte_is_named_with_both_values() {
        let a = outcome(&[1.0, 2.0, 3.0]);
        assert_eq!(difference(&a, &outcome(&[1.0, 2.0, 3.0])), None);
        let d = difference(&a, &outcome(&[1.0, 2.5, 3.0])).expect("differs");
        assert!(d.starts_with("output 'out' first differs at byte 6 (element 1): 2.0 vs 2.5"), "{d}");
        let mut b = outcome(&[1.0, 2.0, 3.0]);
        b.stats.remote_bytes.insert((1, "pld.tile.remote_load".into()), 64);
        let d = difference(&a, &b).expect("traffic differs");
        assert_eq!(d, "remote traffic of rank 1 for pld.tile.remote_load: 0 vs 64 bytes");
        let c = SimOutcome {
            outputs: [("out".to_string(), HostTensor::zeros(DataType::INT32, vec![3]))].into(),
            ..outcome(&[])
        };
        let d = difference(&a, &c).expect("dtype");
        assert_eq!(d, "output 'out' is fp32 [3] vs int32 [3]");
    }
}
