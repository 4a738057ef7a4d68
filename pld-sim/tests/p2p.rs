//! Point-to-point programs written in the DSL, run on the simulator: results against
//! hand-computed goldens, and the fault reports of broken variants.

use pld_sim::{run, HostTensor, Inputs, ReportKind, Schedule, SimConfig, SimError};

fn parse(text: &str) -> pld_ir::Program {
    let _ = pld_ops::registry();
    match pld_frontend::parse_str(text) {
        Ok(p) => p,
        Err(d) => panic!("parse failed: {d:?}"),
    }
}

/// The hand-written mesh program (`SIZE = 256`), shared with reports.rs and timeline.rs.
const MESH: &str = include_str!("programs/mesh_reduce.py");

fn ramp_inputs(p: usize, n: usize) -> Inputs {
    let mut v = Vec::new();
    for r in 0..p {
        v.extend((0..n).map(|i| (100 * r + i) as f32));
    }
    let mut inputs = Inputs::new();
    inputs.insert("inputs".into(), HostTensor::from_f32(vec![p, 1, n], &v));
    inputs
}

#[test]
fn mesh_allreduce_hand_written() {
    let prog = parse(MESH);
    for p in [2usize, 3, 4, 8] {
        let out = run(&prog, "host", &ramp_inputs(p, 256), &SimConfig::ranks(p))
            .unwrap_or_else(|e| panic!("P={p}: {e}"));
        let o = out.outputs["outputs"].to_f32();
        for r in 0..p {
            for i in 0..256 {
                let want = (p * i) as f32 + (100 * p * (p - 1) / 2) as f32;
                assert_eq!(o[r * 256 + i], want, "P={p} rank {r} elem {i}");
            }
        }
        assert!(out.warnings.is_empty(), "P={p}: {:?}", out.warnings);
        // Mesh reads (P-1)·S bytes from peers per rank.
        for r in 0..p {
            assert_eq!(out.stats.remote_total(r), ((p - 1) * 256 * 4) as u64, "P={p} rank {r}");
        }
    }
}

fn fault(prog: &pld_ir::Program, p: usize, cfg: SimConfig) -> pld_sim::Report {
    match run(prog, "host", &ramp_inputs(p, 256), &cfg) {
        Err(SimError::Fault(r)) => r,
        Err(SimError::Invalid(d)) => panic!("invalid: {d:?}"),
        Ok(_) => panic!("expected a fault"),
    }
}

#[test]
fn skipped_notify_is_a_deadlock_naming_the_cells() {
    let prog = parse(&MESH.replace(
        "if peer != me:\n                pld.system.notify",
        "if peer != me and me != 0:\n                pld.system.notify",
    ));
    let rep = fault(&prog, 3, SimConfig::ranks(3));
    let ReportKind::Deadlock(parked) = &rep.kind else { panic!("not a deadlock: {rep}") };
    // Ranks 1 and 2 wait on signal[0] (rank 0 never notifies); rank 0 completes its waits.
    let mut who: Vec<(usize, String)> = parked.iter().map(|p| (p.rank, p.cell.clone())).collect();
    who.sort();
    assert_eq!(
        who,
        vec![(1, "signal[0] on rank 1".to_string()), (2, "signal[0] on rank 2".to_string())],
        "{rep}"
    );
    assert!(
        parked.iter().all(|p| p.value == 0 && p.predicate == ">= 1" && p.kernel == "reduce_step"),
        "{rep}"
    );
    assert!(parked.iter().all(|p| p.writers.is_empty()), "{rep}");
    assert!(rep.text.contains("deadlock") && rep.text.contains("signal[0] on rank 1"), "{}", rep.text);
}

#[test]
fn wrong_peer_is_reported() {
    let prog =
        parse(&MESH.replace("pld.tile.remote_load(data, peer,", "pld.tile.remote_load(data, peer + n,"));
    let rep = fault(&prog, 2, SimConfig::ranks(2));
    assert_eq!(rep.kind, ReportKind::PeerOutOfRange, "{rep}");
    assert!(rep.text.contains("is outside [0, 2)"), "{}", rep.text);
}

