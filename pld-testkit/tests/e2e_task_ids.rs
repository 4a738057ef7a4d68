//! Deferred completion with explicit task ids, after the pass pipeline (the level `pld run`
//! runs): `examples/deferred_completion.py` on 2, 3, 4 and 8 ranks under several schedules
//! against its golden; and the two protocol bugs it guards against, each ending in a deadlock
//! report — blocking waiters that saturate the cores, and a missing `pl.manual_scope()` (the
//! automatic overlap edges then order the publisher behind the consumers).

use pld_ir::{DataType, Program};
use pld_sim::{Inputs, ReportKind, Schedule, SimConfig, SimError};
use pld_testkit::e2e::{inputs, lower, parse, stack, unstack};

const WAITERS: usize = 8;
const WIDTH: usize = 8;

fn source() -> String {
    std::fs::read_to_string(format!("{}/../examples/deferred_completion.py", env!("CARGO_MANIFEST_DIR")))
        .expect("example")
}

fn lowered(text: &str) -> Program {
    lower(&parse(text)).unwrap_or_else(|d| {
        panic!("pipeline failed:\n{}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>().join("\n"))
    })
}

/// Rank r's input row: r*100 + lane.
fn rows(p: usize) -> (Inputs, Vec<Vec<f64>>) {
    let per: Vec<Vec<f64>> = (0..p).map(|r| (0..WIDTH).map(|l| (r * 100 + l) as f64).collect()).collect();
    (inputs(vec![("inputs", stack(DataType::INT32, &per, &[1, WIDTH]))]), per)
}

fn config(p: usize, cores: usize, schedule: Schedule) -> SimConfig {
    SimConfig { cores_per_rank: cores, schedule, ..SimConfig::ranks(p) }
}

#[test]
fn every_consumer_reads_the_previous_ranks_payload() {
    let prog = lowered(&source());
    for p in [2, 3, 4, 8] {
        let (ins, per) = rows(p);
        for schedule in [Schedule::Deterministic, Schedule::Random(3), Schedule::Random(11)] {
            // Fewer cores than waiters: only deferred completion lets the publisher run.
            let out = pld_sim::run(&prog, "host_orch", &ins, &config(p, 4, schedule))
                .unwrap_or_else(|e| panic!("P={p} {schedule:?}: {e}"));
            let got = unstack(&out.outputs["outputs"]);
            for (r, rank_out) in got.iter().enumerate() {
                let want = &per[(r + p - 1) % p];
                for slot in 0..WAITERS {
                    assert_eq!(
                        &rank_out[slot * WIDTH..(slot + 1) * WIDTH],
                        &want[..],
                        "P={p} rank {r} slot {slot}"
                    );
                }
            }
        }
    }
}

fn deadlock(prog: &Program, p: usize, cores: usize) -> Vec<pld_sim::ParkedCore> {
    let (ins, _) = rows(p);
    match pld_sim::run(prog, "host_orch", &ins, &config(p, cores, Schedule::Deterministic)) {
        Err(SimError::Fault(r)) => match r.kind {
            ReportKind::Deadlock(parked) => parked,
            _ => panic!("expected a deadlock, got {r}"),
        },
        other => panic!("expected a deadlock, got {:?}", other.map(|o| o.stats.steps)),
    }
}

#[test]
fn blocking_waiters_saturate_the_cores() {
    let prog = lowered(&source().replace(
        "pld.system.defer_wait(signal=signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)",
        "pld.system.wait(signal=signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)",
    ));
    let parked = deadlock(&prog, 2, 4);
    assert_eq!(parked.len(), 8, "4 cores on each of 2 ranks: {parked:?}");
    assert!(parked.iter().all(|p| p.cell.starts_with("signal") && p.predicate == ">= 1"), "{parked:?}");
    // With a core per waiter and one for the publisher the same program completes.
    let (ins, _) = rows(2);
    pld_sim::run(&prog, "host_orch", &ins, &config(2, WAITERS + 1, Schedule::Deterministic)).unwrap();
}

#[test]
fn without_the_manual_scope_the_publisher_waits_for_its_consumers() {
    let text = source().replace("        with pl.manual_scope():\n", "        if True:\n");
    assert_ne!(text, source());
    let prog = lowered(&text);
    let parked = deadlock(&prog, 2, 48);
    // Every rank's waiters are deferred on their signal; nothing will notify it.
    assert_eq!(parked.len(), 2 * WAITERS, "{parked:?}");
    assert!(parked.iter().all(|p| p.predicate == "unsigned >= 1"), "{parked:?}");
}

#[test]
fn without_the_dependency_edge_a_consumer_races_the_publisher() {
    let prog = lowered(&source().replace(", deps=[wait_tid]", ""));
    let (ins, _) = rows(2);
    // The consumer's read of the window and the peer's remote_store are unordered.
    match pld_sim::run(&prog, "host_orch", &ins, &config(2, 48, Schedule::Deterministic)) {
        Err(SimError::Fault(r)) => assert!(matches!(r.kind, ReportKind::Race), "{r}"),
        Ok(o) => panic!("accepted an unordered read: {:?}", unstack(&o.outputs["outputs"])),
        Err(e) => panic!("{e}"),
    }
}
