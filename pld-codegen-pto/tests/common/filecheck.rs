//! A small CHECK-line matcher: `CHECK:` (a later line contains the pattern), `CHECK-NEXT:`
//! (the next line), `CHECK-SAME:` (later on the same line), `CHECK-NOT:` (absent between
//! the previous and the next match, or to the end). Patterns are trimmed substrings.

#[derive(Debug)]
enum D {
    Check(String),
    Next(String),
    Same(String),
    Not(String),
}

fn parse(checks: &str) -> Vec<D> {
    let mut out = Vec::new();
    for l in checks.lines() {
        let Some(p) = l.find("CHECK") else { continue };
        let rest = &l[p + 5..];
        let Some((kind, pat)) = rest.split_once(':') else { continue };
        let pat = pat.trim().to_string();
        out.push(match kind {
            "" => D::Check(pat),
            "-NEXT" => D::Next(pat),
            "-SAME" => D::Same(pat),
            "-NOT" => D::Not(pat),
            other => panic!("unknown directive CHECK{other}"),
        });
    }
    out
}

/// Matches `checks` against `text`; `Err` describes the first failure.
pub fn check(text: &str, checks: &str) -> Result<(), String> {
    let lines: Vec<&str> = text.lines().collect();
    let ds = parse(checks);
    if ds.is_empty() {
        return Err("no CHECK directives".into());
    }
    // Position: line index and byte column after the previous match; None before any match.
    let mut pos: Option<(usize, usize)> = None;
    let mut nots: Vec<(String, (usize, usize))> = Vec::new();
    let start = |pos: Option<(usize, usize)>| pos.unwrap_or((0, 0));
    let flush = |nots: &mut Vec<(String, (usize, usize))>, until: (usize, usize)| -> Result<(), String> {
        for (pat, from) in nots.drain(..) {
            for (i, l) in lines.iter().enumerate().take(until.0 + 1).skip(from.0) {
                let lo = if i == from.0 { from.1.min(l.len()) } else { 0 };
                let hi = if i == until.0 { until.1.min(l.len()) } else { l.len() };
                if lo <= hi && l[lo..hi].contains(pat.as_str()) {
                    return Err(format!("CHECK-NOT: `{pat}` found on line {}: {l}", i + 1));
                }
            }
        }
        Ok(())
    };
    for d in &ds {
        match d {
            D::Not(p) => nots.push((p.clone(), start(pos))),
            D::Check(p) => {
                let (l0, c0) = start(pos);
                let mut found = None;
                for (i, l) in lines.iter().enumerate().skip(l0) {
                    let from = if i == l0 { c0.min(l.len()) } else { 0 };
                    if let Some(k) = l[from..].find(p.as_str()) {
                        found = Some((i, from + k));
                        break;
                    }
                }
                let Some((i, k)) = found else {
                    return Err(format!("CHECK: `{p}` not found after line {}", l0 + 1));
                };
                let m = (i, k);
                flush(&mut nots, m)?;
                pos = Some((i, k + p.len()));
            }
            D::Next(p) => {
                let Some((l0, _)) = pos else { return Err("CHECK-NEXT before any CHECK".into()) };
                let i = l0 + 1;
                let Some(l) = lines.get(i) else {
                    return Err(format!("CHECK-NEXT: `{p}`: no line after {}", l0 + 1));
                };
                let Some(k) = l.find(p.as_str()) else {
                    return Err(format!("CHECK-NEXT: `{p}` not on line {}: {l}", i + 1));
                };
                flush(&mut nots, (i, k))?;
                pos = Some((i, k + p.len()));
            }
            D::Same(p) => {
                let Some((l0, c0)) = pos else { return Err("CHECK-SAME before any CHECK".into()) };
                let l = lines[l0];
                let Some(k) = l[c0.min(l.len())..].find(p.as_str()) else {
                    return Err(format!("CHECK-SAME: `{p}` not later on line {}: {l}", l0 + 1));
                };
                flush(&mut nots, (l0, c0 + k))?;
                pos = Some((l0, c0 + k + p.len()));
            }
        }
    }
    let end = (lines.len().saturating_sub(1), lines.last().map_or(0, |l| l.len()));
    flush(&mut nots, end)
}

/// Panics with the failure and the full text when `checks` do not match.
#[track_caller]
pub fn assert_checks(text: &str, checks: &str) {
    if let Err(e) = check(text, checks) {
        panic!("{e}\n--- text ---\n{text}");
    }
}
