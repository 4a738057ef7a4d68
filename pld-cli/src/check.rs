//! `pld check FILE.py`: parse, verify and run the whole pipeline, then render the PTO modules
//! through the PTO verifier (nothing is written); print diagnostics only.
//!
//! `--ranks N` binds a builder parameter that is the rank count (a `note:` says so).
//! Without `--program` or `--entry`, every program unit of the file is checked, and the
//! diagnostics of all of them are reported together.

use crate::driver::Failure;
use crate::select::UnitArgs;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `pld check`.
#[derive(Args)]
pub struct CheckArgs {
    /// The DSL program.
    file: PathBuf,
    /// Target, units and bindings.
    #[command(flatten)]
    unit: UnitArgs,
    /// The rank count: binds a builder parameter that is the rank count (`n_ranks: int`,
    /// `nranks`, `world_size`, …) when no `--bind` does.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=64))]
    ranks: Option<u16>,
}

/// Runs `pld check`.
pub fn run(args: &CheckArgs) -> Result<(), Failure> {
    let (programs, sources) = args.unit.load_all(&args.file, args.ranks.map(usize::from))?;
    let opts = pld_passes::PipelineOptions { target: args.unit.target, ..Default::default() };
    let cg = pld_codegen_pto::CodegenOptions { target: args.unit.target };
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
