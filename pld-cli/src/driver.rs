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

/// Renders diagnostics for stderr, coloured when stderr is a terminal.
pub fn render(diags: &Diagnostics, sources: &SourceMap) -> String {
    let text = diags.render(sources);
    if !std::io::stderr().is_terminal() {
        return text;
    }
    text.lines()
        .map(|l| {
            if let Some(rest) = l.strip_prefix("error:") {
                format!("\x1b[1;31merror\x1b[0m\x1b[1m:{rest}\x1b[0m")
            } else if let Some(rest) = l.strip_prefix("warning:") {
                format!("\x1b[1;33mwarning\x1b[0m\x1b[1m:{rest}\x1b[0m")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Writes `text` to `path`, creating parent folders.
pub fn write_file(path: &Path, text: &[u8]) -> Result<(), Failure> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::usage(format!("cannot create {}: {e}", dir.display())))?;
    }
    std::fs::write(path, text).map_err(|e| Failure::usage(format!("cannot write {}: {e}", path.display())))
}
