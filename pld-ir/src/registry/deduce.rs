//! Deduction: the generic checks of a call against its op record (arity, attribute names,
//! types and ABI-enum ranges, required attributes) and the context an op's deducer sees.

use super::{AttrDef, AttrDefault, AttrType, OpDef};
use crate::codes;
use crate::diag::Diagnostic;
use crate::expr::{Attr, Expr, ExprKind};
use crate::func::FunctionKind;
use crate::span::Span;
use crate::types::Type;
use crate::value::Values;
use std::borrow::Cow;

/// The compilation target, for target-gated rules (BF16 atomic add is A2/A3 only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Target {
    /// Ascend910B (A2/A3): the default.
    #[default]
    A2A3,
    /// A5.
    A5,
}

impl Target {
    /// `a2a3` / `a5`.
    pub fn name(self) -> &'static str {
        match self {
            Target::A2A3 => "a2a3",
            Target::A5 => "a5",
        }
    }
    /// Parses `a2a3` / `a5`.
    pub fn from_name(s: &str) -> Option<Target> {
        match s {
            "a2a3" => Some(Target::A2A3),
            "a5" => Some(Target::A5),
            _ => None,
        }
    }
}

/// Where a call is being built: what the deducer may consult besides its arguments.
#[derive(Clone, Copy, Debug)]
pub struct DeduceEnv<'a> {
    /// The value arena of the enclosing function, to type `Var` arguments.
    pub values: &'a Values,
    /// The compilation target.
    pub target: Target,
    /// The kind of the enclosing function, when known.
    pub func_kind: Option<FunctionKind>,
}

impl<'a> DeduceEnv<'a> {
    /// An environment over `values` with the default target.
    pub fn new(values: &'a Values) -> DeduceEnv<'a> {
        DeduceEnv { values, target: Target::default(), func_kind: None }
    }
}

/// Everything a deducer sees about one call.
pub struct DeduceCx<'a> {
    /// The op.
    pub def: &'static OpDef,
    /// Positional arguments.
    pub args: &'a [Expr],
    /// Their types: borrowed from the value table or the call for variables and nested calls
    /// (no deep copy per deduction), computed only for other expressions.
    pub arg_types: Vec<Cow<'a, Type>>,
    /// Keyword attributes as written.
    pub attrs: &'a [(String, Attr)],
    /// The call's span.
    pub span: Span,
    /// The environment.
    pub env: &'a DeduceEnv<'a>,
}

impl DeduceCx<'_> {
    /// An error at the call, prefixed by nothing (deducers write the op name themselves).
    pub fn error(&self, message: impl Into<String>) -> Diagnostic {
        Diagnostic::error(self.span, message)
    }

    /// An error at argument `i` (falls back to the call's span).
    pub fn arg_error(&self, i: usize, message: impl Into<String>) -> Diagnostic {
        let span = self.args.get(i).map_or(self.span, |a| a.span.or(self.span));
        Diagnostic::error(span, message)
    }

    /// The type of argument `i` (`Unknown` when absent).
    pub fn ty(&self, i: usize) -> &Type {
        self.arg_types.get(i).map_or(&Type::Unknown, |t| t.as_ref())
    }

    /// Argument `i`, if present.
    pub fn arg(&self, i: usize) -> Option<&Expr> {
        self.args.get(i)
    }

    /// Number of positional arguments.
    pub fn arity(&self) -> usize {
        self.args.len()
    }

    /// The attribute as written.
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// The integer attribute, falling back to the declared default.
    pub fn attr_int(&self, name: &str) -> Option<i64> {
        self.attr(name)
            .and_then(Attr::as_int)
            .or_else(|| self.def.attr_def(name).and_then(|a| a.default).and_then(AttrDefault::as_int))
    }

    /// The boolean attribute, falling back to the declared default.
    pub fn attr_bool(&self, name: &str) -> Option<bool> {
        self.attr_int(name).map(|v| v != 0)
    }

    /// The string attribute, falling back to the declared default.
    pub fn attr_str(&self, name: &str) -> Option<String> {
        match self.attr(name) {
            Some(Attr::Str(s)) => Some(s.clone()),
            Some(_) => None,
            None => match self.def.attr_def(name).and_then(|a| a.default) {
                Some(AttrDefault::Str(s)) => Some(s.to_string()),
                _ => None,
            },
        }
    }
}

