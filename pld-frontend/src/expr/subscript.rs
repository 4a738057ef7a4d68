//! Subscripts: `x[i]`, `x[i, j]`, `x[a:b, :]` on tensors and tiles lower to the registered
//! slice / element-read ops (with a reshape dropping integer-indexed dims), and `a[i]` on
//! arrays to `array.get_element`; a subscript whose op is not registered is a diagnostic.

use crate::body::FnCx;
use crate::util::span_of;
use pld_ir::{registry, Attr, BinOp, Diagnostic, Expr, ExprKind, Span, Type};
use rustpython_parser::ast;

impl FnCx<'_, '_> {
    /// `x[i]`, `x[i, j]`, `x[a:b, :]` on tensors and tiles: a slice or an element read.
    pub(super) fn subscript(&mut self, s: &ast::ExprSubscript, span: Span) -> Result<Expr, ()> {
        let file = self.file();
        let base = self.expr(&s.value)?;
        let ty = base.ty(&self.values);
        if let Type::Array(_) = ty {
            return self.array_get(base, s, span);
        }
        let (prefix, shape) = match &ty {
            Type::Tensor(t) => ("tensor", t.shape.clone()),
            Type::DistTensor(d) => ("tensor", d.tensor.shape.clone()),
            Type::Tile(t) => ("tile", t.shape.clone()),
            Type::Tuple(_) => {
                self.error(
                    Diagnostic::error(span, "indexing a tuple value is not supported")
                        .with_note("unpack it instead: `a, b = ...`"),
                );
                return Err(());
            }
            other => {
                self.error(Diagnostic::error(
                    span,
                    format!("subscript requires a tensor or tile, got {}", other.kind_name()),
                ));
                return Err(());
            }
        };
        let idx: Vec<&ast::Expr> = match s.slice.as_ref() {
            ast::Expr::Tuple(t) => t.elts.iter().collect(),
            other => vec![other],
        };
        if idx.len() > shape.len() {
            self.error(Diagnostic::error(
                span,
                format!("subscript has {} indices but the {prefix} has rank {}", idx.len(), shape.len()),
            ));
            return Err(());
        }
        let mut offsets = Vec::new();
        let mut extents = Vec::new();
        let mut drop = Vec::new();
        let mut any_slice = false;
        for (d, dim) in shape.iter().enumerate() {
            let Some(ix) = idx.get(d) else {
                offsets.push(Expr::int(0).at(span));
                extents.push(dim.clone());
                continue;
            };
            if let ast::Expr::Slice(sl) = ix {
                any_slice = true;
                if sl.step.is_some() {
                    self.error(Diagnostic::error(span_of(file, *ix), "slice steps are not supported"));
                    return Err(());
                }
                let lo = match &sl.lower {
                    Some(l) => self.expr(l)?,
                    None => Expr::int(0).at(span),
                };
                let hi = match &sl.upper {
                    Some(u) => self.expr(u)?,
                    None => dim.clone(),
                };
                extents.push(Expr::binary(BinOp::Sub, hi, lo.clone()).at(span_of(file, *ix)));
                offsets.push(lo);
            } else {
                offsets.push(self.expr(ix)?);
                extents.push(Expr::int(1).at(span));
                drop.push(d as i64);
            }
        }
        if !any_slice && idx.len() == shape.len() {
            let op = format!("{prefix}.read");
            let op = self.subscript_op(&op, span)?;
            return self.build_op(
                op,
                vec![base, Expr::new(ExprKind::Tuple(offsets), span)],
                Vec::new(),
                span,
            );
        }
        let op = format!("{prefix}.slice");
        let def = registry().lookup(&op);
        let with_drop_attr = def.is_some_and(|d| d.attr_def("drop_dims").is_some());
        let mut attrs = Vec::new();
        if !drop.is_empty() && with_drop_attr {
            attrs.push(("drop_dims".to_string(), Attr::Ints(drop.clone())));
        }
        let kept: Vec<Expr> = extents
            .iter()
            .enumerate()
            .filter(|(d, _)| !drop.contains(&(*d as i64)))
            .map(|(_, e)| e.clone())
            .collect();
        let args =
            vec![base, Expr::new(ExprKind::Tuple(extents), span), Expr::new(ExprKind::Tuple(offsets), span)];
        let op = self.subscript_op(&op, span)?;
        let sliced = self.build_op(op, args, attrs, span)?;
        if drop.is_empty() || with_drop_attr {
            return Ok(sliced);
        }
        // The slice op has no drop_dims: drop the integer-indexed dims with a reshape.
        let reshape = format!("{prefix}.reshape");
        let reshape = self.subscript_op(&reshape, span)?;
        self.build_op(reshape, vec![sliced, Expr::new(ExprKind::Tuple(kept), span)], Vec::new(), span)
    }

    /// `arr[i]` on an on-core array: `array.get_element(arr, i)` (one integer index, no slices).
    fn array_get(&mut self, base: Expr, s: &ast::ExprSubscript, span: Span) -> Result<Expr, ()> {
        let index = self.array_index(s.slice.as_ref())?;
        let op = self.subscript_op("array.get_element", span)?;
        self.build_op(op, vec![base, index], Vec::new(), span)
    }

    /// The single index of an array subscript: a slice or several indices is a diagnostic.
    pub fn array_index(&mut self, slice: &ast::Expr) -> Result<Expr, ()> {
        let sspan = span_of(self.file(), slice);
        match slice {
            ast::Expr::Slice(_) => {
                self.error(
                    Diagnostic::error(sspan, "a pl.Array takes one integer index, not a slice")
                        .with_note("read or write one element at a time: arr[i]"),
                );
                Err(())
            }
            ast::Expr::Tuple(t) => {
                self.error(Diagnostic::error(
                    sspan,
                    format!("a pl.Array is 1-D and takes one index, got {}", t.elts.len()),
                ));
                Err(())
            }
            other => self.expr(other),
        }
    }

    /// `op`, the op a subscript lowers to, when it is registered; else the error saying so.
    fn subscript_op<'o>(&mut self, op: &'o str, span: Span) -> Result<&'o str, ()> {
        if registry().lookup(op).is_none() {
            self.error(Diagnostic::error(
                span,
                format!("subscripts need the `{op}` op, which is not registered"),
            ));
            return Err(());
        }
        Ok(op)
    }
}
