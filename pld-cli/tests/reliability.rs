//! Regression tests of issue #18's crashes, hangs and silently wrong data, each through the
//! `pld` binary with the minimal program inline: every one ends in a diagnostic with a
//! location (exit 1), a usage error (exit 2), a report (exit 3) or an interrupt report (exit
//! 130) — never a panic, an abort, a hang or a wrong result with exit 0.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn dir(name: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-reliability-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Writes `src` as `NAME.py` and runs `pld SUB NAME.py ARGS...` there.
fn pld(name: &str, src: &[u8], sub: &str, args: &[&str]) -> (Option<i32>, String, Duration) {
    let d = dir(name);
    let file = d.join(format!("{name}.py"));
    std::fs::write(&file, src).expect("write source");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pld"));
    cmd.arg(sub).arg(&file);
    if sub == "run" {
        cmd.arg("--out").arg(d.join("out"));
    }
    let start = Instant::now();
    let out: Output = cmd.args(args).current_dir(&d).output().expect("run pld");
    let took = start.elapsed();
    let _ = std::fs::remove_dir_all(&d);
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned(), took)
}

const HEAD: &str =
    "import pypto.language as pl\nimport pypto.language.distributed as pld\n\nNR = pl.dynamic(\"NR\")\n";

/// A one-kernel program: `kernel` is the InCore body (8-space indented), `chip` extra lines of
/// the orchestration before the launch, `host` extra lines of the host before its loop.
fn program(kernel: &str, chip: &str, host: &str) -> String {
    format!(
        r#"{HEAD}

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[1, 64], pl.FP32], out: pl.Out[pl.Tensor[[1, 64], pl.FP32]]):
{kernel}        t = pl.load(x, [0, 0], [1, 64])
        out = pl.store(t, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, x: pl.Tensor[[1, 64], pl.FP32], out: pl.Out[pl.Tensor[[1, 64], pl.FP32]]):
{chip}        self.kernel(x, out)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, x: pl.Tensor[[NR, 1, 64], pl.FP32], out: pl.Out[pl.Tensor[[NR, 1, 64], pl.FP32]]):
{host}        for r in pl.range(pld.world_size()):
            self.chip_orch(x[r], out[r], device=r)
"#
    )
}

/// The 1-based line of the first line of `src` containing `needle`.
fn line_of(src: &str, needle: &str) -> usize {
    src.lines().position(|l| l.contains(needle)).expect("needle in source") + 1
}

fn assert_located(err: &str, file: &str) {
    assert!(err.contains(&format!("{file}.py:")), "no file:line:col in:\n{err}");
}

#[test]
fn deep_nesting_is_a_diagnostic_not_a_stack_overflow() {
    for (name, expr) in [
        ("brackets", format!("{}{}", "[".repeat(6800), "]".repeat(6800))),
        ("plus_chain", vec!["1"; 10_700].join(" + ")),
        ("minus_chain", vec!["1"; 10_700].join(" - ")),
        ("not_chain", format!("{}True", "not ".repeat(10_700))),
    ] {
        let src = format!("{HEAD}\nX = {expr}\n");
        for sub in ["check", "compile"] {
            let (code, err, _) = pld(name, src.as_bytes(), sub, &[]);
            assert_eq!(code, Some(1), "{name} {sub}:\n{}", &err[..err.len().min(400)]);
            assert!(err.contains("expression nests deeper than 1200"), "{name}");
            assert!(err.contains(&format!("{name}.py:6:")), "{name}: no location");
        }
    }
}

