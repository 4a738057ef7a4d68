//! The collective kernels' data chunking, shared like the signal layouts: the UB chunk the
//! InCore collectives work in (seed: "processed in UB chunks of at most 16 KiB"), the tile the
//! host builtin kernels own ("the host builtin uses 256-element chunks"), and the staging tile
//! a transfer slides through. The lowerings that build these kernels and the simulator's
//! models of them read the numbers here, so they agree element for element.

/// The host builtin mesh allreduce's tile, in elements (seed: "the host builtin uses
/// 256-element chunks"; with several blocks, "Blocks own 256-element tiles block-cyclically"):
/// the one value the rendered builtin kernel and the simulator's model of it both use.
pub const BUILTIN_MESH_TILE: i64 = 256;

/// Bytes of one UB chunk of the InCore collective lowerings (seed: "processed in UB chunks of
/// at most 16 KiB"): the mesh allreduce's chunk and the reduce_scatter's (D-ops-12 in pld's decisions), which the
/// simulator's model of the host reduce_scatter kernel also uses.
pub const UB_CHUNK_BYTES: i64 = 16384;

/// The staging tile of a `[rows, cols]` put/get inside a collective (D-ops-13 in pld's decisions): at most one
/// UB chunk — at most `UB_CHUNK_BYTES / elem_bytes` columns, and as many whole rows of that
/// width as fit, at least one. pto-isa slides a transfer through a smaller stage, so every
/// collective's kernel fits UB however long its rows.
pub fn ub_stage(rows: i64, cols: i64, elem_bytes: i64) -> (i64, i64) {
    let per = (UB_CHUNK_BYTES / elem_bytes.max(1)).max(1);
    let c = cols.clamp(1, per);
    (rows.clamp(1, (per / c).max(1)), c)
}
