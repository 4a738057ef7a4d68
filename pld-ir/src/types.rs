//! The type kinds of pld IR.
//!
//! Kinds match exactly: a [`Type::DistTensor`] is never a [`Type::Tensor`] and vice versa
//! (the central rule of the N6 family); [`Type::as_tensor_like`] is the one explicit
//! "either" view, for the documented `put.src` / `get.dst` sides. Dimensions are
//! expressions: static when they are integer literals, dynamic otherwise.

use crate::dtype::DataType;
use crate::expr::{Expr, ExprKind};
use std::fmt;

/// A shape: one expression per dimension.
pub type Shape = Vec<Expr>;

/// Memory spaces, with the integer values of the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum MemorySpace {
    Ddr = 0,
    Vec = 1,
    Mat = 2,
    Left = 3,
    Right = 4,
    Acc = 5,
    Bias = 6,
    ScalarLocal = 7,
    LeftScale = 8,
    RightScale = 9,
}

impl MemorySpace {
    /// Every memory space.
    pub const ALL: &'static [MemorySpace] = &[
        MemorySpace::Ddr,
        MemorySpace::Vec,
        MemorySpace::Mat,
        MemorySpace::Left,
        MemorySpace::Right,
        MemorySpace::Acc,
        MemorySpace::Bias,
        MemorySpace::ScalarLocal,
        MemorySpace::LeftScale,
        MemorySpace::RightScale,
    ];

    /// DSL spelling (`Vec`), printed as `pl.MemorySpace.Vec`.
    pub fn dsl_name(self) -> &'static str {
        match self {
            MemorySpace::Ddr => "DDR",
            MemorySpace::Vec => "Vec",
            MemorySpace::Mat => "Mat",
            MemorySpace::Left => "Left",
            MemorySpace::Right => "Right",
            MemorySpace::Acc => "Acc",
            MemorySpace::Bias => "Bias",
            MemorySpace::ScalarLocal => "ScalarLocal",
            MemorySpace::LeftScale => "LeftScale",
            MemorySpace::RightScale => "RightScale",
        }
    }

    /// Parses a DSL spelling.
    pub fn from_dsl_name(name: &str) -> Option<MemorySpace> {
        MemorySpace::ALL.iter().copied().find(|m| m.dsl_name().eq_ignore_ascii_case(name))
    }

    /// Cube-side spaces: everything except DDR and Vec.
    pub fn is_cube_side(self) -> bool {
        !matches!(self, MemorySpace::Ddr | MemorySpace::Vec)
    }
}

/// Tensor memory layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[allow(missing_docs)]
pub enum Layout {
    #[default]
    Nd,
    Dn,
    Nz,
}

impl Layout {
    /// DSL spelling (`ND`), printed as `pl.Layout.ND`.
    pub fn dsl_name(self) -> &'static str {
        match self {
            Layout::Nd => "ND",
            Layout::Dn => "DN",
            Layout::Nz => "NZ",
        }
    }

    /// Parses a DSL spelling.
    pub fn from_dsl_name(name: &str) -> Option<Layout> {
        match name {
            "ND" => Some(Layout::Nd),
            "DN" => Some(Layout::Dn),
            "NZ" => Some(Layout::Nz),
            _ => None,
        }
    }
}

/// A non-default view of a tensor: strides, layout and valid region.
///
/// Canonical: an empty `stride` means packed row-major, an empty `valid_shape` means the
/// whole shape; [`TensorType::new`] drops a view that says nothing.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct TensorView {
    /// Explicit strides (empty = packed).
    pub stride: Vec<Expr>,
    /// Memory layout.
    pub layout: Layout,
    /// Valid region (empty = the whole shape).
    pub valid_shape: Vec<Expr>,
}

impl TensorView {
    fn is_default(&self) -> bool {
        self.stride.is_empty() && self.layout == Layout::Nd && self.valid_shape.is_empty()
    }
}

