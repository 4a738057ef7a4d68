//! Program selection and builder bindings through the `pld` binary: `--entry` picks the
//! program of its host function, an ambiguous or missing selection is a usage error (exit 2)
//! naming `--entry` and `--program`, `check` checks every program of a file, `compile`
//! writes each program to its own subdirectory, and `--bind` problems each get their own
//! message (exit 2 for the command line, exit 1 with one `file:line:col` error per unbound
//! builder parameter).

mod cli_support;

use cli_support::{pld, root};

use std::path::{Path, PathBuf};
use std::process::Output;

fn out_dir(name: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-select-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn load_f32(path: &Path) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    npyz::NpyFile::new(&bytes[..]).expect("valid npy").into_vec::<f32>().expect("f32 data")
}

const MULTI_ENTRY: &str = "pld-cli/tests/corpus/multi_entry_ring_and_scale.py";
const TWO_CLASSES: &str = "pld-cli/tests/corpus/multi_program_classes.py";
const MODE_BUILDER: &str = "pld-cli/tests/corpus/builder_mode_select.py";
const FLAGS_BUILDER: &str = "pld-cli/tests/corpus/builder_flags.py";
const TWO_BUILDERS: &str = "pld-cli/tests/corpus/two_builders.py";

#[test]
fn entry_selects_the_program_whose_host_it_names() {
    let dir = out_dir("entry");
    let out =
        pld(&["run", MULTI_ENTRY, "--entry", "host_scale", "--ranks", "3", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("ran `host_scale` on 3 rank(s)"));
    let inp = load_f32(&dir.join("inputs/inputs.npy"));
    let got = load_f32(&dir.join("outputs.npy"));
    assert_eq!(got, inp.iter().map(|v| 0.5 * v - 2.0).collect::<Vec<_>>());
    // A class's host is selected the same way; `--program` still selects by class name.
    for sel in [["--entry", "bcast_host"], ["--program", "RootBroadcast"]] {
        let dir = out_dir(&format!("class-{}", sel[0].trim_start_matches('-')));
        let out = pld(&["run", TWO_CLASSES, sel[0], sel[1], "--ranks", "2", "--out", dir.to_str().unwrap()]);
        assert!(out.status.success(), "{sel:?}: {}", stderr(&out));
        let inp = load_f32(&dir.join("inputs/inputs.npy"));
        let got = load_f32(&dir.join("outputs.npy"));
        let row0: Vec<f32> = inp[..128].iter().map(|v| 2.0 * v).collect();
        assert_eq!(got[..128], row0[..]);
        assert_eq!(got[128..], row0[..]);
    }
}

#[test]
fn an_unselected_run_of_several_programs_is_a_usage_error_naming_both_flags() {
    let out = pld(&["run", MULTI_ENTRY, "--out", out_dir("none").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "error: {MULTI_ENTRY} defines 2 programs: host_ring (entry host_ring), host_scale (entry host_scale); \
             select one with --entry HOST or --program NAME\n"
        )
    );
    let out = pld(&["run", MULTI_ENTRY, "--entry", "host_nope"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--entry host_nope: no function `host_nope` in any program of"),
        "{}",
        stderr(&out)
    );
    let out = pld(&["run", TWO_CLASSES, "--program", "Nope"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("defines no program named `Nope` (programs: MeshSum (entry sum_host), RootBroadcast (entry bcast_host))"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_entry_name_two_programs_share_needs_program() {
    let dir = out_dir("shared-entry");
    std::fs::create_dir_all(&dir).unwrap();
    let class = |name: &str, factor: &str| {
        format!(
            r#"
@pl.program
class {name}:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4, 16], pl.FP32], y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]):
        t = pl.load(x, [0, 0], [4, 16])
        y = pl.store(pl.muls(t, {factor}), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[4, 16], pl.FP32], y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]):
        self.k(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, x: pl.Tensor[[NR, 4, 16], pl.FP32], y: pl.Out[pl.Tensor[[NR, 4, 16], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.chip(x[r], y[r], device=r)
"#
        )
    };
    let file = dir.join("twins.py");
    std::fs::write(
        &file,
        format!(
            "import pypto.language as pl\nimport pypto.language.distributed as pld\n\nNR = pl.dynamic(\"NR\")\n{}{}",
            class("Double", "2.0"),
            class("Triple", "3.0")
        ),
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let out = pld(&["run", f, "--entry", "host_orch"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--entry host_orch is ambiguous: 2 programs of")
            && stderr(&out).contains("define it (Double, Triple); select one with --program NAME"),
        "{}",
        stderr(&out)
    );
    let o = dir.join("o");
    let out = pld(&["run", f, "--program", "Triple", "--entry", "host_orch", "--out", o.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (x, y) = (load_f32(&o.join("inputs/x.npy")), load_f32(&o.join("y.npy")));
    assert_eq!(y, x.iter().map(|v| v * 3.0).collect::<Vec<_>>());
}

#[test]
fn check_checks_every_program_of_the_file() {
    let out = pld(&["check", TWO_CLASSES]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), format!("{TWO_CLASSES}: ok (2 programs: MeshSum, RootBroadcast)\n"));
    // An error in the second program is found without selecting it.
    let dir = out_dir("check-all");
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(root().join(MULTI_ENTRY)).unwrap();
    let broken = text.replace("    t = pl.muls(t, 0.5)\n", "    t = pl.muls(t, undefined_factor)\n");
    assert_ne!(broken, text);
    let file = dir.join("broken.py");
    std::fs::write(&file, broken).unwrap();
    let out = pld(&["check", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("undefined name `undefined_factor`"), "{}", stderr(&out));
    assert!(stderr(&out).contains("broken.py:40:20"), "{}", stderr(&out));
    // `--program` or `--entry` checks one program only: the broken one is not looked at.
    for sel in ["--program", "--entry"] {
        let out = pld(&["check", file.to_str().unwrap(), sel, "host_ring"]);
        assert!(out.status.success(), "{sel}: {}", stderr(&out));
        let out = pld(&["check", file.to_str().unwrap(), sel, "host_scale"]);
        assert_eq!(out.status.code(), Some(1), "{sel}: {}", stderr(&out));
    }
}

#[test]
fn compile_writes_each_program_to_its_own_subdirectory() {
    let dir = out_dir("compile-all");
    let out = pld(&["compile", MULTI_ENTRY, "--emit", "all", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    for unit in ["host_ring", "host_scale"] {
        let sub = dir.join(unit);
        assert!(sub.join("orchestration.json").is_file(), "{unit}: no orchestration.json");
        let ir = std::fs::read_to_string(sub.join("multi_entry_ring_and_scale.ir.py")).expect("ir");
        assert!(ir.contains(&format!("def {unit}(")), "{unit}:\n{ir}");
    }
    let ring_ir = std::fs::read_to_string(dir.join("host_ring/multi_entry_ring_and_scale.ir.py")).unwrap();
    assert!(!ring_ir.contains("def host_scale("), "each unit holds its own functions only");
    assert!(!dir.join("orchestration.json").exists(), "nothing at the top level with several units");
    // One selected unit keeps the flat layout.
    for sel in ["--program", "--entry"] {
        let flat = out_dir(&format!("compile-one{sel}"));
        let out = pld(&["compile", MULTI_ENTRY, sel, "host_ring", "--out", flat.to_str().unwrap()]);
        assert!(out.status.success(), "{sel}: {}", stderr(&out));
        assert!(flat.join("orchestration.json").is_file(), "{sel}");
    }
    // On stdout, each unit's output follows its header.
    let out = pld(&["compile", MULTI_ENTRY, "--emit", "ir"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (a, b) = (
        text.find("// ===== program host_ring =====").unwrap(),
        text.find("// ===== program host_scale =====").unwrap(),
    );
    assert!(a < b);
}

#[test]
fn a_string_bind_folds_the_builders_if_elif_chain() {
    for mode in ["ring", "mesh"] {
        let out = pld(&["check", MODE_BUILDER, "--bind", &format!("mode={mode}")]);
        assert!(out.status.success(), "{mode}: {}", stderr(&out));
    }
    // The ring signal matrix comes from the `ring` branch's tuple assignment.
    let out = pld(&["compile", MODE_BUILDER, "--bind", "mode=ring", "--emit", "ir"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let ir = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(ir.contains("pld.DistributedTensor[[2 * (NR - 1), NR], pl.INT32]"), "{ir}");
    let dir = out_dir("ring-run");
    let out =
        pld(&["run", MODE_BUILDER, "--bind", "mode=ring", "--ranks", "4", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (inp, got) = (load_f32(&dir.join("inputs/inputs.npy")), load_f32(&dir.join("outputs.npy")));
    for i in 0..96 {
        let want: f32 = (0..4).map(|k| inp[k * 96 + i] + 1.0).sum();
        for r in 0..4 {
            assert!((got[r * 96 + i] - want).abs() <= 1e-4 * want.abs().max(1.0), "rank {r} element {i}");
        }
    }
    // A mode no branch accepts reaches the builder's `raise`.
    let out = pld(&["check", MODE_BUILDER, "--bind", "mode=tree"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("error: `build` raises here with the bound values, so it builds no program"),
        "{err}"
    );
    assert!(err.contains("builder_mode_select.py:23:9"), "{err}");
    assert!(err.ends_with("error: aborting due to 1 error\n"), "{err}");
}

#[test]
fn an_unbound_builder_parameter_is_one_error_naming_the_bind() {
    let out = pld(&["check", MODE_BUILDER]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("error: `sig_rows` depends on `mode`, which is a parameter of the enclosing Python function `build`; its value is only known at run time\n  --> pld-cli/tests/corpus/builder_mode_select.py:33:53"),
        "{err}"
    );
    assert!(err.contains("= note: bind it with `--bind mode=VALUE`"), "{err}");
    assert!(!err.contains("ParseOptions"), "{err}");
    assert_eq!(err.matches("error:").count(), 2, "one error and the summary: {err}");
    assert!(err.ends_with("error: aborting due to 1 error\n"), "{err}");
}

#[test]
fn bind_names_and_values_are_checked() {
    let out = pld(&["check", MODE_BUILDER, "--bind", "mdoe=ring"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "error: --bind `mdoe`: no such builder parameter or dynamic dimension (`build` takes mode; dynamic dimensions: NR)\n"
    );
    let cases = [
        ("cols=abc", "--bind cols=abc: `abc` is not an integer (the parameter is an `int`)"),
        ("cols=2.5", "--bind cols=2.5: `2.5` is not an integer (the parameter is an `int`)"),
        (
            "cols=99999999999999999999",
            "--bind cols=99999999999999999999: `99999999999999999999` is out of range (an integer binding must fit in 64 signed bits)",
        ),
        ("negate=maybe", "--bind negate=maybe: `maybe` is not a boolean (the parameter is a `bool`: True or False)"),
        ("scale=big", "--bind scale=big: `big` is not a number (the parameter is a `float`)"),
    ];
    for (bind, want) in cases {
        let out = pld(&["check", FLAGS_BUILDER, "--bind", bind]);
        assert_eq!(out.status.code(), Some(2), "{bind}: {}", stderr(&out));
        assert_eq!(stderr(&out), format!("error: {want}\n"), "{bind}");
    }
    for binds in [&["negate=True", "scale=2.5"][..], &["negate=false", "cols=32"], &["scale=3"]] {
        let mut args = vec!["check", FLAGS_BUILDER];
        for b in binds {
            args.extend(["--bind", b]);
        }
        let out = pld(&args);
        assert!(out.status.success(), "{binds:?}: {}", stderr(&out));
    }
}

#[test]
fn selecting_one_program_needs_only_its_own_builder_bound() {
    let dir = out_dir("two-builders");
    let out = pld(&[
        "run",
        TWO_BUILDERS,
        "--entry",
        "shift_host",
        "--bind",
        "bias=3",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (inp, got) = (load_f32(&dir.join("inputs/inputs.npy")), load_f32(&dir.join("outputs.npy")));
    assert_eq!(got, inp.iter().map(|v| v + 3.0).collect::<Vec<_>>());
    // The other builder's parameter is not a name the selected program takes.
    let out = pld(&["run", TWO_BUILDERS, "--entry", "shift_host", "--bind", "bias=3", "--bind", "hops=2"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "--bind `hops`: no such builder parameter or dynamic dimension (`build_shift` takes bias"
        ),
        "{}",
        stderr(&out)
    );
    // Checking every program needs both, and says so once each.
    let out = pld(&["check", TWO_BUILDERS]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("bind it with `--bind hops=VALUE`") && err.contains("bind it with `--bind bias=VALUE`"),
        "{err}"
    );
    assert!(err.ends_with("error: aborting due to 2 errors\n"), "{err}");
    let out = pld(&["check", TWO_BUILDERS, "--bind", "hops=1", "--bind", "bias=0"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// Two builders defining a class of the same name, each with its own host.
const SAME_NAMES: &str = r#"import pypto.language as pl
import pypto.language.distributed as pld


def build_a(n: int = 4):
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[n, 16], pl.FP32], y: pl.Out[pl.Tensor[[n, 16], pl.FP32]]):
            t = pl.load(x, [0, 0], [n, 16])
            y = pl.store(t, [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def chip(self, x: pl.Tensor[[n, 16], pl.FP32], y: pl.Out[pl.Tensor[[n, 16], pl.FP32]]):
            self.k(x, y)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_a(self, x: pl.Tensor[[n, 16], pl.FP32], y: pl.Out[pl.Tensor[[n, 16], pl.FP32]]):
            self.chip(x, y, device=0)

    return P


def build_b(n: int = 2):
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[n, 16], pl.FP32], y: pl.Out[pl.Tensor[[n, 16], pl.FP32]]):
            t = pl.load(x, [0, 0], [n, 16])
            y = pl.store(pl.add(t, t), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def chip(self, x: pl.Tensor[[n, 16], pl.FP32], y: pl.Out[pl.Tensor[[n, 16], pl.FP32]]):
            self.k(x, y)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_b(self, x: pl.Tensor[[n, 16], pl.FP32], y: pl.Out[pl.Tensor[[n, 16], pl.FP32]]):
            self.chip(x, y, device=0)

    return P
"#;

#[test]
fn programs_sharing_a_name_are_told_apart_by_their_entry() {
    let dir = out_dir("same-names");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("same.py");
    std::fs::write(&file, SAME_NAMES).unwrap();
    let f = file.to_str().unwrap();
    let out = pld(&["run", f, "--program", "P"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--program P is ambiguous: 2 programs of")
            && stderr(&out)
                .contains("are named `P` (P (entry host_a), P (entry host_b)); select one with --entry HOST"),
        "{}",
        stderr(&out)
    );
    let o = dir.join("o");
    let out = pld(&["run", f, "--entry", "host_b", "--out", o.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (x, y) = (load_f32(&o.join("inputs/x.npy")), load_f32(&o.join("y.npy")));
    assert_eq!(y, x.iter().map(|v| v + v).collect::<Vec<_>>());
    assert_eq!(x.len(), 2 * 16, "build_b's default n = 2");
    let c = dir.join("c");
    let out = pld(&["compile", f, "--out", c.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        c.join("P-host_a/orchestration.json").is_file() && c.join("P-host_b/orchestration.json").is_file()
    );
}

/// A builder parameter that is the rank count (`nranks: int`) is bound from `--ranks` when no
/// `--bind` names it, with a `note:` saying so: `pld check --ranks N` and `pld run --ranks N`
/// need no `--bind`; an explicit `--bind` still wins.
#[test]
fn a_rank_count_builder_parameter_is_bound_from_ranks() {
    let file = "pld-cli/tests/corpus/ergo_all_reduce_ring_builder.py";
    let o = pld(&["check", file, "--ranks", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("note: builder parameter `nranks` of `build_ring_sum` is the rank count: bound from --ranks (nranks=3"),
        "{}",
        stderr(&o)
    );
    // Without --ranks, check cannot know it.
    let o = pld(&["check", file]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let d = out_dir("rank-builder");
    let o = pld(&["run", file, "--ranks", "3", "--check-golden", "--out", d.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("bound from --ranks (nranks=3"), "{}", stderr(&o));
    let o = pld(&["check", file, "--ranks", "3", "--bind", "nranks=4"]);
    assert!(o.status.success() && !stderr(&o).contains("bound from --ranks"), "{}", stderr(&o));
}
