//! File tests: every `tests/programs/*.py` goes through the real frontend, the pass pipeline
//! and codegen; the `# CHECK:` lines embedded in the file are matched against the emitted
//! modules (each preceded by `// ----- <name> -----`) followed by the orchestration JSON.

mod common;
use common::filecheck;
use pld_codegen_pto::{emit_program, CodegenOptions};
use std::path::Path;

fn output_of(text: &str) -> Result<String, String> {
    let mut p = pld_frontend::parse_str(text)
        .map_err(|d| format!("parse: {:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>()))?;
    pld_passes::run_pipeline(&mut p, &pld_passes::PipelineOptions::default())
        .map_err(|d| format!("pipeline: {:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>()))?;
    let out = emit_program(&p, &CodegenOptions::default())
        .map_err(|d| format!("codegen: {:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>()))?;
    let mut s = String::new();
    for (name, m) in &out.modules {
        s.push_str(&format!("// ----- {name} -----\n{m}"));
    }
    s.push_str("// ----- orchestration.json -----\n");
    s.push_str(&out.orchestration);
    Ok(s)
}

#[test]
fn program_files_match_their_check_lines() {
    common::init();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut checked = 0;
    let mut failures = Vec::new();
    for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "py")) {
        let text = std::fs::read_to_string(f).unwrap();
        if !text.contains("# CHECK") {
            continue;
        }
        checked += 1;
        match output_of(&text) {
            Ok(out) => {
                if let Err(e) = filecheck::check(&out, &text) {
                    failures.push(format!("{}: {e}\n{out}", f.display()));
                }
            }
            Err(e) => failures.push(format!("{}: {e}", f.display())),
        }
    }
    assert!(checked >= 4, "only {checked} file tests found");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
