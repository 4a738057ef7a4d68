//! Host callbacks (`role=pl.Role.SubWorker`) through the built `pld` binary and the system
//! `python3`: the callback's results are the ones Python computed, and every way it can fail
//! (a module it imports is missing, an exception inside it, no numpy, no interpreter) is a
//! report naming the callback and its source line, exit 3 — never zeros and exit 0.
//!
//! These tests need `python3` with numpy; without numpy they fail and say how to install it.

mod cli_support;

use cli_support::{root, scratch, text};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn require_numpy() {
    let ok = Command::new("python3").args(["-c", "import numpy"]).output().is_ok_and(|o| o.status.success());
    assert!(ok, "these tests need python3 with numpy: run `python3 -m pip install numpy` (.ci/run does)");
}

/// A chip kernel adds 1 to each rank's row, a host callback then doubles every row into
/// `out`; `CALLBACK_BODY` and `PRELUDE` are replaced per test.
const PROGRAM: &str = r#"import pypto.language as pl
import pypto.language.distributed as pld
import numpy as np
PRELUDE

NR = pl.dynamic("NR")
N = 64


@pl.program
class Twice:
    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        t = pl.load(x, [0, 0], [1, N])
        u = pl.add(t, 1.0)
        pl.store(u, [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        self.inc(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def double(mid: pl.Tensor[[NR, 1, N], pl.FP32], out: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]]):
CALLBACK_BODY

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, N], pl.FP32], mid: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
             out: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.chip(x[r], mid[r], device=r)
        self.double(mid, out)
"#;

fn program(d: &Path, prelude: &str, body: &str) -> PathBuf {
    let p = d.join("prog.py");
    std::fs::write(&p, PROGRAM.replace("PRELUDE", prelude).replace("CALLBACK_BODY", body)).unwrap();
    p
}

fn run(d: &Path, prog: &Path, python: Option<&str>) -> Output {
    let out = d.join("out");
    let mut c = Command::new(env!("CARGO_BIN_EXE_pld"));
    c.args(["run", prog.to_str().unwrap(), "--ranks", "3", "--out", out.to_str().unwrap()])
        .current_dir(root());
    if let Some(py) = python {
        c.env("PLD_PYTHON", py);
    }
    c.output().expect("run pld")
}

fn read_f32(path: &Path) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    npyz::NpyFile::new(&bytes[..]).unwrap().into_vec::<f32>().unwrap()
}

