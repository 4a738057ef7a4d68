//! The few op names the passes must recognise structurally.
//!
//! These are not op families: they are the window and context vocabulary the distributed
//! tail is defined over (allocation identity, views, the rank-count query, the context
//! query). Everything else — affinity, no-duplicate, effects, sides, signal roles, lowerings
//! — the passes ask the registry (`pld_ir::effects`).

/// `pld.tensor.alloc_window_buffer`: allocation identity.
pub const ALLOC_WINDOW_BUFFER: &str = "pld.tensor.alloc_window_buffer";
/// `pld.tensor.window`: a view of an allocation.
pub const WINDOW: &str = "pld.tensor.window";
/// `pld.system.world_size`: the host's rank count.
pub const WORLD_SIZE: &str = "pld.system.world_size";
/// `pld.system.get_comm_ctx`: the context query.
pub const GET_COMM_CTX: &str = "pld.system.get_comm_ctx";
/// The scope attribute by which `LowerAutoVectorSplit` stamps a call onto the AIV lane.
pub const PLACEMENT_ATTR: &str = "core_placement";
/// The exit store of a kernel result that became a tile, and the allocation of the `Out`
/// tensor its callers pass for it.
pub const EXIT_STORE: &str = "tile.store";
/// See [`EXIT_STORE`].
pub const TENSOR_CREATE: &str = "tensor.create";
