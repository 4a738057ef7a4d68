//! The ergonomic collective API through the `pld` binary: the corpus programs that use
//! `pld.all_reduce` (mesh Max on FP16, default Sum in the @pl.jit form, ring from a builder),
//! `pld.all_gather`, `pld.reduce_scatter` + `pld.broadcast`, `pld.all_to_all`,
//! `pld.all_to_all_v` and `pld.barrier` run at 2, 3 and 4 ranks and match results computed here from the run's own
//! inputs; and each ergonomic call's diagnostics (those of the `pld.tensor.*` op it becomes,
//! in the words the user wrote, that op named in a note)
//! are reported by `pld check` at the right line and column with exit 1.

mod cli_support;

use cli_support::{pld, text};

use std::path::{Path, PathBuf};

/// Loads an FP32, FP16 or INT32 `.npy` as (shape, values).
fn load(path: &Path) -> (Vec<usize>, Vec<f64>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = npyz::NpyFile::new(&bytes[..]).expect("valid npy");
    let shape: Vec<usize> = npy.shape().iter().map(|d| *d as usize).collect();
    let descr = npy.dtype().descr().trim_matches('\'').to_string();
    let values = match descr.as_str() {
        "<f4" => npy.into_vec::<f32>().expect("f32").into_iter().map(f64::from).collect(),
        "<f2" => npy.into_vec::<half::f16>().expect("f16").into_iter().map(f64::from).collect(),
        "<i4" => npy.into_vec::<i32>().expect("i32").into_iter().map(f64::from).collect(),
        other => panic!("{}: unexpected dtype {other}", path.display()),
    };
    (shape, values)
}

/// Runs a corpus program on `ranks` ranks; returns its output directory.
fn run_corpus(name: &str, ranks: usize, extra: &[&str]) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-ergo-{}-{name}-{ranks}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let file = format!("pld-cli/tests/corpus/{name}.py");
    let n = ranks.to_string();
    let mut args = vec!["run", file.as_str(), "--ranks", n.as_str(), "--out", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = pld(&args);
    assert!(out.status.success(), "{name} at {ranks} ranks:\n{}", text(&out.stderr));
    dir
}

fn input(dir: &Path, name: &str) -> (Vec<usize>, Vec<f64>) {
    load(&dir.join("inputs").join(format!("{name}.npy")))
}

fn output(dir: &Path, name: &str) -> (Vec<usize>, Vec<f64>) {
    load(&dir.join(format!("{name}.npy")))
}

#[track_caller]
fn close(got: &[f64], want: &[f64], rtol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-4 + rtol * w.abs(), "{what}[{i}]: got {g}, want {w}");
    }
}

#[test]
fn all_reduce_max_on_an_fp16_window() {
    for p in 2..=4 {
        let dir = run_corpus("ergo_all_reduce_max_fp16", p, &[]);
        let (shape, inp) = input(&dir, "inp");
        let row = shape[1] * shape[2];
        let max: Vec<f64> =
            (0..row).map(|i| (0..p).map(|k| inp[k * row + i]).fold(f64::NEG_INFINITY, f64::max)).collect();
        let want: Vec<f64> = (0..p).flat_map(|_| max.clone()).collect();
        close(&output(&dir, "peak").1, &want, 0.0, "peak");
    }
}

#[test]
fn all_reduce_default_sum_in_the_jit_form() {
    for p in 2..=4 {
        let dir = run_corpus("ergo_all_reduce_jit_counts", p, &[]);
        let (shape, counts) = input(&dir, "counts");
        let row = shape[2];
        let want: Vec<f64> =
            (0..p * row).map(|j| (0..p).map(|k| counts[k * row + j % row]).sum::<f64>() * 0.125).collect();
        close(&output(&dir, "freq").1, &want, 1e-6, "freq");
    }
}

#[test]
fn ring_all_reduce_with_a_static_rank_count() {
    for p in 2..=4 {
        let bind = format!("nranks={p}");
        let dir = run_corpus("ergo_all_reduce_ring_builder", p, &["--bind", &bind]);
        let (shape, x) = input(&dir, "x");
        let (_, acc0) = input(&dir, "acc");
        let row = shape[1] * shape[2];
        let want: Vec<f64> =
            (0..p * row).map(|j| acc0[j] + (0..p).map(|k| x[k * row + j % row] + 1.5).sum::<f64>()).collect();
        close(&output(&dir, "acc").1, &want, 1e-5, "acc");
    }
}

