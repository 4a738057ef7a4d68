//! The `--report-json` document of `pld run`, written through `serde_json`.
//!
//! Guarantees: one JSON object per run with `ok`; a fault gives `ok: false` and the
//! simulator's report object; a success gives `ok: true`, `report: null`, the per-rank
//! modeled time (`modeled_ps`), one row per collective call (the results table's columns:
//! name, ranks, bytes, count, type, redop, root, algorithm, time, algbw, busbw, wrong) and
//! every output with its dtype, shape, sum and FNV-1a checksum — the same
//! numbers the text summary prints. A run that finished but whose output checks could not
//! run (a usage error, exit 2) writes the success document plus `check_error`.

use serde::Serialize;

/// The whole document.
#[derive(Default, Serialize)]
pub struct RunJson<'a> {
    /// Whether the run finished without a fault.
    pub ok: bool,
    /// The fault report, when there was one.
    pub report: Option<&'a serde_json::Value>,
    /// Each rank's modeled time (ps).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub modeled_ps: Vec<u64>,
    /// One row per collective call (on success).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collectives: Option<Vec<CollectiveJson<'a>>>,
    /// Every output (on success).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Vec<OutputJson<'a>>>,
    /// The usage error that stopped the output checks after the run finished (a golden that
    /// cannot run, an `--expect` that cannot be read); the run's rows are still written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check_error: Option<String>,
}

/// One collective call.
#[derive(Serialize)]
pub struct CollectiveJson<'a> {
    /// Op name.
    pub name: &'a str,
    /// Ranks that took part.
    pub ranks: usize,
    /// nccl-tests size (bytes).
    pub bytes: u64,
    /// Modeled time (ps).
    pub time_ps: u64,
    /// Algorithm bandwidth (GB/s).
    pub algbw_gbps: f64,
    /// Bus bandwidth (GB/s), when defined for the collective.
    pub busbw_gbps: Option<f64>,
    /// Elements of the sized buffer.
    pub count: u64,
    /// Its element type (`null` when unknown).
    #[serde(rename = "type")]
    pub dtype: Option<String>,
    /// The reduction (`null` for a collective without one).
    pub redop: Option<&'a str>,
    /// The root rank (`null` for a collective without one).
    pub root: Option<i64>,
    /// The algorithm that ran (`mesh`, `ring`).
    pub algorithm: Option<&'a str>,
    /// Wrong elements over the run's checked outputs (`null` when nothing was checked).
    pub wrong: Option<u64>,
    /// Under `--sweep`: the swept parameter's value this row ran at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sweep: Option<u64>,
}

/// One output tensor.
#[derive(Serialize)]
pub struct OutputJson<'a> {
    /// Output name (also the `.npy` file's stem).
    pub name: &'a str,
    /// Element type.
    pub dtype: String,
    /// Shape.
    pub shape: &'a [usize],
    /// Sum of the elements.
    pub sum: f64,
    /// FNV-1a 64 of the raw bytes, as 16 hex digits.
    pub fnv: String,
}

impl<'a> CollectiveJson<'a> {
    /// The row of one collective call (`wrong`: the run's `#wrong`, when checked).
    pub fn of(c: &'a pld_sim::timeline::CollectiveTime, wrong: Option<u64>) -> Self {
        CollectiveJson {
            name: &c.name,
            ranks: c.ranks,
            bytes: c.bytes,
            time_ps: c.time_ps,
            algbw_gbps: c.algbw_gbps,
            busbw_gbps: c.busbw_gbps,
            count: c.info.count,
            dtype: c.info.dtype.map(|d| d.to_string()),
            redop: c.info.redop.as_deref(),
            root: c.info.root,
            algorithm: c.info.algorithm.as_deref(),
            wrong,
            sweep: None,
        }
    }
}

impl RunJson<'_> {
    /// The document's text (one line).
    pub fn text(&self) -> String {
        // Strings, integers and finite numbers always serialize; a non-finite sum is `null`.
        let mut out = serde_json::to_string(self).unwrap_or_default();
        out.push('\n');
        out
    }
}
