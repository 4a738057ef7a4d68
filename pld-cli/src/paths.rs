//! The files one `pld run` / `pld verify` writes are distinct: `--trace` and `--report-json`
//! may not name an output (`OUT/NAME.npy`), a generated input (`OUT/inputs/NAME.npy`) or each
//! other, which one of them would silently overwrite — a usage error naming both.

use crate::driver::Failure;
use pld_ir::{Direction, Function};
use std::path::{Path, PathBuf};

/// A path as the file system will resolve it: absolute, `.`/`..` folded lexically.
fn resolved(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Refuses a `--trace` / `--report-json` path that another file of the run also gets (`given`:
/// the `--input NAME=PATH` specs, whose inputs are not written).
pub fn check_distinct(
    out: &Path,
    func: &Function,
    given: &[String],
    trace: Option<&Path>,
    report_json: Option<&Path>,
) -> Result<(), Failure> {
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for p in &func.params {
        let name = func.values.name(p.value);
        if func.values.ty(p.value).as_tensor().is_none() {
            continue;
        }
        if given.iter().any(|g| g.split_once('=').is_some_and(|(n, _)| n == name)) {
            // Read from its `--input` file, not written.
            continue;
        }
        let (what, path) = if p.dir == Direction::Out {
            (format!("output `{name}`"), out.join(format!("{name}.npy")))
        } else {
            (format!("generated input `{name}`"), out.join("inputs").join(format!("{name}.npy")))
        };
        files.push((what, path));
    }
    for (flag, path) in [("--trace", trace), ("--report-json", report_json)] {
        let Some(path) = path else { continue };
        let at = resolved(path);
        if let Some((what, _)) = files.iter().find(|(_, f)| resolved(f) == at) {
            return Err(Failure::usage(format!(
                "{flag} {} is also the file of {what}: one would overwrite the other; give {flag} another path",
                path.display()
            )));
        }
        files.push((flag.to_string(), path.to_path_buf()));
    }
    Ok(())
}
