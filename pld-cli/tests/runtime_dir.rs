//! `pld compile --emit runtime` and `pld assemble`: every example (and every corpus program)
//! emits a Simpler runtime directory that passes the structural checker of
//! `pld-testkit/runtime_decls` (JSON rules of `runtime_artifacts.md` §2, loader variables,
//! §10 limits, host ↔ chip ↔ kernel argument counts and directions under a mock
//! orchestrator), whose `.cpp` files pass `g++ -fsyntax-only -std=c++17` against the test
//! declaration headers once assembled, plus one golden file per artifact kind for the
//! quickstart (`cargo xtask bless` rewrites them).
//!
//! Where each rule of the spec's §10 checklist that pld can violate is checked
//! (`check_runtime_dir.py` = the checker, run on every program by
//! `every_program_emits_…`):
//! R1 meta fields (checker, `ranks_device_ids_…`); R2 one tensor per host parameter and R10
//! `expected_arg_count` (checker's mock run); R3 one tagged entry (checker); R4/R5 chips
//! registered and one runtime (checker; `run_py_compiles_…`); R6 sources compile (g++ after
//! assembly; `an_unassembled_wrapper_…`); R7/R9 `kernel_entry` and the orchestration symbols
//! (checker); R17 every `sub_ids[…]` the host submits to is a `sub_workers/<n>.py` defining
//! `<n>(args)` that unpacks what the host adds (checker; `host_callbacks_become_…`); M8
//! CommContext read only at rankId and windowsIn (checker, on every `.pto`); R11
//! func ids and signature limits (checker); R12 tensors before scalars, ≤ 32/16,
//! block counts and sync start (checker; `launch_specs_…`); R13/R14 shared, contiguous host
//! tensors, tensors before scalars (checker); R15 domain allocation (checker); R16 worker index
//! (checker); R18 variants fully rendered (checker) and distinct windows per builtin
//! (diagnostic; `builtin_variants_are_…`); R2 results only through Out parameters and
//! `_alloc_intermediates` leaving the parameters alone (checker; `a_return_style_host_…`); M9
//! tensors addressed as `buffer.addr` + `start_offset` elements (checker). M1/M4 task adds = kernel
//! signature and wrapper unpacking (checker); M2/M3/M6 host TaskArgs order, tags and one token
//! per rank and domain (checker); M5 submitted ids registered (checker); M7 32-byte slots
//! (checker, `run_py_compiles_…`); M10 one payload for a mixed task (`mixed_kernels_…`); M11
//! trailing args (goldens); M12 core types (checker, `mixed_kernels_…`); M13 stale runtime
//! files (`reemitting_…`); M14 no L2 markers (checker, `emit_all_…`). Not applicable to pld:
//! R8 (onboard link), M15 (no SDMA). M16: a variant is rendered for one set of shapes and a
//! second call with other shapes is a diagnostic (`builtin_variants_are_…`).
//! `the_checker_catches_each_broken_rule` breaks each checked rule once and requires the
//! checker to name it. The tests `host_callbacks_become_…`, `a_return_style_host_…` and
//! `builtin_variants_are_…` named above are in `runtime_dir_programs.rs`.

mod runtime_support;

use pld_testkit::runtime_decls;
use runtime_support::*;
use std::process::Command;

#[test]
fn corpus_run_lines_become_compile_arguments() {
    assert_eq!(
        compile_args(" --entry main --bind mode=ring --ranks 3"),
        ["--entry", "main", "--bind", "mode=ring"]
    );
    assert_eq!(compile_args("--bind=n=4 --schedule random:3"), ["--bind", "n=4"]);
}

