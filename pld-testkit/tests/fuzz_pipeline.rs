//! The bounded fuzz stage of `cargo xtask ci` (issue #18): seeded mutations of the examples
//! and of the test corpora go through `check` (frontend + pass pipeline) and `compile` (PTO
//! codegen), and the mutants that pass `check` are run on the simulator — in-process, through
//! the library APIs, on threads with the CLI's 8 MiB main-thread stack.
//!
//! Asserted for every case: no panic, no abort (a stack overflow would end this process), no
//! run past its step budget or deadline, every diagnostic carries a source location, and every
//! outcome falls in one of the CLI's exit classes (0 ok, 1 diagnostics, 2 invalid run, 3
//! report). At least [`CHECK_CASES`] check/compile cases and [`RUN_CASES`] runs per test run,
//! each case from its own seed so any failure reproduces from the case number printed.

use pld_ir::{Diagnostics, ExprKind, FunctionKind, Program, SourceMap, Type};
use pld_sim::{HostTensor, Inputs, Schedule, SimConfig, SimError};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::{Duration, Instant};

/// Mutants through check and compile.
const CHECK_CASES: usize = 10_000;
/// Runs of mutants that passed check.
const RUN_CASES: usize = 500;
/// Step budget of one fuzz run (enough for every example on two ranks).
const RUN_STEPS: u64 = 100_000;
/// Wall-clock limit of one fuzz run.
const RUN_DEADLINE: Duration = Duration::from_secs(2);
/// Memory limit of one fuzz run.
const RUN_MEMORY: u64 = 256 << 20;

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

fn seeds() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    for dir in ["examples", "pld-frontend/tests/corpus", "pld-cli/tests/corpus"] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else { continue };
        let mut paths: Vec<_> =
            rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "py")).collect();
        paths.sort();
        for p in paths {
            if let Ok(text) = std::fs::read_to_string(&p) {
                out.push((p.file_name().unwrap_or_default().to_string_lossy().into_owned(), text));
            }
        }
    }
    out
}

/// One mutation of `text`: line edits, token edits and the shapes of issue #18's defects
/// (huge and wrapping sizes, float dimensions, deep nesting, step-free loops, emptied bodies).
fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        return text.to_string();
    }
    let i = rng.below(lines.len());
    let indent = lines[i].len() - lines[i].trim_start().len();
    let pad = " ".repeat(indent);
    match rng.below(10) {
        0 => {
            lines.remove(i);
        }
        1 => {
            let l = lines[i].clone();
            lines.insert(i, l);
        }
        2 => {
            // A number becomes an edge value.
            const NUMS: &[&str] =
                &["0", "-1", "1", "9223372036854775807", "4294967296", "2147483648", "1.0", "2**63-1", "65"];
            let n = rng.pick(NUMS);
            lines[i] = replace_token(&lines[i], |t| t.chars().all(|c| c.is_ascii_digit()), n, rng);
        }
        3 => {
            // A loop whose iterations perform no simulator step.
            const LOOPS: &[&str] =
                &["while True:\n{p}    pass", "for _i in pl.range(9223372036854775807):\n{p}    pass"];
            lines.insert(i, format!("{pad}{}", rng.pick(LOOPS).replace("{p}", &pad)));
        }
        4 => {
            // A loop body reduced to dead code.
            if lines[i].trim_start().starts_with("for ") && i + 1 < lines.len() {
                lines[i + 1] = format!("{pad}    _dead = 1");
            } else {
                lines.insert(i, format!("{pad}for _j in pl.range(100000):\n{pad}    _dead = _j * 2"));
            }
        }
        5 => {
            // Deep nesting, near and past the bound.
            let k = [50, 99, 150, 400][rng.below(4)];
            let e = match rng.below(3) {
                0 => format!("{}0{}", "[".repeat(k), "]".repeat(k)),
                1 => vec!["1"; k].join(" + "),
                _ => format!("{}True", "not ".repeat(k)),
            };
            lines.insert(i, format!("{pad}_deep = {e}"));
        }
        6 => {
            // Swap two words of a line (arguments, names).
            let mut t = words(&lines[i]);
            if t.len() >= 2 {
                let (a, b) = (rng.below(t.len()), rng.below(t.len()));
                t.swap(a, b);
                lines[i] = format!("{pad}{}", t.join(" "));
            }
        }
        7 => {
            // Truncate the file.
            lines.truncate(i + 1);
            let cut = rng.below(lines[i].len() + 1);
            if lines[i].is_char_boundary(cut) {
                lines[i].truncate(cut);
            }
        }
        8 => {
            // Stray punctuation or DSL fragments.
            const BITS: &[&str] =
                &["(", ")", "[", "]", ",", ":", "=", "*", "-", " pl.", "None", "1.5", "pl.FP32"];
            let at = rng.below(lines[i].len() + 1);
            if lines[i].is_char_boundary(at) {
                lines[i].insert_str(at, rng.pick(BITS));
            }
        }
        _ => {
            // A shape dimension grows huge (window, tile, tensor).
            const DIMS: &[&str] =
                &["[9223372036854775807, 64]", "[1048576, 1048576]", "[1.0, 64]", "[0, 64]"];
            let d = rng.pick(DIMS);
            lines[i] = replace_first_list(&lines[i], d);
        }
    }
    lines.join("\n") + "\n"
}

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

