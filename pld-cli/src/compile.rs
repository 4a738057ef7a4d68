//! `pld compile FILE.py [--emit ir|pto|all] [--out DIR] [--dump-after PASS] [--target T]`.
//!
//! Without `--out`, the requested artifacts are printed to stdout. With `--out DIR`, the
//! final IR goes to `DIR/<program>.ir.py`, every PTO module to `DIR/<module>`, and the
//! orchestration description to `DIR/orchestration.json`. `--emit runtime` (and `all`) writes
//! the Simpler runtime's program directory into `--out DIR` ([`crate::assemble`]).
//! `--dump-after PASS` prints the IR right after that pass instead of running codegen.

use crate::driver::{self, Failure};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

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
    /// Target profile.
    #[arg(long, default_value = "a2a3", value_parser = driver::parse_target)]
    target: pld_ir::Target,
    /// The program to use when the file defines several (`@pl.program` class or host entry).
    #[arg(long)]
    program: Option<String>,
    /// Binds a parameter of a program-building Python function: NAME=VALUE (repeatable).
    #[arg(long = "bind", value_name = "NAME=VALUE", value_parser = driver::parse_binding)]
    bind: Vec<(String, String)>,
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
    /// Runtime directory: the ptoas binary that assembles the kernels (default: `$PTOAS`).
    #[arg(long, value_name = "PATH")]
    ptoas: Option<PathBuf>,
}

/// Runs `pld compile`.
pub fn run(args: &CompileArgs) -> Result<(), Failure> {
    let (mut program, sources) = driver::load(&args.file, args.target, args.program.as_deref(), &args.bind)?;
    let mut opts = pld_passes::PipelineOptions { target: args.target, ..Default::default() };
    if let Some(pass) = &args.dump_after {
        if !pld_passes::pass_names().contains(&pass.as_str()) {
            return Err(Failure::usage(format!(
                "unknown pass `{pass}` (valid: {})",
                pld_passes::pass_names().join(", ")
            )));
        }
        opts.stop_after = Some(pass.clone());
        let text = pld_passes::run_pipeline_with_dumps(&mut program, &opts, pass)
            .map_err(|d| Failure::Diagnostics(d, sources))?;
        print!("{text}");
        return Ok(());
    }
    pld_passes::run_pipeline(&mut program, &opts).map_err(|d| Failure::Diagnostics(d, sources.clone()))?;
    let stem =
        args.file.file_stem().map_or_else(|| "program".to_string(), |s| s.to_string_lossy().into_owned());
    if matches!(args.emit, Emit::Ir | Emit::All) {
        let text = pld_ir::print_program(&program);
        match &args.out {
            Some(dir) => driver::write_file(&dir.join(format!("{stem}.ir.py")), text.as_bytes())?,
            None => print!("{text}"),
        }
    }
    if matches!(args.emit, Emit::Pto | Emit::All) {
        let cg = pld_codegen_pto::CodegenOptions { target: args.target };
        let out = pld_codegen_pto::emit_program(&program, &cg)
            .map_err(|d| Failure::Diagnostics(d, sources.clone()))?;
        match &args.out {
            Some(dir) => {
                for (name, text) in &out.modules {
                    driver::write_file(&dir.join(name), text.as_bytes())?;
                }
                driver::write_file(&dir.join("orchestration.json"), out.orchestration.as_bytes())?;
                eprintln!(
                    "wrote {} module(s) and orchestration.json to {}",
                    out.modules.len(),
                    dir.display()
                );
            }
            None => {
                for (name, text) in &out.modules {
                    println!("// ----- {name} -----");
                    print!("{text}");
                }
                println!("// ----- orchestration.json -----");
                println!("{}", out.orchestration);
            }
        }
    }
    // After the modules (so `all` reports codegen errors once, as errors). `all` includes the
    // runtime directory when there is a folder to write it to and a host orchestrator.
    let has_host = program.functions.iter().any(|f| f.kind == pld_ir::FunctionKind::Host);
    let runtime = args.emit == Emit::Runtime || (args.emit == Emit::All && args.out.is_some() && has_host);
    if runtime {
        let Some(dir) = &args.out else {
            return Err(Failure::usage("--emit runtime writes a directory: give --out DIR"));
        };
        let mut rt = pld_codegen_pto::runtime::RuntimeOptions::new(args.target, usize::from(args.ranks));
        if let Some(ids) = &args.device_ids {
            rt.device_ids = ids.0.clone();
        }
        if let Some(p) = &args.platform {
            rt.platform = p.clone();
        }
        let ptoas = crate::assemble::ptoas_path(args.ptoas.as_deref());
        match crate::assemble::write_runtime_dir(&program, &rt, dir, ptoas.as_deref())? {
            Ok(_) => {}
            Err(d) if args.emit == Emit::Runtime => return Err(Failure::Diagnostics(d, sources)),
            // `all` still writes the IR and the modules; the runtime directory's problem is
            // reported, not fatal (`--emit runtime` makes it so).
            Err(d) => eprintln!(
                "{}note: the runtime directory was not written (`--emit runtime` reports this as an error)",
                driver::render(&d, &sources).replace("error:", "warning:")
            ),
        }
    }
    Ok(())
}