#[test]
fn missing_barrier_is_a_race() {
    let prog = parse(&MESH.replace("pld.system.wait(signal, [src, 0], 1, cmp=pld.WaitCmp.Ge)", "w = src"));
    let rep = fault(&prog, 2, SimConfig::ranks(2));
    assert_eq!(rep.kind, ReportKind::Race, "{rep}");
    assert!(rep.text.contains("buffer 'data'"), "{}", rep.text);
}

#[test]
fn random_schedules_agree_and_deterministic_is_reproducible() {
    let prog = parse(MESH);
    let base = run(&prog, "host", &ramp_inputs(4, 256), &SimConfig::ranks(4)).expect("det run");
    for seed in 0..100u64 {
        let cfg = SimConfig { schedule: Schedule::Random(seed), ..SimConfig::ranks(4) };
        let out =
            run(&prog, "host", &ramp_inputs(4, 256), &cfg).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(out.outputs["outputs"], base.outputs["outputs"], "seed {seed}");
    }
    let cfg = SimConfig { trace: true, ..SimConfig::ranks(4) };
    let a = run(&prog, "host", &ramp_inputs(4, 256), &cfg).expect("a");
    let b = run(&prog, "host", &ramp_inputs(4, 256), &cfg).expect("b");
    assert_eq!(a.outputs["outputs"], b.outputs["outputs"]);
    assert_eq!(a.trace, b.trace);
    let t = a.trace.expect("trace requested");
    assert!(t.contains("pld.system.notify") && t.contains("\"pid\":3"), "{t}");
    assert!(
        t.contains("\"thread_name\"")
            && t.contains("\"name\":\"core 0\"")
            && t.contains("\"name\":\"rank 3\""),
        "{t}"
    );
    assert_eq!(a.stats.notifies, vec![3, 3, 3, 3]);
    assert_eq!(a.stats.barrier_rounds, vec![1, 1, 1, 1]);
}

#[test]
fn remote_read_past_the_buffer_is_a_bounds_report() {
    let prog = parse(&MESH.replace(
        "pld.tile.remote_load(data, peer, [0, 0], [1, SIZE])",
        "pld.tile.remote_load(data, peer, [0, me + 8], [1, SIZE])",
    ));
    let rep = fault(&prog, 2, SimConfig::ranks(2));
    assert_eq!(rep.kind, ReportKind::OutOfBounds, "{rep}");
    assert!(rep.text.contains("exceeds the tensor extent 256"), "{}", rep.text);
}

#[test]
fn deadlock_report_renders_source_lines() {
    let _ = pld_ops::registry();
    let text = MESH.replace(
        "if peer != me:\n                pld.system.notify",
        "if peer != me and me != 0:\n                pld.system.notify",
    );
    let mut sources = pld_ir::SourceMap::new();
    let prog =
        pld_frontend::parse_program(&mut sources, "mesh.py", &text, &pld_frontend::ParseOptions::default())
            .unwrap_or_else(|d| panic!("{d:?}"));
    let wait_line = text.lines().position(|l| l.contains("pld.system.wait")).expect("wait line") + 1;
    let cfg = SimConfig { sources: Some(sources), ..SimConfig::ranks(2) };
    let rep = match run(&prog, "host", &ramp_inputs(2, 256), &cfg) {
        Err(SimError::Fault(r)) => r,
        other => panic!("expected a deadlock, got {other:?}"),
    };
    eprintln!("{}", rep.text);
    assert!(rep.text.contains(&format!("mesh.py:{wait_line}:")), "{}", rep.text);
    assert!(
        rep.text.contains("rank 1 kernel 'reduce_step'")
            && rep.text.contains("waits on signal[0] on rank 1 >= 1 (current value 0)"),
        "{}",
        rep.text
    );
    assert!(rep.text.contains("ranks that already finished all their work: [0]"), "{}", rep.text);
}

