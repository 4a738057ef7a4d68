//! Runs the `pld` binary itself: every example against its golden result, the exit codes
//! of ARCHITECTURE §8, and `.npy` outputs that load back with the right shape and dtype.

mod cli_support;

use cli_support::{pld, root, text};

use std::path::{Path, PathBuf};
use std::process::Output;

fn out_dir(name: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-cli-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Loads an FP32 `.npy`, checking its dtype; returns (shape, values).
fn load_f32(path: &Path) -> (Vec<u64>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = npyz::NpyFile::new(&bytes[..]).expect("valid npy");
    assert_eq!(npy.dtype(), npyz::DType::Plain("<f4".parse().unwrap()), "{}", path.display());
    let shape = npy.shape().to_vec();
    (shape, npy.into_vec::<f32>().expect("f32 data"))
}

fn run_example(example: &str, ranks: usize) -> (PathBuf, Output) {
    let dir = out_dir(&format!("{example}-{ranks}"));
    let out = pld(&[
        "run",
        &format!("examples/{example}.py"),
        "--ranks",
        &ranks.to_string(),
        "--out",
        dir.to_str().unwrap(),
        "--seed",
        &(ranks as u64 * 7 + 1).to_string(),
    ]);
    (dir, out)
}

/// `out[r] == sum_k inp[k]` for every rank r.
fn assert_allreduce(inputs: &(Vec<u64>, Vec<f32>), out: &(Vec<u64>, Vec<f32>)) {
    assert_eq!(inputs.0, out.0);
    let p = inputs.0[0] as usize;
    let row = inputs.1.len() / p;
    for i in 0..row {
        let want: f32 = (0..p).map(|k| inputs.1[k * row + i]).sum();
        for r in 0..p {
            assert_eq!(out.1[r * row + i], want, "rank {r} element {i}");
        }
    }
}

#[test]
fn quickstart_allreduce_matches_golden_for_several_rank_counts() {
    for ranks in [2, 3, 4, 8] {
        let (dir, out) = run_example("quickstart_allreduce", ranks);
        assert!(out.status.success(), "ranks {ranks}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains(&format!("on {ranks} rank(s)")));
        let inputs = load_f32(&dir.join("inputs/inputs.npy"));
        assert_eq!(inputs.0, vec![ranks as u64, 1, 256]);
        assert_allreduce(&inputs, &load_f32(&dir.join("outputs.npy")));
    }
}

#[test]
fn allreduce_intrinsics_mesh_and_ring_match_golden() {
    for ranks in [2, 3, 4] {
        let (dir, out) = run_example("allreduce_intrinsics", ranks);
        assert!(out.status.success(), "ranks {ranks}: {}", text(&out.stderr));
        let inputs = load_f32(&dir.join("inputs/inputs.npy"));
        assert_allreduce(&inputs, &load_f32(&dir.join("mesh_out.npy")));
        assert_allreduce(&inputs, &load_f32(&dir.join("ring_out.npy")));
    }
}

#[test]
fn put_get_ring_moves_rows_to_the_next_rank() {
    let ranks = 4;
    let (dir, out) = run_example("put_get_ring", ranks);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let inputs = load_f32(&dir.join("inputs/inputs.npy"));
    let row = inputs.1.len() / ranks;
    for name in ["pushed.npy", "pulled.npy"] {
        let got = load_f32(&dir.join(name));
        assert_eq!(got.0, inputs.0);
        for r in 0..ranks {
            let prev = (r + ranks - 1) % ranks;
            assert_eq!(
                &got.1[r * row..(r + 1) * row],
                &inputs.1[prev * row..(prev + 1) * row],
                "{name} rank {r}"
            );
        }
    }
}

#[test]
fn broken_example_exits_3_with_a_deadlock_report() {
    let (_, out) = run_example("broken_divergent_barrier", 2);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("deadlock"), "{err}");
    assert!(err.contains("broken_divergent_barrier.py:36"), "{err}");
    assert!(err.contains("signal_buf[0]"), "{err}");
    assert!(err.contains(">= 1 (current value 0)"), "{err}");
    // Who could still help: nobody wrote the cell, rank 1 is blocked, rank 0 is done.
    assert!(err.contains("(current value 0); never written"), "{err}");
    assert!(err.contains("ranks not finished, each blocked in a wait above: [1]"), "{err}");
    assert!(err.contains("ranks that already finished all their work: [0]"), "{err}");
}

#[test]
fn given_inputs_are_used_and_checked() {
    let (dir, out) = run_example("quickstart_allreduce", 2);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let input = dir.join("inputs/inputs.npy");
    let dir2 = out_dir("given");
    let out = pld(&[
        "run",
        "examples/quickstart_allreduce.py",
        "--ranks",
        "2",
        "--input",
        &format!("inputs={}", input.display()),
        "--out",
        dir2.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!dir2.join("inputs/inputs.npy").exists(), "a given input is not re-generated");
    assert_allreduce(&load_f32(&input), &load_f32(&dir2.join("outputs.npy")));
    // Wrong rank count for the given shape: a clear one-line usage error.
    let out = pld(&[
        "run",
        "examples/quickstart_allreduce.py",
        "--ranks",
        "3",
        "--input",
        &format!("inputs={}", input.display()),
        "--out",
        dir2.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("dimension 0 is 2 but the parameter needs 3"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn usage_errors_exit_2() {
    let out = pld(&["run", "examples/does_not_exist.py"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("error: cannot read examples/does_not_exist.py"));
    let out = pld(&["run", "examples/quickstart_allreduce.py", "--entry", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no function `nope`"));
    let out = pld(&["run", "examples/quickstart_allreduce.py", "--input", "bogus=x.npy"]);
    assert_eq!(out.status.code(), Some(2));
    let out = pld(&["run", "examples/quickstart_allreduce.py", "--schedule", "sometimes"]);
    assert_eq!(out.status.code(), Some(2));
    let out = pld(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn check_reports_diagnostics_with_location_and_exit_1() {
    let dir = out_dir("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.py");
    std::fs::write(
        &bad,
        "import pypto.language as pl\nimport pypto.language.distributed as pld\n\n@pl.program\nclass Bad:\n    @pl.function(type=pl.FunctionType.InCore)\n    def k(self, x: pl.Tensor[[1, 64], pl.FP32], s: pld.DistributedTensor[[2, 1], pl.INT32]):\n        pld.system.notify(x, 1, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)\n",
    )
    .unwrap();
    let out = pld(&["check", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("bad.py:8:27"), "{err}");
    assert!(err.contains("pld.system.notify"), "{err}");
    assert!(err.contains('^'), "{err}");
    let out = pld(&["check", "examples/quickstart_allreduce.py"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn compile_writes_modules_and_orchestration() {
    let dir = out_dir("compile");
    let out = pld(&[
        "compile",
        "examples/quickstart_allreduce.py",
        "--emit",
        "all",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(dir.join("orchestration.json").exists());
    assert!(dir.join("quickstart_allreduce.ir.py").exists());
    let ptos: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "pto"))
        .collect();
    assert!(!ptos.is_empty(), "no .pto module written");
    let out = pld(&["compile", "examples/quickstart_allreduce.py", "--dump-after", "nope"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn ops_lists_the_registry() {
    let out = pld(&["ops"]);
    assert!(out.status.success());
    let t = text(&out.stdout);
    assert!(t.contains("pld.system.notify") && t.contains("yes"), "{t}");
    // Enum defaults read as the DSL spells them, not as their ABI integers.
    let allreduce = t.lines().find(|l| l.starts_with("pld.tensor.allreduce ")).expect("allreduce row");
    assert!(allreduce.contains("op=Sum") && !allreduce.contains("op=0"), "{allreduce}");
    // One column per linked per-op table: a pto emitter, simulator semantics.
    let header = t.lines().next().unwrap_or_default();
    let cols: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(cols, ["op", "family", "affinity", "no_duplicate", "emitter", "sim", "kwargs"], "{header}");
    let row = |op: &str| -> Vec<String> {
        let line = t.lines().find(|l| l.split_whitespace().next() == Some(op)).expect("op row");
        line.split_whitespace().map(str::to_string).collect()
    };
    assert_eq!(row("tile.add")[4..6], ["yes", "yes"]);
    assert_eq!(row("pld.tensor.window")[4..6], ["no", "yes"]);
    let out = pld(&["ops", "--json"]);
    let t = text(&out.stdout);
    let ops: serde_json::Value = serde_json::from_str(&t).unwrap_or_else(|e| panic!("ops --json: {e}\n{t}"));
    let ops = ops.as_array().expect("an array of ops");
    let entry =
        |name: &str| ops.iter().find(|o| o["name"] == name).unwrap_or_else(|| panic!("no {name}: {t}"));
    assert!(entry("pld.tensor.put")["kwargs"].is_array());
    assert_eq!(
        (&entry("pld.tensor.window")["emitter"], &entry("pld.tensor.window")["sim"]),
        (&false.into(), &true.into())
    );
    assert_eq!((&entry("tile.add")["emitter"], &entry("tile.add")["sim"]), (&true.into(), &true.into()));
}

#[test]
fn remote_store_pushes_both_halves_to_the_next_rank() {
    let ranks = 3;
    let (dir, out) = run_example("remote_store", ranks);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let inputs = load_f32(&dir.join("inputs/inputs.npy"));
    let got = load_f32(&dir.join("outputs.npy"));
    assert_eq!(got.0, vec![3, 4, 64]);
    let per_rank = 4 * 64;
    for r in 0..ranks {
        let prev = (r + ranks - 1) % ranks;
        for row in 0..4 {
            for col in 0..64 {
                let want = inputs.1[prev * per_rank + row * 64 + col] * if col < 32 { 1.0 } else { 2.0 };
                assert_eq!(got.1[r * per_rank + row * 64 + col], want, "rank {r} [{row}, {col}]");
            }
        }
    }
}

#[test]
fn host_collectives_match_golden() {
    for ranks in [2, 3, 4] {
        let (dir, out) = run_example("host_collectives", ranks);
        assert!(out.status.success(), "ranks {ranks}: {}", text(&out.stderr));
        let (shape, inp) = load_f32(&dir.join("inputs/inputs.npy"));
        let size = 96;
        assert_eq!(shape, vec![ranks as u64, ranks as u64, size as u64]);
        // inp[r][row][i]
        let at = |r: usize, row: usize, i: usize| inp[(r * ranks + row) * size + i];
        let summed = load_f32(&dir.join("summed.npy")).1;
        let root_row = load_f32(&dir.join("root_row.npy")).1;
        let scattered = load_f32(&dir.join("scattered.npy")).1;
        let gathered = load_f32(&dir.join("gathered.npy")).1;
        let exchanged = load_f32(&dir.join("exchanged.npy")).1;
        for r in 0..ranks {
            for i in 0..size {
                let sum0: f32 = (0..ranks).map(|k| at(k, 0, i)).sum();
                assert_eq!(summed[r * size + i], sum0, "allreduce rank {r} [{i}]");
                assert_eq!(root_row[r * size + i], at(0, 0, i), "broadcast rank {r} [{i}]");
                let sum_r: f32 = (0..ranks).map(|k| at(k, r, i)).sum();
                assert_eq!(scattered[r * size + i], sum_r, "reduce_scatter rank {r} [{i}]");
                for s in 0..ranks {
                    let g = gathered[(r * ranks + s) * size + i];
                    assert_eq!(g, at(s, 0, i), "allgather rank {r} row {s} [{i}]");
                    let x = exchanged[(r * ranks + s) * size + i];
                    assert_eq!(x, at(s, r, i), "all_to_all rank {r} row {s} [{i}]");
                }
            }
        }
    }
}

#[test]
fn random_schedules_give_the_same_result() {
    let dir = out_dir("sched");
    let mut outputs = Vec::new();
    for schedule in ["det", "random:1", "random:99", "parallel"] {
        let d = dir.join(schedule.replace(':', "_"));
        let out = pld(&[
            "run",
            "examples/quickstart_allreduce.py",
            "--ranks",
            "4",
            "--schedule",
            schedule,
            "--out",
            d.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{schedule}: {}", text(&out.stderr));
        outputs.push(std::fs::read(d.join("outputs.npy")).unwrap());
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]), "schedules disagree");
}

fn write_i32_npy(path: &Path, shape: &[u64], vals: &[i32]) {
    use npyz::WriterBuilder;
    let mut out = Vec::new();
    let mut w =
        npyz::WriteOptions::<i32>::new().default_dtype().shape(shape).writer(&mut out).begin_nd().unwrap();
    w.extend(vals.iter().copied()).unwrap();
    w.finish().unwrap();
    std::fs::write(path, out).unwrap();
}

#[test]
fn moe_all_to_all_v_clamps_counts_and_trims_rows() {
    let (p, maxr, size) = (4usize, 4usize, 64usize);
    let dir = out_dir("moe");
    std::fs::create_dir_all(&dir).unwrap();
    // send_counts[s][d]: negative, zero, exactly MAXR, and over MAXR all appear.
    let table = [-3, 0, 4, 9];
    let counts: Vec<i32> = (0..p * p).map(|i| table[(i + i / p) % table.len()]).collect();
    let counts_path = dir.join("send_counts.npy");
    write_i32_npy(&counts_path, &[p as u64, p as u64, 1], &counts);
    let out = pld(&[
        "run",
        "examples/moe_all_to_all_v.py",
        "--ranks",
        &p.to_string(),
        "--input",
        &format!("send_counts={}", counts_path.display()),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (_, inp) = load_f32(&dir.join("inputs/inputs.npy"));
    let (shape, tokens) = load_f32(&dir.join("tokens.npy"));
    assert_eq!(shape, vec![p as u64, (p * maxr) as u64, size as u64]);
    let bytes = std::fs::read(dir.join("recv_counts.npy")).unwrap();
    let recv: Vec<i32> = npyz::NpyFile::new(&bytes[..]).unwrap().into_vec().unwrap();
    for r in 0..p {
        for s in 0..p {
            let want = counts[s * p + r].clamp(0, maxr as i32) as usize;
            assert_eq!(recv[r * p + s], want as i32, "recv_counts[{r}][{s}]");
            for k in 0..maxr {
                for i in 0..size {
                    let got = tokens[(r * p * maxr + s * maxr + k) * size + i];
                    let expect = if k < want { inp[(s * p * maxr + r * maxr + k) * size + i] } else { 0.0 };
                    assert_eq!(got, expect, "tokens[{r}][{}][{i}]", s * maxr + k);
                }
            }
        }
    }
}

#[test]
fn reading_the_untrimmed_capacity_block_is_a_fault_unless_allowed() {
    // The seed's warning: window bytes past recv_counts are never written. A consumer that
    // copies the whole capacity block computes on garbage: `pld run` exits 3 naming the read's
    // line, the region and who wrote the buffer; `--allow-uninit-reads` makes it a warning.
    let src = std::fs::read_to_string(root().join("examples/moe_all_to_all_v.py")).unwrap();
    let start = src.find("        zero = pl.full").expect("consumer start");
    let end = src.rfind("        for src in pl.range(NR):").expect("consumer end");
    let untrimmed = format!(
        "{}        everything = pl.load(data, [0, 0], [2 * MAXR, SIZE])\n        pl.store(everything, [0, 0], tokens)\n{}",
        &src[..start],
        &src[end..]
    );
    let dir = out_dir("untrimmed");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("untrimmed.py");
    std::fs::write(&file, &untrimmed).unwrap();
    let line = untrimmed.lines().position(|l| l.contains("everything = pl.load")).expect("the load") + 1;
    let out = pld(&["run", file.to_str().unwrap(), "--ranks", "2", "--out", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("error[E0303]: read of uninitialised window bytes") && err.contains("'data_buf'"),
        "{err}"
    );
    assert!(err.contains(&format!("untrimmed.py:{line}:")), "line {line}: {err}");
    assert!(err.contains("wrote bytes") && err.contains("--allow-uninit-reads"), "{err}");
    let out = pld(&[
        "run",
        file.to_str().unwrap(),
        "--ranks",
        "2",
        "--out",
        dir.to_str().unwrap(),
        "--allow-uninit-reads",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("warning: rank 0 read bytes") && err.contains("'data_buf'"), "{err}");
    assert!(err.contains("undefined (garbage) bytes"), "{err}");
}

#[test]
fn every_example_compiles_to_pto() {
    let mut n = 0;
    for entry in std::fs::read_dir(root().join("examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "py") {
            continue;
        }
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if stem == "broken_divergent_allreduce" {
            // Rejected by `pld check` on purpose (a collective under a rank-dependent branch).
            let dir = out_dir(&format!("pto-{stem}"));
            let out =
                pld(&["compile", path.to_str().unwrap(), "--emit", "pto", "--out", dir.to_str().unwrap()]);
            assert_eq!(out.status.code(), Some(1), "{stem}: {}", text(&out.stderr));
            continue;
        }
        let dir = out_dir(&format!("pto-{stem}"));
        let out = pld(&["compile", path.to_str().unwrap(), "--emit", "pto", "--out", dir.to_str().unwrap()]);
        assert!(out.status.success(), "{stem}: {}", text(&out.stderr));
        let ptos = std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| e.as_ref().is_ok_and(|e| e.path().extension().is_some_and(|x| x == "pto")));
        assert!(ptos.count() > 0, "{stem}: no .pto module");
        assert!(dir.join("orchestration.json").exists(), "{stem}: no orchestration.json");
        n += 1;
    }
    assert!(n >= 7, "expected every example, found {n}");
}

/// Loads an INT32 `.npy`, checking its dtype; returns (shape, values).
fn load_i32(path: &Path) -> (Vec<u64>, Vec<i32>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = npyz::NpyFile::new(&bytes[..]).expect("valid npy");
    assert_eq!(npy.dtype(), npyz::DType::Plain("<i4".parse().unwrap()), "{}", path.display());
    let shape = npy.shape().to_vec();
    (shape, npy.into_vec::<i32>().expect("i32 data"))
}

#[test]
fn deferred_completion_consumers_read_the_previous_ranks_row() {
    for ranks in [2, 3] {
        let (dir, out) = run_example("deferred_completion", ranks);
        assert!(out.status.success(), "ranks {ranks}: {}", text(&out.stderr));
        let (ishape, inputs) = load_i32(&dir.join("inputs/inputs.npy"));
        assert_eq!(ishape, vec![ranks as u64, 1, 8]);
        let (oshape, outputs) = load_i32(&dir.join("outputs.npy"));
        assert_eq!(oshape, vec![ranks as u64, 8, 8]);
        for r in 0..ranks {
            let prev = (r + ranks - 1) % ranks;
            for slot in 0..8 {
                let at = (r * 8 + slot) * 8;
                assert_eq!(
                    &outputs[at..at + 8],
                    &inputs[prev * 8..prev * 8 + 8],
                    "ranks {ranks} rank {r} slot {slot}"
                );
            }
        }
    }
}

#[test]
fn blocking_waiters_on_too_few_cores_exit_3_but_deferred_ones_complete() {
    let dir = out_dir("cores");
    std::fs::create_dir_all(&dir).unwrap();
    let src = std::fs::read_to_string(root().join("examples/deferred_completion.py")).unwrap();
    let blocking = dir.join("blocking.py");
    std::fs::write(&blocking, src.replace("pld.system.defer_wait(", "pld.system.wait(")).unwrap();
    let run = |file: &str, cores: &str| {
        pld(&["run", file, "--ranks", "2", "--cores", cores, "--out", dir.join("out").to_str().unwrap()])
    };
    let out = run("examples/deferred_completion.py", "4");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run(blocking.to_str().unwrap(), "4");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("deadlock") && err.contains("blocking.py:"), "{err}");
    let out = run(blocking.to_str().unwrap(), "16");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run("examples/deferred_completion.py", "0");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--cores 0 is outside 1..=4096"), "{}", text(&out.stderr));
}

#[test]
fn orchestration_json_lists_task_ids_and_dependencies() {
    let dir = out_dir("deferred-json");
    let out =
        pld(&["compile", "examples/deferred_completion.py", "--emit", "all", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json = std::fs::read_to_string(dir.join("orchestration.json")).unwrap();
    let compact: String = json.split_whitespace().collect();
    assert!(compact.contains(r#""task":"wait_tid","deps":[],"manual":true"#), "{json}");
    assert!(compact.contains(r#""task":null,"deps":["wait_tid"],"manual":true"#), "{json}");
    assert_eq!(compact.matches(r#""manual":true"#).count(), 3, "{json}");
}

#[test]
fn bind_sets_parameters_of_program_building_functions() {
    let dir = out_dir("bind");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("built.py");
    std::fs::write(
        &file,
        r#"import pypto.language as pl
import pypto.language.distributed as pld


def build(rows: int):
    @pl.program
    class Built:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[rows, 8], pl.FP32], y: pl.Out[pl.Tensor[[rows, 8], pl.FP32]]) -> pl.Tensor[[rows, 8], pl.FP32]:
            t = pl.load(x, [0, 0], [rows, 8])
            y = pl.store(t, [0, 0], y)
            return y

    return Built
"#,
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let out = pld(&["check", f]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("`rows`"), "{}", text(&out.stderr));
    let out = pld(&["check", f, "--bind", "rows=4"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let ir = dir.join("ir");
    let out = pld(&["compile", f, "--bind", "rows=4", "--emit", "ir", "--out", ir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = std::fs::read_to_string(ir.join("built.ir.py")).unwrap();
    assert!(printed.contains("pl.Tensor[[4, 8], pl.FP32]"), "{printed}");
    let out = pld(&["check", f, "--bind", "rows"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--bind `rows` is not NAME=VALUE"), "{}", text(&out.stderr));
}

#[test]
fn bind_sets_dynamic_dimensions_for_run() {
    let dir = out_dir("bind-dims");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("dims.py");
    std::fs::write(
        &file,
        r#"import pypto.language as pl
import pypto.language.distributed as pld

M = pl.dynamic("M")


@pl.program
class Dims:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[M, 8], pl.FP32], y: pl.Out[pl.Tensor[[M, 8], pl.FP32]]) -> pl.Tensor[[M, 8], pl.FP32]:
        t = pl.load(x, [0, 0], [4, 8])
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[M, 8], pl.FP32], y: pl.Out[pl.Tensor[[M, 8], pl.FP32]]) -> pl.Tensor[[M, 8], pl.FP32]:
        y = self.k(x, y)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[M, 8], pl.FP32], y: pl.Out[pl.Tensor[[M, 8], pl.FP32]]):
        self.chip(x, y, device=0)
"#,
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let out_dir = dir.join("out");
    // M is data, not the rank count (no device loop or rank indexes it, no window has it):
    // without a binding it is a usage error naming the flag, never `--ranks` in silence.
    let out = pld(&["run", f, "--ranks", "2", "--out", out_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("dynamic dimension `M` is not bound: pass --bind M=VALUE"),
        "{}",
        text(&out.stderr)
    );
    // Too small a binding: the [4, 8] load is out of bounds.
    let out = pld(&["run", f, "--ranks", "2", "--bind", "M=2", "--out", out_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let out = pld(&["run", f, "--ranks", "2", "--bind", "M=4", "--out", out_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (x_shape, x) = load_f32(&out_dir.join("inputs/x.npy"));
    let (y_shape, y) = load_f32(&out_dir.join("y.npy"));
    assert_eq!((x_shape, y_shape), (vec![4, 8], vec![4, 8]));
    assert_eq!(x, y);
    // An input's shape binds M too: y takes x's [4, 8].
    let given = dir.join("x_given.npy");
    std::fs::copy(out_dir.join("inputs/x.npy"), &given).unwrap();
    let input = format!("x={}", given.display());
    let out = pld(&["run", f, "--ranks", "2", "--input", &input, "--out", out_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (y_shape, y) = load_f32(&out_dir.join("y.npy"));
    assert_eq!((y_shape, y), (vec![4, 8], x));
    let out = pld(&["run", f, "--bind", "M=zero", "--out", out_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--bind M=zero: a dynamic dimension needs a positive integer"));
}

#[test]
fn an_l2_program_runs_its_single_chip_orchestration() {
    let dir = out_dir("l2");
    std::fs::create_dir_all(&dir).unwrap();
    let chip = |name: &str| {
        format!(
            r#"
    @pl.function(type=pl.FunctionType.Orchestration)
    def {name}(self, x: pl.Tensor[[4, 8], pl.FP32], y: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        y = self.k(x, y)
        return y
"#
        )
    };
    let head = r#"import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class L2:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4, 8], pl.FP32], y: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        t = pl.load(x, [0, 0], [4, 8])
        y = pl.store(pl.add(t, t), [0, 0], y)
        return y
"#;
    let one = dir.join("one.py");
    std::fs::write(&one, format!("{head}{}", chip("chip"))).unwrap();
    let out = pld(&["run", one.to_str().unwrap(), "--ranks", "1", "--out", dir.join("o").to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("ran `chip` on 1 rank(s)"), "{}", text(&out.stdout));
    let (_, x) = load_f32(&dir.join("o/inputs/x.npy"));
    let (_, y) = load_f32(&dir.join("o/y.npy"));
    assert_eq!(y, x.iter().map(|v| v * 2.0).collect::<Vec<_>>());
    let two = dir.join("two.py");
    std::fs::write(&two, format!("{head}{}{}", chip("add_a"), chip("add_b"))).unwrap();
    let out = pld(&["run", two.to_str().unwrap(), "--out", dir.join("o").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("several chip orchestrations (add_a, add_b); pass --entry FUNC"));
}

/// `pld compile … | head -c 16`: a reader that closes the pipe early must not make pld panic;
/// the command still ends with its own exit code. The listing (~100 KiB) is larger than a
/// pipe's buffer, so pld is still writing when the pipe closes.
#[test]
fn closed_stdout_pipe_is_not_a_panic() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_pld"))
        .args(["compile", "--emit", "all"])
        .arg(root().join("examples/host_collectives.py"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn pld");
    let mut first = [0u8; 16];
    let mut stdout = child.stdout.take().expect("stdout");
    stdout.read_exact(&mut first).expect("pld compile prints a listing");
    drop(stdout);
    let mut err = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut err).expect("stderr");
    let status = child.wait().expect("wait");
    assert!(!err.contains("panicked"), "pld panicked on a closed pipe: {err}");
    assert_eq!(status.code(), Some(0), "stderr: {err}");
}
