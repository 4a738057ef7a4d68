//! Issue #30 item 4: a `pl.dynamic` dimension takes `--ranks` only where the program uses it as
//! the rank count (a device loop indexes it, a rank indexes it, a window has it; D-cli-10).
//! A data dimension is bound by `--bind` or by an input's shape; unbound, it is a usage error
//! (exit 2) naming `--bind NAME=VALUE`, never a silent `--ranks`.

mod cli_support;

use cli_support::{pld, text};
use std::path::PathBuf;

/// Every rank scales its own `[ROWS, COLS]` block of rows; `NR` (the device loop's extent) is
/// the rank count, `ROWS` is data.
const PROGRAM: &str = r#"import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
ROWS = pl.dynamic("ROWS")
COLS = 32


@pl.program
class ScaleRows:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        t = pl.load(x, [0, 0], [4, COLS])
        u = pl.mul(t, 2.0)
        y = pl.store(u, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        y = self.scale(x, y)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[NR, ROWS, COLS], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.chip(x[r], y[r], device=r)


def golden(tensors, params):
    tensors["y"][:] = 2 * tensors["x"]
"#;

fn program(name: &str) -> (PathBuf, PathBuf) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-dyn-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("scale_rows.py");
    std::fs::write(&file, PROGRAM).unwrap();
    (file, dir.join("out"))
}

#[test]
fn a_data_dimension_without_a_binding_is_a_usage_error_naming_the_flag() {
    let (file, out) = program("unbound");
    for cmd in ["run", "verify"] {
        let o = pld(&[cmd, file.to_str().unwrap(), "--ranks", "4", "--out", out.to_str().unwrap()]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {err}");
        assert!(
            err.contains("dynamic dimension `ROWS` is not bound: pass --bind ROWS=VALUE"),
            "{cmd}: {err}"
        );
        // NR is the rank count: --ranks binds it, so it is not listed.
        assert!(!err.contains("NR=VALUE"), "{cmd}: {err}");
    }
}

#[test]
fn the_rank_count_comes_from_ranks_and_the_data_dimension_from_bind() {
    let (file, out) = program("bound");
    for ranks in ["2", "3"] {
        let o = pld(&[
            "run",
            file.to_str().unwrap(),
            "--ranks",
            ranks,
            "--bind",
            "ROWS=4",
            "--check-golden",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{ranks} ranks: {}", text(&o.stderr));
        let bytes = std::fs::read(out.join("y.npy")).unwrap();
        let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
        let n: u64 = ranks.parse().unwrap();
        assert_eq!(npy.shape(), [n, 4, 32]);
    }
}
