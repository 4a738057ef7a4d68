//! `pld compile FILE.py [--emit ir|pto|all] [--out DIR] [--dump-after PASS] [--target T]`.
//!
//! Without `--out`, the requested artifacts are printed to stdout. With `--out DIR`, the
//! final IR goes to `DIR/<program>.ir.py`, every PTO module to `DIR/<module>`, and the
//! orchestration description to `DIR/orchestration.json`. `--dump-after PASS` prints the IR
//! right after that pass instead of running codegen. `--emit runtime` (and `all`) writes the
//! Simpler runtime's program directory into `--out DIR` ([`crate::assemble`]). Every module
//! passed the PTO verifier
//! before anything is printed or written; `--ptoas PATH` (or `$PTOAS`) then runs the real
//! assembler on each ([`crate::ptoas`]).
//!
//! Without `--program` or `--entry`, every program unit of the file is compiled; with more than one,
//! each unit's artifacts go to their own subdirectory `DIR/<program>/` (`DIR/<program>-<host>/`
//! when two units share a name), and on stdout each unit's output follows a
//! `// ===== program NAME =====` line. One unit keeps the flat layout.

use crate::driver::{self, Failure};
use crate::select::UnitArgs;
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};

/// What `pld compile` emits.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// The IR after the pipeline, in DSL form.
    Ir,
    /// The PTO modules and the orchestration description.
    Pto,
    /// The Simpler runtime's program directory (needs `--out`).
    Runtime,
    /// All of the above.
    All,
}

/// Arguments of `pld compile`.
#[derive(Args)]
pub struct CompileArgs {
    /// The DSL program.
    file: PathBuf,
    /// What to emit.
    #[arg(long, value_enum, default_value = "pto")]
    emit: Emit,
    /// Output folder (stdout when absent).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the IR right after this pass and stop.
    #[arg(long, value_name = "PASS")]
    dump_after: Option<String>,
    /// Target, units and bindings; with several units, each unit's artifacts go to their own
    /// subdirectory of `--out`.
    #[command(flatten)]
    unit: UnitArgs,
    /// Runtime directory: the number of ranks (devices 0..N-1) recorded in distributed_meta.json.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    ranks: u16,
    /// Runtime directory: explicit physical device ids (comma-separated; overrides --ranks).
    #[arg(long, value_name = "IDS", value_parser = crate::assemble::parse_device_ids)]
    device_ids: Option<crate::assemble::DeviceIds>,
    /// Runtime directory: the platform recorded in distributed_meta.json (default: the
    /// target's CPU simulator, e.g. a2a3sim).
    #[arg(long, value_parser = crate::assemble::parse_platform)]
    platform: Option<String>,
    /// The `ptoas` binary (default: `$PTOAS` when set): run on every written module with the
    /// reference compiler's flags for the target, its verdict reported per module, and used to
    /// assemble the runtime directory's kernels.
    #[arg(long, value_name = "PATH")]
    ptoas: Option<PathBuf>,
}

/// Runs `pld compile`.
pub fn run(args: &CompileArgs) -> Result<(), Failure> {
    if let Some(pass) = &args.dump_after {
        if !pld_passes::pass_names().contains(&pass.as_str()) {
            return Err(Failure::usage(format!(
                "unknown pass `{pass}` (valid: {})",
                pld_passes::pass_names().join(", ")
            )));
        }
    }
    let (programs, sources) = args.unit.load_all(&args.file, Some(usize::from(args.ranks)))?;
    let several = programs.len() > 1;
    let names: Vec<String> = programs.iter().map(|p| p.name.clone()).collect();
    for program in programs {
        // Units sharing a name (two builders' `class P`) are told apart by their host.
        let sub = match program.host_functions().next() {
            Some(h) if names.iter().filter(|n| **n == program.name).count() > 1 => {
                format!("{}-{}", program.name, h.name)
            }
            _ => program.name.clone(),
        };
        let out = match &args.out {
            Some(dir) if several => Some(dir.join(&sub)),
            other => other.clone(),
        };
        if several && out.is_none() {
            outln!("// ===== program {} =====", program.name);
        }
        compile_one(args, program, out.as_deref(), &sources)?;
    }
    Ok(())
}