/// Replaces one token of `line` (split on non-word characters) satisfying `is` with `by`.
fn replace_token(line: &str, is: impl Fn(&str) -> bool, by: &str, rng: &mut Rng) -> String {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices().chain(std::iter::once((line.len(), ' '))) {
        let word = c.is_alphanumeric() || c == '_';
        match (start, word) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                if is(&line[s..i]) {
                    spans.push((s, i));
                }
                start = None;
            }
            _ => {}
        }
    }
    if spans.is_empty() {
        return line.to_string();
    }
    let (s, e) = spans[rng.below(spans.len())];
    format!("{}{by}{}", &line[..s], &line[e..])
}

/// Replaces the first `[ ... ]` of `line` that holds no nested bracket with `by`.
fn replace_first_list(line: &str, by: &str) -> String {
    let Some(s) = line.find('[') else { return line.to_string() };
    let Some(len) = line[s..].find(']') else { return line.to_string() };
    if line[s + 1..s + len].contains('[') {
        return line.to_string();
    }
    format!("{}{by}{}", &line[..s], &line[s + len + 1..])
}

/// The CLI's exit classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Ok,
    Diagnostics,
    Invalid,
    Report,
}

fn located(d: &Diagnostics, sm: &SourceMap, case: usize, text: &str) {
    let _ = d.render(sm);
    for x in d.iter() {
        assert!(
            x.location(sm).is_some(),
            "case {case}: diagnostic without location: {}\n-----\n{text}\n-----",
            x.message
        );
    }
}

/// Check and compile every unit of `text`; returns the units that passed check.
fn check_compile(case: usize, text: &str) -> (Class, Vec<(Program, SourceMap)>) {
    let mut sm = SourceMap::new();
    let units = match pld_frontend::parse_programs(&mut sm, "fuzz.py", text, &Default::default()) {
        Ok(u) => u,
        Err(d) => {
            located(&d, &sm, case, text);
            return (Class::Diagnostics, Vec::new());
        }
    };
    let mut class = Class::Ok;
    let mut passed = Vec::new();
    for mut p in units {
        let original = p.clone();
        if let Err(d) = pld_passes::run_pipeline(&mut p, &Default::default()) {
            located(&d, &sm, case, text);
            class = Class::Diagnostics;
            continue;
        }
        if let Err(d) = pld_codegen_pto::emit_program(&p, &Default::default()) {
            located(&d, &sm, case, text);
            class = Class::Diagnostics;
        }
        passed.push((original, sm.clone()));
        passed.push((p, sm.clone()));
    }
    (class, passed)
}

