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
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-rt-test-{}-{name}", std::process::id()));
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

/// The compile arguments of a `# pld-corpus-run:` line: `--bind`, `--program` and `--entry`
/// (which selects the unit whose host is NAME) are kept, run-only flags are dropped.
pub fn compile_args(run: &str) -> Vec<String> {
    let words: Vec<&str> = run.split_whitespace().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let (flag, value) = match words[i].split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (words[i], words.get(i + 1).map(|v| v.to_string())),
        };
        let inline = words[i].contains('=');
        match flag {
            "--bind" | "--program" | "--entry" => {
                out.push(flag.to_string());
                out.extend(value);
                i += if inline { 1 } else { 2 };
            }
            _ => i += 1,
        }
    }
    out
}

/// The examples `pld check` rejects on purpose (they have no runtime directory).
pub const REJECTED_EXAMPLES: &[&str] = &["examples/broken_divergent_allreduce.py"];

/// The DSL files to check: every example but [`REJECTED_EXAMPLES`], every corpus program (with the arguments of its
/// first `# pld-corpus-run:` line, and `--ranks` of the first `# pld-corpus-ranks:` value) and
/// the runtime test programs, host callbacks (`role=pl.Role.SubWorker`) included.
pub fn programs() -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for folder in ["examples", "pld-cli/tests/corpus", "pld-cli/tests/runtime_programs"] {
        let Ok(rd) = std::fs::read_dir(root().join(folder)) else { continue };
        let mut files: Vec<PathBuf> =
            rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "py")).collect();
        files.sort();
        for f in files {
            let src = std::fs::read_to_string(&f).unwrap_or_default();
            let name = format!("{folder}/{}", f.file_name().and_then(|n| n.to_str()).unwrap_or_default());
            if REJECTED_EXAMPLES.contains(&name.as_str()) {
                continue;
            }
            let mut args = src
                .lines()
                .find_map(|l| l.strip_prefix("# pld-corpus-run:"))
                .map(compile_args)
                .unwrap_or_default();
            // A program built for a fixed rank count records that many devices.
            if let Some(ranks) = src
                .lines()
                .find_map(|l| l.strip_prefix("# pld-corpus-ranks:"))
                .and_then(|r| r.split(',').next())
                .map(|r| r.trim().to_string())
            {
                args.extend(["--ranks".to_string(), ranks]);
            }
            out.push((name, args));
        }
    }
    // Codegen's test programs that have a host orchestrator: mixed cube+vector kernels and
    // one- and multi-block host allreduces.
    for f in ["mixed_gemm", "mixed_gemm_barrier", "host_allreduce", "host_allreduce_multicore"] {
        out.push((format!("pld-codegen-pto/tests/programs/{f}.py"), Vec::new()));
    }
    out
}

/// Which cloudpickle a `run.py` under the stand-in runtime imports.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Pickle {
    /// The installed package when python3 has one, else the stand-in.
    Installed,
    /// The stand-in (`runtime_decls/cloudpickle_standin/`), first on the path.
    StandIn,
}

fn has_cloudpickle() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        Command::new("python3").args(["-c", "import cloudpickle"]).output().is_ok_and(|o| o.status.success())
    })
}

/// The `PYTHONPATH` of a `run.py` under the stand-in runtime.
pub fn mock_python_path(pickle: Pickle) -> std::ffi::OsString {
    let mut path = vec![runtime_decls::mock_simpler()];
    match pickle {
        Pickle::StandIn => path.insert(0, runtime_decls::cloudpickle_standin()),
        Pickle::Installed if !has_cloudpickle() => path.push(runtime_decls::cloudpickle_standin()),
        Pickle::Installed => {}
    }
    std::env::join_paths(path).expect("paths without separators")
}

/// Runs a generated `run.py` against the stand-in runtime modules; returns its output and the
/// call log (empty when nothing was logged).
pub fn run_py(dir: &Path, ranks: usize, inputs: &[(&str, &str)], pickle: Pickle) -> (Output, String) {
    let work = dir.join("_mockrun");
    let _ = std::fs::remove_dir_all(&work);
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
        .env("PYTHONPATH", mock_python_path(pickle))
        .env("MOCK_SIMPLER_LOG", &log)
        .current_dir(&work)
        .output()
        .unwrap();
    (out, std::fs::read_to_string(log).unwrap_or_default())
}

/// Runs a generated `run.py` against the stand-in runtime modules; returns the call log.
pub fn run_py_with_mock(dir: &Path, ranks: usize, inputs: &[(&str, &str)]) -> String {
    let (out, log) = run_py(dir, ranks, inputs, Pickle::Installed);
    assert!(out.status.success(), "run.py: {}{}", text(&out.stdout), text(&out.stderr));
    log
}

/// The bytes of `<dir>/_mockrun/out/<name>.npy` as `T`.
pub fn mock_output<T: npyz::Deserialize>(dir: &Path, name: &str) -> Vec<T> {
    let bytes = std::fs::read(dir.join(format!("_mockrun/out/{name}.npy"))).unwrap();
    npyz::NpyFile::new(&bytes[..]).unwrap().into_vec().unwrap()
}
