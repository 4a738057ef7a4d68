//! The runtime directory against Simpler's real behaviour (issue #28, Simpler at the commit
//! PyPTO pins, 93adc3865e65): kernels take their block identity as parameters (the CCE
//! built-ins are stale under Simpler's dispatch), host callbacks load, pickle and read their
//! arguments the way Simpler's `Worker` and `MappedArgs` do, dtypes arrive as `DataType`
//! integers, and pure `OUT` tensors are not staged (their unwritten bytes are undefined).

mod runtime_support;

use pld_testkit::runtime_decls;
use runtime_support::*;
use std::process::Command;

fn checker(dir: &std::path::Path, ranks: usize) -> (bool, String) {
    let out = Command::new("python3")
        .arg(runtime_decls::checker())
        .arg(dir)
        .arg(ranks.to_string())
        .output()
        .unwrap();
    (
        out.status.success() && text(&out.stdout).trim() == "ok",
        format!("{}{}", text(&out.stdout), text(&out.stderr)),
    )
}

#[test]
fn multi_block_kernels_take_their_block_id_as_trailing_parameters() {
    let dir = out_dir("block-ids");
    let out = emit("examples/host_collectives.py", &dir, &["--ptoas", s(&runtime_decls::fake_ptoas())]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    check_dir(&dir, 2);
    assert_compiles(&dir);
    let variant = dir.join("next_levels/builtin.tensor.allreduce__sum__fp32");
    let name = "builtin_tensor_allreduce__sum__fp32_kernel";
    let pto = std::fs::read_to_string(variant.join(format!("ptoas/{name}.pto"))).unwrap();
    // No hardware block-id read anywhere: Simpler leaves those registers stale.
    assert!(!pto.contains("pto.get_block_idx") && !pto.contains("pto.get_block_num"), "{pto}");
    assert!(
        pto.contains("%__pypto_spmd_block_idx: i32, %__pypto_spmd_block_num: i32) attributes"),
        "the block id is the signature's tail: {pto}"
    );
    assert!(pto.contains("arith.index_cast %__pypto_spmd_block_idx : i32 to index"), "{pto}");
    let w = std::fs::read_to_string(variant.join(format!("kernels/aiv/{name}.cpp"))).unwrap();
    assert!(w.contains("#include \"intrinsic.h\""), "{w}");
    assert!(
        w.contains("    int32_t __pypto_spmd_block_idx = get_block_idx(args);\n    int32_t __pypto_spmd_block_num = get_block_num(args);\n"),
        "{w}"
    );
    assert!(w.contains("signal_dim0, __pypto_spmd_block_idx, __pypto_spmd_block_num);"), "{w}");
    // A kernel that does not use its block id gets neither (the user chip's kernels here).
    for f in std::fs::read_dir(dir.join("next_levels")).unwrap().flatten() {
        if f.file_name().to_string_lossy().starts_with("builtin.tensor.allreduce") {
            continue;
        }
        for p in std::fs::read_dir(f.path().join("ptoas")).unwrap().flatten() {
            let t = std::fs::read_to_string(p.path()).unwrap();
            assert!(!t.contains("__pypto_spmd_block"), "{}: {t}", p.path().display());
        }
    }
    // The checker holds the runtime's rule: the old form (the built-in read in the module) and
    // a wrapper that does not pass the context values are both rejected (M11).
    let unit = variant.join(format!("ptoas/{name}.pto"));
    std::fs::write(
        &unit,
        pto.replacen("arith.index_cast %__pypto_spmd_block_idx : i32 to index", "pto.get_block_idx", 1),
    )
    .unwrap();
    let (ok, msg) = checker(&dir, 2);
    assert!(!ok && msg.contains("M11") && msg.contains("reads pto.get_block_idx"), "{msg}");
    std::fs::write(&unit, &pto).unwrap();
    let wrapper = variant.join(format!("kernels/aiv/{name}.cpp"));
    std::fs::write(&wrapper, w.replace("get_block_num(args)", "0")).unwrap();
    let (ok, msg) = checker(&dir, 2);
    assert!(!ok && msg.contains("M11") && msg.contains("does not pass get_block_idx(args)"), "{msg}");
}

const HOST_CALLBACK_INPUTS: [(&str, &str); 2] = [
    ("a", "np.arange(512, dtype=np.float32).reshape(2, 4, 64)"),
    ("b", "np.full((2, 4, 64), 0.5, np.float32)"),
];

#[test]
fn host_callbacks_run_under_simplers_registration_pickling_and_mapped_args() {
    // Simpler cloudpickles every registered Python callable (`Worker.register`) and runs it in a
    // forked sub worker on `MappedArgs` (`args[i]`, `args.scalar(j)`) whose dtypes are
    // `DataType` ints. With the installed cloudpickle (or the stand-in where none is installed)
    // and with the stand-in forced, the example's callback runs and its result comes back.
    let dir = out_dir("fidelity-callback");
    assert!(emit("examples/host_callback.py", &dir, &[]).status.success());
    let run = std::fs::read_to_string(dir.join("run.py")).unwrap();
    assert!(run.contains("cloudpickle.register_pickle_by_value(module)"), "{run}");
    let module = std::fs::read_to_string(dir.join("sub_workers/combine.py")).unwrap();
    assert!(
        module.contains("_tensor_from_continuous(args[ti])") && !module.contains("args.tensor("),
        "{module}"
    );
    for pickle in [Pickle::Installed, Pickle::StandIn] {
        let (out, log) = run_py(&dir, 2, &HOST_CALLBACK_INPUTS, pickle);
        assert!(out.status.success(), "{pickle:?}: {}{}", text(&out.stdout), text(&out.stderr));
        assert!(log.contains("\"event\": \"register\", \"kind\": \"sub\", \"name\": \"combine\""), "{log}");
        assert!(
            log.contains("\"event\": \"submit_sub\", \"name\": \"combine\", \"tensors\": [\"INPUT\", \"INPUT\", \"OUTPUT_EXISTING\"]"),
            "{log}"
        );
        // No kernel runs under the stand-in, so `s` and `d` hold what the runtime leaves in an
        // unstaged Out tensor; the callback's `f = s + d` is computed from exactly those bytes
        // in the forked sub worker and reaches the parent through the shared allocation.
        let (s, d, f) =
            (mock_output::<f32>(&dir, "s"), mock_output::<f32>(&dir, "d"), mock_output::<f32>(&dir, "f"));
        assert_eq!(f.len(), 512);
        for i in 0..512 {
            assert_eq!(f[i].to_bits(), (s[i] + d[i]).to_bits(), "{pickle:?} element {i}");
        }
    }
}

#[test]
fn a_generated_module_registered_by_reference_fails_as_on_simpler() {
    // Without `register_pickle_by_value`, cloudpickle pickles the callback by reference to
    // `_pld_generated.<stem>`, a package that does not exist: Simpler's `Worker.register`
    // fails with a PicklingError; so does the stand-in, with either cloudpickle.
    let dir = out_dir("fidelity-by-reference");
    assert!(emit("examples/host_callback.py", &dir, &[]).status.success());
    let run = dir.join("run.py");
    let t = std::fs::read_to_string(&run).unwrap();
    std::fs::write(&run, t.replace("    cloudpickle.register_pickle_by_value(module)\n", "")).unwrap();
    for pickle in [Pickle::Installed, Pickle::StandIn] {
        let (out, _) = run_py(&dir, 2, &HOST_CALLBACK_INPUTS, pickle);
        let e = text(&out.stderr);
        assert!(!out.status.success() && e.contains("PicklingError"), "{pickle:?}: {e}");
        assert!(e.contains("_pld_generated.combine"), "{e}");
    }
    // A sub-worker module that calls `args.tensor(i)` (no such method on Simpler's
    // MappedArgs) fails the run with the sub worker's traceback.
    let dir = out_dir("fidelity-tensor-method");
    assert!(emit("examples/host_callback.py", &dir, &[]).status.success());
    let m = dir.join("sub_workers/combine.py");
    let t = std::fs::read_to_string(&m).unwrap();
    std::fs::write(&m, t.replace("args[ti]", "args.tensor(ti)")).unwrap();
    let (out, _) = run_py(&dir, 2, &HOST_CALLBACK_INPUTS, Pickle::Installed);
    let e = text(&out.stderr);
    assert!(!out.status.success() && e.contains("'MappedArgs' object has no attribute 'tensor'"), "{e}");
}

#[test]
fn a_sub_worker_sees_dtypes_as_datatype_integers() {
    // Simpler's MappedArg.dtype is the DataType int value (FLOAT32 = 0, INT32 = 2, …), which
    // run.py maps back through `DataType(int(v)).name`, as PyPTO does.
    let dir = out_dir("fidelity-dtypes");
    let file = "pld-cli/tests/runtime_programs/callback_scalars.py";
    assert!(emit(file, &dir, &[]).status.success());
    let run = std::fs::read_to_string(dir.join("run.py")).unwrap();
    assert!(run.contains("key = DataType(int(key)).name"), "{run}");
    let probe = dir.join("sub_workers/scale.py");
    let t = std::fs::read_to_string(&probe).unwrap();
    std::fs::write(
        &probe,
        t.replace(
            "def scale(args):\n",
            "def scale(args):\n    assert [type(a.dtype) for a in args] == [int, int] and [a.dtype for a in args] == [0, 0], [a.dtype for a in args]\n",
        ),
    )
    .unwrap();
    let (out, _) =
        run_py(&dir, 2, &[("x", "np.arange(128, dtype=np.float32).reshape(2, 1, 64)")], Pickle::Installed);
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    let z = mock_output::<f32>(&dir, "z");
    let want: Vec<f32> = (0..128).map(|i| (i as f32 * -2.0 + 0.5) * 0.25 + 1.0).collect();
    assert_eq!(z, want);
}

#[test]
fn pure_out_tensors_are_not_staged_and_come_back_undefined() {
    // Simpler does not copy an OUT tensor of a chip task to the device
    // (`runtime_maker.cpp::stage_device_args`): bytes its kernels do not write come back as
    // whatever the device buffer held. The stand-in runs no kernel, so every byte of a pure
    // Out output is its undefined-byte marker 0xA5 — never the zeros `run.py` started with —
    // while an InOut tensor comes back as it went.
    let dir = out_dir("fidelity-out");
    assert!(emit("examples/quickstart_allreduce.py", &dir, &[]).status.success());
    run_py_with_mock(&dir, 2, &[("inputs", "np.ones((2, 1, 256), np.float32)")]);
    let bytes = std::fs::read(dir.join("_mockrun/out/outputs.npy")).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    assert_eq!(npy.shape(), &[2, 1, 256]);
    let v: Vec<f32> = npy.into_vec().unwrap();
    assert!(v.iter().all(|x| x.to_bits() == 0xA5A5_A5A5), "{:?}", &v[..4]);
}

/// Writes `<dir>/_mockrun/in/<param>.npy` for every In/InOut parameter of the directory's
/// `distributed_meta.json` (shapes as `run.py` sizes them: dynamic symbols bound to `ranks`),
/// small exact values; scalars are 1.
const MAKE_INPUTS: &str = r#"
import json, sys
import numpy as np
meta = json.load(open(sys.argv[1])); world = int(sys.argv[2])
class Syms(dict):
    def __missing__(self, key):
        return world
NP = {"fp32": np.float32, "fp16": np.float16, "bfloat16": np.float32, "int8": np.int8, "int16": np.int16,
      "int32": np.int32, "int64": np.int64, "uint8": np.uint8, "bool": np.bool_}
for p in meta["params"]:
    if p["direction"] == "Out":
        continue
    if p["shape"] is None:
        np.save("in/%s.npy" % p["name"], np.array(1.0 if p["dtype"].startswith(("fp", "bf")) else 1))
        continue
    dims = meta.get("pld_symbolic_shapes", {}).get(p["name"], p["shape"])
    shape = [d if isinstance(d, int) and d >= 0 else int(eval(str(d), {"__builtins__": {}, "min": min, "max": max}, Syms()))
             for d in dims]
    n = int(np.prod(shape))
    np.save("in/%s.npy" % p["name"], (np.arange(n) % 7).astype(NP[p["dtype"]]).reshape(shape))
"#;

/// The one program whose callback asserts what `pld run` hands it (NumPy arrays, BF16 widened
/// to float32, D-py-1): on the runtime a callback gets zero-copy torch views in the tensor's
/// own dtype, so this assertion fails there by design (D-cg-20).
const DTYPE_ASSERTING_CALLBACK: &str = "corpus/callback_half_precision.py";

/// The programs whose callback verifies the chips' results, with the message it fails with:
/// under the stand-in (no kernel runs, unstaged Out tensors are undefined) each must fail at
/// that verification, inside its sub worker.
const CHECKS_CHIP_RESULTS: [(&str, &str); 2] = [
    ("corpus/callback_verify_reference_style.py", "SubWorker verify failed"),
    ("corpus/flow_single_dispatch_verify.py", "SubWorker verify failed: out_f is not a + b"),
];

#[test]
fn every_programs_run_py_runs_end_to_end_under_the_stand_in() {
    // Every example, corpus and runtime test program: its run.py compiles (stand-in), registers,
    // allocates, dispatches (callbacks run in forked sub workers) and writes every Out/InOut
    // parameter with the shape and dtype distributed_meta.json gives it.
    let mut callbacks = 0;
    let mut failed = Vec::new();
    for (i, (file, args)) in programs().into_iter().enumerate() {
        if file.ends_with(DTYPE_ASSERTING_CALLBACK) {
            continue;
        }
        let dir = out_dir(&format!("runpy-all-{i}"));
        let extra: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = emit(&file, &dir, &extra);
        assert!(out.status.success(), "{file}: {}", text(&out.stderr));
        let ranks: usize =
            args.iter().position(|a| a == "--ranks").and_then(|i| args.get(i + 1)?.parse().ok()).unwrap_or(2);
        let work = dir.join("_mockrun");
        std::fs::create_dir_all(work.join("in")).unwrap();
        let made = Command::new("python3")
            .args(["-c", MAKE_INPUTS])
            .arg(dir.join("distributed_meta.json"))
            .arg(ranks.to_string())
            .current_dir(&work)
            .output()
            .unwrap();
        assert!(made.status.success(), "{file}: {}", text(&made.stderr));
        let log = work.join("log.jsonl");
        let out = Command::new("python3")
            .arg(dir.join("run.py"))
            .args(["--ranks", &ranks.to_string(), "--inputs", "in", "--outputs", "out"])
            .env("PYTHONPATH", mock_python_path(Pickle::Installed))
            .env("MOCK_SIMPLER_LOG", &log)
            .current_dir(&work)
            .output()
            .unwrap();
        if let Some((_, msg)) = CHECKS_CHIP_RESULTS.iter().find(|(f, _)| file.ends_with(f)) {
            // Its callback checks what the chips computed; no kernel runs under the stand-in, so
            // the run must reach the callback and fail at that check, not before.
            let e = text(&out.stderr);
            assert!(!out.status.success() && e.contains("sub worker") && e.contains(msg), "{file}: {e}");
            continue;
        }
        if !out.status.success() {
            let e = text(&out.stderr);
            failed
                .push(format!("{file}: run.py: {}", e.lines().rev().take(4).collect::<Vec<_>>().join(" | ")));
            continue;
        }
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        let subs = std::fs::read_dir(dir.join("sub_workers")).map_or(0, |d| d.count());
        if subs > 0 {
            assert!(log.contains("\"event\": \"submit_sub\""), "{file}: no callback ran: {log}");
            callbacks += 1;
        }
        let meta = std::fs::read_to_string(dir.join("distributed_meta.json")).unwrap();
        let check = Command::new("python3")
            .arg("-c")
            .arg("import json, sys, numpy as np\nmeta = json.loads(sys.argv[1])\nfor p in meta['params']:\n    if p['direction'] != 'In' and p['shape'] is not None:\n        a = np.load('out/%s.npy' % p['name'])\n        assert a.ndim == len(p['shape']) and all(w < 0 or g == w for g, w in zip(a.shape, p['shape'])), (p, a.shape)\n")
            .arg(&meta)
            .current_dir(&work)
            .output()
            .unwrap();
        assert!(check.status.success(), "{file}: {}", text(&check.stderr));
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(callbacks >= 10, "{callbacks} programs with callbacks");
}
