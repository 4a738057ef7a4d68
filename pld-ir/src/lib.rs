//! # pld-ir — the intermediate representation of pld
//!
//! pld compiles programs written in the PTO Python DSL that use the N6 distributed op
//! family: one-sided communication over symmetric, per-rank windows (`put`/`get`, remote
//! tile load/store, `notify`/`wait`, deferred waits) and the collectives built from them.
//! This crate is the shared vocabulary every other pld crate speaks.
//!
//! ## What lives here
//!
//! - **Types** ([`Type`]): scalars, plain tensors, window-bound distributed tensors, tiles
//!   with memory space and valid shape, tuples, comm contexts, window buffers and `Unknown`.
//!   Kinds match exactly; dimensions are [`Expr`]s, static when they are integer literals.
//! - **Values and statements**: each [`Function`] owns an arena of values addressed by
//!   [`ValueId`] and a structured body ([`Block`] of [`Stmt`]); a [`Program`] owns functions.
//! - **Spans and diagnostics**: every node carries a [`Span`]; errors are [`Diagnostic`]
//!   values collected into [`Diagnostics`], rendered rustc-style against a [`SourceMap`].
//! - **The op registry** ([`registry`](mod@registry)): ops are `static` [`OpDef`] records — argument
//!   schema, keyword attributes with defaults and ABI-enum payloads, core affinity, the
//!   `no_duplicate` flag, per-argument effects, the deducer and the lowerings offered —
//!   submitted at link time with [`register_op!`]. Nothing here names an op family.
//! - **The registration machinery** ([`table`]): one table type for every link-time table
//!   (ops, aliases and overloads, lowerings, canonicalizers, and the emitters and simulator
//!   semantics of other crates), identical duplicate and unknown-op errors naming the sites,
//!   and dense [`OpId`]s that per-op tables are indexed by.
//! - **Building, printing, verifying**: [`Builder`]/[`FunctionBuilder`] build deduced IR;
//!   [`print_program`] writes the DSL form; [`verify_program`] checks structure and types.
//!
//! ## Invariants
//!
//! - `pld-ir` knows nothing about PTO text or the simulator; it depends only on
//!   `pld-runtime-abi`.
//! - An op call is only ever built through its deducer, so its stored type is the deduced
//!   one; the verifier re-checks this after every pass.
//! - No function here panics on user input.

#![deny(missing_docs)]

pub mod auto_signal;
pub mod builder;
pub mod codes;
pub mod comm_fence;
pub mod diag;
pub mod diag_render;
pub mod dtype;
pub mod effects;
pub mod expr;
pub mod func;
pub mod printer;
pub mod quote;
pub mod rank_count;
pub mod registry;
pub mod results;
pub mod span;
pub mod stmt;
pub mod table;
pub mod types;
pub mod value;
pub mod verify;
pub mod vocab;

#[doc(hidden)]
pub use inventory;

pub use builder::{Builder, FunctionBuilder, KernelRequest, LowerContext};
pub use diag::{Diagnostic, Diagnostics, Severity};
pub use dtype::DataType;
pub use effects::{
    arg_accesses, comm_class, pushed_sources, ArgAccess, CommClass, RankRole, Side, SignalRole, StoreKind,
};
pub use expr::{Attr, BinOp, Call, Callee, Expr, ExprKind, UnOp};
pub use func::{Direction, Function, FunctionKind, Param, Program};
pub use printer::{print_function, print_program};
pub use registry::{
    registry, Affinity, AttrDef, AttrDefault, AttrType, BuiltinVariant, DeduceCx, DeduceEnv, Effect, Lowered,
    Lowering, LoweringKind, OpDef, OpId, ParamDef, Target,
};
pub use registry::{BLOCK_IDX_SYM, BLOCK_NUM_SYM};
pub use span::{FileId, SourceFile, SourceMap, Span};
pub use stmt::{Block, ForKind, IterArg, ScopeKind, Stmt, StmtKind};
pub use types::{
    ArrayType, DistTensorType, Layout, MemorySpace, Shape, TensorType, TensorView, TileType, Type,
};
pub use value::{ValueData, ValueId, Values};
pub use verify::{verify_function, verify_program, verify_program_for};
