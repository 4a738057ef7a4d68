//! A JSON value with ordered object keys and its deterministic pretty-printer, for the
//! orchestration description and the runtime metadata codegen writes.
//!
//! Guarantees: object keys print in insertion order, two-space indentation, strings escaped
//! per RFC 8259; the same value always renders to the same bytes.

/// A JSON value with ordered object keys.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<Json>),
    /// An object, keys in insertion order.
    Obj(Vec<(String, Json)>),
}

impl Json {
    /// A string value.
    pub(crate) fn s(v: impl Into<String>) -> Json {
        Json::Str(v.into())
    }

    /// Pretty-prints with two-space indentation.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out.push('\n');
        out
    }

    fn write(&self, out: &mut String, depth: usize) {
        let pad = |n: usize| "  ".repeat(n);
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(v) => out.push_str(&v.to_string()),
            Json::Str(s) => pld_ir::quote::push_json_string(s, out),
            Json::Arr(items) if items.is_empty() => out.push_str("[]"),
            Json::Arr(items) => {
                out.push_str("[\n");
                for (i, it) in items.iter().enumerate() {
                    out.push_str(&pad(depth + 1));
                    it.write(out, depth + 1);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(depth));
                out.push(']');
            }
            Json::Obj(fields) if fields.is_empty() => out.push_str("{}"),
            Json::Obj(fields) => {
                out.push_str("{\n");
                for (i, (k, v)) in fields.iter().enumerate() {
                    out.push_str(&pad(depth + 1));
                    pld_ir::quote::push_json_string(k, out);
                    out.push_str(": ");
                    v.write(out, depth + 1);
                    out.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(depth));
                out.push('}');
            }
        }
    }
}

/// A JSON object from `(key, value)` pairs, keys in the given order.
pub(crate) fn obj(fields: Vec<(&str, Json)>) -> Json {
    Json::Obj(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_renders_escaped_and_ordered() {
        let j = obj(vec![
            ("b", Json::Int(1)),
            ("a", Json::Arr(vec![Json::s("x\"y\n"), Json::Null, Json::Bool(true)])),
            ("e", Json::Obj(vec![])),
        ]);
        assert_eq!(
            j.render(),
            "{\n  \"b\": 1,\n  \"a\": [\n    \"x\\\"y\\n\",\n    null,\n    true\n  ],\n  \"e\": {}\n}\n"
        );
    }
}
