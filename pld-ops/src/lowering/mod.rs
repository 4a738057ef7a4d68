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

/// The collectives both builtin rails lower to one dispatch per call (`host`, `chip`).
const RAIL_COLLECTIVES: &[&str] = &[
    "pld.tensor.allreduce",
    "pld.tensor.barrier",
    "pld.tensor.broadcast",
    "pld.tensor.reduce_scatter",
    "pld.tensor.allgather",
    "pld.tensor.all_to_all",
    "pld.tensor.all_to_all_v",
];

/// The physical width of a row-major tile row holding `cols` elements of `elem_bytes` each:
/// `cols` rounded up to a whole number of 32-byte blocks (pto-isa `Tile` and ptoas
/// `pto.alloc_tile` reject any other row size). The logical width goes in `valid_shape`.
pub fn row_aligned_cols(cols: i64, elem_bytes: i64) -> i64 {
    let per = (allreduce::ALIGN_BYTES / elem_bytes.max(1)).max(1);
    cols.max(1).saturating_add(per - 1) / per * per
}

/// A `tile.load` of the whole tensor `e` (of type `t`) into a Vec tile named after `e`'s value
/// (or `fallback`) with `_vec`: rows padded to whole 32-byte blocks ([`whole_tile_shapes`]).
pub fn whole_vec_load(
    b: &mut pld_ir::Builder<'_>,
    e: &pld_ir::Expr,
    t: &pld_ir::TensorType,
    fallback: &str,
) -> Result<pld_ir::Expr, pld_ir::Diagnostic> {
    use pld_ir::{Attr, Expr};
    let zeros = Expr::tuple(t.shape.iter().map(|_| Expr::int(0)).collect());
    let base = e.as_var().map_or(fallback.to_string(), |v| b.values.name(v).to_string());
    let (phys, valid) = whole_tile_shapes(&t.shape, t.dtype.bytes() as i64);
    let v = b.assign_op(
        format!("{base}_vec"),
        "tile.load",
        vec![e.clone(), zeros, Expr::tuple(phys), Expr::tuple(valid)],
        vec![("target_memory", Attr::Str("Vec".into()))],
    )?;
    Ok(Expr::var(v))
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
