//! The simulator never panics and never hangs: every program of the frontend corpus and of
//! `examples/`, as written and after the pipeline, on 1–4 ranks, under every schedule, ends in
//! outputs or a report; every example except the deliberately broken one runs cleanly (host
//! callbacks through python3, which needs numpy).

use pld_ir::{ExprKind, FunctionKind, Program, Type};
use pld_sim::{HostTensor, Inputs, Schedule, SimConfig};
use std::panic::{catch_unwind, AssertUnwindSafe};

fn auto_inputs(prog: &Program, entry: &str, p: usize) -> Option<Inputs> {
    let f = prog.function(entry)?;
    let mut inputs = Inputs::new();
    for param in &f.params {
        let name = f.values.name(param.value).to_string();
        match f.values.ty(param.value) {
            Type::Tensor(t) => {
                let shape: Option<Vec<usize>> = t
                    .shape
                    .iter()
                    .map(|d| match &d.kind {
                        ExprKind::Int(v) => usize::try_from(*v).ok(),
                        ExprKind::Sym(_) => Some(p),
                        _ => None,
                    })
                    .collect();
                let shape = shape?;
                let n: usize = shape.iter().product();
                let vals: Vec<f64> = (0..n).map(|i| (i % 7) as f64).collect();
                if !pld_sim::elem::supported(t.dtype) {
                    return None;
                }
                inputs.insert(name, HostTensor::from_f64(t.dtype, shape, &vals));
            }
            Type::Scalar(dt) => {
                inputs.insert(name, HostTensor::from_f64(*dt, vec![1], &[1.0]));
            }
            _ => return None,
        }
    }
    Some(inputs)
}

fn files() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    for dir in ["pld-frontend/tests/corpus", "examples"] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else { continue };
        let mut paths: Vec<_> =
            rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "py")).collect();
        paths.sort();
        for path in paths {
            if let Ok(text) = std::fs::read_to_string(&path) {
                out.push((path.display().to_string(), text));
            }
        }
    }
    out
}

#[test]
fn corpus_and_examples_never_panic() {
    pld_testkit::init();
    let mut ran = 0;
    for (name, text) in files() {
        let mut sources = pld_ir::SourceMap::new();
        let Ok(programs) =
            pld_frontend::parse_programs(&mut sources, &name, &text, &pld_frontend::ParseOptions::default())
        else {
            continue;
        };
        for prog in programs {
            let mut variants = vec![prog.clone()];
            if let Ok(low) = pld_testkit::e2e::lower(&prog) {
                variants.push(low);
            }
            for variant in &variants {
                let entries: Vec<String> = variant
                    .functions
                    .iter()
                    .filter(|f| f.kind == FunctionKind::Host)
                    .map(|f| f.name.clone())
                    .collect();
                for entry in entries {
                    for p in [1, 2, 4] {
                        let Some(inputs) = auto_inputs(variant, &entry, p) else { continue };
                        for schedule in [Schedule::Deterministic, Schedule::Random(3), Schedule::Parallel] {
                            // Host callbacks run for real, through python3 as under `pld run`.
                            let bridge =
                                pld_py::Bridge::new(pld_py::Python::from_env(), sources.clone(), Vec::new());
                            let cfg = SimConfig {
                                schedule,
                                max_steps: 200_000,
                                sources: Some(sources.clone()),
                                host_callbacks: Some(std::sync::Arc::new(bridge)),
                                ..SimConfig::ranks(p)
                            };
                            let r = catch_unwind(AssertUnwindSafe(|| {
                                pld_sim::run(variant, &entry, &inputs, &cfg)
                            }));
                            let must_run = name.contains("examples/") && !name.contains("broken_") && p > 1;
                            let as_written = std::ptr::eq(variant, &variants[0]);
                            match r {
                                Err(_) => panic!("{name} entry {entry} P={p} {schedule:?} panicked"),
                                // Task-id regions only run once outlined (the lowered variant).
                                Ok(Err(e))
                                    if as_written
                                        && e.to_string()
                                            .contains("once OutlineIncoreScopes has outlined it") => {}
                                Ok(Err(e)) if must_run => {
                                    panic!("{name} entry {entry} P={p} {schedule:?} failed:\n{e}")
                                }
                                Ok(Err(e)) if std::env::var("PLD_DUMP").is_ok() => {
                                    eprintln!(
                                        "{name} {entry} P={p} {schedule:?}: {}",
                                        e.to_string().lines().next().unwrap_or("")
                                    )
                                }
                                Ok(_) => {}
                            }
                            ran += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(ran > 50, "only {ran} runs");
}
