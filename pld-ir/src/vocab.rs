//! The ops the IR's own structure is defined over, by name: the only op names compiler passes
//! may spell.
//!
//! Everything a pass needs to know about what an op *does* is data in its record
//! (`pld_ir::effects`: effects, sides, store kinds, signal roles; affinity; lowerings). What
//! remains is vocabulary a pass must *recognise or build* by identity: window allocation and
//! views (allocation identity for comm domains), the rank-count and context queries, and the
//! few core ops a lowering emits (a reshape, an exit store, an `Out` allocation, a scalar
//! read). They are named here once; `cargo xtask tidy` rejects op-name literals in
//! `pld-passes`, and a registry test checks that every name here is a registered op.

/// `pld.tensor.alloc_window_buffer`: allocation identity.
pub const ALLOC_WINDOW_BUFFER: &str = "pld.tensor.alloc_window_buffer";
/// `pld.tensor.window`: a view of an allocation.
pub const WINDOW: &str = "pld.tensor.window";
/// `pld.system.world_size`: the host's rank count.
pub const WORLD_SIZE: &str = "pld.system.world_size";
/// `pld.system.nranks`: a kernel's rank count (of a comm context).
pub const NRANKS: &str = "pld.system.nranks";
/// `pld.system.rank`: a kernel's own rank (in a comm context).
pub const RANK: &str = "pld.system.rank";
/// `pld.system.get_comm_ctx`: the context query.
pub const GET_COMM_CTX: &str = "pld.system.get_comm_ctx";
/// `tile.store`: the exit store of a kernel result that became a tile.
pub const TILE_STORE: &str = "tile.store";
/// `tensor.create`: the allocation of the `Out` tensor a caller passes for such a result.
pub const TENSOR_CREATE: &str = "tensor.create";
/// `tile.reshape`: the 2-D view of an N-D tile a push sends.
pub const TILE_RESHAPE: &str = "tile.reshape";
/// `tensor.read`: a scalar read of one element.
pub const TENSOR_READ: &str = "tensor.read";

/// `tensor.slice`: a sub-view of a tensor (the runtime directory's host views).
pub const TENSOR_SLICE: &str = "tensor.slice";
/// `tensor.reshape`: a reshaped view of a tensor.
pub const TENSOR_RESHAPE: &str = "tensor.reshape";
/// `scalar.cast`: a scalar conversion (`pl.cast` of a scalar).
pub const SCALAR_CAST: &str = "scalar.cast";

/// Every name above, for the registry test.
pub const ALL: &[&str] = &[
    ALLOC_WINDOW_BUFFER,
    WINDOW,
    WORLD_SIZE,
    NRANKS,
    RANK,
    GET_COMM_CTX,
    TILE_STORE,
    TENSOR_CREATE,
    TILE_RESHAPE,
    TENSOR_READ,
    TENSOR_SLICE,
    TENSOR_RESHAPE,
    SCALAR_CAST,
    crate::comm_fence::FENCE,
    crate::comm_fence::CACHE_INVALID,
];
