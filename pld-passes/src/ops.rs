//! The few op names the passes must recognise structurally.
//!
//! These are not op families: they are the window and context vocabulary the distributed
//! tail is defined over (allocation identity, views, the rank-count query, the context
//! query) and the deferred-wait registration the waiter contract is about. Everything else
//! — affinity, no-duplicate, effects, lowerings — the passes ask the registry.

/// `pld.tensor.alloc_window_buffer`: allocation identity.
pub const ALLOC_WINDOW_BUFFER: &str = "pld.tensor.alloc_window_buffer";
/// `pld.tensor.window`: a view of an allocation.
pub const WINDOW: &str = "pld.tensor.window";
/// `pld.system.world_size`: the host's rank count.
pub const WORLD_SIZE: &str = "pld.system.world_size";
/// `pld.system.get_comm_ctx`: the context query.
pub const GET_COMM_CTX: &str = "pld.system.get_comm_ctx";
/// `pld.system.defer_wait`: deferred-completion registration.
pub const DEFER_WAIT: &str = "pld.system.defer_wait";
/// `pld.system.wait`: a blocking wait (InsertCommFence invalidates after it).
pub const WAIT: &str = "pld.system.wait";
/// `system.fence` / `system.cacheinvalid`: the comm-fence markers.
pub const FENCE: &str = "system.fence";
/// See [`FENCE`].
pub const CACHE_INVALID: &str = "system.cacheinvalid";
/// The scope attribute by which `LowerAutoVectorSplit` stamps a call onto the AIV lane.
pub const PLACEMENT_ATTR: &str = "core_placement";
/// Ops that write a peer's window (InsertCommFence appends only a fence after them; the
/// peer-region cache invalidate is codegen's, since the peer address is not IR).
pub const REMOTE_WRITES: &[&str] =
    &["pld.tile.remote_store", "pld.tensor.remote_store", "pld.tile.put", "pld.tensor.put"];
/// Ops that pull peer data into their first argument (a local publishing write when that
/// argument is window-bound).
pub const PULLS: &[&str] = &["pld.tile.get", "pld.tensor.get"];
/// Ops that push their tile operand (argument 0) as a 2-D region: `FlattenTileNdTo2D`
/// reshapes an N-D source whose leading dims are 1 to its inner two dims.
pub const PUSHES_2D_TILE: &[&str] = &["pld.tile.remote_store"];
/// Bulk (MTE3) stores into their GM operand, by op and operand index.
pub const BULK_STORES: &[(&str, usize)] = &[("tile.store", 2), ("tensor.assemble", 0)];
/// Scalar stores into their GM operand, by op and operand index.
pub const SCALAR_STORES: &[(&str, usize)] = &[("tensor.write", 0)];
/// The exit store of a kernel result that became a tile, and the allocation of the `Out`
/// tensor its callers pass for it.
pub const EXIT_STORE: &str = "tile.store";
/// See [`EXIT_STORE`].
pub const TENSOR_CREATE: &str = "tensor.create";
