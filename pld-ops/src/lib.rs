//! # pld-ops — the N6 op families
//!
//! Each module declares one family's ops as `static` [`pld_ir::OpDef`] records and submits
//! them to the registry with [`pld_ir::register_op!`]. Nothing else in pld names an op
//! family: passes, codegen and the simulator ask the registry. Adding an op is one record in
//! its family file; adding a family is one file plus one `mod` line here.
//!
//! Registration happens at link time, so a binary or test must link this crate: reference
//! [`LINKED`] (or write `use pld_ops as _;`) from every final artifact that needs the ops.
//!
//! Families: [`window`] (windows and the comm context), [`tile_remote`] (remote_load,
//! remote_store at both levels), [`put_get`] (TPUT/TGET and their internal staging forms),
//! [`collectives`] (the seven collectives and the internal `builtin.tensor.*` forms),
//! [`system_sync`] (notify, wait, defer_wait) and [`core`] (the non-distributed tile/tensor
//! ops the programs and lowerings use). [`lowering`] holds the lowerings, registered apart
//! from the op records with `register_lowering!`.

pub mod collective_api;
pub mod collectives;
pub mod core;
pub mod lowering;
pub mod put_get;
mod record;
pub mod system_sync;
pub mod tile_remote;
mod util;
pub mod window;

/// Anchor that forces this crate (and so its registrations) into the final link.
pub static LINKED: () = ();

/// Touches [`LINKED`] and returns the global registry, checked for consistency.
pub fn registry() -> &'static pld_ir::registry::Registry {
    let () = LINKED;
    pld_ir::registry()
}
