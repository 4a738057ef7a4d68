//! The pipeline, written out in order (see `spec/passes.md` and the seed).
//!
//! The first pass only checks (a collective under rank-dependent control flow is an error).
//! After the last pass: no pl.at region is inline, no InCore function remains (kernels are
//! AIC/AIV), every tensor-level comm op is a tile op, every InCore collective is expanded
//! into notify/wait/remote_load/put primitives on the self-clearing credit barrier, host and
//! chip collectives are builtin dispatches, windows live in comm-domain scopes, device
//! contexts are parameters, comm fences are in place and dead pure statements are gone.

use crate::pass::Pass;
use crate::passes::*;

/// Every pass, in execution order.
pub static PIPELINE: &[&dyn Pass] = &[
    &CheckRankUniformity,
    &NormalizeReturns,
    &OutlineHierarchyScopes,
    &OutlineIncoreScopes,
    &SynthesizeAllReduceSignals,
    &ConvertTensorToTileOps,
    &LowerL2TensorCollectives,
    &LowerCompositeOps,
    &FlattenTileNdTo2D,
    &LowerAutoVectorSplit,
    &ExpandMixedKernel,
    &MaterializeCommDomainScopes,
    &LowerHostTensorCollectives,
    &MaterializeDistTensorCtx,
    &InsertCommFence,
    &DeadCodeElimination,
];
