//! Small helpers over the Python syntax tree: spans and dotted names.
//!
//! Guarantees: spans are byte ranges of the original text in the parse's file; `dotted`
//! only returns a path for pure `a.b.c` chains of names.

use pld_ir::{FileId, Span};
use rustpython_parser::ast::{self, Ranged};

/// Span of any node with a range.
pub fn span_of<T: Ranged>(file: FileId, node: &T) -> Span {
    let r = node.range();
    Span::new(file, r.start().to_u32(), r.end().to_u32())
}

/// `a.b.c` for a chain of attribute accesses on a name.
pub fn dotted(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::Name(n) => Some(n.id.to_string()),
        ast::Expr::Attribute(a) => {
            let base = dotted(&a.value)?;
            Some(format!("{base}.{}", a.attr.as_str()))
        }
        _ => None,
    }
}

/// The integer value of a Python int literal, if it fits in `i64`.
pub fn big_to_i64(b: &ast::bigint::BigInt) -> Option<i64> {
    i64::try_from(b).ok()
}

/// Strips a leading `pl.` / `pld.` from a dotted path and returns the rest with the module.
pub fn split_module(path: &str) -> (&str, &str) {
    if let Some(rest) = path.strip_prefix("pl.") {
        ("pl", rest)
    } else if let Some(rest) = path.strip_prefix("pld.") {
        ("pld", rest)
    } else {
        ("", path)
    }
}
