//! The one file-test runner: a DSL program file carries its own expectations in comment
//! headers, for the frontend, the pass pipeline or PTO codegen, checked by the one CHECK
//! matcher ([`crate::filecheck`]) and an expected block that `cargo xtask bless` rewrites.
//!
//! Headers (comment lines anywhere in the file):
//! - `# RUN: frontend | pipeline | codegen` — how far the program goes (default: the
//!   directory's default, see [`Suite`]); `frontend` parses and verifies, `pipeline` also runs
//!   the pass pipeline, `codegen` also emits PTO;
//! - `# DUMP-AFTER: PassName` — the text checked is the IR printed after that pass
//!   (`pipeline`; default the last pass);
//! - `# TARGET: a2a3 | a5` — the target (default a2a3);
//! - `# CHECK: …`, `# CHECK-NEXT: …`, `# CHECK-SAME: …`, `# CHECK-NOT: …`,
//!   `# CHECK-COUNT-N: …` — matched against the text, in order;
//! - `# ERROR: substring` — the program must be rejected with a diagnostic containing it;
//! - `# EXPECTED:` — at the end of the file (so rewriting it moves no source line), the
//!   following `#| ` lines hold the exact text (for a rejected program:
//!   one `line:col: message` line per diagnostic, its notes indented below); under
//!   `PLD_BLESS=1` they are rewritten.
//!
//! The text checked for `codegen` is every module preceded by `// ----- <file> -----`,
//! then `// ----- orchestration.json -----` and the JSON.

use crate::filecheck::{check, parse_directives};
use pld_ir::{Diagnostics, SourceMap, Target};
use std::path::{Path, PathBuf};

/// How far a file test takes its program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Parse and verify.
    Frontend,
    /// Also run the pass pipeline.
    Pipeline,
    /// Also emit PTO.
    Codegen,
}

impl Stage {
    fn parse(s: &str) -> Option<Stage> {
        match s {
            "frontend" => Some(Stage::Frontend),
            "pipeline" => Some(Stage::Pipeline),
            "codegen" => Some(Stage::Codegen),
            _ => None,
        }
    }
}

/// A directory of file tests and the stage its files run to unless they say otherwise.
#[derive(Clone, Debug)]
pub struct Suite {
    /// Short name, the prefix of each test's name.
    pub name: &'static str,
    /// The directory (`.py` files directly in it).
    pub dir: PathBuf,
    /// The default stage.
    pub stage: Stage,
    /// Whether a file with no expectation at all is skipped (a directory shared with other
    /// tests) rather than an error.
    pub skip_unchecked: bool,
}

impl Suite {
    /// The suite's `.py` files, sorted.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        files.retain(|p| p.extension().is_some_and(|e| e == "py"));
        files.sort();
        files
    }
}

/// The headers of one file.
struct Headers {
    stage: Stage,
    dump_after: Option<String>,
    target: Target,
    errors: Vec<String>,
    has_checks: bool,
    expected: Option<Vec<String>>,
}

fn headers(text: &str, default: Stage) -> Result<Headers, String> {
    let mut h = Headers {
        stage: default,
        dump_after: None,
        target: Target::default(),
        errors: Vec::new(),
        has_checks: !parse_directives(text).is_empty(),
        expected: None,
    };
    let mut in_expected = false;
    for line in text.lines().map(str::trim) {
        if in_expected {
            if let Some(l) = line.strip_prefix("#|") {
                h.expected.get_or_insert_with(Vec::new).push(l.strip_prefix(' ').unwrap_or(l).to_string());
                continue;
            }
            in_expected = false;
        }
        if let Some(v) = line.strip_prefix("# RUN:") {
            h.stage = Stage::parse(v.trim()).ok_or_else(|| format!("unknown RUN stage `{}`", v.trim()))?;
        } else if let Some(v) = line.strip_prefix("# DUMP-AFTER:") {
            h.dump_after = Some(v.trim().to_string());
        } else if let Some(v) = line.strip_prefix("# TARGET:") {
            h.target = match v.trim() {
                "a2a3" => Target::A2A3,
                "a5" => Target::A5,
                other => return Err(format!("unknown TARGET `{other}`")),
            };
        } else if let Some(v) = line.strip_prefix("# ERROR:") {
            h.errors.push(v.trim().to_string());
        } else if line == "# EXPECTED:" {
            in_expected = true;
            h.expected.get_or_insert_with(Vec::new);
        }
    }
    Ok(h)
}

/// Whether the file carries any expectation (CHECK lines, ERROR lines or an expected block).
pub fn has_expectations(text: &str) -> bool {
    headers(text, Stage::Frontend).is_ok_and(|h| h.has_checks || !h.errors.is_empty() || h.expected.is_some())
}

