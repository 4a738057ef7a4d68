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

use crate::timeline::{CollectiveRun, Recorder, ORCH_LANE};
use crate::value::Val;
use pld_ir::SourceMap;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The run record of collective `call` with `args` on one rank, its rank, occurrence and
/// times left for the scheduler to fill: the nccl-tests size is its largest tensor argument's
/// bytes, and its type and count are that tensor's.
pub fn collective_of(call: &pld_ir::Call, args: &[Val]) -> CollectiveRun {
    let name = call.callee.name().to_string();
    let (mut bytes, mut dtype) = (0u64, None);
    for a in args {
        a.for_each_tensor(&mut |t| {
            let n = t.shape.iter().product::<i64>().max(0) as u64 * t.dtype.bytes();
            if n > bytes || dtype.is_none() {
                bytes = bytes.max(n);
                dtype = Some(t.dtype);
            }
        });
    }
    let count = dtype.map_or(0, |d| bytes / d.bytes().max(1));
    let info = crate::sem::collective_bus::describe(call, dtype, count);
    let factor = crate::sem::collective_bus::bus_factor(&name);
    CollectiveRun { name, rank: 0, seq: 0, start: 0, end: 0, bytes, factor, info }
}

/// Most flows a merged trace draws.
pub const FLOW_LIMIT: usize = 50_000;

/// Microseconds of `ps` picoseconds (exact below 2^53 ps, about 104 days of modeled time).
fn us(ps: u64) -> f64 {
    ps as f64 / 1e6
}

/// One trace event (the Trace Event Format's fields pld uses).
#[derive(Serialize)]
struct Event<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cat: Option<&'static str>,
    ph: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    bp: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<usize>,
    pid: usize,
    tid: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    ts: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<Args<'a>>,
}

/// An event's args: an op slice's, or a small object of another event.
#[derive(Serialize)]
#[serde(untagged)]
enum Args<'a> {
    Slice(SliceArgs<'a>),
    Other(Value),
}

/// The whole trace document.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Trace<'a> {
    display_time_unit: &'static str,
    other_data: OtherData,
    trace_events: Vec<Event<'a>>,
}

/// `otherData`: the clock is modeled time under `model`.
#[derive(Serialize)]
struct OtherData {
    clock: &'static str,
    model: String,
}

impl<'a> Event<'a> {
    fn new(name: &'a str, ph: &'static str, pid: usize, tid: usize) -> Self {
        Event { name, cat: None, ph, bp: None, id: None, pid, tid, ts: None, dur: None, args: None }
    }

    fn meta(name: &'a str, pid: usize, tid: usize, args: Value) -> Self {
        Event { args: Some(Args::Other(args)), ..Event::new(name, "M", pid, tid) }
    }
}

/// The args of an op slice.
#[derive(Serialize)]
struct SliceArgs<'a> {
    op: &'a str,
    kernel: &'a str,
    bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    peer: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cell: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    loc: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ops: Option<u64>,
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
    let mut ev: Vec<Event<'_>> = Vec::new();
    let ranks: BTreeSet<usize> = slices.iter().map(|s| s.at.0).collect();
    for &r in &ranks {
        ev.push(Event::meta("process_name", r, 0, json!({ "name": format!("rank {r}") })));
        ev.push(Event::meta("process_sort_index", r, 0, json!({ "sort_index": r })));
    }
    let lanes: BTreeSet<(usize, usize)> = slices.iter().map(|s| s.at).collect();
    for &(r, c) in &lanes {
        ev.push(Event::meta("thread_name", r, c, json!({ "name": lane_name(c) })));
        let sort = if c == ORCH_LANE { cores } else { c };
        ev.push(Event::meta("thread_sort_index", r, c, json!({ "sort_index": sort })));
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
        let loc =
            (!s.span.is_dummy()).then(|| crate::report::span_text(s.span, sources)).filter(|l| !l.is_empty());
        let args = SliceArgs {
            op: &s.name,
            kernel: &s.kernel,
            bytes: s.bytes,
            peer: s.peer,
            cell: s.cell.as_deref(),
            loc,
            ops: (s.ops > 1).then_some(s.ops as u64),
        };
        let (ts, dur) = (Some(us(s.ts)), Some(us(s.dur)));
        let at = Event::new(&s.name, "X", s.at.0, s.at.1);
        ev.push(Event { cat: Some("op"), ts, dur, args: Some(Args::Slice(args)), ..at });
    }
    for (flow_id, &(a, b, write)) in pairs.iter().enumerate() {
        let (src, dst) = (&slices[a], &slices[b]);
        let kind = if write { "write → read" } else { "notify → wait" };
        let flow = |ph, bp, sl: &crate::timeline::Slice| Event {
            cat: Some("flow"),
            bp,
            id: Some(flow_id),
            ts: Some(us(sl.ts)),
            ..Event::new(kind, ph, sl.at.0, sl.at.1)
        };
        ev.push(flow("s", None, src));
        ev.push(flow("f", Some("e"), dst));
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
            let args = Some(Args::Other(json!({ "bytes": v.max(0) })));
            ev.push(Event { ts: Some(us(ts)), args, ..Event::new("remote bytes in flight", "C", r, 0) });
        }
    }
    let trace = Trace {
        display_time_unit: "ns",
        other_data: OtherData { clock: "modeled", model: rec.cost.describe() },
        trace_events: ev,
    };
    // Strings, integers and finite numbers always serialize.
    let mut out = serde_json::to_string(&trace).unwrap_or_default();
    out.push('\n');
    out
}
