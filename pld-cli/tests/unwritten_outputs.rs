//! Issue #29 item 4, second half: a `pl.Out` parameter that no path of its function writes is a
//! warning at the parameter, printed by `check`, `compile`, `run` and `verify`, rendered like
//! an error but as `warning:`, and never changing the exit code; the correct twin (the kernel
//! stores its result) gets no warning.

mod cli_support;

use cli_support::{pld, scratch, text};
use std::path::Path;

/// A kernel that scales its input into `y`; `STORE` is its last line.
const PROGRAM: &str = r#"import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
N = 64


@pl.program
class Scale:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        t = pl.load(x, [0, 0], [1, N])
        u = pl.mul(t, 3.0)
        STORE

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        self.scale(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, N], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.chip(x[r], y[r], device=r)


def golden(tensors, params):
    tensors["y"][:] = 3 * tensors["x"]
"#;

/// Runs every command that loads a program on `file`; returns (command, exit code, stderr).
fn every_command(file: &Path, dir: &Path) -> Vec<(&'static str, Option<i32>, String)> {
    let f = file.to_str().unwrap();
    let out = |sub: &str| dir.join(sub).to_str().unwrap().to_string();
    let (c, r, v) = (out("compiled"), out("run"), out("verify"));
    let runs: [(&'static str, Vec<&str>); 4] = [
        ("check", vec!["check", f]),
        ("compile", vec!["compile", f, "--emit", "all", "--out", &c]),
        ("run", vec!["run", f, "--ranks", "2", "--out", &r]),
        ("verify", vec!["verify", f, "--ranks", "2", "--out", &v]),
    ];
    runs.into_iter()
        .map(|(name, args)| {
            let o = pld(&args);
            (name, o.status.code(), text(&o.stderr))
        })
        .collect()
}

#[test]
fn an_output_no_path_writes_is_a_warning_at_the_parameter_from_every_command() {
    let dir = scratch("unwritten", "forgot-store");
    let bad = dir.join("forgot_store.py");
    std::fs::write(&bad, PROGRAM.replace("        STORE\n", "")).unwrap();
    for (cmd, code, err) in every_command(&bad, &dir) {
        // A warning changes no exit code.
        assert_eq!(code, Some(0), "{cmd}: {err}");
        let at = err.find("warning: output `y` of `scale` is never written").unwrap_or_else(|| {
            panic!("{cmd}: no warning in\n{err}");
        });
        // At the parameter, with the function's span labelled.
        let snippet = &err[at..];
        assert!(snippet.contains("forgot_store.py:12:52"), "{cmd}: {snippet}");
        assert!(snippet.contains("no path of `scale` writes `y`"), "{cmd}: {snippet}");
        assert!(
            snippet.contains("= help: write `y`, or declare it `pl.Tensor` if it is an input"),
            "{cmd}: {snippet}"
        );
        assert_eq!(err.matches("warning: output").count(), 1, "{cmd}: only the kernel's y\n{err}");
    }
}

#[test]
fn the_twin_that_stores_its_output_gets_no_warning() {
    let dir = scratch("unwritten", "stores");
    let good = dir.join("stores.py");
    std::fs::write(&good, PROGRAM.replace("STORE", "pl.store(u, [0, 0], y)")).unwrap();
    for (cmd, code, err) in every_command(&good, &dir) {
        assert_eq!(code, Some(0), "{cmd}: {err}");
        assert!(!err.contains("warning"), "{cmd}: {err}");
    }
}