#[test]
fn a_huge_kernel_tile_is_a_diagnostic_at_its_line_not_a_capacity_overflow() {
    // `run` applies `check`'s rules first (D-cli-9): a tile no tile buffer can hold is a compile
    // error at its line, for `run` as for `check`, before anything is simulated.
    let kernel = "        big = pl.full([9223372036854775807, 64], 1.0, dtype=pl.FP32)\n        \
                  s = pl.slice(big, [1, 64], [0, 0])\n        out = pl.store(s, [0, 0], out)\n";
    let src = program(kernel, "", "");
    for sub in ["run", "check"] {
        let (code, err, _) = pld("huge_tile", src.as_bytes(), sub, &[]);
        assert_eq!(code, Some(1), "{sub}: {err}");
        assert!(err.contains("is too large for a pto tile buffer"), "{sub}: {err}");
        assert!(err.contains(&format!("huge_tile.py:{}:", line_of(&src, "pl.full"))), "{sub}: {err}");
    }
    let src = src.replace("[9223372036854775807, 64]", "[4096, 4096]");
    let (code, err, _) = pld("big_tile", src.as_bytes(), "run", &["--max-memory", "64M"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("the tile buffers do not fit the 'a2a3' target: 67109120 bytes of vec"), "{err}");
}

#[test]
fn input_sizes_that_overflow_are_a_diagnostic_at_the_shape() {
    // A bound dynamic dimension and a literal shape whose count wraps to 0 in 64 bits.
    let src = program("", "", "").replace(
        "x: pl.Tensor[[NR, 1, 64], pl.FP32]",
        "x: pl.Tensor[[NR, 1, 64], pl.FP32], y: pl.Tensor[[M, 64], pl.FP32]",
    );
    let src = src.replace("NR = pl.dynamic(\"NR\")", "NR = pl.dynamic(\"NR\")\nM = pl.dynamic(\"M\")");
    let (code, err, _) = pld("bind_overflow", src.as_bytes(), "run", &["--bind", "M=9223372036854775807"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("overflows 64 bits") && err.contains("parameter `y`"), "{err}");
    assert_located(&err, "bind_overflow");
    let src = program("", "", "").replace(
        "x: pl.Tensor[[NR, 1, 64], pl.FP32]",
        "x: pl.Tensor[[NR, 1, 64], pl.FP32], y: pl.Tensor[[4294967296, 4294967296], pl.INT32]",
    );
    let (code, err, _) = pld("wraps_to_zero", src.as_bytes(), "run", &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("overflows 64 bits") && !err.contains("out-of-bounds"), "{err}");
    assert_located(&err, "wraps_to_zero");
}

#[test]
fn huge_windows_and_tensors_are_refused_with_the_bytes_needed_and_the_limit() {
    let src = format!(
        r#"{HEAD}

@pl.program
class HugeWindow:
    @pl.function(type=pl.FunctionType.InCore)
    def stage(self, x: pl.Tensor[[1, 64], pl.FP32], win: pl.InOut[pld.DistributedTensor[[1, 64], pl.FP32]]):
        me = pld.rank(pld.get_comm_ctx(win))
        pld.tensor.put(win, me, x, atomic=pld.AtomicType.None_)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, x: pl.Tensor[[1, 64], pl.FP32], win: pl.InOut[pld.DistributedTensor[[1, 64], pl.FP32]]):
        self.stage(x, win)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, x: pl.Tensor[[NR, 1, 64], pl.FP32]):
        buf = pld.alloc_window_buffer(1099511627776)
        for r in pl.range(pld.world_size()):
            win = pld.window(buf, [1, 64], dtype=pl.FP32)
            self.chip_orch(x[r], win, device=r)
"#
    );
    let (code, err, took) = pld("huge_window", src.as_bytes(), "run", &[]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("memory limit: the run needs 2.0 TiB (2199023256064 bytes)"), "{err}");
    assert!(err.contains("more than the limit of") && err.contains("--max-memory"), "{err}");
    assert!(took < Duration::from_secs(20), "{took:?}");
    // An unused 256 MiB-per-rank input (the kernels keep their well-typed [1, 64] slices).
    let src = program("", "", "").replace(
        "x: pl.Tensor[[NR, 1, 64], pl.FP32]",
        "x: pl.Tensor[[NR, 1, 64], pl.FP32], big: pl.Tensor[[NR, 1048576, 64], pl.FP32]",
    );
    let (code, err, _) = pld("max_memory", src.as_bytes(), "run", &["--max-memory", "1M"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("(1048576 bytes)") && err.contains("(536871424 bytes)"), "{err}");
}

#[test]
fn dev_zero_as_source_fails_fast() {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_pld")).args(["check", "/dev/zero"]).output().expect("run pld");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("larger than 8 MiB"));
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn non_utf8_source_names_the_line_and_column_of_the_first_bad_byte() {
    let src = b"import pypto.language as pl\nX = 1\nY = \"ok \xff\"\n";
    let (code, err, _) = pld("not_utf8", src, "check", &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("not valid UTF-8") && err.contains("not_utf8.py:3:9"), "{err}");
}

#[test]
fn loops_without_simulator_steps_hit_the_budget_at_every_level() {
    let spin = "        for i in pl.range(9223372036854775807):\n            pass\n";
    let dead = "        for i in pl.range(9223372036854775807):\n            unused = i * 2\n";
    let forever = "        while True:\n            pass\n";
    for (name, src) in [
        ("kernel_spin", program(spin, "", "")),
        ("kernel_dead_body", program(dead, "", "")),
        ("chip_spin", program("", spin, "")),
        ("host_while", program("", "", forever)),
    ] {
        let line = src.lines().position(|l| l.contains("for i in") || l.contains("while")).unwrap_or(0) + 1;
        let (code, err, took) = pld(name, src.as_bytes(), "run", &["--max-steps", "200000"]);
        assert_eq!(code, Some(3), "{name}: {err}");
        assert!(err.contains("step budget exhausted"), "{name}: {err}");
        assert!(err.contains(&format!("{name}.py:{line}:")), "{name}: no line {line} in\n{err}");
        assert!(took < Duration::from_secs(60), "{name}: {took:?}");
    }
    // The default budget fires too (it is what a user who passes nothing gets).
    let (code, err, took) = pld("default_budget", program(spin, "", "").as_bytes(), "run", &[]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("rank 0 core") && err.contains("rank 1 core"), "{err}");
    assert!(took < Duration::from_secs(60), "{took:?}");
}

/// A notify loop: each rank sets its neighbour's cell and waits on its own, forever.
fn notify_loop() -> String {
    format!(
        r#"{HEAD}

@pl.program
class NotifyLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def ping(self, signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        ctx = pld.get_comm_ctx(signal)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        for i in pl.range(1000000000):
            pld.system.notify(signal, (me + 1) % n, [me, 0], 1, op=pld.NotifyOp.Set)
            pld.system.wait(signal, [(me + n - 1) % n, 0], 1, cmp=pld.WaitCmp.Ge)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        self.ping(signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, x: pl.Tensor[[NR, 1, 64], pl.FP32]):
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        for r in pl.range(pld.world_size()):
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.chip_orch(signal, device=r)
"#
    )
}

#[test]
fn timeout_stops_a_notify_loop_with_a_per_core_report() {
    for schedule in ["det", "parallel"] {
        let (code, err, took) = pld(
            "notify_loop",
            notify_loop().as_bytes(),
            "run",
            &["--timeout", "1.5", "--schedule", schedule],
        );
        assert_eq!(code, Some(3), "{schedule}: {err}");
        assert!(err.contains("wall-clock limit"), "{schedule}: {err}");
        let at = format!("notify_loop.py:{}:", line_of(&notify_loop(), "pld.system.wait"));
        assert!(err.contains("in 'ping' at") && err.contains(&at), "{schedule}: {err}");
        // The report names the last op the core ran: one of the loop's, whichever the
        // deadline caught (the pipeline fences the notify and invalidates after the wait).
        let loop_ops = ["pld.system.notify", "pld.system.wait", "system.fence", "system.cacheinvalid"];
        assert!(loop_ops.iter().any(|op| err.contains(&format!("last op '{op}'"))), "{schedule}: {err}");
        assert!(took < Duration::from_secs(20), "{schedule}: {took:?}");
    }
}

#[test]
fn ctrl_c_prints_the_report_and_exits_130() {
    let d = dir("ctrl_c");
    let file = d.join("ctrl_c.py");
    std::fs::write(&file, notify_loop()).expect("write");
    let child = Command::new(env!("CARGO_BIN_EXE_pld"))
        .args(["run", file.to_str().unwrap(), "--max-steps", "18446744073709551615", "--out"])
        .arg(d.join("out"))
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn pld");
    // Let it get into the loop, then interrupt it as a terminal would.
    std::thread::sleep(Duration::from_millis(1500));
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill");
    assert!(kill.success());
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    let _ = std::fs::remove_dir_all(&d);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted") && err.contains("rank 0 core") && err.contains("in 'ping'"), "{err}");
}

#[test]
fn an_npy_input_whose_size_disagrees_with_its_header_is_refused() {
    let d = dir("npy_size_input");
    // A [2, 1, 64] FP32 array with four extra bytes after the data.
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    let mut header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1, 64), }".to_string();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    npy.extend_from_slice(&(header.len() as u16).to_le_bytes());
    npy.extend_from_slice(header.as_bytes());
    npy.extend((0..128u32).flat_map(|i| (i as f32).to_le_bytes()));
    npy.extend_from_slice(&[0, 0, 0x80, 0x3f]);
    let path = d.join("x.npy");
    std::fs::write(&path, &npy).expect("write npy");
    let arg = format!("x={}", path.display());
    let (code, err, _) = pld("npy_size", program("", "", "").as_bytes(), "run", &["--input", &arg]);
    let _ = std::fs::remove_dir_all(&d);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("needs 512 data bytes, but the file holds 516"), "{err}");
}

#[test]
fn a_float_window_dimension_is_rejected_at_its_span() {
    let host =
        "        buf = pld.alloc_window_buffer(256)\n        w = pld.window(buf, [1.0, 64], dtype=pl.FP32)\n";
    let src = program("", "", host);
    let at = format!("float_window.py:{}:30", line_of(&src, "[1.0, 64]"));
    for sub in ["check", "run", "compile"] {
        let (code, err, _) = pld("float_window", src.as_bytes(), sub, &[]);
        assert_eq!(code, Some(1), "{sub}: {err}");
        assert!(err.contains("is a float; dimensions must be integers"), "{sub}: {err}");
        assert!(err.contains(&at), "{sub}: {err}");
    }
}
