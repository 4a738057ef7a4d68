//! `bench_table --passes [SMALL] [LARGE]`: time per pipeline pass (run and verify) per source
//! statement of the generated program at two scales (default 1× and 100×), and their ratio.
//!
//! Guarantees: measurements only, printed as one table; the best of several repetitions per
//! pass; exit status 1 when the program does not parse or a pass fails.

use crate::{count_stmts, gen, parse};

/// `--passes [SMALL LARGE]`: per-pass time per statement (pass, then verification) at two
/// scales (default 1 and 100) and their ratio: which pass grows faster than the program.
pub fn table(args: &[String]) -> i32 {
    let small: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(1);
    let large: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100);
    let mut per = Vec::new();
    for scale in [small, large] {
        let text = gen::program(scale);
        let reps = (200 / scale).clamp(2, 50);
        let mut best: Vec<(&'static str, f64, f64)> = Vec::new();
        let mut stmts = 1;
        for _ in 0..reps {
            let mut p = match parse(&text) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("{e}");
                    return 1;
                }
            };
            stmts = count_stmts(&p).max(1);
            match crate::pass_times(&mut p) {
                Ok(t) if best.is_empty() => best = t,
                Ok(t) => {
                    for (b, x) in best.iter_mut().zip(t) {
                        b.1 = b.1.min(x.1);
                        b.2 = b.2.min(x.2);
                    }
                }
                Err(e) => {
                    eprintln!("{e}");
                    return 1;
                }
            }
        }
        per.push(
            best.into_iter()
                .map(|(n, a, b)| (n, a * 1e6 / stmts as f64, b * 1e6 / stmts as f64))
                .collect::<Vec<_>>(),
        );
    }
    println!(
        "{:<36} {:>11} {:>11} {:>7} {:>11} {:>11} {:>7}",
        "pass (us per source statement)",
        format!("run {small}x"),
        format!("run {large}x"),
        "ratio",
        format!("verify {small}x"),
        format!("verify {large}x"),
        "ratio"
    );
    let (mut a, mut b) = ((0.0, 0.0), (0.0, 0.0));
    for (s, l) in per[0].iter().zip(&per[1]) {
        a = (a.0 + s.1, a.1 + s.2);
        b = (b.0 + l.1, b.1 + l.2);
        println!(
            "{:<36} {:>11.2} {:>11.2} {:>7.2} {:>11.2} {:>11.2} {:>7.2}",
            s.0,
            s.1,
            l.1,
            l.1 / s.1.max(1e-9),
            s.2,
            l.2,
            l.2 / s.2.max(1e-9)
        );
    }
    println!(
        "{:<36} {:>11.2} {:>11.2} {:>7.2} {:>11.2} {:>11.2} {:>7.2}",
        "total",
        a.0,
        b.0,
        b.0 / a.0,
        a.1,
        b.1,
        b.1 / a.1
    );
    0
}