#[test]
fn the_program_list_covers_every_example_and_corpus_file() {
    let listed: Vec<String> = programs().into_iter().map(|(f, _)| f).collect();
    for folder in ["examples", "pld-cli/tests/corpus"] {
        let n = std::fs::read_dir(root().join(folder))
            .unwrap()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "py"))
            .count();
        let here = listed.iter().filter(|f| f.starts_with(&format!("{folder}/"))).count();
        let rejected = REJECTED_EXAMPLES.iter().filter(|f| f.starts_with(&format!("{folder}/"))).count();
        assert_eq!(here + rejected, n, "{folder}: every .py is checked");
    }
    // Host callbacks are among them (`sub_workers/` modules).
    assert!(listed.iter().filter(|f| f.contains("callback")).count() >= 11, "{listed:?}");
}

#[test]
fn every_program_emits_a_runtime_directory_that_checks_and_compiles_once_assembled() {
    for (i, (file, args)) in programs().into_iter().enumerate() {
        let dir = out_dir(&format!("all-{i}"));
        let extra: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = emit(&file, &dir, &extra);
        assert!(out.status.success(), "{file}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("not runnable until ptoas runs"), "{file}: {}", text(&out.stderr));
        // A program built for a fixed rank count (`--ranks N`) runs at that count only.
        let fixed = args.iter().position(|a| a == "--ranks").and_then(|i| args.get(i + 1)?.parse().ok());
        let rank_counts: Vec<usize> = fixed.map_or_else(|| vec![2, 3], |n| vec![n]);
        for &ranks in &rank_counts {
            check_dir(&dir, ranks);
        }
        let out = pld(&["assemble", s(&dir), "--ptoas", s(&runtime_decls::fake_ptoas())]);
        assert!(out.status.success(), "{file}: assemble: {}", text(&out.stderr));
        assert!(assert_compiles(&dir) >= 2, "{file}: no sources");
        check_dir(&dir, rank_counts[0]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn an_unassembled_wrapper_refuses_to_compile_and_names_pld_assemble() {
    let dir = out_dir("unassembled");
    assert!(emit("examples/quickstart_allreduce.py", &dir, &[]).status.success());
    let w = dir.join("next_levels/chip_orch/kernels/aiv/reduce_step.cpp");
    let out = gxx(&w);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("run `pld assemble <dir> --ptoas PATH`"), "{}", text(&out.stderr));
    // The chip orchestration does not depend on ptoas.
    assert!(gxx(&dir.join("next_levels/chip_orch/orchestration/chip_orch.cpp")).status.success());
    assert!(dir.join("next_levels/chip_orch/ptoas/reduce_step.pto").is_file());
}

#[test]
fn compile_with_ptoas_or_the_environment_assembles_in_one_step() {
    let dir = out_dir("one-step");
    let out = emit("examples/put_get_ring.py", &dir, &["--ptoas", s(&runtime_decls::fake_ptoas())]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("1 ptoas unit(s) assembled"), "{}", text(&out.stderr));
    assert_compiles(&dir);
    let wrapper =
        std::fs::read_to_string(dir.join("next_levels/chip_orch/kernels/aiv/exchange.cpp")).unwrap();
    // The reference's flags for a2a3, the splice rules, and both sentinels kept.
    assert!(
        wrapper.contains("// fake ptoas --enable-insert-sync --pto-level=level3 --pto-arch a3"),
        "{wrapper}"
    );
    assert!(wrapper.contains("static __aicore__ void exchange("), "{wrapper}");
    assert!(
        wrapper.contains("sizeof(ChipTensor)")
            && !wrapper.contains("#include <cstdint>\n#include \"pto/pto-inst.hpp\"")
    );
    assert_eq!(wrapper.matches("using namespace pto;").count(), 1);
    assert!(
        wrapper.contains("// --- ptoas-generated code ---")
            && wrapper.contains("// --- Kernel entry point ---")
    );
    let dir2 = out_dir("env");
    let out = Command::new(env!("CARGO_BIN_EXE_pld"))
        .args([
            "compile",
            "examples/put_get_ring.py",
            "--emit",
            "runtime",
            "--out",
            s(&dir2),
            "--target",
            "a5",
        ])
        .env("PTOAS", runtime_decls::fake_ptoas())
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let wrapper =
        std::fs::read_to_string(dir2.join("next_levels/chip_orch/kernels/aiv/exchange.cpp")).unwrap();
    assert!(wrapper.contains("--pto-arch a5"), "{wrapper}");
    // `pld assemble` takes the target the directory records.
    let dir3 = out_dir("a5-later");
    assert!(emit("examples/put_get_ring.py", &dir3, &["--target", "a5"]).status.success());
    assert!(pld(&["assemble", s(&dir3), "--ptoas", s(&runtime_decls::fake_ptoas())]).status.success());
    let later = std::fs::read_to_string(dir3.join("next_levels/chip_orch/kernels/aiv/exchange.cpp")).unwrap();
    assert!(later.contains("--pto-arch a5"), "{later}");
    let meta = std::fs::read_to_string(dir2.join("distributed_meta.json")).unwrap();
    assert!(
        meta.contains("\"platform\": \"a5sim\"") && meta.contains("\"backend_type\": \"Ascend950\""),
        "{meta}"
    );
}

#[test]
fn a_failing_ptoas_is_a_compile_error_naming_the_unit() {
    let dir = out_dir("bad-ptoas");
    let out = emit("examples/quickstart_allreduce.py", &dir, &["--ptoas", "/bin/false"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("ptoas compilation failed on")
            && text(&out.stderr).contains("reduce_step.pto")
    );
    let out = pld(&["assemble", s(&dir)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--ptoas PATH or PTOAS"), "{}", text(&out.stderr));
}

#[test]
fn reemitting_removes_what_the_runtime_cached_from_an_earlier_emission() {
    // §10 M13: cached binaries are keyed by runtime and pto-isa revision, not source content.
    let dir = out_dir("stale");
    assert!(emit("examples/quickstart_allreduce.py", &dir, &[]).status.success());
    let chip = dir.join("next_levels/chip_orch");
    std::fs::create_dir_all(chip.join("cache")).unwrap();
    std::fs::write(chip.join("cache/kernel_0.bin"), b"old").unwrap();
    std::fs::write(chip.join("kernels/aiv/reduce_step.so"), b"old").unwrap();
    std::fs::write(chip.join("orchestration/chip_orch.so"), b"old").unwrap();
    std::fs::create_dir_all(dir.join("next_levels/gone_chip")).unwrap();
    assert!(emit("examples/quickstart_allreduce.py", &dir, &[]).status.success());
    assert!(!chip.join("cache").exists() && !chip.join("kernels/aiv/reduce_step.so").exists());
    assert!(!chip.join("orchestration/chip_orch.so").exists() && !dir.join("next_levels/gone_chip").exists());
    check_dir(&dir, 2);
}

#[test]
fn a_folder_that_is_not_a_runtime_directory_is_not_overwritten() {
    let dir = out_dir("foreign");
    std::fs::create_dir_all(dir.join("next_levels/mine")).unwrap();
    let out = emit("examples/quickstart_allreduce.py", &dir, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("refusing to overwrite"), "{}", text(&out.stderr));
    assert!(dir.join("next_levels/mine").exists());
    let out = pld(&["compile", "examples/quickstart_allreduce.py", "--emit", "runtime"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--out DIR"));
}

#[test]
fn ranks_device_ids_and_platform_reach_the_metadata() {
    let dir = out_dir("meta");
    let out = emit("examples/remote_store.py", &dir, &["--device-ids", "4,6,5", "--platform", "a2a3"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let meta = std::fs::read_to_string(dir.join("distributed_meta.json")).unwrap();
    assert!(meta.contains("\"device_ids\": [\n      4,\n      6,\n      5\n    ]"), "{meta}");
    assert!(meta.contains("\"platform\": \"a2a3\""), "{meta}");
    check_dir(&dir, 3);
    let dir = out_dir("meta4");
    assert!(emit("examples/remote_store.py", &dir, &["--ranks", "4"]).status.success());
    let meta = std::fs::read_to_string(dir.join("distributed_meta.json")).unwrap();
    assert!(meta.contains("\"device_ids\": [\n      0,\n      1,\n      2,\n      3\n    ]"), "{meta}");
    for bad in
        [&["--device-ids", "1,1"][..], &["--device-ids", "-1"], &["--platform", "a3"], &["--ranks", "0"]]
    {
        let out = emit("examples/remote_store.py", &out_dir("bad"), bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", text(&out.stderr));
    }
}

#[test]
fn emit_all_includes_the_runtime_directory_beside_the_modules() {
    let dir = out_dir("emit-all");
    let out = pld(&["compile", "examples/quickstart_allreduce.py", "--emit", "all", "--out", s(&dir)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for f in [
        "orchestration.json",
        "reduce_step.pto",
        "distributed_meta.json",
        "orchestration/host_orch.py",
        "run.py",
    ] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    // §10 M14: never an L2 marker at the top.
    assert!(!dir.join("kernel_config.py").exists() && !dir.join("compiled_meta.json").exists());
    // What only the runtime directory cannot express does not fail `all`: it is a warning.
    let src = out_dir("emit-all-warn");
    std::fs::create_dir_all(&src).unwrap();
    let file = src.join("p.py");
    std::fs::write(
        &file,
        format!(
            "{HEAD}    @pl.function(type=pl.FunctionType.InCore)\n    def k(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:\n        return x\n\n\
             \x20   @pl.function(level=pl.Level.CHIP, role=pl.Role.Orchestrator)\n    def chip(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:\n        y = self.k(x)\n        return y\n\n\
             \x20   @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n    def host(self, x: pl.Tensor[[16, 16], pl.FP32]):\n        y = self.chip(x, device=0)\n"
        ),
    )
    .unwrap();
    let out = pld(&["compile", s(&file), "--emit", "all", "--out", s(&src.join("out"))]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("warning: runtime directory:"), "{}", text(&out.stderr));
    assert!(src.join("out/k.pto").is_file() && !src.join("out/distributed_meta.json").exists());
}

#[test]
fn run_py_parses_and_drives_the_runtime_api_only() {
    let dir = out_dir("runpy");
    assert!(emit("examples/quickstart_allreduce.py", &dir, &[]).status.success());
    let run = dir.join("run.py");
    let out = Command::new("python3").args(["-m", "py_compile"]).arg(&run).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let src = std::fs::read_to_string(&run).unwrap();
    for needle in [
        "from simpler.worker import Worker",
        "Worker(level=3",
        "w.register(",
        "w.init(",
        "w.run(",
        "np.save(",
        "--ranks",
        "a2a3sim",
        "\"a2a3\"",
    ] {
        assert!(src.contains(needle), "run.py lacks {needle}");
    }
    assert!(!src.contains("import pypto") && !src.contains("from pypto"), "run.py must not need PyPTO");
}

/// One golden file per artifact kind, for the quickstart (and the host-collectives example
/// for the builtin variant).
#[test]
fn golden_runtime_artifacts() {
    let golden = root().join("pld-cli/tests/golden/runtime");
    let dir = out_dir("golden-q");
    assert!(emit("examples/quickstart_allreduce.py", &dir, &[]).status.success());
    for f in [
        "distributed_meta.json",
        "orchestration/host_orch.py",
        "next_levels/chip_orch/kernel_config.py",
        "next_levels/chip_orch/orchestration/chip_orch.cpp",
        "next_levels/chip_orch/kernels/aiv/reduce_step.cpp",
        "run.py",
    ] {
        let actual = std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        pld_testkit::golden::check_file(golden.join("quickstart_allreduce").join(f), &actual);
    }
    let dir = out_dir("golden-h");
    assert!(emit("examples/host_collectives.py", &dir, &[]).status.success());
    let v = "next_levels/builtin.tensor.allreduce__sum__fp32";
    for f in [
        "kernel_config.py",
        "orchestration/builtin_tensor_allreduce__sum__fp32.cpp",
        "kernels/aiv/builtin_tensor_allreduce__sum__fp32_kernel.cpp",
    ] {
        let actual = std::fs::read_to_string(dir.join(v).join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        pld_testkit::golden::check_file(golden.join("host_collectives_allreduce_variant").join(f), &actual);
    }
}

#[test]
fn mixed_kernels_are_one_task_with_both_halves_and_one_payload() {
    let dir = out_dir("mixed");
    let out = emit(
        "pld-codegen-pto/tests/programs/mixed_gemm.py",
        &dir,
        &["--ptoas", s(&runtime_decls::fake_ptoas())],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let chip = dir.join("next_levels/chip_orch");
    let orch = std::fs::read_to_string(chip.join("orchestration/chip_orch.cpp")).unwrap();
    assert!(orch.contains("MixedKernels mixed_0 = {0, 1, INVALID_KERNEL_ID};"), "{orch}");
    assert!(orch.contains("rt_submit_task(mixed_0, params_t0);"), "{orch}");
    let cfg = std::fs::read_to_string(chip.join("kernel_config.py")).unwrap();
    let aic = cfg.find("\"name\": \"gemm_aic\"").expect("aic kernel");
    let aiv = cfg.find("\"name\": \"gemm_aiv\"").expect("aiv kernel");
    assert!(
        aic < aiv && cfg.contains("\"core_type\": \"aic\"") && cfg.contains("\"core_type\": \"aiv\""),
        "{cfg}"
    );
    // One ptoas unit, spliced whole into both wrappers.
    assert!(chip.join("ptoas/gemm.pto").is_file() && !chip.join("ptoas/gemm_aic.pto").exists());
    for w in ["kernels/aic/gemm_aic.cpp", "kernels/aiv/gemm_aiv.cpp"] {
        let t = std::fs::read_to_string(chip.join(w)).unwrap();
        assert!(
            t.contains("static __aicore__ void gemm_aic(") && t.contains("static __aicore__ void gemm_aiv("),
            "{w}"
        );
    }
}

#[test]
fn launch_specs_reach_the_chip_orchestration_and_oversized_sync_starts_are_rejected() {
    let dir = out_dir("launch");
    let good = "pld-cli/tests/runtime_programs/launch_specs.py";
    assert!(emit(good, &dir, &[]).status.success());
    let orch =
        std::fs::read_to_string(dir.join("next_levels/chip_orch/orchestration/chip_orch.cpp")).unwrap();
    assert_eq!(orch.matches(".launch_spec.set_block_num(2);").count(), 2, "{orch}");
    assert_eq!(orch.matches(".launch_spec.set_require_sync_start(true);").count(), 2, "{orch}");
    let a5 = out_dir("launch-a5");
    assert!(emit(good, &a5, &["--target", "a5"]).status.success());
    let orch = std::fs::read_to_string(a5.join("next_levels/chip_orch/orchestration/chip_orch.cpp")).unwrap();
    assert!(orch.contains(".launch_spec.set_core_num(2);"), "{orch}");
    // No comm domain: no ordering token, and the chip still runs on the `device=` worker.
    let host = std::fs::read_to_string(dir.join("orchestration/host_orch.py")).unwrap();
    assert!(host.contains("_submit_chip(orch, callables[\"chip_orch\"], _ta_0, config, r)"), "{host}");
    assert!(!host.contains("_ord\"]["), "{host}");
    let src = std::fs::read_to_string(root().join(good)).unwrap();
    let bad = out_dir("launch-bad");
    std::fs::create_dir_all(&bad).unwrap();
    let file = bad.join("too_many_blocks.py");
    std::fs::write(&file, src.replace("core_num=2, sync_start=True", "core_num=64, sync_start=True"))
        .unwrap();
    let out = emit(s(&file), &bad.join("out"), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("synchronous start of 64 blocks; a2a3 has 48 vector cores"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stderr).contains("too_many_blocks.py:"), "the diagnostic has a source position");
}

#[test]
fn what_the_runtime_cannot_express_is_a_diagnostic_with_a_position() {
    // A kernel result that is no Out/InOut argument: a task returns nothing else.
    let out = emit_source(
        "kernel_result",
        "    @pl.function(type=pl.FunctionType.InCore)\n    def k(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:\n        return x\n\n\
         \x20   @pl.function(level=pl.Level.CHIP, role=pl.Role.Orchestrator)\n    def chip(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:\n        y = self.k(x)\n        return y\n\n\
         \x20   @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n    def host(self, x: pl.Tensor[[16, 16], pl.FP32]):\n        for r in pl.range(pld.world_size()):\n            y = self.chip(x, device=r)\n",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let e = text(&out.stderr);
    assert!(e.contains("using a result of kernel 'k' that is not one of its Out/InOut arguments"), "{e}");
    assert!(e.contains("kernel_result.py:13:9"), "{e}");
    // No host orchestrator: nothing to describe.
    let out = emit_source(
        "no_host",
        "    @pl.function(type=pl.FunctionType.InCore)\n    def k(self, x: pl.Tensor[[16, 16], pl.FP32]):\n        return\n",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("has no host orchestrator"), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("no_host.py:8:5"),
        "the diagnostic has a position: {}",
        text(&out.stderr)
    );
    // A chip orchestrator without a host: the position is the chip orchestrator's.
    let out = emit_source(
        "chip_only",
        "    @pl.function(type=pl.FunctionType.InCore)\n    def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):\n        t = pl.load(x, [0, 0], [16, 16])\n        y = pl.store(t, [0, 0], y)\n\n\
         \x20   @pl.function(level=pl.Level.CHIP, role=pl.Role.Orchestrator)\n    def chip(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):\n        self.k(x, y)\n",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let e = text(&out.stderr);
    assert!(e.contains("no host orchestrator") && e.contains("chip_only.py:13:5"), "{e}");
    assert!(e.contains("a single-chip (L2) directory is not emitted by pld"), "{e}");
}

#[test]
fn assembling_twice_gives_the_same_wrappers_and_hosts_hoist_their_temporaries() {
    let dir = out_dir("twice");
    assert!(emit("pld-cli/tests/runtime_programs/host_intermediate.py", &dir, &[]).status.success());
    let host = std::fs::read_to_string(dir.join("orchestration/host_orch.py")).unwrap();
    let alloc = host.split("def host_orch").next().unwrap();
    assert!(
        alloc.contains("tensors[\"tmp\"] = torch.zeros((NR, 1, 32,), dtype=torch.float32).share_memory_()"),
        "{host}"
    );
    let fake = runtime_decls::fake_ptoas();
    assert!(pld(&["assemble", s(&dir), "--ptoas", s(&fake)]).status.success());
    let w = dir.join("next_levels/step/kernels/aiv/twice.cpp");
    let once = std::fs::read_to_string(&w).unwrap();
    assert!(pld(&["assemble", s(&dir), "--ptoas", s(&fake)]).status.success());
    assert_eq!(std::fs::read_to_string(&w).unwrap(), once);
    let out = pld(&["assemble", s(&out_dir("nothing-here")), "--ptoas", s(&fake)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("not a runtime directory"), "{}", text(&out.stderr));
}

#[test]
fn run_py_compiles_registers_and_dispatches_through_the_runtime_api() {
    let dir = out_dir("runpy-mock");
    assert!(emit("examples/quickstart_allreduce.py", &dir, &[]).status.success());
    let log = run_py_with_mock(&dir, 3, &[("inputs", "np.ones((3, 1, 256), np.float32)")]);
    assert_eq!(
        log.matches("\"event\": \"compile_incore\", \"source\": \"reduce_step.cpp\", \"core_type\": \"aiv\"")
            .count(),
        1,
        "{log}"
    );
    assert!(log.contains("\"device_ids\": [0, 1, 2]"), "{log}");
    assert!(log.contains("\"signature\": [1, 2, 3, 3], \"func_name\": \"aicpu_orchestration_entry\", \"children\": [[0, [1, 2, 3, 3]]]"), "{log}");
    // Shared buffers before init, then one domain with 32-byte slots and one dispatch per rank.
    let init = log.find("\"event\": \"init\"").expect("init");
    assert!(
        log.find("\"event\": \"register\"").unwrap() < init && init < log.find("allocate_domain").unwrap()
    );
    assert!(log.contains("\"buffers\": [[\"data_buf\", 1024, 1024], [\"signal_buf\", 12, 32]]"), "{log}");
    for r in 0..3 {
        assert!(log.contains(&format!("\"worker\": {r}, \"tensors\": [[\"host\", \"INPUT\"], [\"host\", \"OUTPUT_EXISTING\"], [\"window\", \"INOUT\"], [\"window\", \"INOUT\"], [\"host\", \"INOUT\"]], \"scalars\": 2")), "{log}");
    }
    let out = dir.join("_mockrun/out/outputs.npy");
    let bytes = std::fs::read(&out).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    assert_eq!(npy.shape(), &[3, 1, 256]);
    // Builtin variants are registered under their directory names, too.
    let dir = out_dir("runpy-mock-h");
    assert!(emit("examples/moe_all_to_all_v.py", &dir, &[]).status.success());
    let log = run_py_with_mock(
        &dir,
        2,
        &[("inputs", "np.ones((2, 8, 64), np.float32)"), ("send_counts", "np.ones((2, 2, 1), np.int32)")],
    );
    assert_eq!(log.matches("\"event\": \"register\"").count(), 3, "{log}");
    assert_eq!(log.matches("\"event\": \"submit\"").count(), 6, "{log}");
    for f in ["tokens", "recv_counts"] {
        assert!(dir.join(format!("_mockrun/out/{f}.npy")).is_file(), "{f}");
    }
}

#[test]
fn a_domain_of_explicit_workers_must_fit_the_recorded_devices() {
    let file = "pld-cli/tests/runtime_programs/two_domains.py";
    let dir = out_dir("two-domains");
    assert!(emit(file, &dir, &[]).status.success());
    let host = std::fs::read_to_string(dir.join("orchestration/host_orch.py")).unwrap();
    assert!(host.contains("workers=[*range(world_size)]") && host.contains("workers=[0, 1]"), "{host}");
    assert!(host.contains("tensors[\"__comm_d1_ord\"][r]") && host.contains("tensors[\"__comm_d0_ord\"][r]"));
    let out = emit(file, &out_dir("two-domains-1"), &["--ranks", "1"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr)
            .contains("comm domain 'comm_d1' includes worker 1, but the directory records 1 device(s)"),
        "{}",
        text(&out.stderr)
    );
    // A constant `device=` beyond the recorded devices.
    let out = emit_source(
        "device_3",
        "    @pl.function(type=pl.FunctionType.InCore)\n    def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):\n        t = pl.load(x, [0, 0], [16, 16])\n        y = pl.store(t, [0, 0], y)\n\n\
         \x20   @pl.function(level=pl.Level.CHIP, role=pl.Role.Orchestrator)\n    def chip(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):\n        self.k(x, y)\n\n\
         \x20   @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n    def host(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):\n        self.chip(x, y, device=3)\n",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("dispatch to device 3, but the directory records 2 device(s)"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stderr).contains("device_3.py:"), "{}", text(&out.stderr));
}

/// The checker itself: each mutation of a good directory breaks one §10 rule, and the
/// checker names that rule (so its passes elsewhere mean something).
#[test]
fn the_checker_catches_each_broken_rule() {
    let good = out_dir("mutants-good");
    assert!(emit("examples/quickstart_allreduce.py", &good, &[]).status.success());
    check_dir(&good, 2);
    let chip = "next_levels/chip_orch";
    let cases: &[(&str, &str, &str, &str)] = &[
        ("distributed_meta.json", "\"schema\": 2", "\"schema\": 3", "R1"),
        ("distributed_meta.json", "\"dtype\": \"fp32\"", "\"dtype\": \"float\"", "R1"),
        ("distributed_meta.json", "\"num_sub_workers\": 0", "\"num_sub_worker\": 0", "R1"),
        ("orchestration/host_orch.py", "host_orch._pypto_distributed_entry = True", "pass", "R3"),
        ("orchestration/host_orch.py", "callables[\"chip_orch\"]", "callables[\"chip\"]", "R4"),
        ("orchestration/host_orch.py", "nbytes=(((1024 + 31) // 32) * 32)", "nbytes=1030", "M7"),
        ("orchestration/host_orch.py", "TensorArgType.OUTPUT_EXISTING", "TensorArgType.INPUT", "M3"),
        (
            "orchestration/host_orch.py",
            "tensors[\"__comm_d0_ord\"][r]",
            "tensors[\"__comm_d0_ord\"][0]",
            "M6",
        ),
        ("orchestration/host_orch.py", "            _ta_0.add_scalar(__comm_d0[r].device_ctx)\n", "", "M2"),
        (
            &format!("{chip}/orchestration/chip_orch.cpp"),
            ".expected_arg_count = 6",
            ".expected_arg_count = 8",
            "R10",
        ),
        (&format!("{chip}/kernel_config.py"), "\"func_id\": 0", "\"func_id\": 1", "R11"),
        (&format!("{chip}/kernel_config.py"), "\"core_type\": \"aiv\"", "\"core_type\": \"aic\"", "M12"),
        (
            &format!("{chip}/kernel_config.py"),
            "\"signature\": [_D.IN, _D.OUT, _D.INOUT, _D.INOUT],\n    }",
            "\"signature\": [_D.IN, _D.OUT, _D.INOUT],\n    }",
            "M4",
        ),
        (
            &format!("{chip}/orchestration/chip_orch.cpp"),
            "params_t0.add_output(ext_out);",
            "params_t0.add_inout(ext_out);",
            "M1",
        ),
        (
            &format!("{chip}/orchestration/chip_orch.cpp"),
            "rt_submit_aiv_task(0,",
            "rt_submit_aiv_task(3,",
            "M5",
        ),
        (
            &format!("{chip}/kernels/aiv/reduce_step.cpp"),
            "reinterpret_cast<__gm__ float*>(inp_tensor->buffer.addr) + inp_tensor->start_offset;",
            "reinterpret_cast<__gm__ float*>(inp_tensor->buffer.addr + inp_tensor->start_offset);",
            "M9",
        ),
        (
            &format!("{chip}/ptoas/reduce_step.pto"),
            "pto.load_scalar %arg4[%c2_index]",
            "pto.load_scalar %arg4[%c1_index]",
            "M8",
        ),
    ];
    for (i, (file, from, to, rule)) in cases.iter().enumerate() {
        let dir = out_dir(&format!("mutant-{i}"));
        assert!(emit("examples/quickstart_allreduce.py", &dir, &[]).status.success());
        let path = dir.join(file);
        let text0 = std::fs::read_to_string(&path).unwrap();
        assert!(text0.contains(from), "{file} lacks {from:?}");
        std::fs::write(&path, text0.replacen(from, to, 1)).unwrap();
        let out = Command::new("python3").arg(runtime_decls::checker()).arg(&dir).arg("2").output().unwrap();
        let report = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(!out.status.success() && report.contains(rule), "{rule} via {file}: {report}");
    }
    // A stale runtime-written binary and an L2 marker.
    for (i, (file, rule)) in
        [("next_levels/chip_orch/kernels/aiv/reduce_step.so", "M13"), ("kernel_config.py", "M14")]
            .iter()
            .enumerate()
    {
        let dir = out_dir(&format!("mutant-file-{i}"));
        assert!(emit("examples/quickstart_allreduce.py", &dir, &[]).status.success());
        std::fs::write(dir.join(file), "x").unwrap();
        let out = Command::new("python3").arg(runtime_decls::checker()).arg(&dir).arg("2").output().unwrap();
        assert!(!out.status.success() && text(&out.stdout).contains(rule), "{rule}: {}", text(&out.stdout));
    }
}