/// Inputs for `entry` on `p` ranks (None when a parameter cannot be filled).
fn inputs_for(prog: &Program, entry: &str, p: usize) -> Option<Inputs> {
    let f = prog.function(entry)?;
    let mut inputs = Inputs::new();
    for param in &f.params {
        let name = f.values.name(param.value).to_string();
        match f.values.ty(param.value) {
            Type::Tensor(t) => {
                let shape: Vec<i64> = t
                    .shape
                    .iter()
                    .map(|d| match &d.kind {
                        ExprKind::Int(v) => Some(*v),
                        ExprKind::Sym(_) => Some(p as i64),
                        _ => None,
                    })
                    .collect::<Option<_>>()?;
                let bytes = pld_sim::limits::byte_size(t.dtype, &shape).ok()?;
                if bytes > RUN_MEMORY / 4 || !pld_sim::elem::supported(t.dtype) {
                    return None;
                }
                let shape: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
                let n: usize = shape.iter().product();
                let vals: Vec<f64> = (0..n).map(|i| (i % 7) as f64).collect();
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

fn run_one(case: usize, prog: &Program, sm: &SourceMap, schedule: Schedule) -> Option<Class> {
    let entry = prog.functions.iter().find(|f| f.kind == FunctionKind::Host)?.name.clone();
    let inputs = inputs_for(prog, &entry, 2)?;
    let start = Instant::now();
    let cfg = SimConfig {
        schedule,
        max_steps: RUN_STEPS,
        deadline: Some(start + RUN_DEADLINE),
        max_memory: RUN_MEMORY,
        sources: Some(sm.clone()),
        ..SimConfig::ranks(2)
    };
    let r = pld_sim::run(prog, &entry, &inputs, &cfg);
    let took = start.elapsed();
    // The deadline is polled every 1024 steps: a run ends well within a second past it.
    assert!(
        took < RUN_DEADLINE + Duration::from_secs(3),
        "case {case}: run took {took:?} (budget {RUN_DEADLINE:?})"
    );
    Some(match r {
        Ok(o) => {
            assert!(o.stats.steps <= RUN_STEPS, "case {case}: {} steps past the budget", o.stats.steps);
            Class::Ok
        }
        Err(SimError::Fault(rep)) => {
            assert!(
                rep.text.starts_with("error: ") || rep.text.starts_with("error[E"),
                "case {case}: report {}",
                rep.text
            );
            Class::Report
        }
        Err(SimError::Invalid(_)) => Class::Invalid,
    })
}

#[derive(Default)]
struct Tally {
    checked: usize,
    runs: usize,
    classes: [usize; 4],
}

fn worker(t: usize, threads: usize, seeds: &[(String, String)]) -> Tally {
    let mut tally = Tally::default();
    let mut pending: Vec<(usize, Program, SourceMap)> = Vec::new();
    for case in (t..CHECK_CASES).step_by(threads) {
        let mut rng = Rng(0x18F0_22ED_0000_0001 ^ (case as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let (_, base) = &seeds[rng.below(seeds.len())];
        let mut text = mutate(&mut rng, base);
        for _ in 0..rng.below(3) {
            text = mutate(&mut rng, &text);
        }
        let (class, passed) = match catch_unwind(AssertUnwindSafe(|| check_compile(case, &text))) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("case {case}: check/compile panicked on:\n-----\n{text}\n-----");
                std::panic::resume_unwind(e)
            }
        };
        tally.checked += 1;
        tally.classes[class as usize] += 1;
        // Four cases in ten queue their passing units for a run (more than RUN_CASES in all).
        if case % 10 < 4 {
            pending.extend(passed.into_iter().map(|(p, sm)| (case, p, sm)));
        }
    }
    let share = RUN_CASES.div_ceil(threads);
    let mut schedules =
        [Schedule::Deterministic, Schedule::Random(7), Schedule::Parallel].into_iter().cycle();
    for (case, prog, sm) in pending {
        if tally.runs >= share {
            break;
        }
        let schedule = schedules.next().unwrap_or_default();
        let r = catch_unwind(AssertUnwindSafe(|| run_one(case, &prog, &sm, schedule)));
        match r {
            Ok(Some(class)) => {
                tally.runs += 1;
                tally.classes[class as usize] += 1;
            }
            Ok(None) => {}
            Err(e) => {
                eprintln!("case {case}: the simulator panicked on:\n{}", pld_ir::print_program(&prog));
                std::panic::resume_unwind(e)
            }
        }
    }
    tally
}

#[test]
fn mutated_programs_never_crash_hang_or_lose_a_location() {
    pld_testkit::init();
    let seeds = seeds();
    assert!(seeds.len() >= 20, "too few seed programs: {}", seeds.len());
    let start = Instant::now();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 4);
    let tallies: Vec<Tally> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let seeds = &seeds;
                std::thread::Builder::new()
                    .stack_size(8 << 20)
                    .spawn_scoped(s, move || worker(t, threads, seeds))
                    .expect("spawn fuzz worker")
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    let checked: usize = tallies.iter().map(|t| t.checked).sum();
    let runs: usize = tallies.iter().map(|t| t.runs).sum();
    let mut classes = [0usize; 4];
    for t in &tallies {
        for (c, n) in classes.iter_mut().zip(t.classes) {
            *c += n;
        }
    }
    eprintln!(
        "fuzz: {checked} check/compile cases, {runs} runs in {:.1}s; outcomes ok/diagnostics/invalid/report = {classes:?}",
        start.elapsed().as_secs_f64()
    );
    assert_eq!(checked, CHECK_CASES);
    assert!(runs >= RUN_CASES, "only {runs} runs (need {RUN_CASES})");
    // The mutations are real: many are rejected, some still pass and run.
    assert!(classes[Class::Diagnostics as usize] > CHECK_CASES / 5, "{classes:?}");
    assert!(classes[Class::Ok as usize] > 0 && classes[Class::Report as usize] > 0, "{classes:?}");
}