/// A tensor in global memory.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorType {
    /// Element type.
    pub dtype: DataType,
    /// Dimensions.
    pub shape: Shape,
    /// Non-default view, if any.
    pub view: Option<TensorView>,
}

impl TensorType {
    /// A packed, fully valid tensor.
    pub fn new(shape: Shape, dtype: DataType) -> TensorType {
        TensorType { dtype, shape, view: None }
    }

    /// Attaches a view, canonicalising it (a full valid shape is cleared, a default view dropped).
    pub fn with_view(mut self, mut view: TensorView) -> TensorType {
        if view.valid_shape == self.shape {
            view.valid_shape.clear();
        }
        self.view = if view.is_default() { None } else { Some(view) };
        self
    }

    /// Rank (number of dimensions).
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The valid shape when it differs from the shape, else the shape.
    pub fn effective_valid_shape(&self) -> &[Expr] {
        match &self.view {
            Some(v) if !v.valid_shape.is_empty() => &v.valid_shape,
            _ => &self.shape,
        }
    }

    /// The layout (ND unless a view says otherwise).
    pub fn layout(&self) -> Layout {
        self.view.as_ref().map_or(Layout::Nd, |v| v.layout)
    }

    /// Static dims, or `None` when any dim is dynamic.
    pub fn static_shape(&self) -> Option<Vec<i64>> {
        static_dims(&self.shape)
    }

    /// Product of static dims, or `None`.
    pub fn static_numel(&self) -> Option<i64> {
        self.static_shape().map(|s| s.iter().product())
    }
}

/// A window-bound tensor: a slice of a symmetric per-rank communication window.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DistTensorType {
    /// The tensor fields.
    pub tensor: TensorType,
    /// The window buffer it is bound to, once `MaterializeCommDomainScopes` has run.
    pub window: Option<String>,
}

/// An on-core tile.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TileType {
    /// Element type.
    pub dtype: DataType,
    /// Physical allocation shape.
    pub shape: Shape,
    /// Valid region (empty = the whole shape).
    pub valid_shape: Vec<Expr>,
    /// Memory space, when known.
    pub memory: Option<MemorySpace>,
}

impl TileType {
    /// A fully valid tile in `memory`.
    pub fn new(shape: Shape, dtype: DataType, memory: Option<MemorySpace>) -> TileType {
        TileType { dtype, shape, valid_shape: Vec::new(), memory }
    }

    /// Sets the valid region, clearing it when it equals the shape.
    pub fn with_valid_shape(mut self, valid: Vec<Expr>) -> TileType {
        self.valid_shape = if valid == self.shape { Vec::new() } else { valid };
        self
    }

    /// The valid region, or the shape when the tile is fully valid.
    pub fn effective_valid_shape(&self) -> &[Expr] {
        if self.valid_shape.is_empty() {
            &self.shape
        } else {
            &self.valid_shape
        }
    }

    /// Static dims, or `None`.
    pub fn static_shape(&self) -> Option<Vec<i64>> {
        static_dims(&self.shape)
    }
}

/// An on-core scalar array (`pl.Array[N, dtype]`): a small fixed-size 1-D array living in
/// the scalar register file / C stack of one function. Values are SSA: `array.update_element`
/// yields a new array value; codegen realises the chain in place.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArrayType {
    /// Element type (an integer type or BOOL).
    pub dtype: DataType,
    /// Number of elements: an integer literal once deduced (`array.create` requires one).
    pub extent: Expr,
}

impl ArrayType {
    /// The extent as an integer, when static.
    pub fn static_extent(&self) -> Option<i64> {
        self.extent.as_int()
    }
}

/// The type of an IR value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// Result of side-effect-only calls.
    Unknown,
    /// A scalar.
    Scalar(DataType),
    /// A plain tensor in global memory.
    Tensor(TensorType),
    /// A window-bound tensor.
    DistTensor(DistTensorType),
    /// An on-core tile.
    Tile(TileType),
    /// A tuple of values.
    Tuple(Vec<Type>),
    /// A communication context (`pld.system.get_comm_ctx`).
    CommCtx,
    /// An allocation-identity token (`pld.tensor.alloc_window_buffer`).
    Ptr,
    /// A window buffer record created by comm-domain materialisation.
    WindowBuffer,
    /// An on-core scalar array (`pl.Array[N, dtype]`).
    Array(ArrayType),
}