#[test]
fn ring_all_reduce_over_a_rank_count_that_does_not_divide_the_window_is_rejected() {
    // The host ring splits the window into one chunk per rank.
    let out = pld(&[
        "run",
        "pld-cli/tests/corpus/ergo_all_reduce_ring_builder.py",
        "--ranks",
        "4",
        "--bind",
        "nranks=7",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("needs an element count divisible by the 7 devices, got 60"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn all_gather_of_one_row_per_rank() {
    for p in 2..=4 {
        let dir = run_corpus("ergo_all_gather_jit", p, &[]);
        let (shape, x) = input(&dir, "x");
        let size = shape[2];
        let local: Vec<f64> = x.iter().map(|v| v * 2.0 - 1.0).collect();
        let want: Vec<f64> = (0..p).flat_map(|_| local.clone()).collect();
        let (oshape, got) = output(&dir, "table");
        assert_eq!(oshape, vec![p, p, size]);
        close(&got, &want, 1e-6, "table");
    }
}

#[test]
fn reduce_scatter_then_broadcast_from_rank_one() {
    for p in 2..=4 {
        let dir = run_corpus("ergo_reduce_scatter_broadcast", p, &[]);
        let (shape, blocks) = input(&dir, "blocks");
        let size = shape[2];
        let sum = |r: usize, i: usize| (0..p).map(|k| blocks[(k * p + r) * size + i]).sum::<f64>();
        let shard: Vec<f64> =
            (0..p).flat_map(|r| (0..size).map(move |i| (r, i))).map(|(r, i)| sum(r, i)).collect();
        let shared: Vec<f64> = (0..p).flat_map(|_| (0..size).map(|i| sum(1, i))).collect();
        close(&output(&dir, "shard").1, &shard, 1e-5, "shard");
        close(&output(&dir, "shared").1, &shared, 1e-5, "shared");
    }
}

#[test]
fn all_to_all_transposes_blocks_and_tags_the_sender() {
    for p in 2..=4 {
        let dir = run_corpus("ergo_all_to_all_transpose", p, &[]);
        let (shape, blocks) = input(&dir, "blocks");
        let size = shape[2];
        let mut want = vec![0.0; p * p * size];
        for r in 0..p {
            for k in 0..p {
                for i in 0..size {
                    want[(r * p + k) * size + i] = blocks[(k * p + r) * size + i] + k as f64;
                }
            }
        }
        close(&output(&dir, "received").1, &want, 1e-6, "received");
    }
}

#[test]
fn barrier_on_the_callers_signal_orders_publish_before_pull() {
    for p in 2..=4 {
        let dir = run_corpus("ergo_barrier_neighbour", p, &[]);
        let (shape, inp) = input(&dir, "inp");
        let row = shape[2];
        let want: Vec<f64> = (0..p * row)
            .map(|j| f64::from(half::f16::from_f64(inp[((j / row + 1) % p) * row + j % row] * 3.0)))
            .collect();
        close(&output(&dir, "out").1, &want, 1e-3, "out");
    }
}

#[test]
fn all_to_all_v_with_a_static_rank_count_dispatches_tokens() {
    const MAXR: usize = 3;
    for p in 2..=4 {
        let bind = format!("nranks={p}");
        let dir = run_corpus("ergo_all_to_all_v_moe", p, &["--bind", &bind]);
        let (shape, inp) = input(&dir, "inputs");
        let (_, sent) = input(&dir, "send_counts");
        let size = shape[2];
        let slot = p * MAXR * size;
        let mut tokens = vec![0.0; p * slot];
        let mut recv = vec![0.0; p * p];
        for r in 0..p {
            for s in 0..p {
                let k = sent[s * p + r].clamp(0.0, MAXR as f64) as usize;
                recv[r * p + s] = k as f64;
                for j in 0..k * size {
                    tokens[r * slot + s * MAXR * size + j] = inp[s * slot + r * MAXR * size + j] * 0.5;
                }
            }
        }
        close(&output(&dir, "tokens").1, &tokens, 1e-6, "tokens");
        close(&output(&dir, "recv_counts").1, &recv, 0.0, "recv_counts");
    }
}

/// A host program whose collective line (line 29) and chip line (line 19) are filled in.
const TEMPLATE: &str = r#"import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 40


@pl.program
class Neg:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, x: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        t = pl.load(x, [0, 0], [1, SIZE])
        data = pl.store(t, [0, 0], data)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]],
             rows: pld.DistributedTensor[[NR, SIZE], pl.FP32]):
        self.fill(x, data)
        CHIP_LINE

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, x: pl.Tensor[[NR, 1, SIZE], pl.FP32], plain: pl.Tensor[[1, SIZE], pl.FP32]):
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        rows_buf = pld.alloc_window_buffer(pld.world_size() * SIZE * 4)
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        rows = pld.window(rows_buf, [NR, SIZE], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.chip(x[r], data, rows, device=r)
        HOST_LINE
"#;

/// `pld check` on the template; asserts exit 1 and returns (first message, line, column,
/// the whole report).
fn check(host_line: &str, chip_line: &str) -> (String, usize, usize, String) {
    let src = TEMPLATE.replace("HOST_LINE", host_line).replace("CHIP_LINE", chip_line);
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "pld-ergo-neg-{}-{}.py",
        std::process::id(),
        src.len()
    ));
    std::fs::write(&path, &src).expect("write program");
    let out = pld(&["check", path.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "`{host_line}` / `{chip_line}`:\n{err}");
    let first = err.lines().next().unwrap_or_default();
    // `error: msg` or `error[E0005]: msg`.
    let message =
        first.split_once(": ").filter(|(h, _)| h.starts_with("error")).map_or(first, |(_, m)| m).to_string();
    let at = err.lines().find_map(|l| l.trim().strip_prefix("--> ")).expect("location");
    let mut parts = at.rsplitn(3, ':');
    let col = parts.next().and_then(|c| c.parse().ok()).expect("column");
    let line = parts.next().and_then(|l| l.parse().ok()).expect("line");
    let _ = std::fs::remove_file(&path);
    (message, line, col, err)
}

