//! Run-time values of the simulator: scalars, tensor views, tiles, on-core arrays, contexts
//! and tuples.
//!
//! Guarantees: a [`TRef`] always carries explicit element strides (packed row-major when the
//! IR type says nothing), so every access path computes addresses the same way; tiles hold
//! their lanes in their own dtype's bytes, so every lane is a value of the tile dtype.

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

/// A tensor view's dimensions or element strides: inline up to rank 4, so copying a view (every
/// read of a tensor variable does) allocates nothing.
pub type Dims = smallvec::SmallVec<[i64; 4]>;

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
    pub shape: Dims,
    /// Element strides.
    pub strides: Dims,
    /// Element type.
    pub dtype: DataType,
}

impl TRef {
    /// Packed row-major strides of `shape`.
    pub fn packed_strides(shape: &[i64]) -> Dims {
        let mut s: Dims = smallvec::smallvec![1i64; shape.len()];
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
///
/// The lanes are stored in the tile's own dtype, as the little-endian bytes a store writes
/// (an FP32 tile holds 4 bytes a lane, not an `f64`): loads and stores move them as slice
/// copies, and element ops decode them to `f64`, compute and round back exactly as
/// [`crate::elem`] does (D-sim-31).
#[derive(Clone, Debug, PartialEq)]
pub struct Tile {
    /// Element type.
    pub dtype: DataType,
    /// Physical shape.
    pub shape: Vec<usize>,
    /// Valid region (same rank as `shape`).
    pub valid: Vec<usize>,
    /// Lanes as raw little-endian `dtype` elements, `shape.iter().product()` of them.
    pub data: Vec<u8>,
}

impl Tile {
    /// A zero tile.
    pub fn zeros(dtype: DataType, shape: Vec<usize>) -> Tile {
        let n: usize = shape.iter().product();
        Tile { dtype, valid: shape.clone(), data: vec![0; n * Self::lane_bytes(dtype)], shape }
    }

    /// A fully valid tile of `shape` holding `lanes` (row-major) rounded to `dtype`.
    pub fn from_lanes(dtype: DataType, shape: Vec<usize>, lanes: &[f64]) -> Tile {
        let mut t = Tile::zeros(dtype, shape);
        crate::elem::encode_all(dtype, lanes, &mut t.data);
        t
    }

    /// This tile's shape and valid region holding `lanes` (row-major) rounded to its dtype.
    pub fn with_lanes(&self, lanes: &[f64]) -> Tile {
        let mut t = Tile::from_lanes(self.dtype, self.shape.clone(), lanes);
        t.valid = self.valid.clone();
        t
    }

    /// Bytes of one lane (at least 1).
    pub fn lane_bytes(dtype: DataType) -> usize {
        (dtype.bytes() as usize).max(1)
    }

    /// Number of lanes (physical).
    pub fn len(&self) -> usize {
        self.data.len() / Self::lane_bytes(self.dtype)
    }

    /// Whether the tile has no lanes.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Every lane decoded to `f64`, row-major.
    pub fn lanes(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.len());
        crate::elem::decode_all(self.dtype, &self.data, &mut out);
        out
    }

    /// Lane `i` decoded to `f64`, `None` past the end.
    pub fn get(&self, i: usize) -> Option<f64> {
        let eb = Self::lane_bytes(self.dtype);
        self.data.get(i * eb..(i + 1) * eb).map(|b| crate::elem::decode(self.dtype, b))
    }

    /// Sets lane `i` to `v` rounded to the dtype (nothing past the end).
    pub fn set(&mut self, i: usize, v: f64) {
        let eb = Self::lane_bytes(self.dtype);
        if let Some(b) = self.data.get_mut(i * eb..(i + 1) * eb) {
            crate::elem::encode(self.dtype, v, b);
        }
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
    /// A tensor view, shared: a value is copied whenever a statement reads a variable, and an
    /// inline view made every value 144 bytes (see [`Val::tensor`]).
    Tensor(Arc<TRef>),
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

    /// A tensor view as a value.
    pub fn tensor(t: TRef) -> Val {
        Val::Tensor(Arc::new(t))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elem;
    use crate::elem::tests::{same, TRICKY};

    #[test]
    fn a_value_stays_small() {
        // Every variable read copies a value (D-sim-38): a tensor view is shared, not inline.
        assert!(std::mem::size_of::<Val>() <= 32, "{}", std::mem::size_of::<Val>());
    }

    #[test]
    fn lanes_hold_what_the_f64_lanes_rounded_to_the_dtype_held() {
        for dt in elem::SUPPORTED {
            let t = Tile::from_lanes(dt, vec![2, 8], &TRICKY);
            assert_eq!((t.len(), t.data.len()), (16, 16 * dt.bytes() as usize), "{dt}");
            // The lanes read back are exactly the old storage: each value rounded to the dtype.
            let mut want = TRICKY;
            elem::round_all(dt, &mut want);
            for (i, (&got, &w)) in t.lanes().iter().zip(&want).enumerate() {
                assert!(same(got, w), "{dt} lane {i}: {got} vs {w}");
                assert!(same(t.get(i).unwrap_or(f64::NAN), w), "{dt} get {i}");
            }
            // A second trip through the lanes changes no byte.
            assert_eq!(t.with_lanes(&t.lanes()).data, t.data, "{dt}");
            assert_eq!(t.get(16), None);
        }
    }

    #[test]
    fn fp16_lanes_round_to_nearest_even_as_before() {
        let mut t = Tile::zeros(DataType::FP16, vec![4]);
        // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: to even (1). 1 + 3·2^-11 goes up.
        let vals = [1.0 + 1.0 / 2048.0, 1.0 + 3.0 / 2048.0, 65520.0, -1e-8];
        for (i, &v) in vals.iter().enumerate() {
            t.set(i, v);
            assert!(same(t.get(i).unwrap_or(f64::NAN), elem::round(DataType::FP16, v)), "{v}");
        }
        assert_eq!(t.lanes()[..2], [1.0, 1.0 + 2.0 / 1024.0]);
        assert_eq!(t.lanes()[2], f64::INFINITY);
        assert_eq!(t.data[6..], half::f16::from_f64(-0.0).to_le_bytes());
        t.set(9, 5.0);
        assert_eq!(t.len(), 4);
    }

    #[test]
    fn zero_tiles_and_valid_regions() {
        let t = Tile::zeros(DataType::BF16, vec![3, 5]);
        assert_eq!(t.data, vec![0; 30]);
        assert_eq!(t.valid, vec![3, 5]);
        let mut u = t.clone();
        u.valid = vec![2, 5];
        assert_eq!(u.with_lanes(&[1.0; 15]).valid, vec![2, 5]);
        assert!(!u.is_empty() && Tile::zeros(DataType::INT8, vec![0]).is_empty());
    }
}
