//! The live counters `pld verify` and `pld verify --exhaustive` fill for their progress
//! lines: schedules finished, or executions and complete executions, equal to what the search
//! reports when it stops.

use pld_sim::budget::Progress;
use pld_sim::explore::{exhaustive, Limits, Verdict};
use pld_sim::{HostTensor, Inputs, SimConfig};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The hand-written mesh of p2p.rs, one barrier, `SIZE = 256`.
const MESH: &str = include_str!("programs/mesh_reduce.py");

/// The mesh, its inputs at `p` ranks, and a configuration that fills the returned counters.
fn mesh(p: usize) -> (pld_ir::Program, Inputs, SimConfig, Arc<Progress>) {
    let _ = pld_ops::registry();
    let prog = pld_frontend::parse_str(MESH).unwrap_or_else(|d| panic!("{:?}", d.iter().next()));
    let x: Vec<f32> = (0..p * 256).map(|i| i as f32).collect();
    let mut inp = Inputs::new();
    inp.insert("inputs".into(), HostTensor::from_f32(vec![p, 1, 256], &x));
    let counters = Arc::new(Progress::default());
    let cfg = SimConfig { progress: Some(Arc::clone(&counters)), ..SimConfig::ranks(p) };
    (prog, inp, cfg, counters)
}

#[test]
fn an_exploration_counts_its_executions_and_complete_ones_as_it_goes() {
    let (prog, inp, cfg, counters) = mesh(3);
    let limits = Limits { max_executions: Some(40), ..Limits::default() };
    let verdict = exhaustive(&prog, "host", &inp, &cfg, &limits).expect("explores");
    let (Verdict::Proved { tally, .. } | Verdict::Incomplete { tally, .. }) = verdict else {
        panic!("the mesh is correct: {verdict:?}")
    };
    assert!(tally.executions > 1 && tally.classes >= 1, "{tally:?}");
    assert_eq!(counters.executions.load(Ordering::Relaxed), tally.executions);
    assert_eq!(counters.classes.load(Ordering::Relaxed), tally.classes);
}

#[test]
fn verify_counts_each_schedule_it_finished() {
    let (prog, inp, cfg, counters) = mesh(2);
    let (_, ran) = pld_sim::verify::verify(&prog, "host", &inp, &cfg, 4).expect("the mesh is correct");
    assert_eq!(ran, 5, "det and 4 PCT schedules");
    assert_eq!(counters.executions.load(Ordering::Relaxed), 5);
}
