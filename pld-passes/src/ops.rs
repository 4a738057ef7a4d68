//! The op vocabulary the passes recognise or build by identity, and the passes' own scope
//! attribute.
//!
//! The op names live in `pld_ir::vocab` (the one place they are spelled); what an op does —
//! affinity, no-duplicate, effects, sides, signal roles, lowerings — the passes ask the
//! registry (`pld_ir::effects`).

pub use pld_ir::vocab::{
    ALLOC_WINDOW_BUFFER, GET_COMM_CTX, TENSOR_CREATE, TENSOR_READ, TILE_RESHAPE, WINDOW, WORLD_SIZE,
};

/// The exit store of a kernel result that became a tile (see [`TENSOR_CREATE`]).
pub const EXIT_STORE: &str = pld_ir::vocab::TILE_STORE;

/// The scope attribute by which `LowerAutoVectorSplit` stamps a call onto the AIV lane.
pub const PLACEMENT_ATTR: &str = "core_placement";
