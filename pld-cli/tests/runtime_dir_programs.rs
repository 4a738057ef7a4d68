//! Runtime-directory features beyond the common layout (`runtime_artifacts.md`): host
//! callbacks as `sub_workers/` modules (§7, §10 R17), kernels named like C++ keywords
//! (renamed, D-cg-21), return-style hosts (§2 `num_return_types`, §10 R2), and the builtin
//! variants' §10 R18 / M16 rules. Each program here is also in the every-program sweep of
//! `runtime_dir.rs`.

mod runtime_support;

use pld_testkit::runtime_decls;
use runtime_support::*;
use std::process::Command;

#[test]
fn host_callbacks_become_sub_worker_modules_that_run_under_the_mock() {
    let file = "pld-cli/tests/runtime_programs/callback_scalars.py";
    let dir = out_dir("callback-scalars");
    let out = emit(file, &dir, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    check_dir(&dir, 2);
    let host = std::fs::read_to_string(dir.join("orchestration/host_orch.py")).unwrap();
    assert!(host.contains("orch.submit_sub(sub_ids[\"scale\"], _ta_1)"), "{host}");
    assert!(host.contains("_ta_1.add_tensor(make_tensor_arg(orch._worker, tensors[\"z\"]), TensorArgType.OUTPUT_EXISTING)\n    _ta_1.add_scalar(scalar_to_uint64(-2))"), "{host}");
    let module = dir.join("sub_workers/scale.py");
    let out = Command::new("python3").args(["-m", "py_compile"]).arg(&module).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let meta = std::fs::read_to_string(dir.join("distributed_meta.json")).unwrap();
    assert!(meta.contains("\"num_sub_workers\": 1"), "{meta}");
    // run.py registers the module's function and the mock runtime calls it: the callback's
    // result (from a host input, its helper, a module constant and three scalar kinds) lands in
    // the shared output that run.py saves.
    let log = run_py_with_mock(&dir, 2, &[("x", "np.arange(128, dtype=np.float32).reshape(2, 1, 64)")]);
    assert!(log.contains("\"event\": \"register\", \"kind\": \"sub\", \"name\": \"scale\""), "{log}");
    assert!(log.contains("\"event\": \"submit_sub\", \"name\": \"scale\", \"tensors\": [\"INPUT\", \"OUTPUT_EXISTING\"], \"scalars\": 3"), "{log}");
    let bytes = std::fs::read(dir.join("_mockrun/out/z.npy")).unwrap();
    let z: Vec<f32> = npyz::NpyFile::new(&bytes[..]).unwrap().into_vec().unwrap();
    let want: Vec<f32> = (0..128).map(|i| (i as f32 * -2.0 + 0.5) * 0.25 + 1.0).collect();
    assert_eq!(z, want);
    // The checker holds the host and the modules to each other (§10 R17).
    for (i, (f, from, to)) in [
        ("sub_workers/scale.py", "\ndef scale(args):", "\ndef scaled(args):"),
        ("orchestration/host_orch.py", "sub_ids[\"scale\"]", "sub_ids[\"scal\"]"),
        ("orchestration/host_orch.py", "    _ta_1.add_scalar(scalar_to_uint64(True))\n", ""),
    ]
    .iter()
    .enumerate()
    {
        let m = out_dir(&format!("callback-mutant-{i}"));
        assert!(emit(file, &m, &[]).status.success());
        let t = std::fs::read_to_string(m.join(f)).unwrap();
        assert!(t.contains(from), "{f} lacks {from:?}");
        std::fs::write(m.join(f), t.replacen(from, to, 1)).unwrap();
        let out = Command::new("python3").arg(runtime_decls::checker()).arg(&m).arg("2").output().unwrap();
        assert!(!out.status.success() && text(&out.stdout).contains("R17"), "{f}: {}", text(&out.stdout));
    }
}

#[test]
fn kernels_named_like_cpp_keywords_are_renamed_in_every_artifact() {
    let file = "pld-cli/tests/runtime_programs/keyword_kernels.py";
    let dir = out_dir("keywords");
    let out = emit(file, &dir, &["--ptoas", s(&runtime_decls::fake_ptoas())]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    check_dir(&dir, 2);
    assert_eq!(assert_compiles(&dir), 4);
    let chip = dir.join("next_levels/chip");
    let cfg = std::fs::read_to_string(chip.join("kernel_config.py")).unwrap();
    // `double_k` is taken by a kernel of the program, so `double` becomes `double_k2`.
    for (id, name) in [(0, "double_k2"), (1, "new_k"), (2, "double_k")] {
        assert!(
            cfg.contains(&format!(
                "\"func_id\": {id},\n        \"name\": \"{name}\",\n        \"source\": str(_ROOT_DIR / \"kernels\" / \"aiv\" / \"{name}.cpp\"),"
            )),
            "{cfg}"
        );
        let pto = std::fs::read_to_string(chip.join(format!("ptoas/{name}.pto"))).unwrap();
        assert!(pto.contains(&format!("func.func @{name}(")), "{pto}");
        let w = std::fs::read_to_string(chip.join(format!("kernels/aiv/{name}.cpp"))).unwrap();
        assert!(
            w.contains(&format!("static __aicore__ void {name}(")) && w.contains(&format!("    {name}(")),
            "{w}"
        );
    }
    for gone in ["kernels/aiv/double.cpp", "kernels/aiv/new.cpp", "ptoas/double.pto"] {
        assert!(!chip.join(gone).exists(), "{gone}");
    }
    let orch = std::fs::read_to_string(chip.join("orchestration/chip.cpp")).unwrap();
    assert!(
        orch.contains("// Task 0: double_k2") && orch.contains("rt_submit_aiv_task(2, params_t2);"),
        "{orch}"
    );
    // The same program always gets the same names.
    let again = out_dir("keywords-again");
    assert!(emit(file, &again, &[]).status.success());
    assert_eq!(std::fs::read_to_string(again.join("next_levels/chip/kernel_config.py")).unwrap(), cfg);
}

#[test]
fn a_return_style_host_returns_through_an_extra_out_parameter() {
    let file = "pld-cli/tests/runtime_programs/return_style.py";
    let dir = out_dir("return-style");
    let out = emit(file, &dir, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    check_dir(&dir, 2);
    let meta = std::fs::read_to_string(dir.join("distributed_meta.json")).unwrap();
    assert!(meta.contains("\"num_return_types\": 1"), "{meta}");
    let ys = meta.find("\"name\": \"ys\",\n      \"direction\": \"Out\"").expect("ys is an Out parameter");
    assert!(meta.find("\"name\": \"xs\"").unwrap() < ys, "after the host's own parameters: {meta}");
    let host = std::fs::read_to_string(dir.join("orchestration/host_orch.py")).unwrap();
    assert!(host.contains("    if \"ys\" not in tensors:\n        tensors[\"ys\"] = torch.zeros("), "{host}");
    // run.py hands the caller's `ys` to the chips and saves it.
    run_py_with_mock(&dir, 2, &[("xs", "np.ones((2, 1, 32), np.float32)")]);
    let bytes = std::fs::read(dir.join("_mockrun/out/ys.npy")).unwrap();
    assert_eq!(npyz::NpyFile::new(&bytes[..]).unwrap().shape(), &[2, 1, 32]);
    // The checker holds `_alloc_intermediates` to the parameters (§10 R2).
    let m = out_dir("return-style-mutant");
    assert!(emit(file, &m, &[]).status.success());
    let t = std::fs::read_to_string(m.join("orchestration/host_orch.py")).unwrap();
    std::fs::write(
        m.join("orchestration/host_orch.py"),
        t.replace("    if \"ys\" not in tensors:\n        tensors", "    tensors"),
    )
    .unwrap();
    let out = Command::new("python3").arg(runtime_decls::checker()).arg(&m).arg("2").output().unwrap();
    assert!(
        !out.status.success() && text(&out.stdout).contains("R2: _alloc_intermediates replaces"),
        "{}",
        text(&out.stdout)
    );
    // A host that returns one of its inputs has nothing to return it through.
    let out = emit_source(
        "returns_input",
        "    @pl.function(type=pl.FunctionType.InCore)\n    def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):\n        t = pl.load(x, [0, 0], [16, 16])\n        y = pl.store(t, [0, 0], y)\n\n\
         \x20   @pl.function(level=pl.Level.CHIP, role=pl.Role.Orchestrator)\n    def chip(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):\n        self.k(x, y)\n\n\
         \x20   @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n    def host(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n        self.chip(x, y, device=0)\n        return x\n",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let e = text(&out.stderr);
    assert!(e.contains("neither one of its Out/InOut parameters nor a tensor it creates"), "{e}");
    assert!(e.contains("returns_input.py:19:16"), "{e}");
}

#[test]
fn builtin_variants_are_fully_rendered_and_take_distinct_windows() {
    // §10 R18, first half: nothing of a template is left in a variant (checker, on every
    // program; here it must catch a placeholder).
    let dir = out_dir("r18");
    assert!(emit("examples/host_collectives.py", &dir, &[]).status.success());
    check_dir(&dir, 2);
    let k = dir.join("next_levels/builtin.tensor.allreduce__sum__fp32/kernels/aiv/builtin_tensor_allreduce__sum__fp32_kernel.cpp");
    let t = std::fs::read_to_string(&k).unwrap();
    std::fs::write(&k, format!("{t}// {{{{dtype_cpp}}}}\n")).unwrap();
    let out = Command::new("python3").arg(runtime_decls::checker()).arg(&dir).arg("2").output().unwrap();
    assert!(!out.status.success() && text(&out.stdout).contains("R18"), "{}", text(&out.stdout));
    // Second half: the window arguments of one builtin are distinct buffers — a program that
    // passes two views of one buffer gets no directory, and a position.
    let src = std::fs::read_to_string(root().join("examples/host_collectives.py")).unwrap();
    let bad = src
        .replace(
            "ar_signal = pld.window(ar_sig_buf, [NR, 2], dtype=pl.INT32)",
            "ar_signal = pld.window(row0_buf, [NR, 2], dtype=pl.INT32)",
        )
        .replace("        ar_sig_buf = pld.alloc_window_buffer(pld.world_size() * 2 * 4)\n", "");
    assert_ne!(bad, src);
    let d = out_dir("r18-same-buffer");
    std::fs::create_dir_all(&d).unwrap();
    let file = d.join("same_buffer.py");
    std::fs::write(&file, bad).unwrap();
    let out = emit(s(&file), &d.join("out"), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let e = text(&out.stderr);
    assert!(e.contains("must be different window allocations") && e.contains("same_buffer.py:"), "{e}");
    assert!(!d.join("out/distributed_meta.json").exists());
    // M16: a variant is one binary, rendered for one set of static shapes; a second call of the
    // same collective with other shapes is its own variant (`__s2`), rendered and dispatched.
    let first = "        row0 = pld.tensor.allreduce(row0, ar_signal, op=pld.ReduceOp.Sum, core_num=2)\n";
    assert!(src.contains(first));
    let file = d.join("two_shapes.py");
    std::fs::write(
        &file,
        src.replace(
            first,
            &format!("{first}        rows = pld.tensor.allreduce(rows, ar_signal, op=pld.ReduceOp.Sum)\n"),
        ),
    )
    .unwrap();
    let out = emit(s(&file), &d.join("out2"), &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    check_dir(&d.join("out2"), 2);
    let host = std::fs::read_to_string(d.join("out2/orchestration/host_orch.py")).unwrap();
    for v in ["builtin.tensor.allreduce__sum__fp32", "builtin.tensor.allreduce__sum__fp32__s2"] {
        assert!(host.contains(&format!("callables[\"{v}\"]")), "{v}: {host}");
        assert!(d.join("out2/next_levels").join(v).is_dir(), "{v}");
    }
}

#[test]
fn sub_worker_modules_see_the_builders_binds_and_locals() {
    // Under the mock no kernel runs, so `y` stays zero and the callback's `out = y * factor +
    // shift` is the builder's local `shift`, which depends on the bound `factor`.
    let file = "pld-cli/tests/corpus/callback_builder_bind.py";
    for (factor, shift) in [("3", 1.0f32), ("-2", -1.0)] {
        let dir = out_dir(&format!("builder-bind{factor}"));
        let out = emit(file, &dir, &["--bind", &format!("factor={factor}")]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let module = std::fs::read_to_string(dir.join("sub_workers/scale.py")).unwrap();
        assert!(module.contains(&format!("_BINDS = {{\"factor\": {factor}}}")), "{module}");
        let log = run_py_with_mock(&dir, 2, &[("x", "np.ones((2, 2, 32), np.float32)")]);
        assert!(log.contains("\"event\": \"submit_sub\", \"name\": \"scale\""), "{log}");
        let bytes = std::fs::read(dir.join("_mockrun/out/out.npy")).unwrap();
        let v: Vec<f32> = npyz::NpyFile::new(&bytes[..]).unwrap().into_vec().unwrap();
        assert!(v.len() == 128 && v.iter().all(|x| *x == shift), "factor {factor}: {v:?}");
    }
    // Without a bind, the builder parameter's default holds (here `factor = 3`: shift 1).
    let src = std::fs::read_to_string(root().join(file)).unwrap();
    let dir = out_dir("builder-default");
    std::fs::create_dir_all(&dir).unwrap();
    let with_default = dir.join("builder_default.py");
    std::fs::write(&with_default, src.replace("def build(factor: int):", "def build(factor: int = 3):"))
        .unwrap();
    let out = emit(s(&with_default), &dir.join("out"), &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    run_py_with_mock(&dir.join("out"), 2, &[("x", "np.ones((2, 2, 32), np.float32)")]);
    let bytes = std::fs::read(dir.join("out/_mockrun/out/out.npy")).unwrap();
    let v: Vec<f32> = npyz::NpyFile::new(&bytes[..]).unwrap().into_vec().unwrap();
    assert!(v.iter().all(|x| *x == 1.0), "default: {v:?}");
}

/// A call's result is the argument it aliases (`pld_ir::results`) in the emitted directory too:
/// a chip orchestrator's `return self.kernel(...)` launches the kernel and returns its Out
/// argument, a kernel's result feeds the next task, and a dispatch's result reaches a callback
/// and a further dispatch as the tensor the chip wrote.
#[test]
fn call_results_are_the_arguments_they_alias_in_the_runtime_directory() {
    let dir = out_dir("flow-chip");
    let out = emit("pld-cli/tests/corpus/flow_kernel_chain_in_chip.py", &dir, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    check_dir(&dir, 2);
    let cpp = std::fs::read_to_string(dir.join("next_levels/chip_orch/orchestration/chip_orch.cpp")).unwrap();
    let inc = cpp.split("// Task 1: inc").nth(1).expect("the returned kernel call is a task");
    assert!(inc.contains("params_t1.add_input(ext_y);\n        params_t1.add_output(ext_z);"), "{cpp}");
    let host = std::fs::read_to_string(dir.join("orchestration/host_orch.py")).unwrap();
    assert!(
        host.contains("_ta_1 = TaskArgs()\n        _ta_1.add_tensor(make_tensor_arg(orch._worker, tensors[\"z\"][r:r + 1"),
        "{host}"
    );
    let dir = out_dir("flow-verify");
    let out = emit("pld-cli/tests/corpus/flow_single_dispatch_verify.py", &dir, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    check_dir(&dir, 2);
    let host = std::fs::read_to_string(dir.join("orchestration/host_orch.py")).unwrap();
    let verify = host.split("_ta_1 = TaskArgs()").nth(1).unwrap().split("orch.submit_sub").next().unwrap();
    assert!(verify.ends_with("tensors[\"f\"]), TensorArgType.INPUT)\n    "), "{host}");
    let again = host.split("_ta_2 = TaskArgs()").nth(1).unwrap();
    assert!(
        again.starts_with(
            "\n    _ta_2.add_tensor(make_tensor_arg(orch._worker, tensors[\"f\"]), TensorArgType.INPUT)"
        ),
        "{host}"
    );
}

/// Host collectives at any shape, any number of times: `check` and `compile` accept what `run`
/// accepts. Two signal-less allreduces of one window share a variant (their synthesized
/// signals differ only in dynamic extents); an allreduce of another size is its own variant.
#[test]
fn host_collectives_at_several_shapes_and_repeats_check_and_emit() {
    let file = "pld-cli/tests/corpus/host_collectives_sizes_and_repeats.py";
    let out = pld(&["check", file]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dir = out_dir("sizes-and-repeats");
    let out = pld(&["compile", file, "--emit", "all", "--out", s(&dir)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for ranks in [2, 3] {
        check_dir(&dir, ranks);
    }
    let host = std::fs::read_to_string(dir.join("orchestration/host_orch.py")).unwrap();
    let calls = |v: &str| host.matches(&format!("callables[\"{v}\"]")).count();
    assert_eq!(calls("builtin.tensor.allreduce__sum__fp32"), 2, "{host}");
    assert_eq!(calls("builtin.tensor.allreduce__sum__fp32__s2"), 1, "{host}");
    assert!(dir.join("builtin_tensor_allreduce__sum__fp32__s2_kernel.pto").is_file());
}
