//! The passes, one file each; each file's header states what holds after it ran.

mod convert_tensor_to_tile_ops;
mod dce;
mod expand_mixed_kernel;
mod lower_auto_vector_split;
mod lower_composite_ops;

pub use convert_tensor_to_tile_ops::ConvertTensorToTileOps;
pub use dce::{dce_block, DeadCodeElimination};
pub use expand_mixed_kernel::{Affinity, ExpandMixedKernel};
pub use lower_auto_vector_split::LowerAutoVectorSplit;
pub use lower_composite_ops::LowerCompositeOps;
