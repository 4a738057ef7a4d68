//! `pld check FILE.py`: parse, verify and run the whole pipeline, then render the PTO modules
//! through the PTO verifier (nothing is written); print diagnostics only.

use crate::driver::{self, Failure};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `pld check`.
#[derive(Args)]
pub struct CheckArgs {
    /// The DSL program.
    file: PathBuf,
    /// Target profile.
    #[arg(long, default_value = "a2a3", value_parser = driver::parse_target)]
    target: pld_ir::Target,
    /// The program to use when the file defines several (`@pl.program` class or host entry).
    #[arg(long)]
    program: Option<String>,
    /// Binds a parameter of a program-building Python function: NAME=VALUE (repeatable).
    #[arg(long = "bind", value_name = "NAME=VALUE", value_parser = driver::parse_binding)]
    bind: Vec<(String, String)>,
}

/// Runs `pld check`.
pub fn run(args: &CheckArgs) -> Result<(), Failure> {
    let (mut program, sources) = driver::load(&args.file, args.target, args.program.as_deref(), &args.bind)?;
    let opts = pld_passes::PipelineOptions { target: args.target, ..Default::default() };
    pld_passes::run_pipeline(&mut program, &opts).map_err(|d| Failure::Diagnostics(d, sources.clone()))?;
    let cg = pld_codegen_pto::CodegenOptions { target: args.target };
    pld_codegen_pto::emit_program(&program, &cg).map_err(|d| Failure::Diagnostics(d, sources))?;
    eprintln!("{}: ok", args.file.display());
    Ok(())
}
