//! The nccl-tests results table of `pld run`: one aligned row per collective call.
//!
//! Guarantees: the columns are nccl-tests' — size (bytes), count (elements), type, redop,
//! root, time, algbw, busbw, `#wrong` — after the collective's name and the algorithm that
//! ran (`mesh`, `ring`); a collective without a reduction shows redop `none`, one without a
//! root shows root `-1`, one without a bus factor busbw `N/A`, as nccl-tests does. `#wrong` is
//! the number of wrong elements over the run's checked outputs (`--expect`, `--check-golden`;
//! D-eco-5) and `N/A` when nothing was checked. Every column has a fixed width, so rows
//! printed one run at a time (`--sweep`) line up under one header.

use pld_sim::timeline::CollectiveTime;

/// The header line.
pub fn header() -> String {
    format!(
        "  {:<16} {:>12} {:>10} {:>8} {:>6} {:>5} {:>9} {:>11} {:>8} {:>8} {:>7}",
        "#collective",
        "size(B)",
        "count",
        "type",
        "redop",
        "root",
        "algorithm",
        "time(us)",
        "algbw",
        "busbw",
        "#wrong"
    )
}

/// The unit line under the header.
pub fn units() -> String {
    format!("  {:<16} {:>76} {:>8}", "#", "(GB/s)", "(GB/s)")
}

/// The collective's short name: its op name's last segment (`builtin.tensor.allreduce` →
/// `allreduce`).
pub fn short_name(op: &str) -> &str {
    op.rsplit('.').next().unwrap_or(op)
}

/// One row: call `c`, `wrong` wrong elements when the run's outputs were checked.
pub fn row(c: &CollectiveTime, wrong: Option<u64>) -> String {
    let i = &c.info;
    let dtype = i.dtype.map_or_else(|| "N/A".to_string(), |d| d.to_string());
    let count = if i.dtype.is_some() { i.count.to_string() } else { "N/A".to_string() };
    let busbw = c.busbw_gbps.map_or_else(|| "N/A".to_string(), |b| format!("{b:.2}"));
    format!(
        "  {:<16} {:>12} {:>10} {:>8} {:>6} {:>5} {:>9} {:>11.3} {:>8.2} {:>8} {:>7}",
        short_name(&c.name),
        c.bytes,
        count,
        dtype,
        i.redop.as_deref().unwrap_or("none"),
        i.root.unwrap_or(-1),
        i.algorithm.as_deref().unwrap_or("N/A"),
        c.time_ps as f64 / 1e6,
        c.algbw_gbps,
        busbw,
        wrong.map_or_else(|| "N/A".to_string(), |w| w.to_string())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pld_sim::timeline::CallInfo;

    fn call(wrong: Option<u64>) -> String {
        let c = CollectiveTime {
            name: "builtin.tensor.allreduce_ring".into(),
            ranks: 4,
            bytes: 4096,
            time_ps: 2_500_000,
            algbw_gbps: 1.6384,
            busbw_gbps: Some(2.4576),
            info: CallInfo {
                dtype: Some(pld_ir::DataType::FP32),
                count: 1024,
                redop: Some("sum".into()),
                root: None,
                algorithm: Some("ring".into()),
            },
        };
        row(&c, wrong)
    }

    #[test]
    fn rows_line_up_under_the_header() {
        let (h, r) = (header(), call(Some(3)));
        assert_eq!(h.len(), r.len(), "{h}\n{r}");
        assert_eq!(units().len(), h.len() - 8);
        let cols: Vec<&str> = r.split_whitespace().collect();
        assert_eq!(
            cols,
            ["allreduce_ring", "4096", "1024", "fp32", "sum", "-1", "ring", "2.500", "1.64", "2.46", "3"]
        );
        // Every column ends where its header ends.
        let ends = |s: &str| -> Vec<usize> {
            s.char_indices()
                .filter(|&(i, ch)| {
                    ch != ' ' && s[i + ch.len_utf8()..].chars().next().is_none_or(|n| n == ' ')
                })
                .map(|(i, _)| i)
                .collect()
        };
        assert_eq!(ends(&h)[1..], ends(&r)[1..]);
    }

    #[test]
    fn unchecked_runs_show_na() {
        assert!(call(None).ends_with("    N/A"));
    }
}