#[test]
fn ergonomic_calls_report_the_diagnostics_of_their_tensor_ops() {
    let cases: &[(&str, &str, &str, (usize, usize))] = &[
        (
            r#"data = pld.all_reduce(data, mode="ring")"#,
            "pass",
            r#"pld.all_reduce mode=ring requires an explicit signal. Use pld.tensor.allreduce(target, signal, mode="ring")"#,
            (29, 16),
        ),
        (
            "data = pld.all_reduce(data, nranks=4)",
            "pass",
            r#"pld.all_reduce nranks is only used with mode="ring"; omit it for a mesh allreduce (or pass mode="ring")"#,
            (29, 16),
        ),
        (
            r#"data = pld.all_reduce(data, mode="ring", nranks=0)"#,
            "pass",
            "pld.all_reduce nranks must be a positive static int (the ring signal [2*(NR-1)+1, NR] is a compile-time shape)",
            (29, 16),
        ),
        (
            r#"data = pld.all_reduce(data, mode="tree")"#,
            "pass",
            r#"pld.all_reduce mode must be "ring" or "mesh", got "tree""#,
            (29, 16),
        ),
        (
            "plain = pld.all_reduce(plain)",
            "pass",
            "pld.all_reduce target must be a DistributedTensor (window-bound), got TensorType",
            (29, 32),
        ),
        (
            "rows = pld.reduce_scatter(rows, op=pld.ReduceOp.Max)",
            "pass",
            "pld.reduce_scatter op must be ReduceOp.Sum (got int 1); Max / Min / Prod lowerings are not yet implemented",
            (29, 16),
        ),
        ("data = pld.broadcast(data)", "pass", "missing kwarg 'root' on pld.broadcast", (29, 16)),
        (
            "rows = pld.all_gather(data, data)",
            "pass",
            "pld.all_gather input and target must be different buffers, but the same expression was passed for both",
            (29, 37),
        ),
        (
            "rows = pld.all_to_all(rows, rows)",
            "pass",
            "pld.all_to_all input and target must be different windows, but the same expression was passed for both",
            (29, 37),
        ),
        (
            "sig = pld.barrier(data)",
            "pass",
            "pld.barrier signal must have INT32 element type (the barrier slot is an int counter), got dtype fp32",
            (29, 27),
        ),
        (
            "rows = pld.all_to_all_v(rows, rows, data, data, nranks=0)",
            "pass",
            "pld.all_to_all_v nranks must be a positive static int (the signal [nranks, 1] and MAX_RECV = target \
             rows / nranks are compile-time shapes)",
            (29, 16),
        ),
        ("rows = pld.all_to_all_v(rows, rows, data, data)", "pass", "missing kwarg 'nranks' on pld.all_to_all_v", (29, 16)),
        (
            "pass",
            "rows = pld.all_gather(data, rows)",
            "pld.all_gather requires an explicit signal outside host orchestrator functions; pass an INT32 signal \
             window (only a host orchestrator allocates a private one)",
            (19, 16),
        ),
    ];
    for (host, chip, want, at) in cases {
        let (m, line, col, err) = check(host, chip);
        assert_eq!(m, *want, "`{host}` / `{chip}`");
        assert_eq!((line, col), *at, "`{host}` / `{chip}`: {m}");
        // The op the call became is named in a note (pld.all_to_all_v's own record reports
        // a bad or missing nranks before any redirect).
        let line = if host.starts_with("pass") { chip } else { host };
        let written = line.split_once(" = ").map_or(*line, |(_, r)| r).split('(').next().unwrap_or_default();
        let canon = match written {
            "pld.all_reduce" => Some("pld.tensor.allreduce"),
            "pld.all_gather" => Some("pld.tensor.allgather"),
            "pld.reduce_scatter" => Some("pld.tensor.reduce_scatter"),
            "pld.broadcast" => Some("pld.tensor.broadcast"),
            "pld.all_to_all" => Some("pld.tensor.all_to_all"),
            "pld.barrier" => Some("pld.tensor.barrier"),
            _ => None,
        };
        if let Some(canon) = canon {
            let note = format!("= note: `{written}` is canonicalized onto `{canon}`");
            assert!(err.contains(&note), "`{host}` / `{chip}`: no `{note}` in\n{err}");
        }
    }
}