#[test]
fn callback_results_are_what_python_computed_after_the_chips() {
    require_numpy();
    let d = scratch("hostcb", "ok");
    let prog = program(&d, "", "        out[:] = mid * 2\n        print(\"callback saw\", float(mid.sum()))");
    let out = run(&d, &prog, None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let x = read_f32(&d.join("out/inputs/x.npy"));
    let mid = read_f32(&d.join("out/mid.npy"));
    let res = read_f32(&d.join("out/out.npy"));
    assert_eq!(x.len(), 3 * 64);
    for i in 0..x.len() {
        assert_eq!(mid[i], x[i] + 1.0, "element {i}");
        assert_eq!(res[i], 2.0 * (x[i] + 1.0), "element {i}: the callback ran after the chips");
    }
    let seen: f64 = mid.iter().map(|&v| f64::from(v)).sum();
    assert!(text(&out.stdout).contains(&format!("callback saw {seen:?}")), "{}", text(&out.stdout));
}

#[test]
fn a_missing_module_names_the_callback_its_line_and_the_module() {
    require_numpy();
    let d = scratch("hostcb", "import");
    let prog =
        program(&d, "import pld_no_such_module_q7", "        out[:] = pld_no_such_module_q7.twice(mid)");
    let out = run(&d, &prog, None);
    let e = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(e.contains("error: host callback failed: 'double' needs module 'pld_no_such_module_q7'"), "{e}");
    assert!(e.contains("prog.py:23:5"), "the callback's def line: {e}");
    assert!(e.contains("pip install pld_no_such_module_q7"), "{e}");
    // Nothing was passed off as a result.
    assert!(!d.join("out/out.npy").exists());
}

#[test]
fn an_exception_inside_the_callback_shows_the_traceback_tail() {
    require_numpy();
    let d = scratch("hostcb", "raise");
    let prog = program(
        &d,
        "",
        "        assert float(mid.min()) > 100.0, \"values too small\"\n        out[:] = mid",
    );
    let out = run(&d, &prog, None);
    let e = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(e.contains("'double' raised AssertionError: values too small"), "{e}");
    assert!(e.contains("line 24, in double"), "{e}");
    assert!(e.contains("assert float(mid.min()) > 100.0"), "{e}");
}

#[test]
fn a_callback_that_never_returns_stops_at_the_runs_timeout() {
    // Regression: `--timeout` did not bound a callback, so `while True: pass` held the run
    // for the bridge's own 600 s limit.
    require_numpy();
    let d = scratch("hostcb", "loop");
    let prog = program(&d, "", "        while True:\n            pass");
    let out_dir = d.join("out");
    let start = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_pld"))
        .args([
            "run",
            prog.to_str().unwrap(),
            "--ranks",
            "2",
            "--timeout",
            "2",
            "--out",
            out_dir.to_str().unwrap(),
        ])
        .current_dir(root())
        .output()
        .expect("run pld");
    let e = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(e.contains("host callback failed: 'double': python3 did not finish within 2.0 s"), "{e}");
    assert!(start.elapsed() < std::time::Duration::from_secs(60), "took {:?}", start.elapsed());
}

#[test]
fn no_numpy_or_no_interpreter_is_a_report_saying_so() {
    require_numpy();
    let d = scratch("hostcb", "nonumpy");
    let prog = program(&d, "", "        out[:] = mid");
    // `python3 -S` does not see site-packages: an interpreter without numpy.
    let wrapper = d.join("python-without-site");
    std::fs::write(&wrapper, "#!/bin/sh\nexec python3 -S \"$@\"\n").unwrap();
    let chmod = Command::new("chmod").arg("+x").arg(&wrapper).status().unwrap();
    assert!(chmod.success());
    let out = run(&d, &prog, Some(wrapper.to_str().unwrap()));
    let e = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(e.contains("cannot import numpy") && e.contains("pip install numpy"), "{e}");
    let out = run(&d, &prog, Some("/nonexistent/python3"));
    let e = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(e.contains("'double': cannot start `/nonexistent/python3`"), "{e}");
}

#[test]
fn a_golden_that_disagrees_exits_4() {
    require_numpy();
    let d = scratch("hostcb", "golden");
    let mut src = PROGRAM.replace("PRELUDE", "").replace("CALLBACK_BODY", "        out[:] = mid * 2");
    src.push_str("\n\ndef golden(tensors, params):\n    tensors[\"mid\"][:] = tensors[\"x\"] + 1\n    tensors[\"out\"][:] = (tensors[\"x\"] + 1) * 3\n");
    let prog = d.join("prog.py");
    std::fs::write(&prog, src).unwrap();
    let out = d.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_pld"))
        .args([
            "run",
            prog.to_str().unwrap(),
            "--ranks",
            "2",
            "--out",
            out.to_str().unwrap(),
            "--check-golden",
        ])
        .output()
        .unwrap();
    let so = text(&o.stdout);
    assert_eq!(o.status.code(), Some(4), "{so}{}", text(&o.stderr));
    assert!(so.contains("check mid vs golden: ok"), "{so}");
    assert!(so.contains("check out vs golden: MISMATCH #wrong"), "{so}");
}

#[test]
fn a_callback_that_exits_instead_of_returning_has_failed() {
    require_numpy();
    let d = scratch("hostcb", "exit");
    // `sys.exit(0)` before the outputs are written: the run must not pass zeros off as results.
    for code in ["0", "", "None", "2"] {
        let prog = program(&d, "import sys", &format!("        sys.exit({code})\n        out[:] = mid * 2"));
        let out = run(&d, &prog, None);
        let e = text(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "sys.exit({code}): {e}");
        assert!(
            e.contains("host callback failed: 'double' did not return normally: it called sys.exit("),
            "{e}"
        );
    }
    // Its correct twin returns after writing its output.
    let prog = program(&d, "import sys", "        out[:] = mid * 2\n        return None");
    let out = run(&d, &prog, None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn an_abstract_callback_is_an_error_and_an_unwritten_output_a_warning() {
    require_numpy();
    let d = scratch("hostcb", "abstract");
    let prog = program(&d, "", "        ...");
    let out = run(&d, &prog, None);
    let e = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(e.contains("'double' is abstract (its body is `...`)"), "{e}");
    // Rebinding the name instead of writing into the array leaves the output as it was.
    let prog = program(&d, "", "        out = mid * 2");
    let out = run(&d, &prog, None);
    let e = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{e}");
    assert!(e.contains("warning: host callback 'double' left its output `out` as it was"), "{e}");
}

#[test]
fn the_host_callback_example_matches_its_golden_and_computes_twice_a() {
    require_numpy();
    let d = scratch("hostcb", "example");
    let out = d.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_pld"))
        .args([
            "run",
            "examples/host_callback.py",
            "--ranks",
            "3",
            "--out",
            out.to_str().unwrap(),
            "--check-golden",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stdout).contains("check f vs golden: ok"), "{}", text(&o.stdout));
    let a = read_f32(&out.join("inputs/a.npy"));
    let f = read_f32(&out.join("f.npy"));
    assert_eq!(f.len(), 3 * 4 * 64);
    assert!(a.iter().zip(&f).all(|(a, f)| *f == 2.0 * a));
}

#[test]
fn check_golden_without_a_golden_is_a_usage_error() {
    require_numpy();
    let d = scratch("hostcb", "nogolden");
    let out = d.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_pld"))
        .args(["run", "examples/quickstart_allreduce.py", "--out", out.to_str().unwrap(), "--check-golden"])
        .current_dir(root())
        .output()
        .unwrap();
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("defines no golden function (def golden_host_orch(tensors, params) or def golden(tensors, params))"), "{e}");
}

#[test]
fn with_torch_importable_the_callback_gets_torch_from_numpy_views() {
    require_numpy();
    let d = scratch("hostcb", "torch");
    // A stand-in `torch` whose from_numpy records each call and returns the array itself
    // (a view of the same memory, as the real one is).
    let fake = d.join("fake_torch");
    std::fs::create_dir_all(fake.join("torch")).unwrap();
    std::fs::write(
        fake.join("torch/__init__.py"),
        "wrapped = []\n\ndef from_numpy(a):\n    wrapped.append(a.shape)\n    return a\n",
    )
    .unwrap();
    let prog = program(&d, "import torch", "        out[:] = mid * len(torch.wrapped)");
    let out = d.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_pld"))
        .args(["run", prog.to_str().unwrap(), "--ranks", "2", "--out", out.to_str().unwrap()])
        .env("PYTHONPATH", &fake)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let mid = read_f32(&out.join("mid.npy"));
    let res = read_f32(&out.join("out.npy"));
    // Both tensor arguments were wrapped, and the write through the view came back.
    assert!(mid.iter().zip(&res).all(|(m, r)| *r == 2.0 * m), "{res:?}");
}
