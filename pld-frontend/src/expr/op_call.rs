//! Op-call argument binding: a DSL op name resolves through the registry (canonical names,
//! aliases, `pl.`-prefixed spellings, overloads dispatched on the first argument's type),
//! positional and keyword arguments bind to the op's parameters in IR order or to its
//! keyword-only attributes (ABI enum members as their pinned integers), an attribute the record
//! says the assignment names is filled from it when not given, and a wrong call is reported
//! once with the op's signature as a note.

use super::{const_attr, enum_like_member};
use crate::body::FnCx;
use crate::consts::enum_path;
use crate::util::{dotted, span_of};
use pld_ir::registry::{AttrDef, AttrType, Overload};
use pld_ir::{registry, Attr, Diagnostic, Expr, OpDef, Span};
use rustpython_parser::ast;

/// A resolved DSL op name.
pub(super) enum Resolved {
    Op(&'static OpDef),
    Overload(&'static Overload),
}

pub(super) fn resolve(path: &str) -> Option<Resolved> {
    let reg = registry();
    let mut candidates = vec![path];
    if let Some(rest) = path.strip_prefix("pl.") {
        candidates.push(rest);
    }
    for c in candidates {
        if let Some(o) = reg.overload(c) {
            return Some(Resolved::Overload(o));
        }
        if let Some(d) = reg.lookup(c) {
            return Some(Resolved::Op(d));
        }
    }
    None
}

impl FnCx<'_, '_> {
    /// Binds positional and keyword arguments to `def`'s schema and builds the call.
    /// `first`: the first positional argument when the caller already lowered it (overload
    /// dispatch), so nested overloaded calls are lowered once, not exponentially often.
    pub(super) fn op_call(
        &mut self,
        def: &'static OpDef,
        c: &ast::ExprCall,
        mut first: Option<Expr>,
        span: Span,
    ) -> Result<Expr, ()> {
        let file = self.file();
        // The name of the assignment this call is the right-hand side of, for an attribute the
        // record says it names (`buf = pld.alloc_window_buffer(…)`); taken before the arguments
        // are lowered, so a call nested in them never sees it.
        let assigned =
            if def.attrs.iter().any(|a| a.from_assignment) { self.pending_name.take() } else { None };
        let mut slots: Vec<Option<Expr>> = vec![None; def.params.len()];
        let mut extra = Vec::new();
        let mut ok = true;
        for (i, a) in c.args.iter().enumerate() {
            if i == 0 {
                if let Some(e) = first.take() {
                    match slots.first_mut() {
                        Some(slot) => *slot = Some(e),
                        None => extra.push(e),
                    }
                    continue;
                }
            }
            if let ast::Expr::Starred(_) = a {
                self.error(Diagnostic::error(span_of(file, a), "`*args` is not supported in op calls"));
                ok = false;
                continue;
            }
            match self.expr(a) {
                Ok(e) if i < slots.len() => slots[i] = Some(e),
                Ok(e) => extra.push(e),
                Err(()) => ok = false,
            }
        }
        let mut attrs: Vec<(String, Attr)> = Vec::new();
        for kw in &c.keywords {
            let kspan = span_of(file, kw);
            let Some(k) = kw.arg.as_deref() else {
                self.error(Diagnostic::error(kspan, "`**kwargs` is not supported in op calls"));
                ok = false;
                continue;
            };
            if let Some(j) = def.params.iter().position(|p| p.named(k)) {
                if slots[j].is_some() {
                    self.error(Diagnostic::error(
                        kspan,
                        format!("argument `{}` of {} is given twice", def.params[j].name, def.name),
                    ));
                    ok = false;
                    continue;
                }
                match self.expr(&kw.value) {
                    Ok(e) => slots[j] = Some(e),
                    Err(()) => ok = false,
                }
            } else if let Some(a) = def.attr_def(k) {
                match self.attr_value(def, a, &kw.value) {
                    Ok(v) => attrs.push((k.to_string(), v)),
                    Err(()) => ok = false,
                }
            } else {
                let mut known: Vec<&str> = def.params.iter().map(|p| p.name).collect();
                known.extend(def.attrs.iter().map(|a| a.name));
                let note = if known.is_empty() {
                    format!("{} takes no keyword arguments", def.name)
                } else {
                    format!("known keyword arguments: {}", known.join(", "))
                };
                let help = pld_ir::registry::listing::did_you_mean(k, known.iter().copied());
                self.error(
                    Diagnostic::error(kspan, format!("unknown kwarg '{k}' for operator '{}'", def.name))
                        .with_code(pld_ir::codes::UNKNOWN_KWARG)
                        .with_note(note)
                        .with_help_opt(help),
                );
                ok = false;
            }
        }
        if !ok {
            return Err(());
        }
        // Arguments must fill a prefix of the parameters that covers every required one.
        let filled = slots.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
        let missing: Vec<String> =
            def.params[filled..].iter().filter(|p| !p.optional).map(|p| format!("`{}`", p.name)).collect();
        if !missing.is_empty() && extra.is_empty() {
            let (noun, list) = match missing.split_last() {
                Some((last, rest)) if !rest.is_empty() => {
                    ("arguments", format!("{} and {last}", rest.join(", ")))
                }
                _ => ("argument", missing.join("")),
            };
            self.error(
                Diagnostic::error(span, format!("missing {noun} {list} of {}", def.name))
                    .with_code(pld_ir::codes::MISSING_ARGUMENT)
                    .with_note(signature(def)),
            );
            return Err(());
        }
        let mut args = Vec::new();
        for (j, s) in slots.into_iter().take(filled).enumerate() {
            match s {
                Some(e) => args.push(e),
                None => {
                    self.error(
                        Diagnostic::error(
                            span,
                            format!("missing argument `{}` of {}", def.params[j].name, def.name),
                        )
                        .with_code(pld_ir::codes::MISSING_ARGUMENT)
                        .with_note(signature(def)),
                    );
                    return Err(());
                }
            }
        }
        args.extend(extra);
        for a in def.attrs.iter().filter(|a| a.from_assignment) {
            if attrs.iter().any(|(k, _)| k == a.name) {
                continue;
            }
            let Some(name) = &assigned else {
                // A bare call, or one in a tuple assignment: nothing names it.
                let written = dotted(c.func.as_ref()).unwrap_or_else(|| def.name.to_string());
                self.error(Diagnostic::error(
                    span,
                    format!(
                        "{written} must appear as the RHS of a simple assignment (`x = {written}(...)`), whose name gives its `{}`",
                        a.name
                    ),
                ));
                return Err(());
            };
            attrs.push((a.name.to_string(), Attr::Str(name.clone())));
        }
        // Declaration order of attributes.
        attrs.sort_by_key(|(k, _)| def.attrs.iter().position(|a| a.name == k).unwrap_or(usize::MAX));
        self.build_op(def.name, args, attrs, span)
    }

    fn attr_value(&mut self, def: &OpDef, attr: &AttrDef, v: &ast::Expr) -> Result<Attr, ()> {
        let (name, span) = (attr.name, span_of(self.file(), v));
        if let Some(member) = dotted(v).as_deref().and_then(enum_like_member) {
            return Ok(Attr::Str(member.to_string()));
        }
        // A member of another ABI enum carries a valid integer of the wrong meaning
        // (`op=pld.WaitCmp.Ge` is NotifyOp.Set's 1): reject it before it becomes that integer.
        if let (AttrType::Enum(want), Some((got, member))) =
            (attr.ty, dotted(v).as_deref().and_then(enum_path))
        {
            if got != want {
                self.error(
                    Diagnostic::error(
                        span,
                        format!(
                            "kwarg '{name}' for operator '{}' takes a pld.{} member, got pld.{}.{member}",
                            def.name,
                            want.name(),
                            got.name()
                        ),
                    )
                    .with_note(format!("members: {}", want.describe_members())),
                );
                return Err(());
            }
        }
        let e = self.expr(v)?;
        match const_attr(&e) {
            Some(a) => Ok(a),
            None => {
                self.error(Diagnostic::error(
                    span,
                    format!("kwarg '{name}' for operator '{}' must be a compile-time constant", def.name),
                ));
                Err(())
            }
        }
    }
}

/// `op(a, b[, c])`: an op's parameters in IR order, optional ones bracketed.
fn signature(def: &OpDef) -> String {
    let params: Vec<String> = def
        .params
        .iter()
        .map(|p| if p.optional { format!("[{}]", p.name) } else { p.name.to_string() })
        .collect();
    format!("{}({})", def.name, params.join(", "))
}