/// `pld.all_reduce(x, mode="ring", nranks=N)` run on another rank count is an error at the
/// call (exit 3), naming both counts; on N ranks it runs.
#[test]
fn ring_nranks_that_disagrees_with_the_world_is_an_error_at_the_call() {
    let f = "pld-cli/tests/corpus/ergo_all_reduce_ring_literal_nranks.py";
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-ergo-{}-nranks", std::process::id()));
    for ranks in ["2", "3"] {
        let o = pld(&["run", f, "--ranks", ranks, "--out", out.to_str().unwrap()]);
        let e = text(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{e}");
        assert!(
            e.contains("laid out for 4 ranks") && e.contains(&format!("comm domain of {ranks} ranks")),
            "{e}"
        );
        assert!(e.contains("pld.all_reduce(win, mode=\"ring\", nranks=4)"), "{e}");
    }
    let o = pld(&["run", f, "--ranks", "4", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// A kernel that calls `pld.all_reduce` wrongly is told so in the words it used: the first
/// line names `pld.all_reduce`, a note names the `pld.tensor.allreduce` it became.
#[test]
fn a_kernel_misusing_all_reduce_is_told_in_its_own_words() {
    let program = r#"import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 64


@pl.program
class KernelAllReduce:
    @pl.function(type=pl.FunctionType.InCore)
    def reduce(self, data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        data = pld.all_reduce(data, CALL_KW)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        self.reduce(data)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self):
        buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        data = pld.window(buf, [1, SIZE], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.chip(data, device=r)
"#;
    let cases = [
        (
            "op=pld.ReduceOp.Sum",
            "pld.all_reduce requires an explicit signal outside host orchestrator functions",
        ),
        (r#"mode="tree""#, r#"pld.all_reduce mode must be "ring" or "mesh", got "tree""#),
    ];
    for (i, (kw, first)) in cases.iter().enumerate() {
        let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("pld-ergo-kernel-{}-{i}.py", std::process::id()));
        std::fs::write(&path, program.replace("CALL_KW", kw)).expect("write program");
        let out = pld(&["check", path.to_str().unwrap(), "--ranks", "2"]);
        let _ = std::fs::remove_file(&path);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{kw}:\n{err}");
        let line = err.lines().next().unwrap_or_default();
        let message = line.split_once(": ").filter(|(h, _)| h.starts_with("error")).map_or(line, |(_, m)| m);
        assert!(message.starts_with(first), "{kw}: first line `{line}`, want `{first}`…\n{err}");
        assert!(!line.contains("pld.tensor.allreduce "), "{kw}: {line}");
        assert!(
            err.contains("= note: `pld.all_reduce` is canonicalized onto `pld.tensor.allreduce`"),
            "{kw}:\n{err}"
        );
        assert!(err.contains("data = pld.all_reduce(data"), "{kw}: the call is quoted\n{err}");
    }
}

/// Errors the passes raise later about an ergonomic call (the seed's loop rule, a signal-less
/// call nested in another expression) name what the user wrote, with the canonical op in a
/// note, like the type checker's.
#[test]
fn pass_diagnostics_of_an_ergonomic_call_name_what_the_user_wrote() {
    let cases: &[(&str, &str, (usize, usize))] = &[
        (
            "for i in pl.range(2):\n            data = pld.all_reduce(data)",
            "pld.all_reduce without a signal inside a `for`/`while` loop",
            (30, 20),
        ),
        (
            "while pld.world_size() < 0:\n            rows = pld.all_gather(data, rows)",
            "pld.all_gather without a signal inside a `for`/`while` loop",
            (30, 20),
        ),
        (
            "self.chip(x[0], pld.all_reduce(data), rows, device=0)",
            "pld.all_reduce without a signal must be a direct assignment, expression statement, or return value",
            (29, 25),
        ),
    ];
    for (host, want, at) in cases {
        let (m, line, col, err) = check(host, "pass");
        assert_eq!(m, *want, "`{host}`:\n{err}");
        assert_eq!((line, col), *at, "`{host}`: {m}");
        let written = want.split(' ').next().unwrap_or_default();
        let canon = written
            .replace("pld.all_reduce", "pld.tensor.allreduce")
            .replace("pld.all_gather", "pld.tensor.allgather");
        let note = format!("= note: `{written}` is canonicalized onto `{canon}`");
        assert!(err.contains(&note), "`{host}`: no `{note}` in\n{err}");
    }
}
