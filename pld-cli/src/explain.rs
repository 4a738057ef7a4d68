//! `pld explain [CODE]`: what an error code means, with a minimal wrong program fragment and
//! its fix; without a code, the list of every code.
//!
//! Guarantees: the text comes from the one table of codes (`pld_ir::codes`); an unknown code
//! is a usage error (exit 2) that lists the known ones.

use crate::driver::Failure;
use clap::Args;
use pld_ir::codes::{self, CODES};

/// Arguments of `pld explain`.
#[derive(Args)]
pub struct ExplainArgs {
    /// The error code (`E0301`, `e301` and `301` all work); omit it to list every code.
    code: Option<String>,
}

/// Runs `pld explain`.
pub fn run(args: &ExplainArgs) -> Result<(), Failure> {
    let Some(code) = &args.code else {
        for c in CODES {
            outln!("{}  {}", c.code, c.summary);
        }
        return Ok(());
    };
    match codes::lookup(code) {
        Some(c) => {
            out!("{}", codes::explain(c));
            Ok(())
        }
        None => Err(Failure::usage(format!(
            "no error code `{code}` (known: {}; `pld explain` lists them)",
            CODES.iter().map(|c| c.code).collect::<Vec<_>>().join(", ")
        ))),
    }
}