/// Renders diagnostics as `line:col: message`, each note on a line of its own after it.
fn rendered(d: &Diagnostics, sm: &SourceMap) -> String {
    let mut out = Vec::new();
    for x in d.iter() {
        out.push(match x.location(sm) {
            Some((_, line, col)) => format!("{line}:{col}: {}", x.message),
            None => x.message.clone(),
        });
        out.extend(x.notes.iter().map(|n| format!("  note: {n}")));
    }
    out.join("\n")
}

/// The text a file's program produces at its stage, or its rendered diagnostics.
fn produce(path: &Path, text: &str, h: &Headers) -> Result<String, String> {
    crate::init();
    let mut sm = SourceMap::new();
    let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().to_string());
    let opts = pld_frontend::ParseOptions { target: h.target, ..Default::default() };
    let mut p = pld_frontend::parse_program(&mut sm, &name, text, &opts).map_err(|d| rendered(&d, &sm))?;
    if h.stage == Stage::Frontend {
        return Ok(pld_ir::print_program(&p));
    }
    let popts = pld_passes::PipelineOptions { target: h.target, ..Default::default() };
    let dump = match &h.dump_after {
        Some(pass) => pld_passes::run_pipeline_with_dumps(&mut p, &popts, pass),
        None => pld_passes::run_pipeline(&mut p, &popts).map(|_| pld_ir::print_program(&p)),
    }
    .map_err(|d| rendered(&d, &sm))?;
    if h.stage == Stage::Pipeline {
        return Ok(dump);
    }
    let out = pld_codegen_pto::emit_program(&p, &pld_codegen_pto::CodegenOptions { target: h.target })
        .map_err(|d| rendered(&d, &sm))?;
    let mut s = String::new();
    for (file, m) in &out.modules {
        s.push_str(&format!("// ----- {file} -----\n{m}"));
    }
    s.push_str("// ----- orchestration.json -----\n");
    s.push_str(&out.orchestration);
    Ok(s)
}

/// Runs one file test; `Err` explains the failure. Under blessing, an `# EXPECTED:` block is
/// rewritten with the actual text instead of compared.
pub fn run_file(path: &Path, default: Stage) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let h = headers(&text, default)?;
    let result = produce(path, &text, &h);
    let actual = match (&result, h.errors.is_empty()) {
        (Ok(out), true) => {
            if h.has_checks {
                check(out, &parse_directives(&text)).map_err(|e| format!("{e}\n--- output ---\n{out}"))?;
            }
            out.clone()
        }
        (Ok(out), false) => {
            return Err(format!("expected errors {:?}, but it was accepted:\n{out}", h.errors))
        }
        (Err(diags), false) => {
            if let Some(e) = h.errors.iter().find(|e| !diags.contains(e.as_str())) {
                return Err(format!("expected error `{e}` not in:\n{diags}"));
            }
            diags.clone()
        }
        (Err(diags), true) => return Err(format!("rejected:\n{diags}")),
    };
    let Some(expected) = &h.expected else { return Ok(()) };
    if crate::golden::blessing() {
        return std::fs::write(path, with_expected(&text, &actual)).map_err(|e| format!("cannot bless: {e}"));
    }
    let want = expected.join("\n");
    if want.trim_end() != actual.trim_end() {
        return Err(format!(
            "EXPECTED block differs (run `cargo xtask bless` to accept):\n{}",
            crate::golden::line_diff(&want, &actual)
        ));
    }
    Ok(())
}

/// `text` with its `# EXPECTED:` block replaced by `actual`.
fn with_expected(text: &str, actual: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        if line.trim() == "# EXPECTED:" {
            while lines.peek().is_some_and(|l| l.trim_start().starts_with("#|")) {
                lines.next();
            }
            for a in actual.lines() {
                out.push_str(if a.is_empty() { "#|" } else { "#| " });
                out.push_str(a);
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    //! Header parsing and the expected-block rewrite.
    use super::*;

    #[test]
    fn headers_are_read() {
        let h = headers(
            "# RUN: codegen\n# TARGET: a5\n# ERROR: bad\n# EXPECTED:\n#| 4:5: bad\n#|\nx = 1\n",
            Stage::Pipeline,
        )
        .unwrap();
        assert_eq!(h.stage, Stage::Codegen);
        assert_eq!(h.target, Target::A5);
        assert_eq!(h.errors, ["bad"]);
        assert_eq!(h.expected, Some(vec!["4:5: bad".to_string(), String::new()]));
        assert!(headers("# RUN: link\n", Stage::Pipeline).is_err());
    }

    #[test]
    fn the_expected_block_is_rewritten_in_place() {
        let text = "# head\n# EXPECTED:\n#| old\n#| lines\nimport x\n";
        assert_eq!(
            with_expected(text, "new\n\nmore"),
            "# head\n# EXPECTED:\n#| new\n#|\n#| more\nimport x\n"
        );
    }
}
