//! Shared command plumbing: load a DSL file, run the pipeline, render diagnostics.
//!
//! Diagnostics render rustc-style (`file:line:col`, source line, caret, notes); the word
//! `error`/`warning` is coloured only when stderr is a terminal.

use pld_ir::{Diagnostics, SourceMap, Target};
use std::io::IsTerminal;
use std::path::Path;

/// A command failure, mapped to an exit code by `main`.
pub enum Failure {
    /// Compile diagnostics (exit 1).
    Diagnostics(Diagnostics, SourceMap),
    /// A command-line problem (exit 2), as one line.
    Usage(String),
    /// A simulator fault (exit 3), with its report.
    Fault(String),
    /// A checked output differs from what was expected (exit 4), as one line.
    Mismatch(String),
    /// The run was interrupted by Ctrl-C (exit 130), with its report.
    Interrupted(String),
    /// `pld verify --exhaustive` stopped at a limit: neither proved nor refuted (exit 5), with
    /// what it covered.
    Incomplete(String),
}

impl Failure {
    /// A usage failure.
    pub fn usage(msg: impl Into<String>) -> Failure {
        Failure::Usage(msg.into())
    }
}

/// Parses a `--bind NAME=VALUE` value.
pub fn parse_binding(kv: &str) -> Result<(String, String), String> {
    match kv.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => {
            Ok((k.trim().to_string(), v.trim().to_string()))
        }
        _ => Err(format!("--bind `{kv}` is not NAME=VALUE")),
    }
}

/// Parses a `--target` value.
pub fn parse_target(s: &str) -> Result<Target, String> {
    Target::from_name(s).ok_or_else(|| format!("unknown target `{s}` (expected a2a3 or a5)"))
}

/// Renders diagnostics for stderr, coloured (by `annotate-snippets`) only when stderr is a
/// terminal and `NO_COLOR` is unset.
pub fn render(diags: &Diagnostics, sources: &SourceMap) -> String {
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    diags.render_color(sources, color)
}

/// Writes `text` to `path`, creating parent folders.
pub fn write_file(path: &Path, text: &[u8]) -> Result<(), Failure> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::usage(format!("cannot create {}: {e}", dir.display())))?;
    }
    std::fs::write(path, text).map_err(|e| Failure::usage(format!("cannot write {}: {e}", path.display())))
}