/// Compiles one program unit; artifacts go to `out` (stdout when `None`).
fn compile_one(
    args: &CompileArgs,
    mut program: pld_ir::Program,
    out: Option<&Path>,
    sources: &pld_ir::SourceMap,
) -> Result<(), Failure> {
    let mut opts = pld_passes::PipelineOptions { target: args.unit.target, ..Default::default() };
    if let Some(pass) = &args.dump_after {
        opts.stop_after = Some(pass.clone());
        let text = pld_passes::run_pipeline_with_dumps(&mut program, &opts, pass)
            .map_err(|d| Failure::Diagnostics(d, sources.clone()))?;
        out!("{text}");
        return Ok(());
    }
    pld_passes::run_pipeline(&mut program, &opts).map_err(|d| Failure::Diagnostics(d, sources.clone()))?;
    let stem =
        args.file.file_stem().map_or_else(|| "program".to_string(), |s| s.to_string_lossy().into_owned());
    if matches!(args.emit, Emit::Ir | Emit::All) {
        let text = pld_ir::print_program(&program);
        match out {
            Some(dir) => driver::write_file(&dir.join(format!("{stem}.ir.py")), text.as_bytes())?,
            None => out!("{text}"),
        }
    }
    if matches!(args.emit, Emit::Pto | Emit::All) {
        let cg = pld_codegen_pto::CodegenOptions { target: args.unit.target };
        let emitted = pld_codegen_pto::emit_program(&program, &cg)
            .map_err(|d| Failure::Diagnostics(d, sources.clone()))?;
        match out {
            Some(dir) => {
                for (name, text) in &emitted.modules {
                    driver::write_file(&dir.join(name), text.as_bytes())?;
                }
                driver::write_file(&dir.join("orchestration.json"), emitted.orchestration.as_bytes())?;
                eprintln!(
                    "wrote {} module(s) and orchestration.json to {}",
                    emitted.modules.len(),
                    dir.display()
                );
            }
            None => {
                for (name, text) in &emitted.modules {
                    outln!("// ----- {name} -----");
                    out!("{text}");
                }
                outln!("// ----- orchestration.json -----");
                outln!("{}", emitted.orchestration);
            }
        }
        if let Some(ptoas) = crate::ptoas::resolve(args.ptoas.as_deref()) {
            let names: Vec<String> = emitted.modules.iter().map(|(n, _)| n.clone()).collect();
            match out {
                Some(dir) => crate::ptoas::check_modules(&ptoas, dir, &names, args.unit.target)?,
                None => {
                    // Nothing was written: assemble copies in a private scratch folder.
                    let dir = std::env::temp_dir().join(format!("pld-ptoas-{}", std::process::id()));
                    for (name, text) in &emitted.modules {
                        driver::write_file(&dir.join(name), text.as_bytes())?;
                    }
                    let verdict = crate::ptoas::check_modules(&ptoas, &dir, &names, args.unit.target);
                    let _ = std::fs::remove_dir_all(&dir);
                    verdict?;
                }
            }
        }
    }
    // After the modules (so `all` reports codegen errors once, as errors). `all` includes the
    // runtime directory when there is a folder to write it to and a host orchestrator.
    let has_host = program.functions.iter().any(|f| f.kind == pld_ir::FunctionKind::Host);
    let runtime = args.emit == Emit::Runtime || (args.emit == Emit::All && out.is_some() && has_host);
    if runtime {
        let Some(dir) = out else {
            return Err(Failure::usage("--emit runtime writes a directory: give --out DIR"));
        };
        let mut rt = pld_runtime_simpler::RuntimeOptions::new(args.unit.target, usize::from(args.ranks));
        if let Some(ids) = &args.device_ids {
            rt.device_ids = ids.0.clone();
        }
        if let Some(p) = &args.platform {
            rt.platform = p.clone();
        }
        rt.sources = (0..)
            .map_while(|i| sources.get(pld_ir::FileId(i)))
            .map(|f| (f.name.clone(), f.text.to_string()))
            .collect();
        rt.binds.clone_from(&args.unit.bind);
        let ptoas = crate::assemble::ptoas_path(args.ptoas.as_deref());
        match crate::assemble::write_runtime_dir(&program, &rt, dir, ptoas.as_deref())? {
            Ok(_) => {}
            Err(d) if args.emit == Emit::Runtime => return Err(Failure::Diagnostics(d, sources.clone())),
            // `all` still writes the IR and the modules; the runtime directory's problem is
            // reported, not fatal (`--emit runtime` makes it so).
            Err(d) => eprintln!(
                "{}note: the runtime directory was not written (`--emit runtime` reports this as an error)",
                driver::render(&d, sources).replace("error:", "warning:")
            ),
        }
    }
    Ok(())
}
