//! The JSON values of the orchestration description codegen writes and of the runtime
//! metadata `pld-runtime-simpler` writes, as `serde_json` values, and their one pretty-printer.
//!
//! Guarantees: object keys print in insertion order (`serde_json`'s `preserve_order`),
//! two-space indentation, strings escaped by `serde_json`; the same value always renders to
//! the same bytes, ending in one newline.

pub use serde_json::Value as Json;

/// A string value.
pub fn s(v: impl Into<String>) -> Json {
    Json::String(v.into())
}

/// An integer value.
pub fn int(v: i64) -> Json {
    Json::from(v)
}

/// A JSON object from `(key, value)` pairs, keys in the given order.
pub fn obj(fields: Vec<(&str, Json)>) -> Json {
    Json::Object(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// Pretty-prints `value` with two-space indentation and a trailing newline.
pub fn render(value: &impl serde::Serialize) -> String {
    // Serializing a value whose keys are strings cannot fail.
    let mut out = serde_json::to_string_pretty(value).unwrap_or_default();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_renders_escaped_and_ordered() {
        let j = obj(vec![
            ("b", int(1)),
            ("a", Json::Array(vec![s("x\"y\n"), Json::Null, Json::Bool(true)])),
            ("e", obj(vec![])),
        ]);
        assert_eq!(
            render(&j),
            "{\n  \"b\": 1,\n  \"a\": [\n    \"x\\\"y\\n\",\n    null,\n    true\n  ],\n  \"e\": {}\n}\n"
        );
    }
}
