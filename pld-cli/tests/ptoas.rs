//! `pld compile --ptoas PATH` / `PTOAS=PATH`: the real assembler run per module, tested with
//! fake assemblers (shell scripts that record their arguments and accept or reject), plus the
//! real `ptoas` when one is installed (skipped, and said so, when none is). Also: `pld check`
//! and `pld compile` run the PTO verifier by default, and the simulator runs the padded tile
//! shapes the lowerings now choose over their logical (valid) extent.

mod cli_support;

use cli_support::{pld_env, scratch, text};

use std::path::{Path, PathBuf};

/// A fake `ptoas` that appends its arguments to `log`, writes the `-o` file, and exits with
/// 1 (printing a verifier-style error) when the module contains `reject_if`, else 0.
fn fake_ptoas(dir: &Path, log: &Path, reject_if: &str) -> PathBuf {
    let path = dir.join("ptoas");
    let script = format!(
        "#!/bin/sh\necho \"$@\" >> '{log}'\nin=\"$1\"\nout=\"$3\"\nif grep -q -- '{reject_if}' \"$in\"; then\n  echo \"$in:1:1: error: 'pto.alloc_tile' op fake rejection\" >&2\n  exit 1\nfi\necho '// cpp' > \"$out\"\nexit 0\n",
        log = log.display()
    );
    std::fs::write(&path, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

#[test]
fn compile_runs_ptoas_on_every_module_with_the_reference_flags() {
    let d = scratch("ptoas-test", "accept");
    let log = d.join("args.log");
    let ptoas = fake_ptoas(&d, &log, "NEVER-IN-A-MODULE");
    let out_dir = d.join("out");
    for (target, arch) in [("a2a3", "a3"), ("a5", "a5")] {
        let _ = std::fs::remove_file(&log);
        let out = pld_env(
            &[
                "compile",
                "examples/allreduce_intrinsics.py",
                "--target",
                target,
                "--out",
                out_dir.to_str().unwrap(),
                "--ptoas",
                ptoas.to_str().unwrap(),
            ],
            &[],
        );
        let err = text(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(
            err.contains("ptoas: mesh_step.pto: ok") && err.contains("ptoas: ring_step.pto: ok"),
            "{err}"
        );
        let calls = std::fs::read_to_string(&log).unwrap();
        let lines: Vec<&str> = calls.lines().collect();
        assert_eq!(lines.len(), 2, "one run per module: {calls}");
        for (line, unit) in lines.iter().zip(["mesh_step", "ring_step"]) {
            let want = format!(
                "{dir}/{unit}.pto -o {dir}/{unit}.cpp --enable-insert-sync --pto-level=level3 --pto-arch {arch}",
                dir = out_dir.display()
            );
            assert_eq!(*line, want);
        }
        assert!(out_dir.join("mesh_step.cpp").exists(), "the assembler's output lands next to the module");
    }
}

#[test]
fn a_rejected_module_fails_the_compile_with_the_assemblers_message() {
    let d = scratch("ptoas-test", "reject");
    let log = d.join("args.log");
    // Reject only the ring kernel's module.
    let ptoas = fake_ptoas(&d, &log, "func.func @ring_step");
    let out_dir = d.join("out");
    let out = pld_env(
        &["compile", "examples/allreduce_intrinsics.py", "--out", out_dir.to_str().unwrap()],
        &[("PTOAS", &ptoas)],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("ptoas: mesh_step.pto: ok"), "every module is tried: {err}");
    assert!(err.contains("ptoas: ring_step.pto: rejected"), "{err}");
    assert!(err.contains("ptoas rejected ring_step.pto (exit 1)") && err.contains("fake rejection"), "{err}");
}

#[test]
fn without_out_the_modules_are_assembled_from_a_scratch_copy() {
    let d = scratch("ptoas-test", "stdout");
    let log = d.join("args.log");
    let ptoas = fake_ptoas(&d, &log, "NEVER-IN-A-MODULE");
    let out =
        pld_env(&["compile", "examples/quickstart_allreduce.py", "--ptoas", ptoas.to_str().unwrap()], &[]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(text(&out.stdout).contains("// ----- "), "modules still go to stdout");
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(!calls.is_empty() && calls.lines().all(|l| l.contains("--pto-arch a3")), "{calls}");
    assert!(err.lines().filter(|l| l.starts_with("ptoas: ")).count() >= 1, "{err}");
}

#[test]
fn an_assembler_that_cannot_start_is_a_usage_error() {
    let d = scratch("ptoas-test", "missing");
    let missing = d.join("no-such-ptoas");
    let out_dir = d.join("out");
    let out = pld_env(
        &[
            "compile",
            "examples/quickstart_allreduce.py",
            "--out",
            out_dir.to_str().unwrap(),
            "--ptoas",
            missing.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("cannot run ptoas"), "{}", text(&out.stderr));
}

/// The real assembler, when one is installed (`PTOAS` in the environment, or `ptoas` on
/// `PATH`): every example's modules must be accepted. Skipped, saying so, otherwise.
#[test]
fn the_real_ptoas_accepts_every_example_when_installed() {
    let real = std::env::var_os("PTOAS").filter(|v| !v.is_empty()).map(PathBuf::from).or_else(|| {
        std::env::var_os("PATH")
            .and_then(|paths| std::env::split_paths(&paths).map(|p| p.join("ptoas")).find(|p| p.is_file()))
    });
    let Some(real) = real else {
        eprintln!("skipping the real-ptoas check: no ptoas installed (set PTOAS=PATH to run it)");
        return;
    };
    let d = scratch("ptoas-test", "real");
    for example in ["quickstart_allreduce", "allreduce_intrinsics", "host_collectives", "moe_all_to_all_v"] {
        for target in ["a2a3", "a5"] {
            let out_dir = d.join(format!("{example}-{target}"));
            let file = format!("examples/{example}.py");
            let out = pld_env(
                &[
                    "compile",
                    &file,
                    "--target",
                    target,
                    "--out",
                    out_dir.to_str().unwrap(),
                    "--ptoas",
                    real.to_str().unwrap(),
                ],
                &[],
            );
            assert!(out.status.success(), "{example} on {target}: {}", text(&out.stderr));
        }
    }
}

#[test]
fn check_runs_the_pto_verifier() {
    let d = scratch("ptoas-test", "check");
    let bad = d.join("count_tile.py");
    std::fs::write(
        &bad,
        "import pypto.language as pl\n\n\n@pl.program\nclass Counts:\n    @pl.function(type=pl.FunctionType.InCore)\n    def copy(self, cnt: pl.Tensor[[4, 1], pl.INT32], out: pl.Out[pl.Tensor[[4, 1], pl.INT32]]):\n        for d in pl.range(4):\n            c = pl.load(cnt, [d, 0], [1, 1])\n            pl.store(c, [d, 0], out)\n",
    )
    .unwrap();
    for cmd in ["check", "compile"] {
        let out = pld_env(&[cmd, bad.to_str().unwrap()], &[]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{cmd}: {err}");
        assert!(err.contains("count_tile.py:9:13"), "{cmd}: the user's line: {err}");
        assert!(err.contains("pad cols to 8 (shape [1, 8]) and pass valid_shape=[1, 1]"), "{cmd}: {err}");
    }
    let fixed = d.join("count_tile_fixed.py");
    let src = std::fs::read_to_string(&bad).unwrap().replace("[1, 1])", "[1, 8], valid_shape=[1, 1])");
    std::fs::write(&fixed, src).unwrap();
    let out = pld_env(&["check", fixed.to_str().unwrap()], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

fn load_f32(path: &Path) -> (Vec<u64>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = npyz::NpyFile::new(&bytes[..]).expect("valid npy");
    let shape = npy.shape().to_vec();
    (shape, npy.into_vec::<f32>().expect("f32 data"))
}

#[test]
fn padded_whole_tensor_tiles_compute_the_logical_extent() {
    // [1, 5] FP32 tensors (20-byte rows) are added through [1, 8] tiles valid [1, 5].
    let d = scratch("ptoas-test", "narrow");
    let prog = d.join("narrow.py");
    std::fs::write(
        &prog,
        "import pypto.language as pl\n\n\n@pl.program\nclass Narrow:\n    @pl.function(type=pl.FunctionType.InCore)\n    def k(self, x: pl.Tensor[[1, 5], pl.FP32], y: pl.Tensor[[1, 5], pl.FP32], out: pl.Out[pl.Tensor[[1, 5], pl.FP32]]):\n        s = pl.add(x, y)\n        out = pl.assemble(out, s, [0, 0])\n",
    )
    .unwrap();
    let compiled = pld_env(&["compile", prog.to_str().unwrap()], &[]);
    let pto = text(&compiled.stdout);
    assert!(compiled.status.success(), "{}", text(&compiled.stderr));
    assert!(pto.contains("rows=1, cols=8,") && !pto.contains("cols=5,"), "{pto}");
    let out_dir = d.join("out");
    let run =
        pld_env(&["run", prog.to_str().unwrap(), "--entry", "k", "--out", out_dir.to_str().unwrap()], &[]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let (xs, x) = load_f32(&out_dir.join("inputs/x.npy"));
    let (_, y) = load_f32(&out_dir.join("inputs/y.npy"));
    let (os, o) = load_f32(&out_dir.join("out.npy"));
    assert_eq!((xs, os.clone()), (vec![1, 5], vec![1, 5]));
    let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
    assert_eq!(o, want);
}

/// A runtime directory for `target` written without ptoas, its `distributed_meta.json`
/// rewritten by `rewrite`.
fn runtime_dir_with_meta(name: &str, target: &str, rewrite: impl Fn(&str) -> String) -> PathBuf {
    let d = scratch("ptoas-test", name);
    let rt = d.join("rt");
    let out = pld_env(
        &[
            "compile",
            "examples/quickstart_allreduce.py",
            "--emit",
            "runtime",
            "--target",
            target,
            "--out",
            rt.to_str().unwrap(),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let meta = rt.join("distributed_meta.json");
    let old = std::fs::read_to_string(&meta).unwrap();
    std::fs::write(&meta, rewrite(&old)).unwrap();
    rt
}

#[test]
fn assemble_reads_the_recorded_target_from_compact_metadata() {
    // Regression: the target was found by searching for `"backend_type": "Ascend950"` with
    // one space, so an equivalent compact file assembled an a5 directory for a3.
    let rt = runtime_dir_with_meta("compact", "a5", |old| {
        let v: serde_json::Value = serde_json::from_str(old).unwrap();
        serde_json::to_string(&v).unwrap()
    });
    assert!(!std::fs::read_to_string(rt.join("distributed_meta.json")).unwrap().contains(": "));
    let log = rt.parent().unwrap().join("args.log");
    let ptoas = fake_ptoas(rt.parent().unwrap(), &log, "NEVER-IN-A-MODULE");
    let out = pld_env(&["assemble", rt.to_str().unwrap(), "--ptoas", ptoas.to_str().unwrap()], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(!calls.is_empty() && calls.lines().all(|l| l.ends_with("--pto-arch a5")), "{calls}");
}

#[test]
fn assemble_reports_malformed_metadata_with_its_line_and_column() {
    let rt =
        runtime_dir_with_meta("malformed", "a5", |old| old.replacen("\"schema\": 2", "\"schema\": two", 1));
    let ptoas = fake_ptoas(rt.parent().unwrap(), &rt.parent().unwrap().join("args.log"), "NEVER");
    let out = pld_env(&["assemble", rt.to_str().unwrap(), "--ptoas", ptoas.to_str().unwrap()], &[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("distributed_meta.json:2:14: malformed distributed_meta.json: expected ident\n"),
        "{err}"
    );
    assert!(!rt.parent().unwrap().join("args.log").exists(), "nothing is assembled: {err}");
}
