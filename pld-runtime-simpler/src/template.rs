//! Templates: the fixed text of every generated Python and C++ artifact lives in one file
//! under `templates/`, with named holes, and a typed struct per template (declared with
//! `template!`) fills them. The Rust code computes only what varies (names, argument lists,
//! the statements of an orchestrator body); the shape of each file is read in its template.
//!
//! Guarantees:
//! - A hole is `${name}` (`name`: ASCII letters, digits and `_`). A line that holds only a
//!   hole after its indentation is a *block hole*: every non-empty line of the value is written
//!   with that indentation (empty lines stay empty, a missing final newline is added), and an
//!   empty value removes the line. Any other hole is replaced in place by its value.
//! - Values are inserted as they are: a value's own text is never scanned for holes.
//! - Every hole of a template is a field of its struct and every field is a hole, and every
//!   `${` of a template opens a hole (checked for every template by this module's tests), so
//!   rendering leaves no hole unfilled.
//! - Rendering is pure: the same values give the same bytes.

/// Declares a template: a struct with one `&str` field per hole and a `render` method that
/// fills the file `templates/<file>` with them.
macro_rules! template {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident = $file:literal {
            $($(#[$fmeta:meta])* $field:ident),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name<'a> {
            $($(#[$fmeta])* pub $field: &'a str,)*
        }

        impl $name<'_> {
            /// The template's file under `templates/`.
            pub const FILE: &'static str = $file;
            /// The template's text.
            pub const TEXT: &'static str =
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/templates/", $file));
            /// The template's holes, one per field.
            pub const HOLES: &'static [&'static str] = &[$(stringify!($field)),*];

            /// The template with every hole filled.
            pub fn render(&self) -> String {
                $crate::template::fill(Self::TEXT, &[$((stringify!($field), self.$field)),*])
            }
        }
    };
}

pub(crate) use template;

/// The name of the hole `${name}` that `text` starts with, if it does.
fn hole_at(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("${")?;
    let end = rest.find('}')?;
    let name = &rest[..end];
    let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some(name)
}

/// Every hole of `text`, in order of appearance (repeats included).
pub fn holes(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = text[at..].find("${") {
        let start = at + i;
        match hole_at(&text[start..]) {
            Some(name) => {
                found.push(name);
                at = start + name.len() + 3;
            }
            None => at = start + 2,
        }
    }
    found
}

/// Writes `line` (without its newline) with every known hole replaced by its value.
fn fill_inline(line: &str, values: &[(&str, &str)], out: &mut String) {
    let mut at = 0;
    while let Some(i) = line[at..].find("${") {
        let start = at + i;
        let value = hole_at(&line[start..]).and_then(|n| values.iter().find(|(k, _)| *k == n));
        match value {
            Some((name, v)) => {
                out.push_str(&line[at..start]);
                out.push_str(v);
                at = start + name.len() + 3;
            }
            None => {
                out.push_str(&line[at..start + 2]);
                at = start + 2;
            }
        }
    }
    out.push_str(&line[at..]);
}

/// `text` with its holes filled from `values` (`(hole, value)`); see the module's rules.
pub fn fill(text: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(text.len() + values.iter().map(|(_, v)| v.len()).sum::<usize>());
    for line in text.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let rest = body.trim_start();
        let indent = &body[..body.len() - rest.len()];
        let block = hole_at(rest)
            .filter(|n| n.len() + 3 == rest.len())
            .and_then(|n| values.iter().find(|(k, _)| *k == n));
        if let Some((_, value)) = block {
            for l in value.split_inclusive('\n') {
                if l != "\n" {
                    out.push_str(indent);
                }
                out.push_str(l);
            }
            if !value.is_empty() && !value.ends_with('\n') {
                out.push('\n');
            }
            continue;
        }
        fill_inline(body, values, &mut out);
        out.push_str(newline);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Every template: `(file, text, holes)`.
    fn all() -> Vec<(&'static str, &'static str, &'static [&'static str])> {
        vec![
            crate::chip::all_templates(),
            crate::host_templates::all_templates(),
            crate::kernel::all_templates(),
            crate::runpy::all_templates(),
            crate::subworker::all_templates(),
            crate::variant::all_templates(),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    #[test]
    fn every_template_has_exactly_its_structs_holes() {
        for (file, text, fields) in all() {
            let in_text: BTreeSet<&str> = holes(text).into_iter().collect();
            let declared: BTreeSet<&str> = fields.iter().copied().collect();
            assert_eq!(in_text, declared, "templates/{file}: holes in the text vs fields of its struct");
            assert_eq!(text.matches("${").count(), holes(text).len(), "templates/{file}: a malformed hole");
        }
    }

    #[test]
    fn every_template_file_is_declared() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
        let on_disk: BTreeSet<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let declared: BTreeSet<String> = all().into_iter().map(|(f, _, _)| f.to_string()).collect();
        assert_eq!(on_disk, declared);
    }

    #[test]
    fn inline_holes_are_replaced_and_values_are_not_rescanned() {
        let t = "a ${x} b ${y}${x}\n$ {x} ${ x} ${unknown}\n";
        assert_eq!(fill(t, &[("x", "1"), ("y", "${x}")]), "a 1 b ${x}1\n$ {x} ${ x} ${unknown}\n");
    }

    #[test]
    fn block_holes_indent_each_line_and_vanish_when_empty() {
        let t = "head\n    ${body}\n  ${none}\ntail ${x}\n";
        assert_eq!(
            fill(t, &[("body", "a\n\nb"), ("none", ""), ("x", "!")]),
            "head\n    a\n\n    b\ntail !\n"
        );
        assert_eq!(fill(t, &[("body", "a\n"), ("none", "\n"), ("x", "")]), "head\n    a\n\ntail \n");
    }

    #[test]
    fn holes_are_listed_in_order_and_malformed_ones_skipped() {
        assert_eq!(holes("${a} ${b-c} ${} ${c}${a}"), ["a", "c", "a"]);
    }
}