#[test]
fn parallel_schedule_runs_ranks_on_threads() {
    let prog = parse(MESH);
    for p in [2, 4, 8] {
        let det = run(&prog, "host", &ramp_inputs(p, 256), &SimConfig::ranks(p)).expect("det");
        for _ in 0..5 {
            let cfg = SimConfig { schedule: Schedule::Parallel, trace: true, ..SimConfig::ranks(p) };
            let par = run(&prog, "host", &ramp_inputs(p, 256), &cfg).unwrap_or_else(|e| panic!("P={p}: {e}"));
            assert_eq!(par.outputs, det.outputs, "P={p}");
            assert_eq!(par.stats.remote_bytes, det.stats.remote_bytes, "P={p}");
            assert!(par.trace.is_some_and(|t| t.contains("pld.tile.remote_load")));
        }
    }
    // A skipped notify deadlocks under threads too, with the same cells named.
    let bad = parse(&MESH.replace(
        "if peer != me:\n                pld.system.notify",
        "if peer != me and me != 0:\n                pld.system.notify",
    ));
    let cfg = SimConfig { schedule: Schedule::Parallel, ..SimConfig::ranks(3) };
    let rep = fault(&bad, 3, cfg);
    let ReportKind::Deadlock(parked) = &rep.kind else { panic!("{rep}") };
    let mut cells: Vec<String> = parked.iter().map(|p| p.cell.clone()).collect();
    cells.sort();
    assert_eq!(cells, vec!["signal[0] on rank 1".to_string(), "signal[0] on rank 2".to_string()], "{rep}");
}

#[test]
fn rank_count_limits() {
    let prog = parse(MESH);
    let out =
        run(&prog, "host", &ramp_inputs(64, 256), &SimConfig::ranks(64)).unwrap_or_else(|e| panic!("{e}"));
    let o = out.outputs["outputs"].to_f32();
    assert_eq!(o[63 * 256 + 5], (64 * 5) as f32 + (100 * 64 * 63 / 2) as f32);
    assert!(matches!(
        run(&prog, "host", &ramp_inputs(65, 256), &SimConfig::ranks(65)),
        Err(SimError::Invalid(_))
    ));
    assert!(matches!(
        run(&prog, "host", &ramp_inputs(1, 256), &SimConfig::ranks(0)),
        Err(SimError::Invalid(_))
    ));
    // One rank: the mesh degenerates to a copy.
    let one =
        run(&prog, "host", &ramp_inputs(1, 256), &SimConfig::ranks(1)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(one.outputs["outputs"].to_f32()[7], 7.0);
}

#[test]
fn races_and_deadlocks_are_reported_under_every_schedule() {
    let racy = parse(&MESH.replace("pld.system.wait(signal, [src, 0], 1, cmp=pld.WaitCmp.Ge)", "w = src"));
    let stuck = parse(&MESH.replace(
        "if peer != me:\n                pld.system.notify",
        "if peer != me and me != 0:\n                pld.system.notify",
    ));
    let mut schedules: Vec<Schedule> = (1..6).map(Schedule::Random).collect();
    schedules.extend([Schedule::Parallel; 6]);
    for schedule in schedules {
        let rep = fault(&racy, 3, SimConfig { schedule, ..SimConfig::ranks(3) });
        assert_eq!(rep.kind, ReportKind::Race, "{schedule:?}: {rep}");
        assert!(rep.text.contains("buffer 'data'"), "{schedule:?}: {}", rep.text);
        let rep = fault(&stuck, 3, SimConfig { schedule, ..SimConfig::ranks(3) });
        let ReportKind::Deadlock(parked) = &rep.kind else { panic!("{schedule:?}: not a deadlock: {rep}") };
        let mut who: Vec<(usize, String)> = parked.iter().map(|p| (p.rank, p.cell.clone())).collect();
        who.sort();
        assert_eq!(
            who,
            vec![(1, "signal[0] on rank 1".to_string()), (2, "signal[0] on rank 2".to_string())],
            "{schedule:?}: {rep}"
        );
    }
}
