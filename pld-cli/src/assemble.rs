//! Writing the Simpler runtime's program directory (`pld compile --emit runtime`) and
//! `pld assemble DIR --ptoas PATH`, which runs ptoas on a directory written without it.
//!
//! Guarantees: a runtime directory is written only into an empty folder or one that already
//! holds a runtime directory (its `next_levels/` and `orchestration/` are removed first, so
//! no binary the runtime cached from an earlier emission survives, §10 M13); a folder with a
//! `next_levels/` but no `distributed_meta.json` is refused (exit 2). `pld assemble` reads the
//! directory's `distributed_meta.json` with `serde_json`: a malformed one is reported with its
//! line and column (exit 2), never guessed around. Without ptoas the
//! command prints one line saying the directory is not runnable until `pld assemble` runs.

use crate::driver::{self, Failure};
use clap::Args;
use pld_runtime_simpler::{self as runtime, RuntimeOptions};
use std::path::{Path, PathBuf};

/// The ptoas binary: `--ptoas PATH`, else `$PTOAS`.
pub fn ptoas_path(flag: Option<&Path>) -> Option<PathBuf> {
    flag.map(Path::to_path_buf)
        .or_else(|| std::env::var_os("PTOAS").filter(|v| !v.is_empty()).map(PathBuf::from))
}

/// A `--device-ids` list.
#[derive(Clone, Debug)]
pub struct DeviceIds(pub Vec<i64>);

/// Parses `--device-ids 0,1,2`.
pub fn parse_device_ids(s: &str) -> Result<DeviceIds, String> {
    let ids: Result<Vec<i64>, _> = s.split(',').map(|x| x.trim().parse::<i64>()).collect();
    let ids = ids.map_err(|_| format!("--device-ids `{s}` is not a comma-separated list of integers"))?;
    if ids.is_empty() || ids.iter().any(|d| *d < 0) {
        return Err(format!("--device-ids `{s}` must list non-negative ids"));
    }
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != ids.len() {
        return Err(format!("--device-ids `{s}` lists a device twice"));
    }
    Ok(DeviceIds(ids))
}

/// Parses `--platform`.
pub fn parse_platform(s: &str) -> Result<String, String> {
    match s {
        "a2a3sim" | "a2a3" | "a5sim" | "a5" => Ok(s.to_string()),
        _ => Err(format!("unknown platform `{s}` (expected a2a3sim, a2a3, a5sim or a5)")),
    }
}

fn clear_previous(dir: &Path) -> Result<(), Failure> {
    let levels = dir.join("next_levels");
    if !levels.exists() {
        return Ok(());
    }
    if !dir.join("distributed_meta.json").exists() {
        return Err(Failure::usage(format!(
            "{} holds a next_levels/ but no distributed_meta.json; refusing to overwrite it",
            dir.display()
        )));
    }
    for sub in ["next_levels", "orchestration"] {
        let p = dir.join(sub);
        if p.exists() {
            std::fs::remove_dir_all(&p)
                .map_err(|e| Failure::usage(format!("cannot clear {}: {e}", p.display())))?;
        }
    }
    Ok(())
}

/// Writes the runtime directory of `program` into `dir`, assembling it when `ptoas` is given.
pub fn write_runtime_dir(
    program: &pld_ir::Program,
    opts: &RuntimeOptions,
    dir: &Path,
    ptoas: Option<&Path>,
) -> Result<Result<usize, pld_ir::Diagnostics>, Failure> {
    let rt = match runtime::emit(program, opts) {
        Ok(rt) => rt,
        Err(d) => return Ok(Err(d)),
    };
    clear_previous(dir)?;
    for (path, text) in &rt.files {
        driver::write_file(&dir.join(path), text.as_bytes())?;
    }
    if let Some(p) = ptoas {
        let n = runtime::ptoas::assemble(dir, p, opts.target).map_err(ptoas_failure)?;
        eprintln!("wrote the runtime directory {} ({} ptoas unit(s) assembled)", dir.display(), n);
    } else {
        eprintln!(
            "wrote the runtime directory {} (not runnable until ptoas runs: pld assemble {} --ptoas PATH)",
            dir.display(),
            dir.display()
        );
    }
    Ok(Ok(rt.units.len()))
}

/// A ptoas failure is a compile error (exit 1); an assembler that cannot start is the command
/// line's fault, a usage error (exit 2, as for `compile --ptoas` on the modules).
fn ptoas_failure(e: runtime::ptoas::AssembleError) -> Failure {
    match e {
        runtime::ptoas::AssembleError::CannotStart(msg) => Failure::usage(msg),
        runtime::ptoas::AssembleError::Failed(msg) => {
            let mut d = pld_ir::Diagnostics::new();
            d.push(pld_ir::Diagnostic::error(pld_ir::Span::DUMMY, msg));
            Failure::Diagnostics(d, pld_ir::SourceMap::new())
        }
    }
}

/// Arguments of `pld assemble`.
#[derive(Args)]
pub struct AssembleArgs {
    /// A runtime directory written by `pld compile --emit runtime`.
    dir: PathBuf,
    /// The ptoas binary (default: `$PTOAS`).
    #[arg(long, value_name = "PATH")]
    ptoas: Option<PathBuf>,
    /// Target profile the modules were compiled for (default: the `backend_type` the
    /// directory's `distributed_meta.json` records).
    #[arg(long, value_parser = driver::parse_target)]
    target: Option<pld_ir::Target>,
}

/// Runs `pld assemble`.
pub fn run(args: &AssembleArgs) -> Result<(), Failure> {
    let Some(ptoas) = ptoas_path(args.ptoas.as_deref()) else {
        return Err(Failure::usage(
            "pld assemble needs a ptoas binary: --ptoas PATH or PTOAS in the environment",
        ));
    };
    let path = args.dir.join("distributed_meta.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Err(Failure::usage(format!(
            "{} is not a runtime directory (no distributed_meta.json)",
            args.dir.display()
        )));
    };
    let meta = runtime::meta::DistributedMeta::parse(&text).map_err(|e| {
        Failure::usage(format!(
            "{}:{}:{}: malformed distributed_meta.json: {}",
            path.display(),
            e.line,
            e.column,
            e.message
        ))
    })?;
    let recorded = match (args.target, meta.target()) {
        (Some(t), _) | (None, Some(t)) => t,
        (None, None) => {
            return Err(Failure::usage(format!(
                "{}: unknown backend_type `{}` (expected Ascend910B or Ascend950); pass --target",
                path.display(),
                meta.backend_type
            )))
        }
    };
    let target = recorded;
    let n = runtime::ptoas::assemble(&args.dir, &ptoas, target).map_err(ptoas_failure)?;
    eprintln!("assembled {n} ptoas unit(s) in {}", args.dir.display());
    Ok(())
}
