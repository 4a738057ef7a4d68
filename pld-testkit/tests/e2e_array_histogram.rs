//! On-core arrays end to end, in the style of ep_dispatch's `dispatch_step`: a scalar
//! histogram of an index tensor into a `pl.array`, an exclusive prefix sum into a second
//! array, and a per-bucket cursor array assigning every route its slot; the counts and slots
//! are written out with `pl.write`. Run on the simulator as parsed and after the pass
//! pipeline, on two ranks with different indices, against a golden computed here. A routed
//! index outside the array is a runtime fault at the subscript, not a panic.

use pld_ir::{DataType, Program};
use pld_sim::{Schedule, SimError};
use pld_testkit::e2e::{inputs, lower, parse, run, run_ok, stack, unstack};

const E: usize = 5;
const T: usize = 7;
const K: usize = 3;
const RANKS: usize = 2;

const PROGRAM: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

E = 5
T = 7
K = 3

@pl.program
class Histogram:
    @pl.function(type=pl.FunctionType.InCore)
    def dispatch_step(self, idx: pl.Tensor[[T, K], pl.INT32],
                      counts_out: pl.Out[pl.Tensor[[E, 1], pl.INT32]],
                      slots_out: pl.Out[pl.Tensor[[T, K], pl.INT32]]):
        counts = pl.array.create(E, pl.INT32)
        for e in pl.range(E):
            counts[e] = 0
        for t in pl.range(T):
            for k in pl.range(K):
                eid = pl.read(idx, [t, k])
                cur = counts[eid]
                counts[eid] = cur + 1
        start = pl.array.create(E, pl.INT32)
        acc = pl.const(0, pl.INT32)
        for e in pl.range(E):
            start[e] = acc
            acc = acc + counts[e]
        cursor = pl.array.create(E, pl.INT32)
        for t in pl.range(T):
            for k in pl.range(K):
                bucket = pl.read(idx, [t, k])
                c = cursor[bucket]
                if c > 0:
                    pl.write(slots_out, [t, k], start[bucket] + c)
                else:
                    pl.write(slots_out, [t, k], start[bucket])
                cursor[bucket] = c + 1
        for e in pl.range(E):
            pl.write(counts_out, [e, 0], counts[e])

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, idx: pl.Tensor[[T, K], pl.INT32],
             counts_out: pl.Out[pl.Tensor[[E, 1], pl.INT32]],
             slots_out: pl.Out[pl.Tensor[[T, K], pl.INT32]]):
        self.dispatch_step(idx, counts_out, slots_out)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, idx: pl.Tensor[[2, T, K], pl.INT32],
             counts_out: pl.Out[pl.Tensor[[2, E, 1], pl.INT32]],
             slots_out: pl.Out[pl.Tensor[[2, T, K], pl.INT32]]):
        for r in pl.range(pld.world_size()):
            self.chip(idx[r], counts_out[r], slots_out[r], device=r)
"#;

/// Deterministic routing indices in `[0, E)`, different per rank.
fn routes(rank: usize) -> Vec<usize> {
    let mut s = 0x9E37_79B9u64 ^ (rank as u64 * 0x85EB_CA6B);
    (0..T * K)
        .map(|_| {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            ((s >> 33) % E as u64) as usize
        })
        .collect()
}

/// Golden counts and slots: the slot of a route is its bucket's start plus the number of
/// earlier routes (row-major) in the same bucket.
fn golden(idx: &[usize]) -> (Vec<f64>, Vec<f64>) {
    let mut counts = [0usize; E];
    idx.iter().for_each(|&b| counts[b] += 1);
    let start: Vec<usize> = (0..E).map(|b| counts[..b].iter().sum()).collect();
    let mut cursor = [0usize; E];
    let slots = idx
        .iter()
        .map(|&b| {
            cursor[b] += 1;
            (start[b] + cursor[b] - 1) as f64
        })
        .collect();
    (counts.iter().map(|&c| c as f64).collect(), slots)
}

fn histogram_inputs(idx: &[Vec<usize>]) -> pld_sim::Inputs {
    let per_rank: Vec<Vec<f64>> = idx.iter().map(|r| r.iter().map(|&b| b as f64).collect()).collect();
    inputs(vec![
        ("idx", stack(DataType::INT32, &per_rank, &[T, K])),
        ("counts_out", pld_sim::HostTensor::zeros(DataType::INT32, vec![RANKS, E, 1])),
        ("slots_out", pld_sim::HostTensor::zeros(DataType::INT32, vec![RANKS, T, K])),
    ])
}

fn check(prog: &Program, what: &str) {
    let idx: Vec<Vec<usize>> = (0..RANKS).map(routes).collect();
    let out = run_ok(prog, "host", RANKS, &histogram_inputs(&idx), Schedule::Deterministic, what);
    let counts = unstack(&out.outputs["counts_out"]);
    let slots = unstack(&out.outputs["slots_out"]);
    for (r, routes) in idx.iter().enumerate() {
        let (want_counts, want_slots) = golden(routes);
        assert_eq!(want_counts.iter().sum::<f64>(), (T * K) as f64);
        assert_eq!(counts[r], want_counts, "{what}: counts of rank {r}");
        assert_eq!(slots[r], want_slots, "{what}: slots of rank {r}");
    }
}

#[test]
fn histogram_matches_the_golden_as_parsed_and_lowered() {
    let prog = parse(PROGRAM);
    check(&prog, "as parsed");
    let lowered = match lower(&prog) {
        Ok(p) => p,
        Err(d) => {
            panic!("pipeline failed: {}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>().join("\n"))
        }
    };
    check(&lowered, "lowered");
}

#[test]
fn an_index_outside_the_array_is_a_fault_at_the_subscript() {
    let prog = parse(PROGRAM);
    let mut idx: Vec<Vec<usize>> = (0..RANKS).map(routes).collect();
    idx[1][4] = E; // one route of rank 1 names a bucket past the end
    match run(&prog, "host", RANKS, &histogram_inputs(&idx), Schedule::Deterministic) {
        Ok(_) => panic!("an out-of-range array index must fault"),
        Err(SimError::Fault(r)) => {
            assert!(
                r.text.contains("array.get_element: index 5 is out of range for an array of extent 5"),
                "{r}"
            );
            // The report points at `counts[eid]`, the first read with the bad index.
            let lo = PROGRAM.find("counts[eid]").expect("subscript in the program");
            assert!(r.text.contains(&format!("bytes {lo}..")), "span of the subscript: {r}");
        }
        Err(e) => panic!("expected a runtime fault, got {e}"),
    }
}
