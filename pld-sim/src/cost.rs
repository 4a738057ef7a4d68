//! The cost model of modeled time: an alpha–beta charge per simulated operation.
//!
//! Guarantees: the cost of an operation is a pure function of what it did (bytes moved to or
//! from peers and locally, messages sent, notifies issued, waits polled) and of the
//! [`CostModel`]'s parameters — never of the host machine or of the interleaving — so a
//! protocol whose order the program fixes gets the same modeled times under every schedule.
//! Times are whole picoseconds (`u64`), so sums are exact and order-independent.
//!
//! The model (documented for users in README "Modeled time"):
//! - a remote access (TPUT/TGET chunk, remote load/store, remote atomic) costs
//!   `alpha_ns + bytes / link_gbps` on the issuing core — one message per access;
//! - a local access (tile load/store to the rank's own window or local memory) costs
//!   `bytes / hbm_gbps`;
//! - a notify costs `notify_ns` on the notifier; its signal lands `alpha_ns` later when the cell
//!   is a peer's (at once when it is the notifier's own);
//! - a wait costs `poll_ns` per poll; a wait that blocks ends when the notify that satisfied
//!   it lands (plus one poll);
//! - other ops (tile arithmetic, scalar statements) cost `op_ns`.
//!
//! Transfers do not share links (no contention): each transfer sees the full per-link bandwidth.

use std::fmt::Write as _;

/// Parameters of the model, in nanoseconds and GB/s (10^9 bytes per second).
#[derive(Clone, Debug, PartialEq)]
pub struct CostModel {
    /// Per-message latency of a remote access and of a remote notify's landing.
    pub alpha_ns: f64,
    /// Bandwidth of one inter-chip link (HCCS), per transfer.
    pub link_gbps: f64,
    /// Local memory (HBM/GM) bandwidth for tile loads and stores.
    pub hbm_gbps: f64,
    /// Cost of issuing one notify.
    pub notify_ns: f64,
    /// Cost of one wait poll.
    pub poll_ns: f64,
    /// Cost of any other op (tile arithmetic, scalar statements): one issue slot.
    pub op_ns: f64,
    /// Cost of one kernel launch by the chip orchestrator (from launch to the kernel's start).
    pub launch_ns: f64,
}

/// The parameter names `--cost KEY=VALUE` accepts, with their meaning.
pub const KEYS: [(&str, &str); 7] = [
    ("alpha_ns", "per-message latency of a remote access or notify (ns)"),
    ("link_gbps", "bandwidth of one inter-chip link, per transfer (GB/s)"),
    ("hbm_gbps", "local memory bandwidth for tile loads/stores (GB/s)"),
    ("notify_ns", "cost of issuing a notify (ns)"),
    ("poll_ns", "cost of one wait poll (ns)"),
    ("op_ns", "cost of any other op (ns)"),
    ("launch_ns", "cost of a kernel launch by the chip orchestrator (ns)"),
];

impl CostModel {
    /// The default parameters of a target profile (`a2a3` or `a5`; see D-timeline-1 in
    /// docs/decisions/time-traces-reports.md for the public figures they come from).
    pub fn for_target(target: &str) -> Option<CostModel> {
        match target {
            "a2a3" => Some(CostModel {
                alpha_ns: 1500.0,
                link_gbps: 56.0,
                hbm_gbps: 1600.0,
                notify_ns: 200.0,
                poll_ns: 100.0,
                op_ns: 10.0,
                launch_ns: 2000.0,
            }),
            "a5" => Some(CostModel {
                alpha_ns: 1000.0,
                link_gbps: 112.0,
                hbm_gbps: 4000.0,
                notify_ns: 150.0,
                poll_ns: 80.0,
                op_ns: 8.0,
                launch_ns: 1500.0,
            }),
            _ => None,
        }
    }

