//! Helpers shared by the command-line tests that run the built `pld` from the workspace root on
//! corpus programs and on edited copies of them: running `pld` (with or without extra
//! environment variables), reading its output, fresh scratch folders, and a corpus file with
//! literal edits applied.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root (the folder `pld` runs in).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

/// An empty folder `pld-<tag>-<pid>-<name>` under the temp dir.
pub fn scratch(tag: &str, name: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-{tag}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// Runs the built `pld` with `args` in the workspace root.
pub fn pld(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pld")).args(args).current_dir(root()).output().expect("run pld")
}

/// [`pld`] with the environment variables `env` set and `PTOAS` unset, so an assembler
/// installed on the machine never reaches a test that did not name one.
pub fn pld_env(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pld"));
    c.args(args).current_dir(root()).env_remove("PTOAS");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run pld")
}

/// Output bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `file` (relative to the root) with each `(from, to)` replaced once, written into `dir`; a
/// `from` the file no longer contains fails the test.
pub fn edited(dir: &Path, file: &str, edits: &[(&str, &str)]) -> PathBuf {
    let mut src = std::fs::read_to_string(root().join(file)).expect("program");
    for (from, to) in edits {
        assert!(src.contains(from), "{file} no longer contains `{from}`");
        src = src.replacen(from, to, 1);
    }
    let path = dir.join(Path::new(file).file_name().unwrap());
    std::fs::write(&path, src).expect("write");
    path
}
