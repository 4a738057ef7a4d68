//! Tile buffer types and tile allocation of [`FnCx`].
//!
//! Guarantees: every tile has a long-form `!pto.tile_buf` type; a static valid extent never
//! exceeds its buffer; each `pto.alloc_tile` is a typed body line holding its address slot,
//! whose `addr = ...` operand the printer renders from the plan of `addrs`;
//! [`FnCx::alloc_tile_like`] gives an elementwise op one tile type for its source and
//! destination whenever the IR types allow it.

use super::{FnCx, Idx};
use crate::mlir::{self, MTy};
use crate::pto::{Inst, TileBuf};
use pld_ir::{DataType, Diagnostic, TileType};

impl FnCx<'_> {
    /// The static 2-D `(rows, cols)` of a tile (rank 1 → one row; rank > 2 folds leading dims).
    pub fn tile_dims(&self, t: &TileType) -> Result<(i64, i64), Diagnostic> {
        let Some(s) = t.static_shape() else {
            let shape: Vec<String> = t.shape.iter().map(|d| d.to_string()).collect();
            return Err(self.err(format!(
                "tile of shape [{}] has a dynamic physical shape; pto tile buffers need static rows/cols (use a static shape with a dynamic valid_shape)",
                shape.join(", ")
            )));
        };
        let (rows, cols) = match s.len() {
            0 => return Err(self.err("a rank-0 tile has no pto tile buffer form")),
            1 => (1, s[0]),
            n => {
                let rows = s[..n - 1].iter().try_fold(1i64, |a, d| a.checked_mul(*d));
                match rows {
                    Some(r) => (r, s[n - 1]),
                    None => return Err(self.err("tile rows overflow a 64-bit extent")),
                }
            }
        };
        if rows.checked_mul(cols).and_then(|e| e.checked_mul(8)).is_none() {
            return Err(
                self.err(format!("tile of {rows}x{cols} elements is too large for a pto tile buffer"))
            );
        }
        if rows <= 0 || cols <= 0 {
            return Err(self.err(format!("pto tile buffers need positive rows/cols, got {rows}x{cols}")));
        }
        Ok((rows, cols))
    }

    /// The tile-buffer type of `t` (checklist P2).
    pub fn tile_type(&self, t: &TileType) -> Result<TileBuf, Diagnostic> {
        let (rows, cols) = self.tile_dims(t)?;
        let loc = mlir::loc(t.memory).map_err(|m| self.err(m))?;
        let elem = mlir::elem(t.dtype).map_err(|m| self.err(m))?;
        let mut ty = TileBuf::new(loc, elem, rows, cols);
        // A static column vector is a col_major tile (it pairs with a DN view).
        if cols == 1 && rows > 1 && loc == "vec" {
            ty.blayout = "col_major".into();
        }
        Ok(ty)
    }

    /// The element spelling of `d`, or a diagnostic.
    pub fn elem(&self, d: DataType) -> Result<&'static str, Diagnostic> {
        mlir::elem(d).map_err(|m| self.err(m))
    }

    /// The effective valid extent of a tile as `(rows, cols)` index operands.
    pub fn tile_valid(&mut self, t: &TileType) -> Result<(Idx, Idx), Diagnostic> {
        let v = t.effective_valid_shape().to_vec();
        let mut ops = Vec::new();
        for d in &v {
            ops.push(match d.as_int() {
                Some(x) => Idx::Const(x),
                None => Idx::Ssa(self.scalar_as(d, MTy::Index)?),
            });
        }
        Ok(match ops.len() {
            0 => return Err(self.err("a rank-0 tile has no pto tile buffer form")),
            1 => (Idx::Const(1), ops[0].clone()),
            n => {
                let mut rows = Idx::Const(1);
                for o in &ops[..n - 1] {
                    rows = self.mul_idx(&rows, o);
                }
                (rows, ops[n - 1].clone())
            }
        })
    }

    /// The tile-buffer type of tile SSA `ssa` (its own type when it was allocated with a
    /// non-default pad value, else the type derived from `t`).
    pub fn tile_ty(&self, ssa: &str, t: &TileType) -> Result<TileBuf, Diagnostic> {
        match self.tiles.types.get(ssa) {
            Some(ty) => Ok(ty.clone()),
            None => self.tile_type(t),
        }
    }

    /// Records that tile SSA `ssa` (a view such as a `pto.subview` result, not an allocation)
    /// has the tile-buffer type `ty`; later uses print that type. A view has no buffer of its
    /// own, so it cannot be aliased by `tile.set_validshape` / `tile.reshape`.
    pub fn bind_tile_view(&mut self, ssa: &str, ty: TileBuf) {
        self.tiles.types.insert(ssa.to_string(), ty);
    }

    /// Emits `pto.alloc_tile` for a tile of type `t` named after `hint`; returns its SSA.
    pub fn alloc_tile(&mut self, hint: &str, t: &TileType) -> Result<String, Diagnostic> {
        let ty = self.tile_type(t)?;
        self.alloc_typed(hint, t, ty, None)
    }

    /// [`FnCx::alloc_tile`] with a pad value (`pad=` field: 0 null, 1 zero, 2 max, 3 min).
    pub fn alloc_tile_padded(&mut self, hint: &str, t: &TileType, pad: u8) -> Result<String, Diagnostic> {
        let mut ty = self.tile_type(t)?;
        ty.pad = i64::from(pad);
        self.alloc_typed(hint, t, ty, None)
    }

    /// [`FnCx::alloc_tile`] on the buffer of tile SSA `alias_of` (same address, new valid
    /// region).
    pub fn alloc_tile_aliasing(
        &mut self,
        hint: &str,
        t: &TileType,
        alias_of: &str,
    ) -> Result<String, Diagnostic> {
        let ty = self.tile_type(t)?;
        self.alloc_typed(hint, t, ty, Some(alias_of))
    }

    pub(crate) fn alloc_typed(
        &mut self,
        hint: &str,
        t: &TileType,
        ty: TileBuf,
        alias_of: Option<&str>,
    ) -> Result<String, Diagnostic> {
        let (rows, cols) = self.tile_dims(t)?;
        let loc = mlir::loc(t.memory).map_err(|m| self.err(m))?;
        let (vr, vc) = self.tile_valid(t)?;
        if let (Idx::Const(r), Idx::Const(c)) = (&vr, &vc) {
            if *r > rows || *c > cols || *r < 0 || *c < 0 {
                return Err(self.err(format!("tile valid extent {r}x{c} exceeds its {rows}x{cols} buffer")));
            }
        }
        let (vr, vc) = (self.idx(&vr), self.idx(&vc));
        let bytes = (rows * cols) as u64 * t.dtype.bytes();
        let slot = self.plan_tile_slot(loc, bytes, alias_of)?;
        let name = self.named(hint);
        self.tiles.slot_of.insert(name.clone(), slot);
        if ty != self.tile_type(t)? {
            self.tiles.types.insert(name.clone(), ty.clone());
        }
        let buf = ty;
        // A static v_row/v_col in the type takes no operand (ptoas AllocTileOp::verify).
        let valid_row = buf.valid[0].is_none().then_some(vr);
        let valid_col = buf.valid[1].is_none().then_some(vc);
        self.push(Inst::AllocTile { result: name.clone(), slot, valid_row, valid_col, ty: buf });
        Ok(name)
    }

    /// Allocates the destination of an elementwise op on `src` (its source's tile type):
    /// the same type — shape, layouts, fractal, pad and static valid extent — so that one
    /// tile type serves every operand (pto-isa's CPU build of TADD/TADDS/… takes one type);
    /// only the element type follows `t` (a conversion). Falls back to `t`'s own type when
    /// `src` describes a different buffer shape or valid extent.
    pub fn alloc_tile_like(&mut self, hint: &str, t: &TileType, src: &TileBuf) -> Result<String, Diagnostic> {
        let base = self.tile_type(t)?;
        let mut want = src.clone();
        want.dtype = base.dtype.clone();
        let (vr, vc) = self.tile_valid(t)?;
        let agrees = |v: Option<i64>, i: &Idx| v.is_none() || matches!(i, Idx::Const(x) if Some(*x) == v);
        let fits = want.rows == base.rows
            && want.cols == base.cols
            && want.loc == base.loc
            && agrees(want.valid[0], &vr)
            && agrees(want.valid[1], &vc);
        let ty = if fits { want } else { base };
        self.alloc_typed(hint, t, ty, None)
    }
}
