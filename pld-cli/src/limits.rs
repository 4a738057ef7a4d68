//! The command's guards against hostile input: the source-size cap, UTF-8 positions, checked
//! input sizes against `--max-memory`, the `--max-memory` value syntax and Ctrl-C.
//!
//! Guarantees: a source file is read at most [`pld_frontend::MAX_SOURCE_BYTES`] + 1 bytes
//! (`/dev/zero` fails at once); source that is not UTF-8 is a diagnostic at the line and
//! column of its first bad byte; the element count of a filled input is checked arithmetic and
//! its bytes are compared with the memory limit before anything is allocated; Ctrl-C during
//! a run sets the simulator's interrupt flag (the run stops with a report, exit 130), a second
//! Ctrl-C exits at once with 130.

use crate::driver::Failure;
use pld_ir::{Diagnostic, Expr, SourceMap, Span};
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Reads a DSL source file: capped in size, UTF-8 checked with a position.
pub fn read_source(path: &Path, sources: &mut SourceMap) -> Result<String, Failure> {
    let cannot = |e: std::io::Error| Failure::usage(format!("cannot read {}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(cannot)?;
    let cap = pld_frontend::MAX_SOURCE_BYTES;
    let mut bytes = Vec::new();
    file.take(cap as u64 + 1).read_to_end(&mut bytes).map_err(cannot)?;
    if bytes.len() > cap {
        return Err(Failure::usage(format!(
            "{} is larger than {} MiB, the limit for a source file",
            path.display(),
            cap >> 20
        )));
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
            // Up to the first bad byte the lossy text is the file's own, so the span is exact.
            let file = sources.add(path.display().to_string(), lossy);
            let d = Diagnostic::error(
                Span::new(file, at as u32, at as u32 + 1),
                format!("the source is not valid UTF-8 (byte {at} starts an invalid sequence)"),
            );
            Err(Failure::Diagnostics(d.into(), sources.clone()))
        }
    }
}

/// Checks the byte size of a `dtype` input of `shape` (declared by `dims`) and reserves it
/// against `cap`; `used` is what earlier inputs took.
pub fn reserve_input(
    name: &str,
    dtype: pld_ir::DataType,
    shape: &[usize],
    dims: &[Expr],
    sources: &SourceMap,
    used: &mut u64,
    cap: u64,
) -> Result<(), Failure> {
    let signed: Vec<i64> = shape.iter().map(|&d| i64::try_from(d).unwrap_or(-1)).collect();
    let bytes = pld_sim::limits::byte_size(dtype, &signed).map_err(|m| {
        let span =
            dims.iter().map(|d| d.span).filter(|s| !s.is_dummy()).reduce(Span::to).unwrap_or(Span::DUMMY);
        Failure::Diagnostics(
            Diagnostic::error(span, format!("parameter `{name}`: {m}")).into(),
            sources.clone(),
        )
    })?;
    let total = used.saturating_add(bytes);
    pld_sim::limits::check_total(total, cap, &format!("its inputs (up to `{name}`)"))
        .map_err(|f| Failure::Fault(f.render(Some(sources)).text))?;
    *used = total;
    Ok(())
}

/// Parses a `--max-memory` value: bytes, or a number with a K/M/G/T suffix (powers of 1024).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => return Err(format!("`{s}`: unknown size suffix `{c}` (expected K, M, G or T)")),
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    let n: u64 = num.trim().parse().map_err(|_| format!("`{s}` is not a byte count (e.g. 8G, 512M)"))?;
    n.checked_mul(1u64 << shift).filter(|&b| b > 0).ok_or_else(|| format!("`{s}` is out of range"))
}

/// [`parse_bytes`], where `0` is a valid count too (`--protocol-grain 0`).
pub fn parse_bytes_or_zero(s: &str) -> Result<u64, String> {
    if s.trim() == "0" {
        return Ok(0);
    }
    parse_bytes(s)
}

/// The interrupt flag, set by Ctrl-C once the handler is installed.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let handler_flag = Arc::clone(&flag);
        // A failure to install leaves Ctrl-C with its default effect (the process ends).
        let _ = ctrlc::set_handler(move || {
            if handler_flag.swap(true, Ordering::SeqCst) {
                std::process::exit(i32::from(crate::EXIT_INTERRUPTED));
            }
        });
        flag
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_parse() {
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert_eq!(parse_bytes("8G"), Ok(8 << 30));
        assert_eq!(parse_bytes("512m"), Ok(512 << 20));
        assert!(parse_bytes("0").is_err());
        assert!(parse_bytes("12Q").is_err());
        assert!(parse_bytes("99999999999T").is_err());
    }
}
