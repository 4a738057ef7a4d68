//! `pld run --expect NAME=PATH.npy`, `--rtol`/`--atol` and `--check-golden` through the
//! built binary: a match exits 0, a mismatch exits 4 and prints the #wrong count with the
//! first wrong indices, a shape or dtype mismatch or an unknown NAME exits 2; `pld verify`
//! checks the outputs its schedules agreed on the same way.

mod cli_support;

use cli_support::{pld, root, scratch, text};

use std::path::Path;
use std::process::Output;

fn write_f32(path: &Path, shape: &[u64], vals: &[f32]) {
    use npyz::WriterBuilder;
    let mut out = Vec::new();
    let mut w = npyz::WriteOptions::new().default_dtype().shape(shape).writer(&mut out).begin_nd().unwrap();
    w.extend(vals.iter().copied()).unwrap();
    w.finish().unwrap();
    std::fs::write(path, out).unwrap();
}

fn read_f32(path: &Path) -> (Vec<u64>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = npy.shape().to_vec();
    (shape, npy.into_vec::<f32>().unwrap())
}

/// Runs the quickstart allreduce on 3 ranks into `d`; returns the `outputs` array.
fn reference_run(d: &Path) -> (Vec<u64>, Vec<f32>) {
    let out = pld(&["run", "examples/quickstart_allreduce.py", "--ranks", "3", "--out", d.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    read_f32(&d.join("outputs.npy"))
}

fn run_expect(d: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["run", "examples/quickstart_allreduce.py", "--ranks", "3", "--out"];
    let o = d.join("again");
    args.push(o.to_str().unwrap());
    args.extend_from_slice(extra);
    pld(&args)
}

#[test]
fn expected_output_that_matches_exits_0_with_its_errors() {
    let d = scratch("expect", "pass");
    let (shape, vals) = reference_run(&d);
    // An independent expectation: the sum over ranks of the run's own inputs.
    let (ishape, inp) = read_f32(&d.join("inputs/inputs.npy"));
    assert_eq!(ishape, shape);
    let row = inp.len() / 3;
    let want: Vec<f32> = (0..vals.len()).map(|i| (0..3).map(|k| inp[k * row + i % row]).sum()).collect();
    let p = d.join("want.npy");
    write_f32(&p, &shape, &want);
    let out = run_expect(&d, &["--expect", &format!("outputs={}", p.display())]);
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{so}{}", text(&out.stderr));
    assert!(so.contains("check outputs vs") && so.contains(": ok, 768 elements, max abs err 0"), "{so}");
}

#[test]
fn mismatch_exits_4_with_wrong_count_and_first_indices() {
    let d = scratch("expect", "mismatch");
    let (shape, mut vals) = reference_run(&d);
    // Rank 1's element 5 and rank 2's element 200 are off; element 7 is within --atol 0.5.
    vals[256 + 5] += 3.0;
    vals[512 + 200] -= 1.0;
    vals[7] += 0.25;
    let p = d.join("want.npy");
    write_f32(&p, &shape, &vals);
    let spec = format!("outputs={}", p.display());
    let out = run_expect(&d, &["--expect", &spec, "--atol", "0.5", "--rtol", "0"]);
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{so}{}", text(&out.stderr));
    assert!(so.contains("MISMATCH #wrong 2 of 768"), "{so}");
    assert!(so.contains("max abs err 3,") || so.contains("max abs err 3 "), "{so}");
    assert!(so.contains("first wrong: [1, 0, 5] got"), "{so}");
    assert!(so.contains("; [2, 0, 200] got"), "{so}");
    assert!(text(&out.stderr).contains("1 of 1 checked output(s) differ: outputs"), "{}", text(&out.stderr));
    // The default FP32 tolerance is tight: element 7 counts too.
    let out = run_expect(&d, &["--expect", &spec]);
    assert_eq!(out.status.code(), Some(4));
    assert!(text(&out.stdout).contains("#wrong 3 of 768"), "{}", text(&out.stdout));
}

#[test]
fn shape_dtype_and_name_mismatches_exit_2() {
    let d = scratch("expect", "usage");
    let (shape, vals) = reference_run(&d);
    let flat = d.join("flat.npy");
    write_f32(&flat, &[vals.len() as u64], &vals);
    let out = run_expect(&d, &["--expect", &format!("outputs={}", flat.display())]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("has shape [768], the output is [3, 1, 256]"),
        "{}",
        text(&out.stderr)
    );

    let ints = d.join("ints.npy");
    {
        use npyz::WriterBuilder;
        let mut buf = Vec::new();
        let mut w =
            npyz::WriteOptions::new().default_dtype().shape(&shape).writer(&mut buf).begin_nd().unwrap();
        w.extend(vals.iter().map(|&v| v as i32)).unwrap();
        w.finish().unwrap();
        std::fs::write(&ints, buf).unwrap();
    }
    let out = run_expect(&d, &["--expect", &format!("outputs={}", ints.display())]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("does not match"), "{}", text(&out.stderr));

    let out = run_expect(&d, &["--expect", &format!("nosuch={}", flat.display())]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("has no output `nosuch` (outputs: outputs)"), "{}", text(&out.stderr));
}

#[test]
fn verify_checks_the_outputs_every_schedule_agreed_on() {
    let d = scratch("expect", "verify");
    let (shape, mut vals) = reference_run(&d);
    let p = d.join("want.npy");
    write_f32(&p, &shape, &vals);
    let spec = format!("outputs={}", p.display());
    let verify = |extra: &[&str]| {
        let mut args = vec!["verify", "examples/quickstart_allreduce.py", "--ranks", "3", "--schedules", "2"];
        args.extend_from_slice(extra);
        pld(&args)
    };
    let out = verify(&["--expect", &spec]);
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("check outputs vs"), "{}", text(&out.stdout));
    vals[3] += 1.0;
    write_f32(&p, &shape, &vals);
    let out = verify(&["--expect", &spec]);
    assert_eq!(out.status.code(), Some(4), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("MISMATCH #wrong 1 of 768"), "{}", text(&out.stdout));
}

/// A wrong `--expect NAME` is found before the simulation: a program whose run deadlocks
/// (exit 3) exits 2 with the entry's outputs instead, and writes no fault report.
#[test]
fn unknown_expect_name_is_reported_before_the_run() {
    let d = scratch("expect", "before-run");
    let npy = d.join("want.npy");
    write_f32(&npy, &[2, 1, 64], &[0.0; 128]);
    let file = "examples/broken_divergent_barrier.py";
    let out_dir = d.join("out");
    let out = pld(&["run", file, "--ranks", "2", "--out", &out_dir.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(3), "the run itself deadlocks: {}", text(&out.stderr));
    let out = pld(&[
        "run",
        file,
        "--ranks",
        "2",
        "--out",
        &out_dir.to_string_lossy(),
        "--expect",
        &format!("output={}", npy.display()),
    ]);
    let e = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains("--expect output: `host_orch` has no output `output` (outputs: outputs)"), "{e}");
    assert!(!e.contains("deadlock"), "{e}");
}

#[test]
fn a_golden_that_cannot_run_still_writes_the_report_json_with_the_error() {
    // A corpus allreduce with a golden that reads a tensor the program does not have: the run
    // finishes, the golden raises, `pld run` exits 2, and `--report-json` holds the run's rows
    // and the error.
    let d = scratch("expect", "golden-cannot-run");
    let src =
        std::fs::read_to_string(root().join("pld-cli/tests/corpus/rebind_store_then_allreduce.py")).unwrap();
    assert!(src.contains("\ndef golden(tensors, params):\n"), "the program has a golden");
    let file = d.join("bad_golden.py");
    let bad = src.replace(
        "\ndef golden(tensors, params):\n",
        "\ndef golden(tensors, params):\n    tensors[\"no_such_tensor\"][:] = 0\n",
    );
    std::fs::write(&file, bad).unwrap();
    let report = d.join("report.json");
    let out_dir = d.join("out");
    let args = [
        "run",
        file.to_str().unwrap(),
        "--ranks",
        "2",
        "--check-golden",
        "--report-json",
        report.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ];
    let out = pld(&args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("KeyError: 'no_such_tensor'"), "{err}");
    let doc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("no --report-json written: {e}\n{err}")),
    )
    .unwrap();
    assert_eq!(doc["ok"], serde_json::Value::Bool(true), "{doc}");
    assert!(doc["check_error"].as_str().is_some_and(|m| m.contains("KeyError: 'no_such_tensor'")), "{doc}");
    let outputs = doc["outputs"].as_array().expect("outputs rows");
    assert!(outputs.iter().any(|o| o["name"] == "outputs"), "{doc}");
    assert_eq!(doc["modeled_ps"].as_array().map(Vec::len), Some(2), "{doc}");
}