/// A deducer: verifies a call and computes its result type.
pub type DeduceFn = fn(&DeduceCx<'_>) -> Result<Type, Diagnostic>;

/// Validates a call's arity and attributes against `def`, then runs its deducer.
///
/// Generic checks (in order): positional arity, unknown attribute, attribute value type,
/// ABI enum range, missing required attribute. Op-specific rules are the deducer's.
pub fn deduce(
    def: &'static OpDef,
    args: &[Expr],
    attrs: &[(String, Attr)],
    span: Span,
    env: &DeduceEnv<'_>,
) -> Result<Type, Diagnostic> {
    let (min, max) = def.arity();
    if args.len() < min || args.len() > max {
        let expect = if min == max { format!("{min}") } else { format!("{min} to {max}") };
        return Err(Diagnostic::error(
            span,
            format!(
                "{} takes {expect} positional argument{}, but got {}",
                def.name,
                if max == 1 { "" } else { "s" },
                args.len()
            ),
        )
        .with_code(codes::ARGUMENT_COUNT));
    }
    for (k, v) in attrs {
        let Some(a) = def.attr_def(k) else {
            let known: Vec<&str> = def.attrs.iter().map(|a| a.name).collect();
            let mut d = Diagnostic::error(span, format!("unknown kwarg '{k}' for operator '{}'", def.name))
                .with_code(codes::UNKNOWN_KWARG);
            d = d.with_note(if known.is_empty() {
                format!("{} takes no keyword attributes", def.name)
            } else {
                format!("known kwargs: {}", known.join(", "))
            });
            if let Some(help) = super::listing::did_you_mean(k, known.iter().copied()) {
                d = d.with_help(help);
            }
            return Err(d);
        };
        check_attr_value(def, a, v, span)?;
    }
    for a in def.attrs {
        if a.required && !attrs.iter().any(|(k, _)| k == a.name) {
            return Err(Diagnostic::error(span, format!("missing kwarg '{}' on {}", a.name, def.name))
                .with_code(codes::MISSING_ARGUMENT));
        }
    }
    let arg_types = args.iter().map(|e| arg_type(e, env.values)).collect();
    let cx = DeduceCx { def, args, arg_types, attrs, span, env };
    (def.deduce)(&cx).map_err(|d| {
        let code = d.code().unwrap_or_else(|| codes::for_family(def.family, def.name));
        d.or_span(span).with_code(code)
    })
}

/// The type of argument `e`, borrowed where the IR stores it (a variable's declared type, a
/// nested call's carried type), else computed as [`Expr::ty`] does.
fn arg_type<'a>(e: &'a Expr, values: &'a Values) -> Cow<'a, Type> {
    match &e.kind {
        ExprKind::Var(v) => Cow::Borrowed(values.ty(*v)),
        ExprKind::Call(c) => Cow::Borrowed(&c.ty),
        _ => Cow::Owned(e.ty(values)),
    }
}

fn check_attr_value(def: &OpDef, a: &AttrDef, v: &Attr, span: Span) -> Result<(), Diagnostic> {
    let ok = matches!(
        (a.ty, v),
        (AttrType::Int | AttrType::Enum(_), Attr::Int(_))
            | (AttrType::Bool, Attr::Bool(_) | Attr::Int(0 | 1))
            | (AttrType::Str, Attr::Str(_))
            | (AttrType::DType, Attr::DType(_))
            | (AttrType::Ints, Attr::Ints(_))
    );
    if !ok {
        return Err(Diagnostic::error(
            span,
            format!(
                "kwarg '{}' for operator '{}' has incompatible type: expected {}, got {}",
                a.name,
                def.name,
                a.ty.name(),
                v.kind_name()
            ),
        )
        .with_code(codes::BAD_KWARG_VALUE));
    }
    if let (AttrType::Enum(kind), Attr::Int(n)) = (a.ty, v) {
        if kind.member_name(*n).is_none() {
            return Err(Diagnostic::error(
                span,
                format!("{} {} must be {} (got int {n})", def.name, a.name, kind.describe_members()),
            )
            .with_code(codes::BAD_KWARG_VALUE));
        }
    }
    Ok(())
}
