//! `cargo xtask tidy` (and the last `ci` step): source hygiene rules that rustc
//! and clippy do not enforce.
//!
//! Checked for every `.rs` file under every crate folder (a top-level folder with
//! a `Cargo.toml`; `target/` and hidden folders are skipped):
//!
//! * the first line is a `//!` comment saying what the file is for — in `src/`,
//!   `tests/`, `benches/` and `examples/` alike;
//! * no test is switched off: no `#[ignore]` and no `#[should_panic]` attribute.
//!   A test that cannot run is deleted or fixed, and a panic on any input is a bug,
//!   so a test that expects one has nothing to assert;
//! * `pld-passes/src` spells no op name in a string literal: what an op does is data in
//!   its record (`pld_ir::effects`), and the few ops passes build or recognise by identity
//!   are named once, in `pld_ir::vocab`;
//! * `pld-codegen-pto/src`, `pld-runtime-simpler/src` and `pld-sim/src` spell no op name in a string literal outside
//!   their per-family modules ([`PER_FAMILY_MODULES`]: the files that register one op
//!   family's emitters or simulator semantics, where the family's names are the keys of
//!   `register_emitter!` / `register_semantics!`). Elsewhere in those crates a name comes
//!   from the op record (`Call::op()`, its effects and signal role), from `pld_ir::vocab`, or
//!   from a constant of the family module. Their unit-test code (a file named `tests.rs`,
//!   or everything from a column-0 `#[cfg(test)]` line on) is exempt: tests build programs
//!   by op name the way users write them;
//! * `pld-codegen-pto/src` formats no PTO text outside its printer ([`PTO_PRINTER`]):
//!   emitters push typed instructions (`pld_codegen_pto::pto::Inst`) and the printer alone
//!   renders them. A formatting call (`format!`, `write!`, `writeln!`, `format_args!`,
//!   `push_str`) whose string literal on the same line reads as PTO syntax (an SSA name
//!   `%…`, a `!pto`/`#pto` type or attribute, `= pto.`/`= arith.`/`= scf.`, or an
//!   instruction opening with `pto.`/`arith.`/`scf.`/`func.`) is a violation. Unit-test
//!   code is exempt (the Simpler runtime directory's Python and C++ live in their own crate);
//! * no file over 800 lines and no function over 150 (`sizes`).
//!
//! A string literal is an op name when it reads `<namespace>.<name>` with a namespace of
//! [`OP_NAMESPACES`] and a lowercase name; a file name such as `"tensor.h"` (a C, C++ or
//! Python source extension) is not.

use std::fs;
use std::path::{Path, PathBuf};

use crate::shell::{relative, workspace_root};
use crate::{no_args, Failure, Result};

/// Attributes that switch a test off. Spelled in pieces so this file does not
/// match itself.
const FORBIDDEN_ATTRS: [&str; 2] = [concat!("#[", "ignore"), concat!("#[", "should_panic")];

/// One rule broken at one place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// `path:line`, relative to the workspace root.
    pub location: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// The rules applied to one file's text; `path` is only used in the locations.
pub fn check_file(path: &str, text: &str) -> Vec<Violation> {
    let mut found = Vec::new();
    let first = text.trim_start_matches('\u{feff}').lines().next().unwrap_or("");
    if !first.starts_with("//!") {
        found.push(Violation {
            location: format!("{path}:1"),
            message: "file must begin with a `//!` comment saying what it is for".to_owned(),
        });
    }
    found.extend(crate::sizes::check(path, text));
    let unix = path.replace('\\', "/");
    let in_passes = unix.starts_with("pld-passes/src/");
    let mut in_backend = backend_rule_applies(&unix);
    let mut in_codegen = pto_text_rule_applies(&unix);
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("#[cfg(test)]") {
            in_backend = false;
            in_codegen = false;
        }
        if let Some(lit) = in_codegen.then(|| pto_text_literal(line)).flatten() {
            found.push(Violation {
                location: format!("{path}:{}", i + 1),
                message: format!(
                    "PTO text \"{lit}\" formatted outside the printer: push a typed instruction \
                     (pld_codegen_pto::pto::Inst) and let {PTO_PRINTER} render it"
                ),
            });
        }
        if in_passes || in_backend {
            if let Some(name) = op_name_literal(line) {
                let message = if in_passes {
                    format!(
                        "op name \"{name}\" spelled in pld-passes: read what the op does from its record \
                         (pld_ir::effects), or name it once in pld_ir::vocab"
                    )
                } else {
                    format!(
                        "op name \"{name}\" spelled outside a per-family module: read it from the op record \
                         (Call::op(), its effects or signal role), from pld_ir::vocab, or from a constant of \
                         the family's module (pld-codegen-pto/src/emit/, pld-sim/src/sem/)"
                    )
                };
                found.push(Violation { location: format!("{path}:{}", i + 1), message });
            }
        }
        let line = line.trim_start();
        for attr in FORBIDDEN_ATTRS {
            let Some(rest) = line.strip_prefix(attr) else {
                continue;
            };
            // `#[ignore]`, `#[ignore = "why"]`, `#[should_panic(expected = ...)]`,
            // but not a longer name such as `#[ignored_thing]`.
            if rest.starts_with([']', '=', '(', ' ']) {
                found.push(Violation {
                    location: format!("{path}:{}", i + 1),
                    message: format!(
                        "`{attr}]` is not allowed: fix or delete the test (tests never skip or expect panics)"
                    ),
                });
            }
        }
    }
    found
}

