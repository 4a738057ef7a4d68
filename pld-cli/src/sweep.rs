//! `pld run --sweep NAME=START:END:STEP`: nccl-tests' `-b/-e/-f` size sweep.
//!
//! Guarantees: NAME is bound (as `--bind NAME=V` would bind it) to each value from START up to
//! and including END — multiplied by F each time with `xF`, increased by N with `+N`, `x2`
//! when the step is left out — and the program is compiled and run once per value. The values
//! are NAME's own unit (elements for a dynamic dimension, whatever a builder makes of its
//! parameter; D-eco-6); K, M, G and T are powers of 1024. Output is one results table: its
//! header once, then each value's collective rows as they finish. `--expect` and
//! `--check-golden` check every size (the golden recomputed at each), and the sweep exits 4
//! if any size differed, naming them; the first fault stops it (exit 3) with the size it hit.
//! A malformed range, an unknown NAME, NAME also given to `--bind`, or more than
//! [`MAX_SIZES`] values is a usage error (exit 2) before anything runs.

use crate::driver::Failure;
use crate::run::RunArgs;
use crate::run_json::{CollectiveJson, RunJson};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Most values one sweep may run.
pub const MAX_SIZES: usize = 256;

/// The expected form, said by every parse error.
const FORM: &str = "expected NAME=START:END[:STEP], STEP xF (multiply) or +N (add), numbers with an optional K/M/G/T suffix, e.g. count=4K:64M:x2";

/// A parsed `--sweep`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sweep {
    /// The builder parameter or dynamic dimension swept.
    pub name: String,
    /// The values, in order.
    pub values: Vec<u64>,
}

/// Parses `NAME=START:END[:xF|:+N]`.
pub fn parse(s: &str) -> Result<Sweep, String> {
    let bad = |why: &str| format!("--sweep `{s}`: {why}; {FORM}");
    let (name, range) = s.split_once('=').ok_or_else(|| bad("no `=`"))?;
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return Err(bad("NAME must be an identifier"));
    }
    let parts: Vec<&str> = range.split(':').collect();
    let num = |p: &str, what: &str| {
        crate::limits::parse_bytes(p).map_err(|_| bad(&format!("{what} `{p}` is not a positive number")))
    };
    let (start, end) = match parts.as_slice() {
        [a, b] | [a, b, _] => (num(a, "START")?, num(b, "END")?),
        _ => return Err(bad("the range needs START:END or START:END:STEP")),
    };
    if end < start {
        return Err(bad("END is smaller than START"));
    }
    let step = parts.get(2).map_or("x2", |p| p.trim());
    let next: Box<dyn Fn(u64) -> Option<u64>> = match step.split_at_checked(1) {
        Some(("x" | "*", f)) => {
            let f: u64 = f.parse().ok().filter(|f| *f >= 2).ok_or_else(|| bad("a factor xF needs F >= 2"))?;
            Box::new(move |v| v.checked_mul(f))
        }
        Some(("+", n)) => {
            let n = num(n, "step")?;
            Box::new(move |v| v.checked_add(n))
        }
        _ => return Err(bad(&format!("step `{step}` is neither xF nor +N"))),
    };
    let mut values = vec![start];
    while let Some(v) = next(values[values.len() - 1]).filter(|v| *v <= end) {
        if values.len() == MAX_SIZES {
            return Err(bad(&format!("more than {MAX_SIZES} sizes")));
        }
        values.push(v);
    }
    Ok(Sweep { name: name.to_string(), values })
}

/// Runs the sweep: the program at each value, one results table.
pub fn run(
    args: &RunArgs,
    sweep: &Sweep,
    engine: &crate::engine::Engine,
    interrupt: &Arc<AtomicBool>,
) -> Result<(), Failure> {
    let name = &sweep.name;
    if args.bind.iter().any(|(k, _)| k == name) {
        return Err(Failure::usage(format!("--sweep {name} and --bind {name}=… both bind `{name}`")));
    }
    if engine.is_root() {
        let shown: Vec<String> = sweep.values.iter().map(u64::to_string).collect();
        outln!("sweep {name} over {} on {} rank(s)", shown.join(", "), args.ranks);
        outln!("{}", crate::table::header());
        outln!("{}", crate::table::units());
    }
    let mut rows = Vec::new();
    let mut differ = Vec::new();
    let mut last = None;
    for &v in &sweep.values {
        let mut one = args.clone();
        one.bind.push((name.clone(), v.to_string()));
        one.sweeping = true;
        let ran = crate::run::run_on(&one, engine, Arc::clone(interrupt)).map_err(|f| at(f, name, v))?;
        let Some(ran) = ran else { continue };
        let wrong = ran.verdict.as_ref().map(|x| x.wrong);
        if ran.verdict.as_ref().is_some_and(|x| !x.differ.is_empty()) {
            differ.push(format!("{name}={v}"));
        }
        for c in &ran.outcome.timing.collectives {
            outln!("{}", crate::table::row(c, wrong));
        }
        rows.push((v, wrong, ran.outcome.timing.collectives.clone()));
        last = Some(ran.outcome);
    }
    if let (Some(path), Some(outcome)) = (&args.report_json, &last) {
        let collectives = rows
            .iter()
            .flat_map(|(v, wrong, cs)| {
                cs.iter().map(move |c| CollectiveJson { sweep: Some(*v), ..CollectiveJson::of(c, *wrong) })
            })
            .collect();
        let doc = RunJson {
            ok: true,
            modeled_ps: outcome.timing.rank_ps.clone(),
            outputs: Some(crate::run::output_rows(&outcome.outputs)),
            collectives: Some(collectives),
            ..RunJson::default()
        };
        crate::driver::write_file(path, doc.text().as_bytes())?;
    }
    if differ.is_empty() {
        Ok(())
    } else {
        Err(Failure::Mismatch(format!("checked outputs differ at {}", differ.join(", "))))
    }
}

/// A failure at sweep value `v`, saying so; an unknown NAME is said as `--sweep`'s.
fn at(f: Failure, name: &str, v: u64) -> Failure {
    match f {
        Failure::Usage(m) => match m.strip_prefix(&format!("--bind `{name}`:")) {
            Some(rest) => Failure::Usage(format!("--sweep {name}:{rest}")),
            None => Failure::Usage(format!("--sweep {name}={v}: {m}")),
        },
        Failure::Fault(m) => Failure::Fault(format!("sweep {name}={v}:\n{m}")),
        Failure::Mismatch(m) => Failure::Mismatch(format!("sweep {name}={v}: {m}")),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_multiply_add_and_take_suffixes() {
        assert_eq!(parse("count=4K:64K:x2").unwrap().values, [4096, 8192, 16384, 32768, 65536]);
        assert_eq!(parse("n=1:10").unwrap().values, [1, 2, 4, 8]);
        assert_eq!(parse("n=100:400:+100").unwrap().values, [100, 200, 300, 400]);
        assert_eq!(parse("n=1M:1M").unwrap(), Sweep { name: "n".into(), values: vec![1 << 20] });
        assert_eq!(parse("n=3:100:x10").unwrap().values, [3, 30]);
    }

    #[test]
    fn malformed_ranges_say_the_expected_form() {
        for bad in [
            "count",
            "=1:2",
            "n=4K",
            "n=0:8",
            "n=8:4",
            "n=1:8:x1",
            "n=1:8:y2",
            "n=1:8:+0",
            "n=a:b",
            "n=1:1000:+1",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains("expected NAME=START:END"), "{bad}: {e}");
        }
    }
}
