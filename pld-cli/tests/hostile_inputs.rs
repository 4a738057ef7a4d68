//! Hostile and edge-case inputs to the `pld` binary: each one ends in a diagnostic with a
//! source location (exit 1), a usage error (exit 2) or a simulator report (exit 3) — never a
//! panic, an abort or an exit 0 that ignores what the user asked for.

mod cli_support;

use cli_support::{pld, root, scratch};

use std::path::{Path, PathBuf};
use std::process::Output;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts `out` exited with `code` and did not panic.
fn assert_exit(out: &Output, code: i32) {
    let err = stderr(out);
    assert!(!err.contains("panicked"), "panic:\n{err}");
    assert_eq!(out.status.code(), Some(code), "stderr:\n{err}");
}

#[test]
fn a_cost_parameter_too_large_for_picoseconds_runs_instead_of_panicking() {
    let d = scratch("hostile", "cost");
    let out_dir = d.join("out");
    let out = pld(&[
        "run",
        "examples/quickstart_allreduce.py",
        "--ranks",
        "2",
        "--cost",
        "alpha_ns=1e30",
        "--out",
        out_dir.to_str().expect("utf-8 path"),
    ]);
    assert_exit(&out, 0);
}

/// `examples/<example>` with `old` replaced by `new` (which must occur), written to the scratch
/// folder `tag`; the file's path and the 1-based line of the replacement.
fn edited(tag: &str, example: &str, old: &str, new: &str) -> (PathBuf, usize) {
    let src = std::fs::read_to_string(root().join("examples").join(example)).expect("example");
    let at = src.find(old).unwrap_or_else(|| panic!("`{old}` not in {example}"));
    let line = src[..at].matches('\n').count() + 1;
    let d = scratch("hostile", tag);
    let path = d.join(example);
    std::fs::write(&path, src.replacen(old, new, 1)).expect("write edit");
    (path, line)
}

/// Asserts a compile diagnostic (exit 1) containing `needle`, located at `path:line:`.
fn assert_diagnostic_at(out: &Output, path: &Path, line: usize, needle: &str) {
    assert_exit(out, 1);
    let err = stderr(out);
    assert!(err.contains(needle), "missing `{needle}` in:\n{err}");
    assert!(err.contains(&format!("{}:{line}:", path.display())), "not located at line {line}:\n{err}");
}

#[test]
fn a_fractional_peer_is_a_diagnostic_at_the_argument() {
    let put = "pld.tensor.put(inbox, nxt, inp, atomic=pld.AtomicType.None_)";
    let (path, line) = edited("float-peer", "put_get_ring.py", put, &put.replace("nxt,", "0.5,"));
    let out = pld(&["check", path.to_str().expect("utf-8 path")]);
    assert_diagnostic_at(&out, &path, line, "peer must be an integer scalar (rank index), got a fp32 scalar");
}

#[test]
fn check_and_compile_of_a_missing_entry_are_usage_errors() {
    // Regression: on a one-program file both exited 0 having checked the whole program.
    for sub in ["check", "compile"] {
        let out = pld(&[sub, "examples/quickstart_allreduce.py", "--entry", "nope"]);
        assert_exit(&out, 2);
        assert!(
            stderr(&out).contains("--entry nope: no function `nope` in examples/quickstart_allreduce.py"),
            "{sub}: {}",
            stderr(&out)
        );
        assert_exit(&pld(&[sub, "examples/quickstart_allreduce.py", "--entry", "host_orch"]), 0);
    }
}

/// `pld run` of `examples/<example>` edited as [`edited`] does, on two ranks.
fn run_edited(tag: &str, example: &str, old: &str, new: &str) -> (Output, PathBuf, usize) {
    let (path, line) = edited(tag, example, old, new);
    let out_dir = path.with_file_name("out");
    let out = pld(&[
        "run",
        path.to_str().expect("utf-8 path"),
        "--ranks",
        "2",
        "--out",
        out_dir.to_str().expect("utf-8 path"),
    ]);
    (out, path, line)
}

const QUICKSTART_STORE: &str = "        out = pl.store(total, [0, 0], out)\n";

#[test]
fn a_tile_slice_past_the_tile_at_a_dynamic_offset_is_a_fault() {
    // Regression: rank 1 sliced columns [250, 314) of a 256-wide tile and exited 0, the
    // columns past the end read as zeros (or the next row's elements).
    let slice =
        "        t3 = pl.slice(total, [1, 64], [0, me * 250])\n        out = pl.store(t3, [0, 0], out)\n";
    let (out, path, line) = run_edited("slice", "quickstart_allreduce.py", QUICKSTART_STORE, slice);
    assert_exit(&out, 3);
    let err = stderr(&out);
    assert!(
        err.contains("the slice's valid [1, 64] at offsets [0, 250] exceeds the source tile [1, 256]"),
        "{err}"
    );
    assert!(err.contains(&format!("{}:{line}:", path.display())), "{err}");
}

