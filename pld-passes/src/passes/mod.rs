//! The passes, one file each; each file's header states what holds after it ran.

mod check_rank_uniformity;
mod convert_tensor_to_tile_ops;
mod dce;
mod expand_mixed_kernel;
mod flatten_tile_nd_to_2d;
mod insert_comm_fence;
mod lower_auto_vector_split;
mod lower_composite_ops;
mod lower_host_tensor_collectives;
mod lower_l2_tensor_collectives;
mod materialize_builtin_kernels;
mod materialize_comm_domain_scopes;
mod materialize_dist_tensor_ctx;
mod normalize_returns;
mod outline_hierarchy_scopes;
mod outline_incore_scopes;
mod synthesize_allreduce_signals;

pub use check_rank_uniformity::CheckRankUniformity;
pub use convert_tensor_to_tile_ops::ConvertTensorToTileOps;
pub use dce::{dce_block, DeadCodeElimination};
pub use expand_mixed_kernel::{Affinity, ExpandMixedKernel};
pub use flatten_tile_nd_to_2d::FlattenTileNdTo2D;
pub use insert_comm_fence::InsertCommFence;
pub use lower_auto_vector_split::LowerAutoVectorSplit;
pub use lower_composite_ops::LowerCompositeOps;
pub use lower_host_tensor_collectives::LowerHostTensorCollectives;
pub use lower_l2_tensor_collectives::LowerL2TensorCollectives;
pub use materialize_builtin_kernels::MaterializeBuiltinKernels;
pub use materialize_comm_domain_scopes::MaterializeCommDomainScopes;
pub use materialize_dist_tensor_ctx::MaterializeDistTensorCtx;
pub use normalize_returns::NormalizeReturns;
pub use outline_hierarchy_scopes::OutlineHierarchyScopes;
pub use outline_incore_scopes::OutlineIncoreScopes;
pub use synthesize_allreduce_signals::SynthesizeAllReduceSignals;
