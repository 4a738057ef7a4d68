//! `pld check FILE.py`: parse, verify and run the whole pipeline, then render the PTO modules
//! through the PTO verifier (nothing is written); print diagnostics only.
//!
//! Without `--program` or `--entry`, every program unit of the file is checked, and the
//! diagnostics of all of them are reported together.

use crate::driver::{self, Failure};
use crate::select::{self, Selection};
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
    /// Check only this program (`@pl.program` class or host entry); default: every one.
    #[arg(long)]
    program: Option<String>,
    /// Check only the program whose host function this is.
    #[arg(long, value_name = "HOST")]
    entry: Option<String>,
    /// Binds a parameter of a program-building Python function: NAME=VALUE (repeatable).
    #[arg(long = "bind", value_name = "NAME=VALUE", value_parser = driver::parse_binding)]
    bind: Vec<(String, String)>,
}

/// Runs `pld check`.
pub fn run(args: &CheckArgs) -> Result<(), Failure> {
    let sel = Selection { program: args.program.as_deref(), entry: args.entry.as_deref() };
    let (programs, sources) = select::load_all(&args.file, args.target, sel, &args.bind)?;
    let opts = pld_passes::PipelineOptions { target: args.target, ..Default::default() };
    let cg = pld_codegen_pto::CodegenOptions { target: args.target };
    let mut diags = pld_ir::Diagnostics::new();
    let mut names = Vec::new();
    for mut program in programs {
        let checked = pld_passes::run_pipeline(&mut program, &opts)
            .and_then(|()| pld_codegen_pto::emit_program(&program, &cg).map(|_| ()));
        if let Err(d) = checked {
            diags.extend(d);
        }
        names.push(program.name);
    }
    if diags.has_errors() {
        return Err(Failure::Diagnostics(diags, sources));
    }
    match names.as_slice() {
        [_] => eprintln!("{}: ok", args.file.display()),
        many => eprintln!("{}: ok ({} programs: {})", args.file.display(), many.len(), many.join(", ")),
    }
    Ok(())
}
