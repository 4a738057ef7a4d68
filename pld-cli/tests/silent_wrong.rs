//! Issue #29, "nothing silently wrong": programs written the way users write them that used to
//! pass `check` and `run`/`verify` with wrong data and no word from pld, each next to its
//! correct twin, which must stay clean. (The protocol bugs of the issue — atomic adds into
//! unwritten bytes, unwritten integer windows, leftover credits, the atomic-add race — are
//! seeded bugs of the mutation suite, `tests/mutations/MUTATIONS`.)

mod cli_support;

use cli_support::{edited, pld, root, scratch, text};
use std::path::{Path, PathBuf};

const RING_MESH: &str = "pld-cli/tests/corpus/incore_ring_min_mesh_prod.py";

#[test]
fn a_mesh_shaped_signal_driving_a_ring_allreduce_is_rejected_by_check() {
    let dir = scratch("silent", "ring-mesh");
    let bad = edited(
        &dir,
        RING_MESH,
        &[(
            "data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Prod)",
            "data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Prod, mode=\"ring\")",
        )],
    );
    let out = pld(&["check", bad.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with(
            "error[E0104]: pld.tensor.allreduce mode=ring signal must be [2*(NR-1), NR], got [NR, 1]"
        ),
        "{err}"
    );
    assert!(err.contains(":76:"), "at the signal argument: {err}");
    // The twin: the ring allreduce of the same file, on its [2*(NR-1), NR] signal.
    let out = pld(&["check", RING_MESH]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn a_ring_shaped_signal_for_a_mesh_shaped_parameter_is_rejected_at_the_call() {
    let dir = scratch("silent", "ring-param");
    let bad = edited(
        &dir,
        RING_MESH,
        &[
            (
                "signal_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)",
                "signal_buf = pld.alloc_window_buffer([2 * (pld.world_size() - 1), pld.world_size()], dtype=pl.INT32)",
            ),
            (
                "signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)\n            self.mesh_orch",
                "signal = pld.window(signal_buf, [2 * (NR - 1), NR], dtype=pl.INT32)\n            self.mesh_orch",
            ),
        ],
    );
    let out = pld(&["check", bad.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "error[E0005]: argument 5 (`signal`) has shape [2 * (NR - 1), NR], but parameter `signal` is declared [NR, 1]: they differ for every value of `NR`"
        ),
        "{err}"
    );
    assert!(err.contains("parameter `signal` of `mesh_orch` declared here"), "{err}");
    // `run` never gets to compute on it.
    let out = pld(&[
        "run",
        bad.to_str().unwrap(),
        "--entry",
        "mesh_prod_host",
        "--ranks",
        "3",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
}

/// A kernel doubles its input into `y`; `Y_DECL` is `y`'s annotation in the kernel.
const STORE_PROGRAM: &str = r#"import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
N = 64


@pl.program
class Double:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, x: pl.Tensor[[1, N], pl.FP32], y: Y_DECL):
        t = pl.load(x, [0, 0], [1, N])
        u = pl.add(t, t)
        pl.store(u, [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        self.twice(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, N], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.chip(x[r], y[r], device=r)


def golden(tensors, params):
    tensors["y"][:] = 2 * tensors["x"]
"#;

#[test]
fn a_store_into_a_read_only_input_is_rejected_at_the_store() {
    let dir = scratch("silent", "store-input");
    let bad = dir.join("bad.py");
    std::fs::write(&bad, STORE_PROGRAM.replace("Y_DECL", "pl.Tensor[[1, N], pl.FP32]")).unwrap();
    for cmd in ["check", "run"] {
        let mut args = vec![cmd, bad.to_str().unwrap()];
        if cmd == "run" {
            args.extend(["--out", dir.to_str().unwrap()]);
        }
        let out = pld(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{cmd}: {err}");
        assert!(
            err.starts_with(
                "error: tile.store writes `y`, which is read-only here: it comes from an input parameter"
            ),
            "{err}"
        );
        assert!(err.contains("bad.py:15:29"), "at the store's target: {err}");
        assert!(err.contains("`y` is declared as an input here"), "a label at the parameter: {err}");
    }
    // The twin declares `y` as the kernel's output and computes twice its input.
    let good = dir.join("good.py");
    std::fs::write(&good, STORE_PROGRAM.replace("Y_DECL", "pl.Out[pl.Tensor[[1, N], pl.FP32]]")).unwrap();
    let out = pld(&[
        "run",
        good.to_str().unwrap(),
        "--ranks",
        "2",
        "--check-golden",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn verify_checks_expect_and_golden_as_run_does() {
    let dir = scratch("silent", "verify-expect");
    let prog = dir.join("double.py");
    std::fs::write(&prog, STORE_PROGRAM.replace("Y_DECL", "pl.Out[pl.Tensor[[1, N], pl.FP32]]")).unwrap();
    let out_dir = dir.join("out");
    let run = pld(&["run", prog.to_str().unwrap(), "--ranks", "2", "--out", out_dir.to_str().unwrap()]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    // The right expectation (the run's own output) passes; the input, a wrong one, exits 4.
    let right = format!("y={}", out_dir.join("y.npy").display());
    let wrong = format!("y={}", out_dir.join("inputs/x.npy").display());
    let verify = |expect: &str| {
        let d = dir.join("v");
        pld(&[
            "verify",
            prog.to_str().unwrap(),
            "--ranks",
            "2",
            "--schedules",
            "2",
            "--input",
            &format!("x={}", out_dir.join("inputs/x.npy").display()),
            "--expect",
            expect,
            "--out",
            d.to_str().unwrap(),
        ])
    };
    let out = verify(&right);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("check y vs"), "{}", text(&out.stdout));
    let out = verify(&wrong);
    assert_eq!(out.status.code(), Some(4), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("MISMATCH"), "{}", text(&out.stdout));
    // --check-golden too, and --trace-all (no trace to keep) is refused rather than ignored.
    let d = dir.join("g");
    let out = pld(&[
        "verify",
        prog.to_str().unwrap(),
        "--ranks",
        "2",
        "--schedules",
        "2",
        "--check-golden",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(d.join("y.npy").exists(), "verify writes the deterministic schedule's outputs into --out");
    let out =
        pld(&["verify", prog.to_str().unwrap(), "--ranks", "2", "--trace-all", "--out", d.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

/// The mutation suite's INT32 reduce-to-root, made FP32 (the accumulator NaN-filled until
/// written), with `(from, to)` edits applied.
fn fp32_reduce_to_root(dir: &Path, edits: &[(&str, &str)]) -> PathBuf {
    let mut src =
        std::fs::read_to_string(root().join("pld-cli/tests/mutations/reduce_to_root.py")).expect("program");
    for (from, to) in [
        ("[[1, C], pl.INT32]", "[[1, C], pl.FP32]"),
        ("[[NR, 1, C], pl.INT32]", "[[NR, 1, C], pl.FP32]"),
        ("pl.full([1, C], 0, dtype=pl.INT32)", "pl.full([1, C], 0.0, dtype=pl.FP32)"),
        ("pld.window(acc_buf, [1, C], dtype=pl.INT32)", "pld.window(acc_buf, [1, C], dtype=pl.FP32)"),
    ]
    .iter()
    .chain(edits)
    {
        assert!(src.contains(from), "reduce_to_root.py no longer contains `{from}`");
        src = src.replace(from, to);
    }
    let path = dir.join("reduce_to_root_fp32.py");
    std::fs::write(&path, src).expect("write");
    path
}

#[test]
fn an_atomic_add_into_bytes_nobody_wrote_is_an_uninitialised_read_on_every_schedule() {
    let dir = scratch("silent", "atomic-uninit");
    let good = fp32_reduce_to_root(&dir, &[]);
    let out = pld(&[
        "verify",
        good.to_str().unwrap(),
        "--ranks",
        "3",
        "--check-golden",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "the twin (root zeroes, then releases): {}", text(&out.stderr));
    // Every rank pushes into the root's accumulator that nobody zeroed: a NaN sum.
    let bad = fp32_reduce_to_root(&dir, &[("acc = pl.store(zero, [0, 0], acc)", "pass")]);
    for schedule in ["det", "random:3", "pct:2", "parallel"] {
        let out = pld(&[
            "run",
            bad.to_str().unwrap(),
            "--ranks",
            "3",
            "--schedule",
            schedule,
            "--out",
            dir.to_str().unwrap(),
        ]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{schedule}: {err}");
        assert!(
            err.starts_with("error[E0303]: read of uninitialised window bytes: rank "),
            "{schedule}: {err}"
        );
        assert!(err.contains("of buffer 'acc' in the window of rank 0 (pld.tile.put in reduce)"), "{err}");
    }
    // `--allow-uninit-reads` makes it the run's warning.
    let out = pld(&[
        "run",
        bad.to_str().unwrap(),
        "--ranks",
        "3",
        "--allow-uninit-reads",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("warning: rank "), "{}", text(&out.stderr));
}

#[test]
fn a_trace_or_report_path_that_is_an_output_file_is_a_usage_error() {
    let dir = scratch("silent", "paths");
    let out = dir.join("out");
    let (o, ex) = (out.to_str().unwrap(), "examples/quickstart_allreduce.py");
    let outputs = out.join("outputs.npy");
    let generated = out.join("inputs").join("..").join("inputs").join("inputs.npy");
    let report = dir.join("r.json");
    let cases: [(&[&str], &str); 3] = [
        (&["--trace", outputs.to_str().unwrap()], "--trace"),
        (&["--report-json", generated.to_str().unwrap()], "--report-json"),
        (&["--trace", report.to_str().unwrap(), "--report-json", report.to_str().unwrap()], "--report-json"),
    ];
    for (extra, flag) in cases {
        let mut args = vec!["run", ex, "--ranks", "2", "--out", o];
        args.extend(extra);
        let r = pld(&args);
        let err = text(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.starts_with(&format!("error: {flag} ")), "{err}");
        assert!(err.contains("is also the file of "), "names both: {err}");
    }
    assert!(!outputs.exists() && !report.exists(), "nothing was written");
    // Distinct paths run.
    let r = pld(&[
        "run",
        ex,
        "--ranks",
        "2",
        "--out",
        o,
        "--trace",
        dir.join("t.json").to_str().unwrap(),
        "--report-json",
        report.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", text(&r.stderr));
}

#[test]
fn an_input_longer_than_its_header_says_is_refused_from_its_length() {
    // A 2 GiB sparse file behind a header for 2 FP32 values: refused by its length (from the
    // file system), without reading its data.
    let dir = scratch("silent", "input-len");
    let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1, 64), }";
    let mut h = header.to_string();
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(h.len() as u16).to_le_bytes());
    bytes.extend_from_slice(h.as_bytes());
    let path = dir.join("big.npy");
    std::fs::write(&path, &bytes).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(bytes.len() as u64 + (1 << 31)).unwrap();
    let started = std::time::Instant::now();
    let spec = format!("inputs={}", path.display());
    let r = pld(&[
        "run",
        "examples/quickstart_allreduce.py",
        "--ranks",
        "2",
        "--input",
        &spec,
        "--out",
        dir.to_str().unwrap(),
    ]);
    let err = text(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(err.contains("needs 512 data bytes, but the file holds 2147483648"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
}

/// A host callback doubling each rank's row, called from `CALLER`.
const CALLBACK_PROGRAM: &str = r#"import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
N = 64


@pl.program
class Cb:
    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def double(mid: pl.Tensor[[NR, 1, N], pl.FP32], out: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]]):
        out[:] = mid * 2

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[NR, 1, N], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]]):
        CHIP_BODY

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, N], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]]):
        HOST_BODY
"#;

#[test]
fn a_host_callback_called_from_a_chip_orchestration_is_a_check_diagnostic() {
    let dir = scratch("silent", "callback-site");
    let bad = dir.join("bad.py");
    let src = CALLBACK_PROGRAM
        .replace("CHIP_BODY", "self.double(x, y)")
        .replace("HOST_BODY", "self.chip(x, y, device=0)");
    std::fs::write(&bad, src).unwrap();
    for cmd in ["check", "compile"] {
        let c = dir.join("c");
        let out = if cmd == "check" {
            pld(&[cmd, bad.to_str().unwrap()])
        } else {
            pld(&[cmd, bad.to_str().unwrap(), "--out", c.to_str().unwrap()])
        };
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{cmd}: {err}");
        assert!(
            err.starts_with("error: host callback `double` is called from a chip orchestration function"),
            "{err}"
        );
        assert!(err.contains("bad.py:16:9"), "{err}");
    }
    // Its twin calls the callback from the host orchestrator.
    let good = dir.join("good.py");
    let src = CALLBACK_PROGRAM.replace("CHIP_BODY", "pass").replace("HOST_BODY", "self.double(x, y)");
    std::fs::write(&good, src).unwrap();
    let out = pld(&["check", good.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}
