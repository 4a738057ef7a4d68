//! Every file test of the workspace, one test per file (`libtest-mimic`): the pass-pipeline
//! files under `pld-passes/tests/filetests/` and the codegen programs under
//! `pld-codegen-pto/tests/programs/`, run by the one runner of `pld_testkit::filetest`.
//! `cargo xtask bless` rewrites their `# EXPECTED:` blocks.

use libtest_mimic::{Arguments, Failed, Trial};
use pld_testkit::filetest::{has_expectations, run_file, Stage, Suite};
use std::path::Path;

fn suites() -> Vec<Suite> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf();
    vec![
        Suite {
            name: "passes",
            dir: root.join("pld-passes/tests/filetests"),
            stage: Stage::Pipeline,
            skip_unchecked: false,
        },
        // Shared with the codegen crate's own tests: only files with expectations are file tests.
        Suite {
            name: "codegen",
            dir: root.join("pld-codegen-pto/tests/programs"),
            stage: Stage::Codegen,
            skip_unchecked: true,
        },
    ]
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for suite in suites() {
        let files = suite.files();
        assert!(!files.is_empty(), "file-test directory {} is empty", suite.dir.display());
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            if suite.skip_unchecked && !has_expectations(&text) {
                continue;
            }
            let name = format!(
                "{}/{}",
                suite.name,
                path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
            );
            let stage = suite.stage;
            trials.push(Trial::test(name, move || run_file(&path, stage).map_err(Failed::from)));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