impl Type {
    /// A plain tensor type.
    pub fn tensor(shape: Shape, dtype: DataType) -> Type {
        Type::Tensor(TensorType::new(shape, dtype))
    }

    /// An unbound window tensor type.
    pub fn dist_tensor(shape: Shape, dtype: DataType) -> Type {
        Type::DistTensor(DistTensorType { tensor: TensorType::new(shape, dtype), window: None })
    }

    /// A tile type.
    pub fn tile(shape: Shape, dtype: DataType, memory: Option<MemorySpace>) -> Type {
        Type::Tile(TileType::new(shape, dtype, memory))
    }

    /// The name used in diagnostics (`TensorType`, `DistributedTensorType`, …).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Type::Unknown => "UnknownType",
            Type::Scalar(_) => "ScalarType",
            Type::Tensor(_) => "TensorType",
            Type::DistTensor(_) => "DistributedTensorType",
            Type::Tile(_) => "TileType",
            Type::Tuple(_) => "TupleType",
            Type::CommCtx => "CommCtxType",
            Type::Ptr => "Ptr",
            Type::WindowBuffer => "WindowBufferType",
            Type::Array(_) => "ArrayType",
        }
    }

    /// The tensor fields of a plain or window-bound tensor (`AsTensorTypeLike`).
    pub fn as_tensor_like(&self) -> Option<&TensorType> {
        match self {
            Type::Tensor(t) => Some(t),
            Type::DistTensor(d) => Some(&d.tensor),
            _ => None,
        }
    }

    /// Exactly a plain tensor.
    pub fn as_tensor(&self) -> Option<&TensorType> {
        match self {
            Type::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// Exactly a window-bound tensor.
    pub fn as_dist(&self) -> Option<&TensorType> {
        match self {
            Type::DistTensor(d) => Some(&d.tensor),
            _ => None,
        }
    }

    /// Exactly a tile.
    pub fn as_tile(&self) -> Option<&TileType> {
        match self {
            Type::Tile(t) => Some(t),
            _ => None,
        }
    }

    /// Exactly an on-core array.
    pub fn as_array(&self) -> Option<&ArrayType> {
        match self {
            Type::Array(a) => Some(a),
            _ => None,
        }
    }

    /// Whether this type is, or (in a tuple) contains, an on-core array.
    pub fn contains_array(&self) -> bool {
        match self {
            Type::Array(_) => true,
            Type::Tuple(items) => items.iter().any(Type::contains_array),
            _ => false,
        }
    }

    /// The scalar dtype, if this is a scalar.
    pub fn as_scalar(&self) -> Option<DataType> {
        match self {
            Type::Scalar(d) => Some(*d),
            _ => None,
        }
    }

    /// Element type of shaped types and scalars.
    pub fn dtype(&self) -> Option<DataType> {
        match self {
            Type::Scalar(d) => Some(*d),
            Type::Tensor(t) => Some(t.dtype),
            Type::DistTensor(d) => Some(d.tensor.dtype),
            Type::Tile(t) => Some(t.dtype),
            _ => None,
        }
    }

    /// Shape of shaped types.
    pub fn shape(&self) -> Option<&[Expr]> {
        match self {
            Type::Tensor(t) => Some(&t.shape),
            Type::DistTensor(d) => Some(&d.tensor.shape),
            Type::Tile(t) => Some(&t.shape),
            _ => None,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::printer::type_to_string(self))
    }
}

/// The integer value of every dim, or `None` when one is dynamic.
pub fn static_dims(dims: &[Expr]) -> Option<Vec<i64>> {
    dims.iter().map(Expr::as_int).collect()
}

/// Whether `e` is an integer literal.
pub fn is_static(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Int(_))
}
