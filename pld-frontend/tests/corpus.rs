//! Every corpus program parses, verifies, and survives `parse(print(parse(src)))` unchanged
//! up to value renaming; the printed form is itself a fixed point of print∘parse.

use pld_frontend::{parse_programs, structurally_equal, ParseOptions};
use pld_ir::SourceMap;
use std::path::PathBuf;

fn corpus() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    files
}

fn parse_file(path: &PathBuf) -> Vec<pld_ir::Program> {
    let text = std::fs::read_to_string(path).expect("read corpus file");
    let mut sm = SourceMap::new();
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    match parse_programs(&mut sm, &name, &text, &ParseOptions::default()) {
        Ok(p) if !p.is_empty() => p,
        Ok(_) => panic!("{name} defines no program"),
        Err(d) => panic!("{name} does not parse:\n{}", d.render(&sm)),
    }
}

#[test]
fn corpus_parses_verifies_and_round_trips() {
    let _ = pld_ops::registry();
    let files = corpus();
    assert!(files.len() >= 6, "corpus is missing files: {files:?}");
    for path in &files {
        for p in parse_file(path) {
            check_round_trip(path, &p);
        }
    }
}

fn check_round_trip(path: &std::path::Path, p: &pld_ir::Program) {
    let name = path.display();
    assert!(!p.functions.is_empty(), "{name}: no functions");
    if let Err(d) = pld_ir::verify_program(p) {
        panic!("{name} does not verify:\n{d}\n{}", pld_ir::print_program(p));
    }
    let printed = pld_ir::print_program(p);
    let again = match pld_frontend::parse_str(&printed) {
        Ok(q) => q,
        Err(d) => {
            let mut sm = SourceMap::new();
            let _ = parse_programs(&mut sm, "<printed>", &printed, &ParseOptions::default());
            panic!("{name}: printed form does not parse:\n{}\n{printed}", d.render(&sm));
        }
    };
    if let Err(e) = structurally_equal(p, &again) {
        panic!("{name}: round trip differs: {e}\n{printed}");
    }
    let printed_again = pld_ir::print_program(&again);
    assert_eq!(printed, printed_again, "{name}: print is not a fixed point");
}
