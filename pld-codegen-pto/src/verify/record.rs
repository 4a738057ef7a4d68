//! The emitter side of the PTO verifier: the `FnCx` helpers that push a typed tile
//! instruction while recording its facts, and the allocation of an elementwise destination on its
//! source's tile type.
//!
//! Guarantees: every tile instruction rendered through [`FnCx::tile_op`] and every comm
//! staging group and scalar recorded here reaches [`super::verify_kernel`] with the span of
//! the statement being emitted; [`FnCx::alloc_tile_like`] gives an elementwise op one tile
//! type for its source and destination whenever the IR types allow it.

use super::{Fact, OpClass, TileBuf};
use crate::func::{FnCx, Idx};
use crate::mlir::MTy;
use crate::pto::{Dps, Inst};
use pld_ir::{Diagnostic, TileType};

impl FnCx<'_> {
    /// Emits the tile instruction `dps` and records its tile operands, sources first and
    /// destination last, for the PTO verifier.
    pub fn tile_op(&mut self, class: OpClass, dps: Dps) {
        self.facts.push(Fact::TileOp {
            inst: dps.op.to_string(),
            class,
            tiles: dps.tiles().map(|(s, t)| (s.to_string(), t.clone())).collect(),
            span: self.span,
        });
        self.push(Inst::Dps(dps));
    }

    /// Records the staging tiles `(ssa, type)` of a comm transfer `inst` moving `src_dtype`
    /// elements, for the PTO verifier.
    pub fn comm_stages(&mut self, inst: &str, src_dtype: &str, stages: &[(String, TileBuf)]) {
        self.facts.push(Fact::CommStage {
            inst: inst.to_string(),
            src_dtype: src_dtype.to_string(),
            stages: stages.to_vec(),
            span: self.span,
        });
    }

    /// Records a scalar type the module spells (`what` names it), for the PTO verifier.
    pub fn scalar_fact(&mut self, what: String, ty: &MTy) {
        self.facts.push(Fact::Scalar { what, ty: ty.name(), span: self.span });
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
