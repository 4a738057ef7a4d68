//! File tests: DSL programs under `tests/filetests/` parsed by pld-frontend, run through the
//! verified pipeline, and checked against their `# CHECK:` / `# CHECK-NOT:` lines on the IR
//! printed after the pass named by `# DUMP-AFTER:`, or against `# ERROR:` substrings of the
//! diagnostics when the pipeline must reject the program.

mod common;
use common::*;

fn run_file(path: &std::path::Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let directive = |key: &str| -> Vec<String> {
        text.lines().filter_map(|l| l.trim().strip_prefix(key).map(|r| r.trim().to_string())).collect()
    };
    let dump_after = directive("# DUMP-AFTER:").pop().unwrap_or_else(|| "DeadCodeElimination".into());
    let errors = directive("# ERROR:");
    let mut p = pld_frontend::parse_str(&text).map_err(|e| format!("parse: {}", messages(&e)))?;
    let result =
        pld_passes::run_pipeline_with_dumps(&mut p, &pld_passes::PipelineOptions::default(), &dump_after);
    match (result, errors.is_empty()) {
        (Ok(dump), true) => {
            // In-order CHECK lines; a CHECK-NOT must not occur between its neighbours.
            let mut pos = 0;
            let mut pending_not: Vec<String> = Vec::new();
            for line in text.lines().map(str::trim) {
                if let Some(pat) = line.strip_prefix("# CHECK-NOT:") {
                    pending_not.push(pat.trim().to_string());
                } else if let Some(pat) = line.strip_prefix("# CHECK:") {
                    let pat = pat.trim();
                    let Some(i) = dump[pos..].find(pat) else {
                        return Err(format!("CHECK `{pat}` not found after offset {pos} in:\n{dump}"));
                    };
                    for n in pending_not.drain(..) {
                        if dump[pos..pos + i].contains(&n) {
                            return Err(format!("CHECK-NOT `{n}` found before `{pat}` in:\n{dump}"));
                        }
                    }
                    pos += i + pat.len();
                }
            }
            for n in pending_not {
                if dump[pos..].contains(&n) {
                    return Err(format!("CHECK-NOT `{n}` found at the end of:\n{dump}"));
                }
            }
            Ok(())
        }
        (Ok(dump), false) => Err(format!("expected errors {errors:?}, but the pipeline accepted:\n{dump}")),
        (Err(d), false) => {
            let m = messages(&d);
            match errors.iter().find(|e| !m.contains(e.as_str())) {
                Some(e) => Err(format!("expected error `{e}` not in:\n{m}")),
                None => Ok(()),
            }
        }
        (Err(d), true) => Err(format!("pipeline failed:\n{}", messages(&d))),
    }
}

#[test]
fn filetests() {
    init();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/filetests");
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).unwrap().filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    assert!(!files.is_empty());
    let failures: Vec<String> =
        files.iter().filter_map(|f| run_file(f).err().map(|e| format!("{}: {e}", f.display()))).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
