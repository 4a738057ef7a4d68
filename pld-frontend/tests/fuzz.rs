//! Fuzz-style property test: deterministic random mutations of the corpus (deleted tokens,
//! swapped arguments, truncation, dropped or duplicated lines, stray punctuation) never make
//! the frontend panic; every failure is a diagnostic with a real location. At least 10,000
//! cases per run, from a fixed seed so a failure reproduces.

use pld_frontend::{parse_programs, ParseOptions};
use pld_ir::SourceMap;
use std::path::PathBuf;

const CASES: usize = 10_000;

/// xorshift64*: small, deterministic, good enough to pick mutation sites.
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
}

/// Splits text into tokens: identifier/number runs, single punctuation chars, whitespace runs.
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev: Option<u8> = None;
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' || c == '.' {
            0u8
        } else if c.is_whitespace() {
            1
        } else {
            2
        }
    };
    for (i, c) in text.char_indices() {
        let k = class(c);
        if let Some(p) = prev {
            if p != k || k == 2 {
                out.push(&text[start..i]);
                start = i;
            }
        }
        prev = Some(k);
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

fn mutate(rng: &mut Rng, text: &str) -> String {
    match rng.below(7) {
        0 => {
            // Delete one token.
            let mut t = tokens(text);
            if !t.is_empty() {
                let i = rng.below(t.len());
                t.remove(i);
            }
            t.concat()
        }
        1 => {
            // Swap two word tokens (arguments, names, numbers).
            let mut t = tokens(text);
            let words: Vec<usize> = (0..t.len())
                .filter(|&i| t[i].chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.'))
                .collect();
            if words.len() >= 2 {
                let a = words[rng.below(words.len())];
                // Prefer a nearby token so calls get their arguments swapped.
                let near: Vec<usize> =
                    words.iter().copied().filter(|&b| b != a && b.abs_diff(a) < 12).collect();
                let b =
                    if near.is_empty() { words[rng.below(words.len())] } else { near[rng.below(near.len())] };
                t.swap(a, b);
            }
            t.concat()
        }
        2 => {
            // Truncate at a char boundary.
            let mut cut = rng.below(text.len() + 1);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text[..cut].to_string()
        }
        3 => {
            // Drop a line.
            let mut lines: Vec<&str> = text.lines().collect();
            if !lines.is_empty() {
                let i = rng.below(lines.len());
                lines.remove(i);
            }
            lines.join("\n")
        }
        4 => {
            // Duplicate a line (redefinitions, double returns, repeated decorators).
            let mut lines: Vec<&str> = text.lines().collect();
            if !lines.is_empty() {
                let i = rng.below(lines.len());
                lines.insert(i, lines[i]);
            }
            lines.join("\n")
        }
        5 => {
            // Insert stray punctuation or a keyword.
            const BITS: &[&str] = &[
                "(",
                ")",
                "[",
                "]",
                ",",
                ":",
                "=",
                "*",
                "-",
                " pl.",
                "None",
                "0",
                "-1",
                "\"s\"",
                " if ",
                "pld.NotifyOp.Set",
                "pl.FP32",
            ];
            let t = tokens(text);
            let i = rng.below(t.len() + 1);
            let mut out = t[..i].concat();
            out.push_str(BITS[rng.below(BITS.len())]);
            out.push_str(&t[i..].concat());
            out
        }
        _ => {
            // Replace a number with another (zero, negative, huge).
            const NUMS: &[&str] = &["0", "-1", "1", "3", "99999999999999999999", "2147483648", "65"];
            let mut t = tokens(text);
            let nums: Vec<usize> =
                (0..t.len()).filter(|&i| t[i].chars().all(|c| c.is_ascii_digit())).collect();
            if !nums.is_empty() {
                let i = nums[rng.below(nums.len())];
                t[i] = NUMS[rng.below(NUMS.len())];
            }
            t.concat()
        }
    }
}

/// Parses one input; every failure must be diagnostics that render with a location.
fn run_case(text: &str) -> bool {
    let mut sm = SourceMap::new();
    let r = parse_programs(&mut sm, "fuzz.py", text, &ParseOptions::default());
    if let Err(d) = &r {
        let _ = d.render(&sm);
        for x in d.iter() {
            assert!(x.location(&sm).is_some(), "diagnostic without location: {}", x.message);
        }
    }
    r.is_ok()
}

#[test]
fn mutated_corpus_never_panics() {
    let _ = pld_ops::registry();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut seeds: Vec<String> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .map(|p| std::fs::read_to_string(p).expect("read"))
        .collect();
    seeds.sort();
    // Printed forms are inputs too.
    let printed: Vec<String> = seeds
        .iter()
        .filter_map(|s| pld_frontend::parse_str(s).ok())
        .map(|p| pld_ir::print_program(&p))
        .collect();
    seeds.extend(printed);
    assert!(seeds.len() >= 12, "corpus too small for fuzzing: {}", seeds.len());

    // Each case has its own seed, so the cases split over threads and stay reproducible.
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(4);
    let results: Vec<(usize, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let seeds = &seeds;
                s.spawn(move || {
                    let (mut ok, mut rejected) = (0usize, 0usize);
                    for case in (t..CASES).step_by(threads) {
                        let mut rng = Rng(
                            0x5EED_1234_ABCD_0001 ^ (case as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                        );
                        let base = &seeds[rng.below(seeds.len())];
                        let mut text = mutate(&mut rng, base);
                        for _ in 0..rng.below(3) {
                            text = mutate(&mut rng, &text);
                        }
                        match std::panic::catch_unwind(|| run_case(&text)) {
                            Ok(true) => ok += 1,
                            Ok(false) => rejected += 1,
                            Err(_) => panic!("case {case}: the frontend panicked on:\n-----\n{text}\n-----"),
                        }
                    }
                    (ok, rejected)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("fuzz worker")).collect()
    });
    let ok: usize = results.iter().map(|r| r.0).sum();
    let rejected: usize = results.iter().map(|r| r.1).sum();
    assert_eq!(ok + rejected, CASES);
    // The mutations are real: most inputs are rejected, some still parse.
    assert!(rejected > CASES / 4, "only {rejected} rejected");
    assert!(ok > 0, "no mutated input parsed");
}
