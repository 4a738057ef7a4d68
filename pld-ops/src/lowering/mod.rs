//! The lowerings the pass pipeline applies, registered apart from the ops' records (D4).
//!
//! Passes find these through `OpDef::lowering(kind)`; they never name an op family.
//! [`comm`] is the one shared barrier helper every collective expansion uses.
//!
//! - tensor-to-tile: [`put_get`] (put/get staging), `remote_store` (1:1 with a Vec bridge),
//!   `tensor_elementwise` (core tensor arithmetic on Vec tiles);
//! - composite: [`allreduce`] (mesh and ring), `collectives` (barrier, broadcast,
//!   reduce_scatter, allgather, all_to_all, all_to_all_v);
//! - host builtin: `host` (per-device `builtin.tensor.*` dispatches);
//! - chip builtin: `chip` (one synthesized AIV task per chip-orchestration collective);
//! - builtin kernel: [`builtin_kernel`] (the kernel of each host `builtin.tensor.*` dispatch).

pub mod allreduce;
pub mod builtin_kernel;
mod chip;
mod collectives;
pub mod comm;
mod host;
pub mod put_get;
mod remote_store;
mod tensor_elementwise;

pub use allreduce::{mesh_chunk_cols, ring_boundary};

/// The physical width of a row-major tile row holding `cols` elements of `elem_bytes` each:
/// `cols` rounded up to a whole number of 32-byte blocks (pto-isa `Tile` and ptoas
/// `pto.alloc_tile` reject any other row size). The logical width goes in `valid_shape`.
pub fn row_aligned_cols(cols: i64, elem_bytes: i64) -> i64 {
    let per = (allreduce::ALIGN_BYTES / elem_bytes.max(1)).max(1);
    cols.max(1).saturating_add(per - 1) / per * per
}

/// The physical and valid shapes of a Vec tile holding a whole tensor of `shape`: the last
/// dim padded to whole 32-byte rows when it is static ([`row_aligned_cols`]), the tensor's
/// own shape as the valid region.
pub fn whole_tile_shapes(shape: &[pld_ir::Expr], elem_bytes: i64) -> (Vec<pld_ir::Expr>, Vec<pld_ir::Expr>) {
    let mut phys = shape.to_vec();
    if let Some(last) = phys.last_mut() {
        if let Some(c) = last.as_int() {
            *last = pld_ir::Expr::int(row_aligned_cols(c, elem_bytes));
        }
    }
    (phys, shape.to_vec())
}
