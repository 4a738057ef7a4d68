//! Running ptoas and splicing its C++ into the kernel wrappers (`runtime_artifacts.md` §5.2,
//! §8), and `pld assemble`.
//!
//! Guarantees:
//! - [`ptoas_command`] is the one place the invocation is built:
//!   `ptoas <unit>.pto -o <unit>.cpp --enable-insert-sync --pto-level=<level> --pto-arch <a3|a5>`
//!   (`level3` when the module carries tile addresses, else `level2`), run with a 60 s limit.
//! - [`preprocess`] applies the reference's text rules: drop `#include` lines naming
//!   `pto-inst`, `cstdint` or `tensor.h`, the line `using namespace pto;` and
//!   `set_ffts_base_addr(` lines; whole-word `Tensor` → `ChipTensor`; `[extern "C"]
//!   [__global__] AICORE void` → `static __aicore__ void`, remaining `AICORE` → `__aicore__`.
//! - [`splice`] replaces exactly the text between the two sentinels and keeps both.
//! - [`assemble`] runs ptoas on every unit of a directory and rewrites every wrapper of that
//!   unit; the `.cpp` is written after the `.pto`, so it is never older.

use crate::kernel::{ENTRY_SENTINEL, PTOAS_SENTINEL};
use pld_ir::Target;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The ptoas command line for one unit.
pub fn ptoas_command(ptoas: &Path, pto: &Path, cpp: &Path, target: Target, pto_text: &str) -> Command {
    let level = if pto_text.contains("pto.alloc_tile addr") { "level3" } else { "level2" };
    let arch = match target {
        Target::A5 => "a5",
        _ => "a3",
    };
    let mut cmd = Command::new(ptoas);
    cmd.arg(pto)
        .arg("-o")
        .arg(cpp)
        .arg("--enable-insert-sync")
        .arg(format!("--pto-level={level}"))
        .arg("--pto-arch")
        .arg(arch);
    cmd
}

/// Why a runtime directory could not be assembled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AssembleError {
    /// The assembler could not be started (a wrong `--ptoas` path).
    CannotStart(String),
    /// ptoas rejected a unit or timed out, or the directory's files could not be read or written.
    Failed(String),
}

impl From<String> for AssembleError {
    fn from(message: String) -> AssembleError {
        AssembleError::Failed(message)
    }
}

impl std::fmt::Display for AssembleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AssembleError::CannotStart(m) | AssembleError::Failed(m) => f.write_str(m),
        }
    }
}

/// Runs ptoas on `pto`, writing `cpp`; the error text names the unit and ptoas' stderr.
pub fn run_ptoas(ptoas: &Path, pto: &Path, cpp: &Path, target: Target) -> Result<String, AssembleError> {
    let text = std::fs::read_to_string(pto).map_err(|e| format!("{}: {e}", pto.display()))?;
    let mut cmd = ptoas_command(ptoas, pto, cpp, target, &text);
    let mut child =
        cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().map_err(|e| {
            AssembleError::CannotStart(format!("cannot run ptoas `{}`: {e}", ptoas.display()))
        })?;
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > Duration::from_secs(60) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("ptoas timed out after 60 s on {}", pto.display()).into());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("ptoas: {e}").into()),
        }
    };
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read as _;
        let _ = e.read_to_string(&mut err);
    }
    if !status.success() {
        return Err(format!("ptoas compilation failed on {}: {}", pto.display(), err.trim()).into());
    }
    Ok(std::fs::read_to_string(cpp).map_err(|e| format!("ptoas wrote no {}: {e}", cpp.display()))?)
}

