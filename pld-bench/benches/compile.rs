//! Criterion benches of the compiler: frontend parse, the full pass pipeline and PTO emission,
//! on every example that compiles and on generated programs of 1×, 10× and 100× a realistic
//! kernel (see `pld_bench::gen`). Throughput is in statements, so per-statement cost at
//! different sizes reads straight off the report.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use pld_bench::{count_stmts, emit, gen, lower, parse};
use std::hint::black_box;
use std::time::Duration;

/// `(name, text)` of the repository examples plus the generated programs; programs that do not
/// compile (the deliberately broken examples) are left out.
fn workloads() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    for f in files {
        if f.extension().is_some_and(|e| e == "py") {
            if let Ok(text) = std::fs::read_to_string(&f) {
                let name = f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                out.push((name, text));
            }
        }
    }
    for scale in [1, 10, 100] {
        out.push((format!("generated_{scale}x"), gen::program(scale)));
    }
    out.retain(|(_, text)| parse(text).and_then(|mut p| lower(&mut p)).is_ok());
    out
}

fn benches(c: &mut Criterion) {
    if let Err(e) = pld_bench::init() {
        panic!("op registry: {e}");
    }
    let all = workloads();
    let mut g = c.benchmark_group("parse");
    for (name, text) in &all {
        let Ok(p) = parse(text) else { continue };
        g.throughput(Throughput::Elements(count_stmts(&p) as u64));
        g.bench_with_input(BenchmarkId::from_parameter(name), text, |b, t| b.iter(|| parse(black_box(t))));
    }
    g.finish();
    let mut g = c.benchmark_group("pipeline");
    for (name, text) in &all {
        let Ok(p) = parse(text) else { continue };
        g.throughput(Throughput::Elements(count_stmts(&p) as u64));
        g.bench_with_input(BenchmarkId::from_parameter(name), &p, |b, p| {
            b.iter(|| {
                let mut q = p.clone();
                lower(&mut q).map(|()| q)
            })
        });
    }
    g.finish();
    let mut g = c.benchmark_group("emit_pto");
    for (name, text) in &all {
        let Ok(mut p) = parse(text) else { continue };
        let n = count_stmts(&p);
        if lower(&mut p).is_err() {
            continue;
        }
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::from_parameter(name), &p, |b, p| b.iter(|| emit(black_box(p))));
    }
    g.finish();
}

criterion_group! {
    name = compile;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    targets = benches
}
criterion_main!(compile);
