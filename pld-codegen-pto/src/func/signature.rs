//! The signature and tensor-view prologue of [`FnCx`].
//!
//! Guarantees: the signature follows the runtime calling order (codegen.md §1.2, checklist C4):
//! tensor pointers, then scalars and CommContext pointers, then one `index` per dynamic shape
//! symbol; each tensor parameter gets its `pto.make_tensor_view` in the prologue.

use super::{sanitize, FnCx, TensorRef, Val};
use crate::mlir::{self, MTy};
use crate::pto::{print, PtoType};
use pld_ir::{Diagnostic, ExprKind, Type};
use std::collections::{HashMap, HashSet};

impl FnCx<'_> {
    pub(super) fn bind_params(&mut self) -> Result<Vec<(String, PtoType)>, Diagnostic> {
        let f = self.func;
        let mut tensors = Vec::new();
        let mut scalars = Vec::new();
        let mut dists = Vec::new();
        let mut ctxs = Vec::new();
        for (i, p) in f.params.iter().enumerate() {
            match f.values.ty(p.value) {
                Type::Tensor(_) => tensors.push(i),
                Type::DistTensor(_) => {
                    tensors.push(i);
                    dists.push(i);
                }
                Type::Scalar(_) => scalars.push(i),
                Type::CommCtx => {
                    scalars.push(i);
                    ctxs.push(i);
                }
                other => {
                    return Err(Diagnostic::error(
                        f.values.get(p.value).map_or(f.span, |d| d.span.or(f.span)),
                        format!(
                        "kernel '{}' parameter '{}' has type {}, which has no pto calling-convention slot",
                        f.name,
                        f.values.name(p.value),
                        other.kind_name()
                    ),
                    ))
                }
            }
        }
        if !ctxs.is_empty() && ctxs.len() != dists.len() {
            return Err(self.err(format!(
                "kernel '{}' has {} DistributedTensor parameters but {} CommCtx parameters; they must pair one to one",
                f.name,
                dists.len(),
                ctxs.len()
            )));
        }
        let mut sig = Vec::new();
        let mut arg_of = HashMap::new();
        for (n, &i) in tensors.iter().chain(scalars.iter()).enumerate() {
            let a = print::ssa(format_args!("arg{n}"));
            self.names.reserve(&a);
            arg_of.insert(i, a);
        }
        let ctx_of: HashMap<usize, String> =
            dists.iter().zip(&ctxs).map(|(d, c)| (*d, arg_of[c].clone())).collect();
        for &i in &tensors {
            let p = &f.params[i];
            let ty = f.values.ty(p.value);
            let Some(tt) = ty.as_tensor_like() else { continue };
            let a = arg_of[&i].clone();
            let ptr = mlir::ptr(tt.dtype).map_err(|m| self.err(m))?;
            sig.push((a.clone(), ptr));
            let t = TensorRef {
                name: sanitize(f.values.name(p.value)),
                param: i,
                key: i,
                ptr: a,
                ty: tt.clone(),
                dist: matches!(ty, Type::DistTensor(_)),
                ctx: ctx_of.get(&i).cloned(),
            };
            self.env.values.insert(p.value, Val::Tensor(t));
        }
        for &i in &scalars {
            let p = &f.params[i];
            let a = arg_of[&i].clone();
            match f.values.ty(p.value) {
                Type::CommCtx => {
                    sig.push((a.clone(), PtoType::Ptr("i64")));
                    self.env.values.insert(p.value, Val::Ctx { ssa: a });
                }
                Type::Scalar(d) => {
                    let t = MTy::of_scalar(*d).map_err(|m| self.err(m))?;
                    sig.push((a.clone(), PtoType::Scalar(t)));
                    self.env.values.insert(p.value, Val::Scalar { ssa: a, ty: t });
                }
                _ => {}
            }
        }
        let mut syms = Vec::new();
        for &i in &tensors {
            if let Some(tt) = f.values.ty(f.params[i].value).as_tensor_like() {
                pld_ir::Expr::collect_syms(&tt.shape, &mut syms);
            }
        }
        let base = tensors.len() + scalars.len();
        for (k, s) in syms.iter().enumerate() {
            let a = print::ssa(format_args!("arg{}", base + k));
            self.names.reserve(&a);
            sig.push((a.clone(), PtoType::Scalar(MTy::Index)));
            self.env.sym_params.insert(s.clone(), a);
        }
        Ok(sig)
    }

    pub(super) fn emit_views(&mut self) -> Result<(), Diagnostic> {
        let f = self.func;
        let mut used = HashSet::new();
        f.body.walk_exprs(&mut |e| {
            if let ExprKind::Var(v) = e.kind {
                used.insert(v);
            }
        });
        for p in &f.params {
            if !used.contains(&p.value) {
                continue;
            }
            let Some(Val::Tensor(t)) = self.env.values.get(&p.value).cloned() else { continue };
            self.natural_view(&t)?;
        }
        Ok(())
    }
}
