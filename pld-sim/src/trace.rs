//! The Perfetto / chrome://tracing JSON of a run, in modeled time.
//!
//! Guarantees: one process per rank (`pid` = global rank), one thread per simulated core the
//! rank used (`tid` = core number, `0..cores_per_rank`; the chip orchestrator is its own
//! thread); every slice is a complete event (`ph: "X"`) with `ts`/`dur` in microseconds of
//! modeled time and args `op`, `kernel`, `bytes`, `peer`, `cell`, `loc` (file:line:col) and
//! `ops` (how many ops an aggregated slice holds); a wait that stalled is its own slice
//! `wait (blocked)` from its first poll to its release; each released wait gets exactly one
//! flow (`ph: "s"` at the notify's slice, `ph: "f"`, `bp: "e"` at the wait's) and each remote
//! write one flow to the first read that touched its bytes; a counter track (`ph: "C"`)
//! per rank gives the remote bytes in flight. Same run, same bytes: the output is a function
//! of the recorded slices only.

use crate::cost::BusFactor;
use crate::timeline::{Recorder, ORCH_LANE};
use crate::value::Val;
use pld_ir::quote::json_string as esc;
use pld_ir::SourceMap;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

/// (op name, nccl-tests size in bytes, bus factor) of a collective call with `args`: the size
/// is its largest tensor argument's bytes.
pub fn collective_of(name: &str, args: &[Val]) -> (String, u64, Option<BusFactor>) {
    let mut bytes = 0u64;
    for a in args {
        a.for_each_tensor(&mut |t| {
            let n: i64 = t.shape.iter().product();
            bytes = bytes.max(n.max(0) as u64 * t.dtype.bytes());
        });
    }
    (name.to_string(), bytes, crate::sem::collective_bus::bus_factor(name))
}

/// Most flows a merged trace draws.
pub const FLOW_LIMIT: usize = 50_000;

/// Microseconds of `ps` picoseconds, exactly (6 decimals).
fn us(ps: u64) -> String {
    format!("{}.{:06}", ps / 1_000_000, ps % 1_000_000)
}

fn lane_name(core: usize) -> String {
    if core == ORCH_LANE {
        "chip orchestrator".to_string()
    } else {
        format!("core {core}")
    }
}

/// The trace JSON of a run's recorded slices (`cores` = cores per rank, named in metadata).
pub fn chrome_trace(rec: &Recorder, cores: usize, sources: Option<&SourceMap>) -> String {
    let slices = &rec.slices.list;
    let merged = rec.slices.window > 0;
    let mut ev: Vec<String> = Vec::new();
    let ranks: BTreeSet<usize> = slices.iter().map(|s| s.at.0).collect();
    for &r in &ranks {
        ev.push(format!(
            "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{r},\"tid\":0,\"args\":{{\"name\":\"rank {r}\"}}}}"
        ));
        ev.push(format!(
            "{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{r},\"tid\":0,\"args\":{{\"sort_index\":{r}}}}}"
        ));
    }
    let lanes: BTreeSet<(usize, usize)> = slices.iter().map(|s| s.at).collect();
    for &(r, c) in &lanes {
        let name = lane_name(c);
        ev.push(format!(
            "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{r},\"tid\":{c},\"args\":{{\"name\":\"{name}\"}}}}"
        ));
        ev.push(format!(
            "{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":{r},\"tid\":{c},\"args\":{{\"sort_index\":{}}}}}",
            if c == ORCH_LANE { cores } else { c }
        ));
    }
    // Flow sources: the slice holding each released stamp or remote write.
    let mut source: HashMap<u64, usize> = HashMap::new();
    for (k, s) in slices.iter().enumerate() {
        for &id in &s.flows_out {
            source.insert(id, k);
        }
    }
    // (source slice, target slice) of every flow; a merged trace draws one per pair, at most
    // FLOW_LIMIT of them (evenly sampled).
    let mut pairs: Vec<(usize, usize, bool)> = Vec::new();
    for (k, s) in slices.iter().enumerate() {
        for id in &s.flows_in {
            if let Some(&src) = source.get(id) {
                pairs.push((src, k, crate::timeline::is_write_flow(*id)));
            }
        }
    }
    if merged {
        let mut seen = BTreeSet::new();
        pairs.retain(|p| seen.insert(*p));
        if pairs.len() > FLOW_LIMIT {
            let step = pairs.len().div_ceil(FLOW_LIMIT);
            pairs = pairs.into_iter().step_by(step).collect();
        }
    }
    for s in slices {
        let loc = if s.span.is_dummy() { String::new() } else { crate::report::span_text(s.span, sources) };
        let mut args = format!("\"op\":{},\"kernel\":{},\"bytes\":{}", esc(&s.name), esc(&s.kernel), s.bytes);
        if let Some(p) = s.peer {
            let _ = write!(args, ",\"peer\":{p}");
        }
        if let Some(c) = &s.cell {
            let _ = write!(args, ",\"cell\":{}", esc(c));
        }
        if !loc.is_empty() {
            let _ = write!(args, ",\"loc\":{}", esc(&loc));
        }
        if s.ops > 1 {
            let _ = write!(args, ",\"ops\":{}", s.ops);
        }
        ev.push(format!(
            "{{\"name\":{},\"cat\":\"op\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{{args}}}}}",
            esc(&s.name),
            s.at.0,
            s.at.1,
            us(s.ts),
            us(s.dur)
        ));
    }
    for (flow_id, &(a, b, write)) in pairs.iter().enumerate() {
        let (src, dst) = (&slices[a], &slices[b]);
        let kind = if write { "write → read" } else { "notify → wait" };
        ev.push(format!(
            "{{\"name\":\"{kind}\",\"cat\":\"flow\",\"ph\":\"s\",\"id\":{flow_id},\"pid\":{},\"tid\":{},\"ts\":{}}}",
            src.at.0,
            src.at.1,
            us(src.ts)
        ));
        ev.push(format!(
            "{{\"name\":\"{kind}\",\"cat\":\"flow\",\"ph\":\"f\",\"bp\":\"e\",\"id\":{flow_id},\"pid\":{},\"tid\":{},\"ts\":{}}}",
            dst.at.0,
            dst.at.1,
            us(dst.ts)
        ));
    }
    // Remote bytes in flight per rank: a slice adds its (time-weighted mean) remote bytes in
    // flight at its start and takes them off at its end.
    let mut deltas: BTreeMap<usize, BTreeMap<u64, i64>> = BTreeMap::new();
    for s in slices.iter().filter(|s| s.remote > 0 && s.dur > 0) {
        let v = (s.inflight_area / s.dur as f64).round() as i64;
        let d = deltas.entry(s.at.0).or_default();
        *d.entry(s.ts).or_insert(0) += v;
        *d.entry(s.ts + s.dur).or_insert(0) -= v;
    }
    for (r, d) in deltas {
        let mut v = 0i64;
        for (ts, delta) in d {
            v += delta;
            ev.push(format!(
                "{{\"name\":\"remote bytes in flight\",\"ph\":\"C\",\"pid\":{r},\"tid\":0,\"ts\":{},\"args\":{{\"bytes\":{}}}}}",
                us(ts),
                v.max(0)
            ));
        }
    }
    format!(
        "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"clock\":\"modeled\",\"model\":{}}},\"traceEvents\":[\n{}\n]}}\n",
        esc(&rec.cost.describe()),
        ev.join(",\n")
    )
}