/// The per-family modules of codegen and the simulator (folders end in `/`): each file
/// registers one op family's emitters (`register_emitter!`) or semantics
/// (`register_semantics!`, `register_collective!`), or renders one family's kernels
/// (`builtin.rs`: the `builtin.tensor.*` collectives). Only they may spell op names.
pub const PER_FAMILY_MODULES: [&str; 3] =
    ["pld-codegen-pto/src/emit/", "pld-codegen-pto/src/builtin.rs", "pld-sim/src/sem/"];

/// The backend source folders the op-name rule covers (codegen, the runtime directory, the
/// simulator).
const BACKEND_SOURCES: [&str; 3] = ["pld-codegen-pto/src/", "pld-runtime-simpler/src/", "pld-sim/src/"];

/// Whether the codegen/simulator op-name rule applies to the file at `path` (`/`-separated,
/// relative to the workspace root).
fn backend_rule_applies(path: &str) -> bool {
    let in_backend = BACKEND_SOURCES.iter().any(|b| path.starts_with(b));
    let family =
        PER_FAMILY_MODULES.iter().any(|m| if m.ends_with('/') { path.starts_with(m) } else { path == *m });
    let test_file = path.ends_with("/tests.rs") || path.contains("/tests/");
    in_backend && !family && !test_file
}

/// The one module of `pld-codegen-pto` that renders PTO text.
pub const PTO_PRINTER: &str = "pld-codegen-pto/src/pto/print.rs";

/// Whether the no-PTO-text rule applies to the file at `path` (`/`-separated, relative to
/// the workspace root): codegen sources other than the printer.
fn pto_text_rule_applies(path: &str) -> bool {
    path.starts_with("pld-codegen-pto/src/") && path != PTO_PRINTER && !path.ends_with("/tests.rs")
}

/// Calls that format text.
const FORMATTING_CALLS: [&str; 5] = ["format!(", "write!(", "writeln!(", "format_args!(", "push_str("];

/// Instruction dialects: a literal opening with `<dialect>.<op>` followed by an operand is
/// an instruction.
const PTO_DIALECTS: [&str; 4] = ["pto.", "arith.", "scf.", "func."];

/// The first string literal on `line` (outside a `//` comment) of a formatting call that
/// reads as PTO syntax.
fn pto_text_literal(line: &str) -> Option<&str> {
    let code = line.split("//").next().unwrap_or("");
    if !FORMATTING_CALLS.iter().any(|c| code.contains(c)) {
        return None;
    }
    let mut parts = code.split('"');
    parts.next();
    while let (Some(lit), Some(_)) = (parts.next(), parts.next()) {
        let assigns = PTO_DIALECTS.iter().any(|d| lit.contains(&format!("= {d}")));
        let opens = PTO_DIALECTS.iter().any(|d| {
            lit.strip_prefix(d).is_some_and(|rest| {
                let op_end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'));
                op_end.is_some_and(|e| e > 0 && rest[e..].starts_with([' ', '(', '{']))
            })
        });
        if lit.starts_with('%') || lit.contains("!pto") || lit.contains("#pto") || assigns || opens {
            return Some(lit);
        }
    }
    None
}

/// Source-file extensions: `"tensor.h"` names a file, not an op.
const SOURCE_EXTENSIONS: [&str; 5] = ["h", "hpp", "cpp", "py", "rs"];

/// Op namespaces: a string literal `"<ns>.<name>"` names an op.
const OP_NAMESPACES: [&str; 8] = ["pld", "builtin", "tile", "tensor", "scalar", "system", "array", "test"];

/// The first string literal on `line` (outside a `//` comment) that is an op name.
fn op_name_literal(line: &str) -> Option<&str> {
    let code = line.split("//").next().unwrap_or("");
    let mut parts = code.split('"');
    parts.next();
    while let (Some(lit), Some(_)) = (parts.next(), parts.next()) {
        let Some((ns, rest)) = lit.split_once('.') else { continue };
        let well_formed = !rest.is_empty()
            && rest.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.');
        let file_name = !rest.contains('.') && SOURCE_EXTENSIONS.contains(&rest);
        if OP_NAMESPACES.contains(&ns) && well_formed && !file_name {
            return Some(lit);
        }
    }
    None
}

