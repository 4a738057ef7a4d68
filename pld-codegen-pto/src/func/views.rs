//! Tensor views of [`FnCx`]: derived slices and views, `pto.make_tensor_view`, partition
//! views and the inline CommContext peer-offset sequence.
//!
//! Guarantees: offsets, sizes, shapes and strides are `index` (P5); partition views check V7
//! for static values; the peer-offset sequence is emitted inline at each remote operand, in
//! the calling function (C1/C2): three `pto.load_scalar`, the byte delta divided by the element
//! size, `pto.addptr`, then the peer `pto.make_tensor_view`.

use super::{FnCx, Idx, TensorRef};
use crate::mlir::{self, MTy};
use crate::pto::{Inst, PtoType};
use pld_ir::{Diagnostic, Expr, Layout, TensorType, TileType};

/// A tensor view: its SSA name and its shape, stride and layout operands.
#[derive(Clone, Debug)]
pub(crate) struct ViewInfo {
    pub(super) ssa: String,
    pub(super) shape: Vec<String>,
    pub(super) strides: Vec<String>,
    pub(super) layout: &'static str,
}

impl FnCx<'_> {
    /// A rectangular sub-tensor of `base` (`tensor.slice`): the base pointer advanced by the
    /// flat element offset of `offsets` (dotted with `base`'s strides) and a view of shape
    /// `ty.shape` that keeps `base`'s strides and layout.
    pub fn derive_slice(
        &mut self,
        base: &TensorRef,
        ty: TensorType,
        offsets: &[Expr],
    ) -> Result<TensorRef, Diagnostic> {
        let Some(parent) = self.env.views.get(&base.key).cloned() else {
            return Err(self.err(format!("tensor '{}' has no local view", base.name)));
        };
        if offsets.len() != parent.strides.len() || ty.rank() != parent.strides.len() {
            return Err(self.err(format!("tensor.slice of '{}' must keep its rank", base.name)));
        }
        let mut flat: Option<String> = None;
        for (o, st) in offsets.iter().zip(&parent.strides) {
            if o.as_int() == Some(0) {
                continue;
            }
            let (x, _) = self.offset(o)?;
            let term = self.arith("arith.muli", &[&x, st], MTy::Index);
            flat = Some(self.accumulate(flat, term, "arith.addi", MTy::Index));
        }
        let ptr = match flat {
            None => base.ptr.clone(),
            Some(off) => {
                let ty = mlir::ptr(base.ty.dtype).map_err(|m| self.err(m))?;
                let ptr = base.ptr.clone();
                self.def(|result| Inst::AddPtr { result, ptr, offset: off, ty })
            }
        };
        self.env.next_view += 1;
        let t = TensorRef { key: usize::MAX - self.env.next_view, ty, ptr, ..base.clone() };
        let mut shape = Vec::new();
        for d in &t.ty.shape.clone() {
            let i = self.dim_idx(d)?;
            shape.push(self.idx(&i));
        }
        let ssa = self.named(&format!("{}_slice_view", t.name));
        let info = ViewInfo { ssa, shape, strides: parent.strides.clone(), layout: parent.layout };
        self.record_view(&t, info)?;
        Ok(t)
    }

    /// Emits a `pto.make_tensor_view` of `base`'s pointer under the tensor type `ty` (a
    /// reinterpreting view such as `tensor.view`); returns the derived tensor.
    pub fn derive_view(&mut self, base: &TensorRef, ty: TensorType) -> Result<TensorRef, Diagnostic> {
        self.env.next_view += 1;
        let t = TensorRef { key: usize::MAX - self.env.next_view, ty, ..base.clone() };
        self.natural_view(&t)?;
        Ok(t)
    }

    /// Emits and records the view of `t` with its own shape, strides and layout, named
    /// `<tensor>_view`.
    pub(super) fn natural_view(&mut self, t: &TensorRef) -> Result<(), Diagnostic> {
        let mut info = self.compute_view(t)?;
        info.ssa = self.named(&format!("{}_view", t.name));
        self.record_view(t, info)
    }

    /// Emits the `pto.make_tensor_view` of `t` that `info` describes and records it as `t`'s
    /// local view.
    fn record_view(&mut self, t: &TensorRef, info: ViewInfo) -> Result<(), Diagnostic> {
        let vty = self.view_type(t)?;
        self.push(Self::view_inst(&info.ssa, &t.ptr, &info, vty));
        self.env.views.insert(t.key, info);
        Ok(())
    }

    // ----------------------------------------------------------------------------------
    // Tensor views
    // ----------------------------------------------------------------------------------

    pub(super) fn dim_idx(&mut self, d: &Expr) -> Result<Idx, Diagnostic> {
        Ok(match d.as_int() {
            Some(v) => Idx::Const(v),
            None => Idx::Ssa(self.scalar_as(d, MTy::Index)?),
        })
    }

    pub(super) fn compute_view(&mut self, t: &TensorRef) -> Result<ViewInfo, Diagnostic> {
        let rank = t.ty.rank();
        if rank == 0 {
            return Err(self.err(format!(
                "tensor '{}' has rank 0; pto tensor views need at least one dimension",
                t.name
            )));
        }
        let mut shape = Vec::new();
        for d in &t.ty.shape.clone() {
            shape.push(self.dim_idx(d)?);
        }
        let view = t.ty.view.clone();
        let explicit = view.as_ref().map(|v| v.stride.clone()).filter(|s| !s.is_empty());
        let col_vector = rank >= 2 && t.ty.shape[rank - 1].as_int() == Some(1) && view.is_none();
        let layout = t.ty.layout();
        let (strides, layout_s) = if let Some(st) = explicit {
            if st.len() != rank {
                return Err(self.err(format!(
                    "tensor '{}' has {} strides for rank {rank}",
                    t.name,
                    st.len()
                )));
            }
            let mut out = Vec::new();
            for s in &st {
                out.push(self.dim_idx(s)?);
            }
            (out, if layout == Layout::Dn { "dn" } else { "nd" })
        } else if col_vector || (layout == Layout::Dn && rank >= 2) {
            let mut out = vec![Idx::Const(1); rank];
            out[rank - 1] = shape[rank - 2].clone();
            let mut block = self.mul_idx(&shape[rank - 2], &shape[rank - 1]);
            for k in (0..rank - 2).rev() {
                out[k] = block.clone();
                block = self.mul_idx(&block, &shape[k]);
            }
            (out, "dn")
        } else if layout == Layout::Nz {
            return Err(
                self.err(format!("tensor '{}' has NZ layout; pto codegen supports ND and DN views", t.name))
            );
        } else {
            let mut out = vec![Idx::Const(1); rank];
            for k in (0..rank - 1).rev() {
                out[k] = self.mul_idx(&out[k + 1], &shape[k + 1]);
            }
            (out, "nd")
        };
        let shape_s: Vec<String> = shape.iter().map(|i| self.idx(i)).collect();
        let strides_s: Vec<String> = strides.iter().map(|i| self.idx(i)).collect();
        Ok(ViewInfo { ssa: String::new(), shape: shape_s, strides: strides_s, layout: layout_s })
    }

    /// The `pto.make_tensor_view` of `ptr` that `v` describes, named `ssa`.
    pub(super) fn view_inst(ssa: &str, ptr: &str, v: &ViewInfo, ty: PtoType) -> Inst {
        Inst::MakeTensorView {
            result: ssa.to_string(),
            ptr: ptr.to_string(),
            shape: v.shape.clone(),
            strides: v.strides.clone(),
            layout: v.layout,
            ty,
        }
    }

    /// The `!pto.tensor_view<?x…>` type of a tensor.
    pub fn view_type(&self, t: &TensorRef) -> Result<PtoType, Diagnostic> {
        Ok(mlir::tensor_view(t.ty.rank(), self.elem(t.ty.dtype)?))
    }

    /// The prologue (local) view of a tensor parameter.
    pub fn local_view(&mut self, t: &TensorRef) -> Result<String, Diagnostic> {
        match self.env.views.get(&t.key) {
            Some(v) => Ok(v.ssa.clone()),
            None => Err(self.err(format!("tensor '{}' has no local view", t.name))),
        }
    }

    /// The shape and stride operands of a tensor parameter's local view.
    pub fn view_operands(&self, t: &TensorRef) -> Result<(Vec<String>, Vec<String>), Diagnostic> {
        match self.env.views.get(&t.key) {
            Some(v) => Ok((v.shape.clone(), v.strides.clone())),
            None => Err(self.err(format!("tensor '{}' has no local view", t.name))),
        }
    }

    /// The element size in bytes of a tensor used remotely (sub-byte dtypes are rejected).
    pub(super) fn elem_bytes(&self, t: &TensorRef) -> Result<i64, Diagnostic> {
        if t.ty.dtype.bits() % 8 != 0 {
            return Err(self.err(format!(
                "remote access to '{}' needs a whole-byte element type, got {}",
                t.name, t.ty.dtype
            )));
        }
        Ok(t.ty.dtype.bytes() as i64)
    }

    /// Emits the inline CommContext peer-offset sequence, `pto.addptr` and the peer
    /// `pto.make_tensor_view` for remote operand `t` on rank `peer`; returns the view SSA.
    pub fn peer_view(&mut self, t: &TensorRef, peer: &Expr, op: &str) -> Result<String, Diagnostic> {
        if !t.dist {
            return Err(self.err(format!(
                "{op}: '{}' is not a DistributedTensor; only window-bound tensors can be addressed on a peer",
                t.name
            )));
        }
        let Some(ctx) = t.ctx.clone() else {
            return Err(self.err(format!(
                "{op}: distributed tensor '{}' has no CommContext parameter in kernel '{}'",
                t.name, self.func.name
            ))
            .with_note("run the pass pipeline (MaterializeDistTensorCtx appends one CommCtx parameter per DistributedTensor parameter)"));
        };
        let eb = self.elem_bytes(t)?;
        let peer_idx = self.scalar_as(peer, MTy::Index)?;
        let slot_rank = self.const_int(pld_runtime_abi::SLOT_RANK_PAIR as i64, MTy::Index);
        let slot_win = self.const_int(pld_runtime_abi::SLOT_WINDOWS_IN as i64, MTy::Index);
        let div = self.const_int(eb, MTy::Int(64));
        let pair = self.load_ctx_word(&ctx, slot_rank);
        let rk32 = self.convert("arith.trunci", &pair, MTy::Int(64), MTy::Int(32));
        let rk = self.convert("arith.index_cast", &rk32, MTy::Int(32), MTy::Index);
        let lbase = self.window_base(&ctx, &slot_win, &rk);
        let pbase = self.window_base(&ctx, &slot_win, &peer_idx);
        let dbytes = self.arith("arith.subi", &[&pbase, &lbase], MTy::Int(64));
        let delems = self.arith("arith.divsi", &[&dbytes, &div], MTy::Int(64));
        let delta = self.convert("arith.index_cast", &delems, MTy::Int(64), MTy::Index);
        let ty = mlir::ptr(t.ty.dtype).map_err(|m| self.err(m))?;
        let ptr = t.ptr.clone();
        let pptr = self.def(|result| Inst::AddPtr { result, ptr, offset: delta, ty });
        let info = match self.env.views.get(&t.key) {
            Some(v) => v.clone(),
            None => return Err(self.err(format!("tensor '{}' has no local view", t.name))),
        };
        let vty = self.view_type(t)?;
        Ok(self.def(|view| Self::view_inst(&view, &pptr, &info, vty)))
    }

    /// Loads `windowsIn[rank]` of CommContext `ctx` (`slot_win` is the index of `windowsIn[0]`).
    fn window_base(&mut self, ctx: &str, slot_win: &str, rank: &str) -> String {
        let off = self.arith("arith.addi", &[slot_win, rank], MTy::Index);
        self.load_ctx_word(ctx, off)
    }

    /// Loads the `i64` word at `offset` of CommContext `ctx`.
    fn load_ctx_word(&mut self, ctx: &str, offset: String) -> String {
        let (ptr, ptr_ty, ty) = (ctx.to_string(), PtoType::Ptr("i64"), MTy::Int(64));
        self.def(|result| Inst::LoadScalar { result, ptr, offset, ptr_ty, ty })
    }

    /// Emits a `pto.partition_view` of `view` (a view of `t`); returns `(ssa, type)`.
    ///
    /// Offsets are clamped at 0; a size of `None`-valued static dims prints `?`; static sizes
    /// are checked against static source dims (V7).
    pub fn partition(
        &mut self,
        view: &str,
        t: &TensorRef,
        offsets: &[Expr],
        sizes: &[Expr],
        hint: &str,
    ) -> Result<(String, PtoType), Diagnostic> {
        let sizes = self.sizes(sizes)?;
        self.partition_sized(view, t, offsets, &sizes, hint, 0)
    }

    /// Evaluates partition sizes once, so several views can share the same SSA values.
    pub fn sizes(&mut self, sizes: &[Expr]) -> Result<Vec<(String, Option<i64>)>, Diagnostic> {
        sizes.iter().map(|s| self.size(s)).collect()
    }

    /// [`FnCx::partition`] with sizes evaluated by [`FnCx::sizes`], whose innermost dim may end
    /// up to `tail_slack` elements past the tensor's extent (a padded FP16 tail read, rounded
    /// up to 32 bytes; 0 for every other partition).
    pub fn partition_sized(
        &mut self,
        view: &str,
        t: &TensorRef,
        offsets: &[Expr],
        sizes: &[(String, Option<i64>)],
        hint: &str,
        tail_slack: i64,
    ) -> Result<(String, PtoType), Diagnostic> {
        let rank = t.ty.rank();
        if offsets.len() != rank || sizes.len() != rank {
            return Err(self.err(format!(
                "partition of '{}' needs {rank} offsets and sizes, got {} and {}",
                t.name,
                offsets.len(),
                sizes.len()
            )));
        }
        let dims: Vec<Option<i64>> = sizes.iter().map(|(_, v)| *v).collect();
        let szs: Vec<&str> = sizes.iter().map(|(s, _)| s.as_str()).collect();
        let mut offs = Vec::new();
        for (k, (o, (_, sv))) in offsets.iter().zip(sizes).enumerate() {
            let (os, ov) = self.offset(o)?;
            let slack = if k + 1 == rank { tail_slack } else { 0 };
            if let Some(v) = *sv {
                if v <= 0 {
                    return Err(self.err(format!(
                        "partition of '{}' has size {v} in dimension {k}; sizes must be positive",
                        t.name
                    )));
                }
                if let Some(d) = t.ty.shape[k].as_int() {
                    if v.checked_add(ov.unwrap_or(0)).is_none_or(|end| end > d.saturating_add(slack)) {
                        return Err(self.err(format!(
                            "partition of '{}' exceeds dimension {k} (offset={}, size={v}, dim={d})",
                            t.name,
                            ov.unwrap_or(0)
                        )));
                    }
                }
            }
            offs.push(os);
        }
        let vty = self.view_type(t)?;
        let pty = mlir::partition_view(&dims, self.elem(t.ty.dtype)?);
        let name = self.named(hint);
        let sizes = szs.iter().map(|s| s.to_string()).collect();
        let (result, view) = (name.clone(), view.to_string());
        let ty = pty.clone();
        self.push(Inst::PartitionView { result, view, offsets: offs, sizes, view_ty: vty, ty, tail_slack });
        Ok((name, pty))
    }

    /// Sizes of a 2-D tile extent written into a rank-`rank` tensor: leading dims 1.
    pub fn tile_region(t: &TileType, rank: usize) -> Vec<Expr> {
        let v = t.effective_valid_shape();
        let mut out = vec![Expr::int(1); rank];
        let n = v.len().min(rank).min(2);
        for i in 0..n {
            out[rank - n + i] = v[v.len() - n + i].clone();
        }
        out
    }
}
