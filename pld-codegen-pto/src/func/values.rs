//! The typed values of an emitted function: what an IR value is bound to ([`Val`]), tensor
//! operands ([`TensorRef`]), foldable `index` operands ([`Idx`]), the emitted text ([`FnOut`])
//!
//! and the value environment of a function ([`Env`]).
//!
//! Guarantees: these are plain data; nothing here emits instructions.

use super::views::ViewInfo;
use crate::mlir::MTy;
use crate::verify::Kernel;
use pld_ir::{TensorType, TileType, ValueId};
use std::collections::HashMap;

/// The reserved block-index and block-count symbols: read from the trailing
/// `__pypto_spmd_block_idx` / `__pypto_spmd_block_num` parameters, each cast to `index`.
pub use pld_ir::{BLOCK_IDX_SYM, BLOCK_NUM_SYM};

/// A tensor operand: a tensor-like parameter of the kernel (or a value aliasing one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorRef {
    /// Readable base name (the parameter's IR name, sanitised).
    pub name: String,
    /// Index of the parameter among the function's parameters.
    pub param: usize,
    /// Identity of its tensor view (the parameter index, or a fresh key for a derived view).
    pub key: usize,
    /// The pointer argument (`%argK`).
    pub ptr: String,
    /// The tensor type.
    pub ty: TensorType,
    /// Whether the parameter is a window-bound DistributedTensor.
    pub dist: bool,
    /// The paired CommContext argument, for a DistributedTensor.
    pub ctx: Option<String>,
}

/// What an IR value is bound to in the emitted function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Val {
    /// No value (side-effect-only call).
    Unit,
    /// A scalar SSA value.
    Scalar {
        /// SSA name.
        ssa: String,
        /// Its type.
        ty: MTy,
    },
    /// A tile buffer.
    Tile {
        /// SSA name of the `pto.alloc_tile`.
        ssa: String,
        /// Its IR type.
        tile: TileType,
    },
    /// A tensor parameter.
    Tensor(TensorRef),
    /// A CommContext pointer (`!pto.ptr<i64>`).
    Ctx {
        /// SSA name.
        ssa: String,
    },
    /// An on-core array (`pto.declare_local_array`); updates write it in place, so every
    /// version of an IR array value binds to the same declaration.
    Array {
        /// SSA name of the declaration.
        ssa: String,
        /// Its IR type.
        ty: pld_ir::ArrayType,
    },
}

/// The text of one emitted function.
#[derive(Clone, Debug)]
pub struct FnOut {
    /// The `func.func` text, indented for a module body.
    pub text: String,
    /// Whether the function registered a deferred wait (the module needs the declaration).
    pub uses_deferred: bool,
    /// The typed kernel the PTO verifier checks before the module is written.
    pub kernel: Kernel,
}

/// An `index` operand that may still be folded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Idx {
    /// A constant.
    Const(i64),
    /// An SSA value of type `index`.
    Ssa(String),
}

/// What the IR values of one function are bound to.
#[derive(Debug, Default)]
pub(crate) struct Env {
    /// Each IR value's binding.
    pub(crate) values: HashMap<ValueId, Val>,
    /// The tensor view of each tensor key ([`TensorRef::key`]).
    pub(crate) views: HashMap<usize, ViewInfo>,
    /// The `index` parameter of each dynamic shape symbol.
    pub(crate) sym_params: HashMap<String, String>,
    /// Derived views made so far (their keys count down from `usize::MAX`).
    pub(crate) next_view: usize,
}

/// A short name of a binding's kind, for diagnostics.
pub fn val_kind(v: &Val) -> &'static str {
    match v {
        Val::Unit => "unit value",
        Val::Scalar { .. } => "scalar",
        Val::Tile { .. } => "tile",
        Val::Tensor(_) => "tensor",
        Val::Ctx { .. } => "CommCtx",
        Val::Array { .. } => "array",
    }
}
