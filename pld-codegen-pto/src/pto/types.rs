//! The types of typed PTO: scalars, tile buffers and tensor views.
//!
//! Guarantees: types compare structurally; [`TileBuf::parse`] decodes exactly the long-form
//! `!pto.tile_buf<…>` that [`super::print`] prints (ten fields in the order checklist P2 fixes).

use crate::mlir::MTy;

/// A type an emitted PTO value or operand has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PtoType {
    /// A scalar (`i32`, `index`, `f16`, …).
    Scalar(MTy),
    /// A tile buffer.
    Tile(TileBuf),
    /// `!pto.ptr<elem>`.
    Ptr(&'static str),
    /// `!pto.tensor_view<?x…x?xelem>`: always fully dynamic (P8: one type per view SSA).
    TensorView {
        /// The number of dims.
        rank: usize,
        /// The element spelling.
        elem: &'static str,
    },
    /// `!pto.local_array<NxELEM>`.
    LocalArray {
        /// The number of elements.
        len: i64,
        /// The element spelling (`index` for an index array).
        elem: &'static str,
    },
    /// `!pto.partition_tensor_view<16x?xelem>`: a static number per constant size.
    PartitionView {
        /// Each dim's static size (`None` prints `?`).
        dims: Vec<Option<i64>>,
        /// The element spelling.
        elem: &'static str,
    },
}

impl From<MTy> for PtoType {
    fn from(t: MTy) -> Self {
        PtoType::Scalar(t)
    }
}

impl PtoType {
    /// The tile buffer type, when this is one.
    pub fn as_tile(&self) -> Option<&TileBuf> {
        match self {
            PtoType::Tile(t) => Some(t),
            _ => None,
        }
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

    /// The long-form type of a `rows` x `cols` buffer of `elem` in memory `loc` with a
    /// dynamic valid extent and no pad value.
    ///
    /// Cube operand buffers carry the fractal box layouts the cube unit reads: `left`
    /// (col_major blocks of row_major boxes), `right` (row_major blocks of col_major boxes) and
    /// `acc` (col_major blocks of row_major boxes, 1024-byte fractals); everything else is a
    /// plain row-major buffer.
    pub fn new(loc: &str, elem: &str, rows: i64, cols: i64) -> TileBuf {
        let (blayout, slayout, fractal) = match loc {
            "left" => ("col_major", "row_major", 512),
            "right" => ("row_major", "col_major", 512),
            "acc" => ("col_major", "row_major", 1024),
            _ => ("row_major", "none_box", 512),
        };
        TileBuf {
            loc: loc.to_string(),
            dtype: elem.to_string(),
            rows,
            cols,
            valid: [None; 2],
            blayout: blayout.to_string(),
            slayout: slayout.to_string(),
            fractal,
            pad: 0,
        }
    }

    /// The buffer's byte size (`rows * cols * elem`), saturating.
    pub fn bytes(&self) -> i64 {
        self.rows.saturating_mul(self.cols).saturating_mul(self.elem_bytes().unwrap_or(1))
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
        assert_eq!(TileBuf::new("vec", "f32", 16, 64).to_string().replace("v_col=?", "v_col=64"), text);
        let pv = PtoType::PartitionView { dims: vec![Some(1), None], elem: "f16" };
        assert_eq!(pv.to_string(), "!pto.partition_tensor_view<1x?xf16>");
        assert_eq!(PtoType::TensorView { rank: 2, elem: "i32" }.to_string(), "!pto.tensor_view<?x?xi32>");
    }
}