fn replace_word(line: &str, word: &str, with: &str) -> String {
    let mut out = String::new();
    let b = line.as_bytes();
    let mut i = 0;
    let is_id = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < line.len() {
        if line[i..].starts_with(word)
            && (i == 0 || !is_id(b[i - 1]))
            && b.get(i + word.len()).is_none_or(|c| !is_id(*c))
        {
            out.push_str(with);
            i += word.len();
        } else {
            let ch = line[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The reference's preprocessing of ptoas output before it is embedded in a wrapper.
pub fn preprocess(cpp: &str) -> String {
    let mut out = String::new();
    for line in cpp.lines() {
        let t = line.trim_start();
        if t.starts_with("#include") && ["pto-inst", "cstdint", "tensor.h"].iter().any(|k| t.contains(k)) {
            continue;
        }
        if line.trim() == "using namespace pto;" || t.starts_with("set_ffts_base_addr(") {
            continue;
        }
        let mut l = replace_word(line, "Tensor", "ChipTensor");
        for head in [
            "extern \"C\" __global__ AICORE void",
            "extern \"C\" AICORE void",
            "__global__ AICORE void",
            "AICORE void",
        ] {
            if l.contains(head) {
                l = l.replace(head, "static __aicore__ void");
            }
        }
        l = replace_word(&l, "AICORE", "__aicore__");
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// Replaces the body between the sentinels of `wrapper` with `body`; `None` when the
/// wrapper lacks a sentinel.
pub fn splice(wrapper: &str, body: &str) -> Option<String> {
    let a = wrapper.find(PTOAS_SENTINEL)? + PTOAS_SENTINEL.len();
    let b = wrapper[a..].find(ENTRY_SENTINEL)? + a;
    let mut out = String::with_capacity(wrapper.len() + body.len());
    out.push_str(&wrapper[..a]);
    out.push('\n');
    out.push_str(body);
    if !body.ends_with('\n') {
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&wrapper[b..]);
    Some(out)
}

/// The wrappers of one unit inside a chip directory: every `kernels/{aiv,aic}/*.cpp` whose
/// banner names the unit.
fn wrappers_of(chip_dir: &Path, unit: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for ct in ["aic", "aiv"] {
        let Ok(rd) = std::fs::read_dir(chip_dir.join("kernels").join(ct)) else { continue };
        let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for p in files {
            if p.extension().is_some_and(|x| x == "cpp")
                && std::fs::read_to_string(&p).is_ok_and(|t| {
                    t.lines().next().is_some_and(|l| l.contains(&format!("(ptoas unit '{unit}')")))
                })
            {
                out.push(p);
            }
        }
    }
    out
}

/// Runs ptoas on every `next_levels/*/ptoas/*.pto` of `root` and splices the result into
/// the unit's wrappers. Returns the number of units assembled.
pub fn assemble(root: &Path, ptoas: &Path, target: Target) -> Result<usize, AssembleError> {
    let levels = root.join("next_levels");
    let rd = std::fs::read_dir(&levels)
        .map_err(|e| format!("{} is not a runtime directory (no next_levels/: {e})", root.display()))?;
    let mut chips: Vec<PathBuf> =
        rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_dir()).collect();
    chips.sort();
    let mut n = 0;
    for chip in chips {
        let Ok(rd) = std::fs::read_dir(chip.join("ptoas")) else { continue };
        let mut units: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "pto"))
            .collect();
        units.sort();
        for pto in units {
            let unit = pto.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let cpp = pto.with_extension("cpp");
            let body = preprocess(&run_ptoas(ptoas, &pto, &cpp, target)?);
            let wrappers = wrappers_of(&chip, &unit);
            if wrappers.is_empty() {
                return Err(format!("{}: no kernel wrapper names ptoas unit '{unit}'", chip.display()).into());
            }
            for w in wrappers {
                let text = std::fs::read_to_string(&w).map_err(|e| format!("{}: {e}", w.display()))?;
                let spliced = splice(&text, &body)
                    .ok_or_else(|| format!("{}: the ptoas/entry sentinels are missing", w.display()))?;
                std::fs::write(&w, spliced).map_err(|e| format!("{}: {e}", w.display()))?;
            }
            n += 1;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preprocessing_applies_the_reference_text_rules() {
        let cpp = "#include \"pto/pto-inst.hpp\"\n#include <cstdint>\n#include \"tensor.h\"\n#include <array>\nusing namespace pto;\n\
                   extern \"C\" __global__ AICORE void k(__gm__ float* a) {\n  set_ffts_base_addr(ffts);\n  Tensor* t; GlobalTensor g; MyTensor m; Tensor_x y;\n  AICORE_X z; f(AICORE);\n}\n\
                   AICORE void helper() {}\n__global__ AICORE void h2() {}\n";
        let out = preprocess(cpp);
        assert_eq!(
            out,
            "#include <array>\nstatic __aicore__ void k(__gm__ float* a) {\n  ChipTensor* t; GlobalTensor g; MyTensor m; Tensor_x y;\n  AICORE_X z; f(__aicore__);\n}\n\
             static __aicore__ void helper() {}\nstatic __aicore__ void h2() {}\n"
        );
    }

    #[test]
    fn splicing_replaces_only_the_text_between_the_sentinels_and_is_repeatable() {
        let w = format!("head\n{PTOAS_SENTINEL}\nold body\n#error x\n\n{ENTRY_SENTINEL}\nentry\n");
        let once = splice(&w, "new body\n").expect("sentinels");
        assert_eq!(once, format!("head\n{PTOAS_SENTINEL}\nnew body\n\n{ENTRY_SENTINEL}\nentry\n"));
        assert_eq!(splice(&once, "new body\n").as_deref(), Some(once.as_str()));
        assert_eq!(splice("no sentinels", "x"), None);
    }

    #[test]
    fn the_ptoas_command_carries_the_reference_flags_per_target_and_planner() {
        let args = |t, text| {
            let c = ptoas_command(Path::new("ptoas"), Path::new("u.pto"), Path::new("u.cpp"), t, text);
            c.get_args().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
        };
        assert_eq!(
            args(Target::A2A3, "pto.alloc_tile addr = %c0"),
            "u.pto -o u.cpp --enable-insert-sync --pto-level=level3 --pto-arch a3"
        );
        assert_eq!(
            args(Target::A5, "pto.alloc_tile valid_row"),
            "u.pto -o u.cpp --enable-insert-sync --pto-level=level2 --pto-arch a5"
        );
    }
}