/// Top-level folders of the workspace that hold a crate.
fn crate_dirs(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    for entry in fs::read_dir(root)? {
        let path = entry?.path();
        if path.is_dir() && !skipped(&path) && path.join("Cargo.toml").is_file() {
            dirs.push(path);
        }
    }
    dirs.sort();
    Ok(dirs)
}

fn skipped(dir: &Path) -> bool {
    let name = dir.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    name == "target" || name.starts_with('.')
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries = fs::read_dir(dir)?.map(|e| e.map(|e| e.path())).collect::<std::io::Result<Vec<_>>>()?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if !skipped(&path) {
                rust_files(&path, out)?;
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// All violations in the `.rs` files under the given crate folders.
pub fn check_crates(crates: &[PathBuf]) -> std::result::Result<Vec<Violation>, String> {
    let mut files = Vec::new();
    for dir in crates {
        rust_files(dir, &mut files).map_err(|e| format!("cannot list {}: {e}", relative(dir)))?;
    }
    let mut found = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", relative(file)))?;
        found.extend(check_file(&relative(file), &text));
    }
    Ok(found)
}

/// Runs every rule over the workspace; the error lists each violation.
pub fn check() -> std::result::Result<(), String> {
    let root = workspace_root();
    let crates = crate_dirs(root).map_err(|e| format!("cannot list the workspace: {e}"))?;
    let found = check_crates(&crates)?;
    if found.is_empty() {
        return Ok(());
    }
    let mut msg = format!("{} tidy violation(s):", found.len());
    for v in &found {
        msg.push_str(&format!("\n  {}: {}", v.location, v.message));
    }
    Err(msg)
}

/// The `tidy` subcommand.
pub fn run(args: &[String]) -> Result {
    no_args("tidy", args)?;
    check().map_err(Failure::Failed)?;
    println!("tidy: ok");
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The rules on synthetic files, and on the crates this task owns.
    use super::*;

    fn messages(text: &str) -> Vec<String> {
        check_file("x.rs", text).into_iter().map(|v| format!("{}: {}", v.location, v.message)).collect()
    }

    #[test]
    fn a_documented_file_passes() {
        assert!(messages("//! What this is.\n\nfn main() {}\n").is_empty());
        assert!(messages("\u{feff}//! With a BOM.\n").is_empty());
    }

    #[test]
    fn the_first_line_must_be_a_module_doc() {
        for text in ["", "\n//! late\n", "// plain comment\n", "/// item doc\nfn f() {}\n", "fn f() {}\n"] {
            let found = messages(text);
            assert_eq!(found.len(), 1, "{text:?}");
            assert!(found[0].starts_with("x.rs:1: file must begin with a `//!`"), "{found:?}");
        }
    }

    #[test]
    fn switched_off_tests_are_rejected() {
        let attr_ignore = concat!("#[", "ignore");
        let attr_panic = concat!("#[", "should_panic");
        for (text, line) in [
            (format!("//! t\n{attr_ignore}]\nfn t() {{}}\n"), 2),
            (format!("//! t\n#[test]\n    {attr_ignore} = \"slow\"]\nfn t() {{}}\n"), 3),
            (format!("//! t\n\n\n{attr_panic}]\n"), 4),
            (format!("//! t\n{attr_panic}(expected = \"boom\")]\n"), 2),
        ] {
            let found = messages(&text);
            assert_eq!(found.len(), 1, "{text:?}");
            assert!(found[0].starts_with(&format!("x.rs:{line}: `")), "{found:?}");
            assert!(found[0].contains("is not allowed"), "{found:?}");
        }
    }

    #[test]
    fn mentions_are_not_attributes() {
        let attr_ignore = concat!("#[", "ignore");
        for text in [
            format!("//! t\n// never use {attr_ignore}]\n"),
            format!("//! t\n/// `{attr_ignore}]` is banned\n"),
            format!("//! t\nlet s = \"{attr_ignore}]\";\n"),
            format!("//! t\n{attr_ignore}d_case]\n"),
        ] {
            assert!(messages(&text).is_empty(), "{text:?}");
        }
    }

    #[test]
    fn op_names_are_not_spelled_in_passes() {
        let text =
            "//! p\nlet a = b.assign_op(\"v\", \"tile.load\", args);\nif name == \"pld.system.wait\" {}\n";
        let found: Vec<Violation> = check_file("pld-passes/src/passes/x.rs", text);
        let lines: Vec<&str> = found.iter().map(|v| v.location.as_str()).collect();
        assert_eq!(lines, ["pld-passes/src/passes/x.rs:2", "pld-passes/src/passes/x.rs:3"]);
        assert!(found[0].message.contains("\"tile.load\""), "{found:?}");
        // Other crates, comments, and strings that only look dotted are fine.
        assert!(check_file("pld-ops/src/x.rs", text).is_empty());
        let fine = "//! p\n// \"tile.load\" in a comment\nlet f = format!(\"{base}_2d\");\nlet s = \"a.b\";\nlet t = \"tile.\";\n";
        assert!(check_file("pld-passes/src/x.rs", fine).is_empty());
    }

    #[test]
    fn op_names_are_not_spelled_in_codegen_or_sim_outside_family_modules() {
        let text = "//! c\nif c.callee.name() == \"pld.system.wait\" {}\nlet h = \"tensor.h\";\n";
        for path in [
            "pld-codegen-pto/src/orch.rs",
            "pld-sim/src/micro.rs",
            "pld-sim/src/sched/x.rs",
            "pld-runtime-simpler/src/host.rs",
        ] {
            let found = check_file(path, text);
            assert_eq!(found.len(), 1, "{path}: {found:?}");
            assert_eq!(found[0].location, format!("{path}:2"));
            assert!(found[0].message.contains("per-family module"), "{found:?}");
        }
        // The family modules, test files and the test module of a file may spell names.
        for path in [
            "pld-codegen-pto/src/emit/comm.rs",
            "pld-codegen-pto/src/builtin.rs",
            "pld-sim/src/sem/system.rs",
            "pld-sim/src/world/tests.rs",
        ] {
            assert!(check_file(path, text).is_empty(), "{path}");
        }
        let with_tests =
            "//! c\nfn f() {}\n#[cfg(test)]\nmod tests {\n    const OP: &str = \"tile.store\";\n}\n";
        assert!(check_file("pld-sim/src/credit.rs", with_tests).is_empty());
        // An indented `#[cfg(test)]` (an item inside a function) does not end the checked code.
        let inner = "//! c\nfn f() {\n    #[cfg(test)]\n    let s = \"tile.load\";\n}\n";
        assert_eq!(check_file("pld-sim/src/credit.rs", inner).len(), 1);
    }

    #[test]
    fn the_rule_names_existing_files() {
        let root = workspace_root();
        for path in PER_FAMILY_MODULES.iter().chain([&PTO_PRINTER]) {
            assert!(root.join(path).exists(), "{path} does not exist: update the list");
        }
    }

    #[test]
    fn pto_text_is_formatted_only_by_the_printer() {
        let bad = [
            "cx.line(format!(\"{r} = arith.addi {a}, {b} : index\"));",
            "let n = format!(\"%arg{n}\");",
            "sig.push(format!(\"{a}: !pto.ptr<i64>\"));",
            "out.push_str(\"pto.barrier <PIPE_ALL>\");",
            "let t = format!(\"scf.if {c} {{\");",
        ];
        for line in bad {
            let text = format!("//! c\n{line}\n");
            let found = check_file("pld-codegen-pto/src/emit/core.rs", &text);
            assert_eq!(found.len(), 1, "{line}: {found:?}");
            assert!(found[0].message.contains("outside the printer"), "{found:?}");
            assert!(check_file(PTO_PRINTER, &text).is_empty(), "the printer may: {line}");
            assert!(check_file("pld-runtime-simpler/src/host.rs", &text).is_empty());
        }
        // Diagnostics that name an instruction, op names as data, and test code are fine.
        let fine = "//! c\nlet e = format!(\"{op} needs pto.tload to be vec\");\nlet o = \"pto.tadd\";\n\
                    #[cfg(test)]\nmod tests {\n    let s = format!(\"%{x}\");\n}\n";
        assert_eq!(check_file("pld-codegen-pto/src/emit/core.rs", fine), []);
    }

    #[test]
    fn codegen_formats_no_pto_text_outside_the_printer() {
        let root = workspace_root();
        assert_eq!(check_crates(&[root.join("pld-codegen-pto")]).unwrap(), []);
    }

    #[test]
    fn codegen_and_sim_spell_no_op_names_outside_family_modules() {
        let root = workspace_root();
        assert_eq!(
            check_crates(&[
                root.join("pld-codegen-pto"),
                root.join("pld-runtime-simpler"),
                root.join("pld-sim")
            ])
            .unwrap(),
            []
        );
    }

    #[test]
    fn the_passes_spell_no_op_names() {
        let root = workspace_root();
        assert_eq!(check_crates(&[root.join("pld-passes")]).unwrap(), []);
    }

    #[test]
    fn owned_crates_are_tidy() {
        let root = workspace_root();
        let crates = crate_dirs(root).unwrap();
        assert!(crates.contains(&root.join("xtask")));
        assert!(crates.contains(&root.join("pld-runtime-abi")));
        assert!(!crates.contains(&root.join("target")));
        let mine = [root.join("xtask"), root.join("pld-runtime-abi")];
        assert_eq!(check_crates(&mine).unwrap(), []);
    }
}
