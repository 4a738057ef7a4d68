//! A small lit-style CHECK matcher for printed IR and PTO text.
//!
//! Directives, one per line, in the order they must match (LLVM spelling, so the muscle
//! memory of the downstream PTO toolchain's tests carries over):
//! - `CHECK: pat` — `pat` occurs on some line at or after the current position;
//! - `CHECK-NEXT: pat` — `pat` occurs on the line right after the previous match;
//! - `CHECK-SAME: pat` — `pat` occurs later on the line of the previous match;
//! - `CHECK-NOT: pat` — `pat` does not occur between the previous match and the next one
//!   (or the end of the text);
//! - `CHECK-COUNT-N: pat` — `pat` occurs on exactly N lines in the whole text.
//!
//! Patterns are plain substrings (whitespace-trimmed). Directives are read from any line
//! containing them, after a comment leader such as `#` or `//`.

/// One parsed directive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Directive {
    /// `CHECK:`.
    Check(String),
    /// `CHECK-NEXT:`.
    Next(String),
    /// `CHECK-SAME:`.
    Same(String),
    /// `CHECK-NOT:`.
    Not(String),
    /// `CHECK-COUNT-N:`.
    Count(usize, String),
}

/// Extracts the directives from a file's text.
pub fn parse_directives(text: &str) -> Vec<Directive> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(pos) = line.find("CHECK") else { continue };
        let rest = &line[pos + "CHECK".len()..];
        let (kind, pat) = match rest.split_once(':') {
            Some((k, p)) => (k, p.trim().to_string()),
            None => continue,
        };
        let d = match kind {
            "" => Directive::Check(pat),
            "-NEXT" => Directive::Next(pat),
            "-SAME" => Directive::Same(pat),
            "-NOT" => Directive::Not(pat),
            k if k.starts_with("-COUNT-") => match k["-COUNT-".len()..].parse() {
                Ok(n) => Directive::Count(n, pat),
                Err(_) => continue,
            },
            _ => continue,
        };
        out.push(d);
    }
    out
}

/// Matches `directives` against `text`; `Err` explains the first failure with context.
pub fn check(text: &str, directives: &[Directive]) -> Result<(), String> {
    let lines: Vec<&str> = text.lines().collect();
    // Position: (line index, byte column) just after the previous match.
    let mut line = 0usize;
    let mut col = 0usize;
    let mut matched_any = false;
    let mut pending_not: Vec<&str> = Vec::new();
    let fail = |msg: String, at: usize| -> Result<(), String> {
        let lo = at.saturating_sub(2);
        let hi = (at + 3).min(lines.len());
        let ctx: Vec<String> = (lo..hi).map(|i| format!("{:>5} | {}", i + 1, lines[i])).collect();
        Err(format!("{msg}\nnear:\n{}", ctx.join("\n")))
    };
    let check_nots = |nots: &[&str], from: (usize, usize), to: usize| -> Option<(String, usize)> {
        for (i, l) in lines.iter().enumerate().take(to).skip(from.0) {
            let hay = if i == from.0 { l.get(from.1..).unwrap_or("") } else { l };
            for n in nots {
                if hay.contains(n) {
                    return Some((n.to_string(), i));
                }
            }
        }
        None
    };
    for d in directives {
        match d {
            Directive::Not(p) => pending_not.push(p),
            Directive::Count(n, p) => {
                let got = lines.iter().filter(|l| l.contains(p.as_str())).count();
                if got != *n {
                    return fail(format!("CHECK-COUNT-{n}: `{p}` occurs on {got} lines"), 0);
                }
            }
            Directive::Check(p) => {
                let start = if matched_any { line + 1 } else { 0 };
                let start = if matched_any
                    && lines.get(line).and_then(|l| l.get(col..)).is_some_and(|r| r.contains(p.as_str()))
                {
                    line
                } else {
                    start
                };
                let found = (start..lines.len()).find(|&i| {
                    let hay =
                        if i == line && matched_any { lines[i].get(col..).unwrap_or("") } else { lines[i] };
                    hay.contains(p.as_str())
                });
                let Some(i) = found else {
                    return fail(format!("CHECK: `{p}` not found after line {}", line + 1), line);
                };
                if let Some((n, at)) = check_nots(&pending_not, (line, if matched_any { col } else { 0 }), i)
                {
                    return fail(format!("CHECK-NOT: `{n}` found before `{p}`"), at);
                }
                pending_not.clear();
                let base = if i == line && matched_any { col } else { 0 };
                let off = lines[i][base..].find(p.as_str()).map_or(0, |o| o + base);
                line = i;
                col = off + p.len();
                matched_any = true;
            }
            Directive::Next(p) => {
                let i = if matched_any { line + 1 } else { 0 };
                match lines.get(i) {
                    Some(l) if l.contains(p.as_str()) => {
                        if let Some((n, at)) = check_nots(&pending_not, (line, col), i) {
                            return fail(format!("CHECK-NOT: `{n}` found before `{p}`"), at);
                        }
                        pending_not.clear();
                        line = i;
                        col = l.find(p.as_str()).unwrap_or(0) + p.len();
                        matched_any = true;
                    }
                    _ => return fail(format!("CHECK-NEXT: `{p}` is not on line {}", i + 1), i),
                }
            }
            Directive::Same(p) => {
                let rest = lines.get(line).and_then(|l| l.get(col..)).unwrap_or("");
                match rest.find(p.as_str()) {
                    Some(o) => col += o + p.len(),
                    None => return fail(format!("CHECK-SAME: `{p}` not on line {}", line + 1), line),
                }
            }
        }
    }
    if let Some((n, at)) = check_nots(&pending_not, (line, if matched_any { col } else { 0 }), lines.len()) {
        return fail(format!("CHECK-NOT: `{n}` found"), at);
    }
    Ok(())
}

