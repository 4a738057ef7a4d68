//! The types of typed PTO: scalars, tile buffers and tensor views.
//!
//! Guarantees: a [`TileBuf`] prints as the long-form `!pto.tile_buf<…>` with its ten fields
//! in the order checklist P2 fixes, and [`TileBuf::parse`] decodes exactly that form; types
//! compare structurally.

use crate::mlir::MTy;
use std::fmt;

/// A type an emitted PTO value or operand has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PtoType {
    /// A scalar (`i32`, `index`, `f16`, …).
    Scalar(MTy),
    /// A tile buffer.
    Tile(TileBuf),
}

impl fmt::Display for PtoType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PtoType::Scalar(t) => f.write_str(&t.name()),
            PtoType::Tile(t) => t.fmt(f),
        }
    }
}

impl From<MTy> for PtoType {
    fn from(t: MTy) -> Self {
        PtoType::Scalar(t)
    }
}

impl From<TileBuf> for PtoType {
    fn from(t: TileBuf) -> Self {
        PtoType::Tile(t)
    }
}

/// A long-form `!pto.tile_buf<…>` type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileBuf {
    /// `loc=` (`vec`, `mat`, `left`, `right`, `acc`, `bias`, `scaling`).
    pub loc: String,
    /// `dtype=` spelling.
    pub dtype: String,
    /// Physical rows.
    pub rows: i64,
    /// Physical cols.
    pub cols: i64,
    /// The valid extent `[v_row=, v_col=]` (`None` for `?`, a dynamic extent).
    pub valid: [Option<i64>; 2],
    /// `blayout=`.
    pub blayout: String,
    /// `slayout=`.
    pub slayout: String,
    /// `fractal=`.
    pub fractal: i64,
    /// `pad=`.
    pub pad: i64,
}

impl TileBuf {
    /// Decodes a long-form tile buffer type; `None` when `ty` is not one.
    pub fn parse(ty: &str) -> Option<TileBuf> {
        let body = ty.trim().strip_prefix("!pto.tile_buf<")?.strip_suffix('>')?;
        let mut t = TileBuf {
            loc: String::new(),
            dtype: String::new(),
            rows: 0,
            cols: 0,
            valid: [None; 2],
            blayout: String::new(),
            slayout: String::new(),
            fractal: 0,
            pad: 0,
        };
        let num = |v: &str| v.parse::<i64>().ok();
        let valid = |v: &str| if v == "?" { Some(None) } else { num(v).map(Some) };
        let mut seen = 0;
        for field in body.split(", ") {
            let (k, v) = field.split_once('=')?;
            match k {
                "loc" => t.loc = v.to_string(),
                "dtype" => t.dtype = v.to_string(),
                "rows" => t.rows = num(v)?,
                "cols" => t.cols = num(v)?,
                "v_row" => t.valid[0] = valid(v)?,
                "v_col" => t.valid[1] = valid(v)?,
                "blayout" => t.blayout = v.to_string(),
                "slayout" => t.slayout = v.to_string(),
                "fractal" => t.fractal = num(v)?,
                "pad" => t.pad = num(v)?,
                "compact" => continue,
                _ => return None,
            }
            seen += 1;
        }
        (seen == 10).then_some(t)
    }

    /// Bytes of one element (`None` for an unknown spelling).
    pub fn elem_bytes(&self) -> Option<i64> {
        elem_bytes(&self.dtype)
    }

    /// The buffer's byte size (`rows * cols * elem`), saturating.
    pub fn bytes(&self) -> i64 {
        self.rows.saturating_mul(self.cols).saturating_mul(self.elem_bytes().unwrap_or(1))
    }
}

impl fmt::Display for TileBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let q = |v: Option<i64>| v.map_or_else(|| "?".to_string(), |x| x.to_string());
        write!(
            f,
            "!pto.tile_buf<loc={}, dtype={}, rows={}, cols={}, v_row={}, v_col={}, blayout={}, slayout={}, fractal={}, pad={}>",
            self.loc,
            self.dtype,
            self.rows,
            self.cols,
            q(self.valid[0]),
            q(self.valid[1]),
            self.blayout,
            self.slayout,
            self.fractal,
            self.pad
        )
    }
}

/// Bytes of one element of a PTO element-type spelling (sub-byte packed types count 1).
pub fn elem_bytes(dtype: &str) -> Option<i64> {
    Some(match dtype {
        "f32" | "i32" | "ui32" => 4,
        "f16" | "bf16" | "i16" | "ui16" => 2,
        "i8" | "ui8" | "i1" | "f8E4M3FN" | "f8E5M2" | "!pto.f8E8M0" | "!pto.hif8" | "!pto.f4E2M1x2" => 1,
        "i64" | "ui64" => 8,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_types_round_trip_and_compare_by_field() {
        let text = "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=?, v_col=64, blayout=row_major, slayout=none_box, fractal=512, pad=0>";
        let t = TileBuf::parse(text).unwrap();
        assert_eq!(t.to_string(), text);
        let mut other = t.clone();
        other.pad = 1;
        assert_ne!(PtoType::Tile(t), PtoType::Tile(other));
        assert_eq!(PtoType::Scalar(MTy::Index).to_string(), "index");
    }
}
