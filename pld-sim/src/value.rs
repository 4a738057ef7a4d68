//! Run-time values of the simulator: scalars, tensor views, tiles, on-core arrays, contexts
//! and tuples.
//!
//! Guarantees: a [`TRef`] always carries explicit element strides (packed row-major when the
//! IR type says nothing), so every access path computes addresses the same way; tiles hold
//! their lanes as `f64` already rounded to the tile dtype.

use pld_ir::DataType;
use std::sync::Arc;

/// Where a tensor lives.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Mem {
    /// A host/device GM buffer (host tensors, kernel-private tensors).
    Host(usize),
    /// A named buffer inside a comm domain's symmetric window.
    Window {
        /// Comm domain index.
        domain: usize,
        /// Allocation (named buffer) index.
        alloc: usize,
    },
}

/// A strided view of a tensor in memory.
#[derive(Clone, Debug, PartialEq)]
pub struct TRef {
    /// Backing memory.
    pub mem: Mem,
    /// For windows: the domain rank whose window this local view points into
    /// (`usize::MAX` while the view is still rank-agnostic on the host).
    pub owner: usize,
    /// Byte offset of element 0 inside the host buffer or the window.
    pub base: u64,
    /// Dimensions.
    pub shape: Vec<i64>,
    /// Element strides.
    pub strides: Vec<i64>,
    /// Element type.
    pub dtype: DataType,
}

impl TRef {
    /// Packed row-major strides of `shape`.
    pub fn packed_strides(shape: &[i64]) -> Vec<i64> {
        let mut s = vec![1i64; shape.len()];
        for i in (0..shape.len().saturating_sub(1)).rev() {
            s[i] = s[i + 1] * shape[i + 1].max(1);
        }
        s
    }

    /// Number of elements.
    pub fn numel(&self) -> i64 {
        self.shape.iter().product()
    }

    /// Whether two views can touch the same bytes (same memory, overlapping byte hulls).
    pub fn may_overlap(&self, other: &TRef) -> bool {
        if self.mem != other.mem || (matches!(self.mem, Mem::Window { .. }) && self.owner != other.owner) {
            return false;
        }
        let (a0, a1) = self.byte_hull();
        let (b0, b1) = other.byte_hull();
        a0 < b1 && b0 < a1
    }

    /// `[lo, hi)` byte hull of the whole view.
    pub fn byte_hull(&self) -> (u64, u64) {
        let eb = self.dtype.bytes() as i64;
        let mut last = 0i64;
        for (d, s) in self.shape.iter().zip(&self.strides) {
            if *d <= 0 {
                return (self.base, self.base);
            }
            last += (d - 1) * s;
        }
        (self.base, (self.base as i64 + (last + 1) * eb) as u64)
    }
}

/// An on-core tile: physical shape, valid region and lanes (row-major, physical size).
#[derive(Clone, Debug, PartialEq)]
pub struct Tile {
    /// Element type.
    pub dtype: DataType,
    /// Physical shape.
    pub shape: Vec<usize>,
    /// Valid region (same rank as `shape`).
    pub valid: Vec<usize>,
    /// Lanes, `shape.iter().product()` of them.
    pub data: Vec<f64>,
}

impl Tile {
    /// A zero tile.
    pub fn zeros(dtype: DataType, shape: Vec<usize>) -> Tile {
        let n = shape.iter().product();
        Tile { dtype, valid: shape.clone(), shape, data: vec![0.0; n] }
    }

    /// Rows and columns when viewed 2-D (leading dims folded).
    pub fn rows_cols(dims: &[usize]) -> (usize, usize) {
        match dims.split_last() {
            Some((c, lead)) => (lead.iter().product(), *c),
            None => (1, 1),
        }
    }
}

/// A run-time value.
#[derive(Clone, Debug)]
pub enum Val {
    /// No value (side-effect-only calls).
    Unit,
    /// Any integer scalar.
    Int(i64),
    /// Any float scalar.
    Float(f64),
    /// Boolean.
    Bool(bool),
    /// String constant.
    Str(String),
    /// Dtype constant.
    DType(DataType),
    /// A tensor view.
    Tensor(TRef),
    /// A tile.
    Tile(Arc<Tile>),
    /// A communication context of a domain.
    Ctx {
        /// Domain index.
        domain: usize,
    },
    /// An allocation token from `alloc_window_buffer`.
    Alloc(usize),
    /// A tuple.
    Tuple(Vec<Val>),
    /// An on-core scalar array (`pl.array`): element type and elements, each already
    /// wrapped to the element type. Shared until an `update_element` copies it.
    Array {
        /// Element type.
        dtype: DataType,
        /// The elements.
        elems: Arc<Vec<i64>>,
    },
}

impl Val {
    /// Kind name for diagnostics.
    pub fn kind(&self) -> &'static str {
        match self {
            Val::Unit => "unit",
            Val::Int(_) => "int",
            Val::Float(_) => "float",
            Val::Bool(_) => "bool",
            Val::Str(_) => "str",
            Val::DType(_) => "dtype",
            Val::Tensor(_) => "tensor",
            Val::Tile(_) => "tile",
            Val::Ctx { .. } => "comm context",
            Val::Alloc(_) => "window allocation",
            Val::Tuple(_) => "tuple",
            Val::Array { .. } => "array",
        }
    }

    /// Integer view of a scalar (floats truncate, bools are 0/1).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Val::Int(v) => Some(*v),
            Val::Bool(b) => Some(i64::from(*b)),
            Val::Float(f) if f.is_finite() => Some(f.trunc() as i64),
            _ => None,
        }
    }

    /// Float view of a scalar.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Val::Int(v) => Some(*v as f64),
            Val::Bool(b) => Some(f64::from(u8::from(*b))),
            Val::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// Visits every tensor in the value (itself, or the elements of a tuple, recursively).
    pub fn for_each_tensor(&self, f: &mut dyn FnMut(&TRef)) {
        match self {
            Val::Tensor(t) => f(t),
            Val::Tuple(items) => items.iter().for_each(|x| x.for_each_tensor(f)),
            _ => {}
        }
    }

    /// Truthiness of a scalar.
    pub fn truthy(&self) -> Option<bool> {
        match self {
            Val::Bool(b) => Some(*b),
            Val::Int(v) => Some(*v != 0),
            Val::Float(f) => Some(*f != 0.0),
            _ => None,
        }
    }
}
