//! `pld compile --ptoas PATH` (or `PTOAS=PATH` in the environment): the real assembler run on
//! every written module.
//!
//! Guarantees:
//! - Each module is assembled as the reference compiler does it, with the one command line
//!   `pld_runtime_simpler::ptoas::ptoas_command` builds (also used for the runtime
//!   directory): `ptoas <unit>.pto -o <unit>.cpp --enable-insert-sync --pto-level=level3
//!   --pto-arch a3|a5` (`level2` for a module without tile addresses; a3 for the a2a3 target),
//!   one process per module, at most 60 s each (then killed).
//! - The verdict of every module is printed on stderr (`ptoas: <unit>.pto: ok` or
//!   `… rejected (exit N)` followed by the assembler's own message); any rejection is a compile
//!   failure (exit 1) after all modules were tried. A path that cannot be started is a usage
//!   error (exit 2).

use crate::driver::Failure;
use pld_ir::{Diagnostic, Diagnostics, SourceMap, Span, Target};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// How long one module may take (the reference's `_run_ptoas` timeout).
const TIMEOUT: Duration = Duration::from_secs(60);

/// The assembler to run: `--ptoas PATH`, else a non-empty `PTOAS` environment variable.
pub fn resolve(flag: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = flag {
        return Some(p.to_path_buf());
    }
    std::env::var_os("PTOAS").filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// One module's verdict.
enum Verdict {
    Ok,
    Rejected(String),
}

fn assemble(ptoas: &Path, module: &Path, target: Target) -> Result<Verdict, Failure> {
    let cpp = module.with_extension("cpp");
    let text = std::fs::read_to_string(module)
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", module.display())))?;
    let mut child = pld_runtime_simpler::ptoas::ptoas_command(ptoas, module, &cpp, target, &text)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Failure::usage(format!("cannot run ptoas `{}`: {e}", ptoas.display())))?;
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Ok(Verdict::Rejected(format!("timed out after {} s", TIMEOUT.as_secs())));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(Failure::usage(format!("waiting for ptoas `{}`: {e}", ptoas.display()))),
        }
    };
    let out = child.wait_with_output().map_err(|e| Failure::usage(format!("reading ptoas output: {e}")))?;
    if status.success() {
        return Ok(Verdict::Ok);
    }
    let mut msg = String::from_utf8_lossy(&out.stderr).trim().to_string();
    if msg.is_empty() {
        msg = String::from_utf8_lossy(&out.stdout).trim().to_string();
    }
    let code = status.code().map_or_else(|| "a signal".to_string(), |c| format!("exit {c}"));
    Ok(Verdict::Rejected(format!("({code}) {msg}")))
}

/// Runs `ptoas` on every module `names` already written into `dir`; prints each verdict.
pub fn check_modules(ptoas: &Path, dir: &Path, names: &[String], target: Target) -> Result<(), Failure> {
    let mut diags = Diagnostics::new();
    for name in names {
        match assemble(ptoas, &dir.join(name), target)? {
            Verdict::Ok => eprintln!("ptoas: {name}: ok"),
            Verdict::Rejected(msg) => {
                eprintln!("ptoas: {name}: rejected");
                diags.push(Diagnostic::error(Span::DUMMY, format!("ptoas rejected {name} {msg}")));
            }
        }
    }
    if diags.has_errors() {
        return Err(Failure::Diagnostics(diags, SourceMap::new()));
    }
    Ok(())
}