    /// Sets one parameter from `KEY=VALUE` (a finite, non-negative number; bandwidths > 0).
    pub fn set(&mut self, spec: &str) -> Result<(), String> {
        let (key, value) = spec.split_once('=').ok_or_else(|| format!("--cost `{spec}` is not KEY=VALUE"))?;
        let v: f64 = value
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("--cost {key}: `{value}` is not a finite non-negative number"))?;
        let slot = match key.trim() {
            "alpha_ns" => &mut self.alpha_ns,
            "link_gbps" => &mut self.link_gbps,
            "hbm_gbps" => &mut self.hbm_gbps,
            "notify_ns" => &mut self.notify_ns,
            "poll_ns" => &mut self.poll_ns,
            "op_ns" => &mut self.op_ns,
            "launch_ns" => &mut self.launch_ns,
            other => {
                let mut keys = String::new();
                for (k, _) in KEYS {
                    let _ = write!(keys, "{}{k}", if keys.is_empty() { "" } else { ", " });
                }
                return Err(format!("--cost: unknown parameter `{other}` (parameters: {keys})"));
            }
        };
        if key.ends_with("_gbps") && v == 0.0 {
            return Err(format!("--cost {key}: a bandwidth must be positive"));
        }
        *slot = v;
        Ok(())
    }

    /// Picoseconds of `ns` nanoseconds.
    fn ps(ns: f64) -> u64 {
        round_ps(ns * 1000.0)
    }

    /// Picoseconds `bytes` take at `gbps` GB/s (1 GB/s moves one byte per nanosecond).
    fn transfer_ps(bytes: u64, gbps: f64) -> u64 {
        if bytes == 0 {
            // What the formula gives for any rate (NaN and -0.0 convert to 0): most steps move
            // nothing on one of the two paths, and this runs once per simulated step.
            return 0;
        }
        round_ps((bytes as f64) * 1000.0 / gbps)
    }

    /// `n` times the picoseconds of `ns` (saturating); 0 for `n == 0` without the conversion.
    fn times_ps(ns: f64, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            Self::ps(ns).saturating_mul(n)
        }
    }

    /// Modeled duration of one step that did `m` (picoseconds).
    pub fn step_ps(&self, m: &StepWork) -> u64 {
        // Saturating: `--cost` accepts any finite value, and a picosecond count past `u64`
        // stays at `u64::MAX` instead of wrapping (or panicking).
        let mut t = Self::transfer_ps(m.local_bytes, self.hbm_gbps)
            .saturating_add(Self::transfer_ps(m.remote_bytes, self.link_gbps))
            .saturating_add(Self::times_ps(self.alpha_ns, m.remote_msgs))
            .saturating_add(Self::times_ps(self.notify_ns, m.notifies))
            .saturating_add(Self::times_ps(self.poll_ns, m.polls));
        if t == 0 && m.op {
            t = Self::ps(self.op_ns);
        }
        t
    }

    /// Picoseconds a remote notify takes to land.
    pub fn landing_ps(&self) -> u64 {
        Self::ps(self.alpha_ns)
    }

    /// Picoseconds of one poll.
    pub fn poll_ps(&self) -> u64 {
        Self::ps(self.poll_ns)
    }

    /// Picoseconds of one kernel launch.
    pub fn launch_ps(&self) -> u64 {
        Self::ps(self.launch_ns)
    }

    /// One line per parameter, for the run summary (`alpha_ns=1500 link_gbps=56 ...`).
    pub fn describe(&self) -> String {
        format!(
            "alpha_ns={} link_gbps={} hbm_gbps={} notify_ns={} poll_ns={} op_ns={} launch_ns={}",
            self.alpha_ns,
            self.link_gbps,
            self.hbm_gbps,
            self.notify_ns,
            self.poll_ns,
            self.op_ns,
            self.launch_ns
        )
    }
}

impl Default for CostModel {
    fn default() -> CostModel {
        CostModel::for_target("a2a3").unwrap_or(CostModel {
            alpha_ns: 0.0,
            link_gbps: 1.0,
            hbm_gbps: 1.0,
            notify_ns: 0.0,
            poll_ns: 0.0,
            op_ns: 0.0,
            launch_ns: 0.0,
        })
    }
}

/// `x.round() as u64` (half away from zero; negative and NaN give 0, past `u64::MAX` saturates)
/// without `f64::round`, which is a libm call on the baseline x86-64 target and ran up to three
/// times per simulated step: the truncation is one instruction and exact, and so is `x - t`.
#[inline]
fn round_ps(x: f64) -> u64 {
    let t = x as u64;
    if x - t as f64 >= 0.5 {
        t.saturating_add(1)
    } else {
        t
    }
}