/// Matches directives embedded in `checks` (e.g. a test's expectation string) against `text`.
///
/// # Panics
/// With the failure and context when a directive does not match.
#[track_caller]
pub fn assert_checks(text: &str, checks: &str) {
    let ds = parse_directives(checks);
    assert!(!ds.is_empty(), "no CHECK directives in expectation");
    if let Err(e) = check(text, &ds) {
        panic!("{e}\n--- full text ---\n{text}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "a = 1\nb = load(x)\nc = add(a, b)\nstore(c)\n";

    #[test]
    fn ordered_checks_match() {
        assert!(check(TEXT, &parse_directives("# CHECK: load\n# CHECK-NEXT: add\n# CHECK-SAME: b)")).is_ok());
    }

    #[test]
    fn out_of_order_fails() {
        assert!(check(TEXT, &parse_directives("# CHECK: add\n# CHECK: load")).is_err());
    }

    #[test]
    fn not_between_matches() {
        assert!(check(TEXT, &parse_directives("# CHECK: a = 1\n# CHECK-NOT: add\n# CHECK: store")).is_err());
        assert!(check(TEXT, &parse_directives("# CHECK: a = 1\n# CHECK-NOT: mul\n# CHECK: store")).is_ok());
        assert!(check(TEXT, &parse_directives("# CHECK: add\n# CHECK-NOT: load")).is_ok());
    }

    #[test]
    fn same_continues_the_matched_line() {
        assert!(check(TEXT, &parse_directives("# CHECK: load\n# CHECK-NEXT: add\n# CHECK-SAME: b)")).is_ok());
        assert!(check(TEXT, &parse_directives("# CHECK: add(a\n# CHECK-SAME: b)")).is_ok());
        assert!(check(TEXT, &parse_directives("# CHECK: add(a\n# CHECK-SAME: add")).is_err());
        assert!(check(TEXT, &parse_directives("# CHECK: load\n# CHECK-NEXT: store")).is_err());
    }

    #[test]
    fn an_expectation_without_directives_is_an_error() {
        assert!(parse_directives("no directives").is_empty());
        assert!(std::panic::catch_unwind(|| assert_checks(TEXT, "no directives")).is_err());
    }

    #[test]
    fn next_must_be_adjacent_and_count_is_exact() {
        assert!(check(TEXT, &parse_directives("# CHECK: a = 1\n# CHECK-NEXT: add")).is_err());
        assert!(check(TEXT, &parse_directives("# CHECK-COUNT-2: = ")).is_err());
        assert!(check(TEXT, &parse_directives("# CHECK-COUNT-3: = ")).is_ok());
    }
}
