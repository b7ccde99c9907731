//! Canonical JSON: the one deterministic text form of a JSON value, used where text must not
//! depend on map order or on serde_json's features — the exported files (`export`) and the
//! idempotency digest of companion create params (OQ-CP-16).

use serde_json::{Map, Value};

/// `value` with every object's keys in sorted (byte) order at every level, whatever map type
/// serde_json was built with (`preserve_order` keeps insertion order).
pub(crate) fn sorted_keys(value: Value) -> Value {
    match value {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted_keys(v))).collect::<Map<_, _>>())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sorted_keys).collect()),
        other => other,
    }
}

/// Canonical JSON text of `value`: keys sorted at every level, values as given (an omitted key
/// differs from an explicit `null`, `1` from `1.0`). `pretty`: two-space indentation (exported
/// files); otherwise no whitespace at all (digests). Never fails (a [`Value`] always encodes).
pub(crate) fn canonical_json(value: &Value, pretty: bool) -> String {
    let value = sorted_keys(value.clone());
    let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) };
    text.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_at_every_level() {
        let v = json!({"b": 1, "a": {"d": [{"z": 1, "y": 2}], "c": 3}});
        assert_eq!(canonical_json(&v, false), r#"{"a":{"c":3,"d":[{"y":2,"z":1}]},"b":1}"#);
        assert_eq!(
            canonical_json(&v, true),
            "{\n  \"a\": {\n    \"c\": 3,\n    \"d\": [\n      {\n        \"y\": 2,\n        \"z\": 1\n      }\n    ]\n  },\n  \"b\": 1\n}"
        );
    }

    #[test]
    fn values_stay_as_given() {
        assert_ne!(canonical_json(&json!({"a": 1}), false), canonical_json(&json!({"a": 1.0}), false));
        assert_ne!(canonical_json(&json!({}), false), canonical_json(&json!({"a": null}), false));
        assert_eq!(canonical_json(&json!({"k\"é": "\u{1}"}), false), "{\"k\\\"é\":\"\\u0001\"}");
    }
}