/// What one interpreter step did, as the cost model charges it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepWork {
    /// Bytes moved to or from the rank's own window or local memory.
    pub local_bytes: u64,
    /// Bytes moved to or from peers' windows.
    pub remote_bytes: u64,
    /// Remote accesses (one message each).
    pub remote_msgs: u64,
    /// Notifies issued.
    pub notifies: u64,
    /// Wait polls (satisfied or not).
    pub polls: u64,
    /// Whether the step ran an op at all (charged `op_ns` when it moved nothing).
    pub op: bool,
}

/// The bus-bandwidth factor nccl-tests applies to a collective's algorithm bandwidth on `n`
/// ranks: allreduce `2(n-1)/n`, allgather / reduce_scatter / all_to_all `(n-1)/n`, broadcast
/// (and reduce) `1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BusFactor {
    /// `2(n-1)/n`.
    AllReduce,
    /// `(n-1)/n`.
    Gather,
    /// `1`.
    One,
}

impl BusFactor {
    /// The factor on `n` ranks.
    pub fn on(self, n: usize) -> f64 {
        let n = n.max(1) as f64;
        match self {
            BusFactor::AllReduce => 2.0 * (n - 1.0) / n,
            BusFactor::Gather => (n - 1.0) / n,
            BusFactor::One => 1.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_ps_rounds_as_f64_round_does() {
        let edges = [
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            -0.5,
            -3.7,
            1e15 + 0.5,
            (1u64 << 53) as f64 + 2.0,
            9.3e18,
            1.9e19,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
        ];
        // And a spread of values with fractional parts, by a fixed generator.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let spread = (0..10_000).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << (x % 40)) as f64
        });
        for v in edges.into_iter().chain(spread) {
            assert_eq!(round_ps(v), v.round() as u64, "{v:e}");
        }
    }

    #[test]
    fn a_transfer_costs_latency_plus_bytes_over_bandwidth() {
        let m = CostModel::for_target("a2a3").expect("profile");
        // 56 KiB over one 56 GB/s link: 1024 ns, plus 1500 ns latency.
        let w = StepWork { remote_bytes: 57_344, remote_msgs: 1, op: true, ..StepWork::default() };
        assert_eq!(m.step_ps(&w), 1_024_000 + 1_500_000);
        // A local 1.6 MB store at 1600 GB/s: 1 µs.
        let w = StepWork { local_bytes: 1_600_000, op: true, ..StepWork::default() };
        assert_eq!(m.step_ps(&w), 1_000_000);
        // A scalar op moves nothing: one issue slot.
        assert_eq!(m.step_ps(&StepWork { op: true, ..StepWork::default() }), 10_000);
    }

    #[test]
    fn overrides_are_checked() {
        let mut m = CostModel::default();
        m.set("link_gbps=100").expect("ok");
        assert_eq!(m.link_gbps, 100.0);
        assert!(m.set("link_gbps=0").unwrap_err().contains("positive"));
        assert!(m.set("speed=3").unwrap_err().contains("alpha_ns, link_gbps"));
        assert!(m.set("alpha_ns=-1").is_err());
        assert!(m.set("alpha_ns").is_err());
    }

    #[test]
    fn a_cost_past_u64_picoseconds_saturates_instead_of_overflowing() {
        // Regression: `--cost alpha_ns=1e30` panicked with an add overflow in the timeline.
        let mut m = CostModel::default();
        m.set("alpha_ns=1e30").expect("finite and non-negative");
        let w = StepWork { remote_bytes: 64, remote_msgs: 3, notifies: 2, op: true, ..StepWork::default() };
        assert_eq!(m.step_ps(&w), u64::MAX);
        m.set("link_gbps=1e-300").expect("positive");
        assert_eq!(m.step_ps(&w), u64::MAX);
    }

    #[test]
    fn bus_factors_follow_nccl_tests() {
        assert_eq!(BusFactor::AllReduce.on(4), 1.5);
        assert_eq!(BusFactor::Gather.on(4), 0.75);
        assert_eq!(BusFactor::One.on(8), 1.0);
    }
}
