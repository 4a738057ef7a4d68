//! Helpers shared by the runtime-directory tests (`runtime_dir.rs`, `runtime_dir_programs.rs`):
//! running the built `pld`, emitting into fresh temp folders, the structural checker, `g++
//! -fsyntax-only` on every emitted `.cpp`, and `run.py` under the stand-in runtime modules.
#![allow(dead_code)]

use pld_testkit::runtime_decls;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

pub fn pld(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pld"))
        .args(args)
        .env_remove("PTOAS")
        .current_dir(root())
        .output()
        .expect("run pld")
}

pub fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pld-rt-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

pub fn emit(file: &str, dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["compile", file, "--emit", "runtime", "--out", s(dir)];
    args.extend_from_slice(extra);
    pld(&args)
}

pub fn check_dir(dir: &Path, ranks: usize) {
    let out = Command::new("python3")
        .arg(runtime_decls::checker())
        .arg(dir)
        .arg(ranks.to_string())
        .output()
        .expect("run python3");
    assert!(
        out.status.success() && text(&out.stdout).trim() == "ok",
        "{} (ranks {ranks}):\n{}{}",
        dir.display(),
        text(&out.stdout),
        text(&out.stderr)
    );
}

pub fn cpp_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() && p.file_name().is_some_and(|n| n != "ptoas") {
            cpp_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "cpp") {
            out.push(p);
        }
    }
}

pub fn gxx(file: &Path) -> Output {
    let core =
        if file.components().any(|c| c.as_os_str() == "aic") { "-D__DAV_CUBE__" } else { "-D__DAV_VEC__" };
    Command::new("g++")
        .args(["-fsyntax-only", "-std=c++17", "-D__CPU_SIM", core, "-I"])
        .arg(runtime_decls::include_dir())
        .arg(file)
        .output()
        .expect("run g++")
}

pub fn assert_compiles(dir: &Path) -> usize {
    let mut files = Vec::new();
    cpp_files(dir, &mut files);
    files.sort();
    for f in &files {
        let out = gxx(f);
        assert!(out.status.success(), "g++ -fsyntax-only {}:\n{}", f.display(), text(&out.stderr));
    }
    files.len()
}

pub const HEAD: &str =
    "import pypto.language as pl\nimport pypto.language.distributed as pld\n\n\n@pl.program\nclass P:\n";

pub fn emit_source(name: &str, body: &str) -> Output {
    let dir = out_dir(name);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.py"));
    std::fs::write(&file, format!("{HEAD}{body}")).unwrap();
    emit(s(&file), &dir.join("out"), &[])
}

/// Runs a generated `run.py` against the stand-in runtime modules; returns the call log.
pub fn run_py_with_mock(dir: &Path, ranks: usize, inputs: &[(&str, &str)]) -> String {
    let work = dir.join("_mockrun");
    std::fs::create_dir_all(work.join("in")).unwrap();
    let mut make = String::from("import numpy as np\n");
    for (name, expr) in inputs {
        make.push_str(&format!("np.save('in/{name}.npy', {expr})\n"));
    }
    let out = Command::new("python3").arg("-c").arg(&make).current_dir(&work).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let log = work.join("log.jsonl");
    let out = Command::new("python3")
        .arg(dir.join("run.py"))
        .args(["--ranks", &ranks.to_string(), "--inputs", "in", "--outputs", "out"])
        .env("PYTHONPATH", runtime_decls::mock_simpler())
        .env("MOCK_SIMPLER_LOG", &log)
        .current_dir(&work)
        .output()
        .unwrap();
    assert!(out.status.success(), "run.py: {}{}", text(&out.stdout), text(&out.stderr));
    std::fs::read_to_string(log).unwrap()
}