#[test]
fn an_array_too_large_for_memory_is_a_fault_not_an_abort() {
    // Regression: `Vec` capacity overflow (a panic) in the simulator.
    let array = "        a = pl.array.create(9223372036854775807, dtype=pl.INT32)\n        a = pl.array.update_element(a, me, 3)\n";
    let (out, path, line) = run_edited(
        "array",
        "quickstart_allreduce.py",
        QUICKSTART_STORE,
        &format!("{array}{QUICKSTART_STORE}"),
    );
    assert_exit(&out, 3);
    let err = stderr(&out);
    assert!(
        err.contains("an array of extent 9223372036854775807 needs 16384.0 PiB of simulator memory"),
        "{err}"
    );
    assert!(err.contains(&format!("{}:{line}:", path.display())), "{err}");
}

#[test]
fn a_nan_or_negative_tolerance_is_a_usage_error() {
    // Regression: `--rtol nan` was accepted; every inexact comparison then failed.
    for flag in ["--rtol=nan", "--atol=-1", "--rtol=x"] {
        let out = pld(&["run", "examples/quickstart_allreduce.py", flag]);
        assert_exit(&out, 2);
        assert!(stderr(&out).contains("is not a non-negative number"), "{flag}: {}", stderr(&out));
    }
}

#[test]
fn an_assembler_that_cannot_start_is_a_usage_error_for_runtime_directories_too() {
    // Regression: `compile --emit runtime --ptoas MISSING` and `assemble --ptoas MISSING`
    // exited 1 (compile diagnostics, with no source location); `compile --out` exits 2.
    let d = scratch("hostile", "ptoas-missing");
    let missing = d.join("no-such-ptoas");
    let rt = d.join("rt");
    let (missing, rt) = (missing.to_str().expect("utf-8"), rt.to_str().expect("utf-8"));
    let example = "examples/quickstart_allreduce.py";
    let out = pld(&["compile", example, "--emit", "runtime", "--out", rt, "--ptoas", missing]);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("cannot run ptoas"), "{}", stderr(&out));
    let out = pld(&["assemble", rt, "--ptoas", missing]);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("cannot run ptoas"), "{}", stderr(&out));
}

/// A kernel reading past a host tensor whose extent is a `pl.dynamic` dim: the report (exit
/// 3) calls it a host tensor, not a window, names the parameter, and says which dimension it
/// is and where its value came from (`--bind`). `M` is data, not the rank count: without a
/// `--bind` it is unbound (exit 2), not silently `--ranks`.
#[test]
fn a_bounds_fault_on_a_host_tensor_names_the_dimension_and_its_binding() {
    let d = scratch("hostile", "host-bounds");
    let file = d.join("host_bounds.py");
    std::fs::write(
        &file,
        r#"import pypto.language as pl
import pypto.language.distributed as pld

M = pl.dynamic("M")
COLS = 16


@pl.program
class HostBounds:
    @pl.function(type=pl.FunctionType.InCore)
    def first_four_rows(self, x: pl.Tensor[[M, COLS], pl.FP32], out: pl.Out[pl.Tensor[[4, COLS], pl.FP32]]):
        t = pl.load(x, [0, 0], [4, COLS])
        out = pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[M, COLS], pl.FP32], out: pl.Out[pl.Tensor[[4, COLS], pl.FP32]]):
        out = self.first_four_rows(x, out)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, x: pl.Tensor[[M, COLS], pl.FP32], out: pl.Out[pl.Tensor[[4, COLS], pl.FP32]]):
        self.chip(x, out, device=0)
"#,
    )
    .expect("write program");
    let (f, o) = (file.to_str().unwrap(), d.join("out"));
    let o = o.to_str().unwrap();
    let cases: [(&[&str], &str); 1] = [(
        &["--ranks", "4", "--bind", "M=3"],
        "dimension 0 of host tensor 'x' is M = 3 (bound from --bind M=3)",
    )];
    for (extra, note) in cases {
        let mut args = vec!["run", f, "--out", o];
        args.extend_from_slice(extra);
        let out = pld(&args);
        assert_exit(&out, 3);
        let err = stderr(&out);
        let first = err.lines().next().unwrap_or_default();
        assert!(first.contains("out-of-bounds host tensor access"), "{extra:?}: {first}\n{err}");
        assert!(
            first.contains("exceeds the extent") && first.contains("of host tensor 'x'"),
            "{extra:?}:\n{err}"
        );
        assert!(!err.contains("window"), "{extra:?}: a host tensor is no window:\n{err}");
        assert!(err.contains(note), "{extra:?}: no `{note}` in\n{err}");
    }
    let out = pld(&["run", f, "--out", o, "--ranks", "2"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("dynamic dimension `M` is not bound: pass --bind M=VALUE"),
        "{}",
        stderr(&out)
    );
}
