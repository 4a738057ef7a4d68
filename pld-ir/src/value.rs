//! Values: the per-function arena of SSA-style definitions.
//!
//! A [`ValueId`] is a `u32` index into its function's value arena; it is only meaningful
//! together with that function. Each value records a name hint (not necessarily unique),
//! its type and the span of its definition.

use crate::span::Span;
use crate::types::Type;
use std::fmt;

/// Index of a value in its function's arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueId(pub u32);

impl ValueId {
    /// The arena index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for ValueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%v{}", self.0)
    }
}

/// One value definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueData {
    /// Name hint from the source or the pass that made it.
    pub name: String,
    /// The value's type.
    pub ty: Type,
    /// Where it was defined.
    pub span: Span,
}

/// The value arena of one function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Values {
    data: Vec<ValueData>,
}

impl Values {
    /// Adds a value and returns its id.
    pub fn add(&mut self, name: impl Into<String>, ty: Type, span: Span) -> ValueId {
        self.data.push(ValueData { name: name.into(), ty, span });
        ValueId(self.data.len() as u32 - 1)
    }

    /// The value behind `id`. Ids come from this arena, so out-of-range ids are a compiler bug;
    /// the structural verifier checks ranges before anything indexes.
    pub fn get(&self, id: ValueId) -> Option<&ValueData> {
        self.data.get(id.index())
    }

    /// Mutable access to a value.
    pub fn get_mut(&mut self, id: ValueId) -> Option<&mut ValueData> {
        self.data.get_mut(id.index())
    }

    /// Type of `id`, `Unknown` when out of range.
    pub fn ty(&self, id: ValueId) -> &Type {
        self.data.get(id.index()).map_or(&Type::Unknown, |v| &v.ty)
    }

    /// Name hint of `id`, `"?"` when out of range.
    pub fn name(&self, id: ValueId) -> &str {
        self.data.get(id.index()).map_or("?", |v| v.name.as_str())
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether the arena is empty.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Iterates over `(id, data)`.
    pub fn iter(&self) -> impl Iterator<Item = (ValueId, &ValueData)> {
        self.data.iter().enumerate().map(|(i, d)| (ValueId(i as u32), d))
    }
}
