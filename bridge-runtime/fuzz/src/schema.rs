//! Fuzz target `schema`: the schema pipeline (`bridge_runtime::__internals::schema`) on arbitrary
//! JSON Schemas and instances (issue #10), shared by `fuzz_targets/schema.rs` and the corpus
//! replay test (`bridge-runtime/tests/it/fuzz_corpus.rs`, which includes this file by
//! `#[path]`; it uses only `bridge_runtime` and `serde_json`).
//!
//! Input: JSON. An array `[schema, instance, …]` is a schema and up to 8 instances; any other
//! value is a schema alone. Bytes that are not JSON are ignored.
//!
//! Properties, for both contracts (the rules of the pipeline's module docs):
//! - no panic;
//! - the normalized document has no `$schema`, `$id` or root `title`, no boolean subschema (but
//!   `additionalProperties`/`unevaluatedProperties: false`), no type array, no `const`, no
//!   `oneOf`, only JSON Schema 2020-12 `format`s, and no integer bound beyond ±(2^53 − 1);
//! - when every reference of the input resolves locally, every reference of the output does;
//! - normalizing again changes nothing;
//! - the object root ([`object_root`]) is `{"type":"object","properties":{…}}` with no root
//!   combinator, and forcing it again changes nothing;
//! - for a schema that compiles, each instance: [`normalize_arguments`] is idempotent, and
//!   [`field_errors`] is empty exactly when the validator accepts the normalized instance, each
//!   error with a message and none quoting a string value of the instance (GB-4.5-2).

#![allow(dead_code)]

use bridge_runtime::__internals::schema::{
    Contract, MAX_SAFE_INTEGER, STANDARD_FORMATS, field_errors, normalize, normalize_arguments, object_root, validator,
};
use bridge_runtime::model::FieldError;
use serde_json::Value;

/// Most instances checked per input.
pub const MAX_INSTANCES: usize = 8;

/// What one input did, for the replay test to see that the corpus reaches every path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchemaReport {
    /// Normalized schemas that compiled into a validator (per contract).
    pub compiled: usize,
    /// Instances the validator accepted.
    pub valid: usize,
    /// Instances it rejected, with field errors.
    pub invalid: usize,
}

/// Runs `data` (see the module docs) and panics, naming the property, when one breaks.
pub fn run(data: &[u8]) -> SchemaReport {
    let mut report = SchemaReport::default();
    let Ok(input) = serde_json::from_slice::<Value>(data) else { return report };
    let (doc, instances) = match input {
        Value::Array(mut items) if !items.is_empty() => {
            let doc = items.remove(0);
            items.truncate(MAX_INSTANCES);
            (doc, items)
        }
        other => (other, Vec::new()),
    };
    let refs_resolve = all_refs_resolve(&doc);
    for contract in [Contract::Input, Contract::Output] {
        let n = normalize(doc.clone(), contract);
        rules(&n, contract);
        if refs_resolve {
            assert!(all_refs_resolve(&n), "{contract:?}: a reference no longer resolves: {n}");
        }
        let again = normalize(n.clone(), contract);
        assert_eq!(again, n, "{contract:?}: normalizing twice changes the schema; once: {n}");

        let root = object_root(n.clone());
        assert_eq!(root.get("type"), Some(&Value::from("object")), "object root without type object");
        assert!(root.get("properties").is_some_and(Value::is_object), "object root without properties");
        for k in ["anyOf", "oneOf", "allOf"] {
            assert!(!root.contains_key(k), "object root keeps `{k}`");
        }
        assert_eq!(object_root(Value::Object(root.clone())), root, "object_root is not idempotent");

        let Ok(v) = validator(&n) else { continue };
        report.compiled += 1;
        for instance in &instances {
            let mut i = instance.clone();
            normalize_arguments(&n, &mut i);
            let mut twice = i.clone();
            normalize_arguments(&n, &mut twice);
            assert_eq!(twice, i, "normalize_arguments is not idempotent");
            let errors = field_errors(&v, &i, usize::MAX).fields;
            if v.is_valid(&i) {
                report.valid += 1;
                assert!(errors.is_empty(), "a valid instance has field errors: {errors:?}");
            } else {
                report.invalid += 1;
                assert!(!errors.is_empty(), "an invalid instance has no field errors: {i}");
                assert!(errors.iter().all(|e| !e.error.trim().is_empty()), "an error without a message: {errors:?}");
                quotes_no_value(&n, |x| field_errors(&v, x, usize::MAX).fields, &i);
            }
        }
    }
    report
}

/// A character the pipeline's messages never contain: string values are replaced by runs of it.
const MARK: char = '\u{2603}';

/// GB-4.5-2: field errors never quote a value (arguments may carry secrets). Checked by
/// validating the instance again with every string of 4 or more characters replaced by as many
/// [`MARK`]s: no run of 4 may reach a message, unless the schema or a key holds one (enum
/// options, patterns and paths are quoted). Comparing the values with the messages instead
/// would flag coincidences and teach the fuzzer the messages.
fn quotes_no_value(schema: &Value, errors_of: impl Fn(&Value) -> Vec<FieldError>, instance: &Value) {
    let mut keys_marked = false;
    let marked = mark(instance, &mut keys_marked);
    if keys_marked || schema.to_string().contains(MARK) {
        return;
    }
    let run: String = std::iter::repeat_n(MARK, 4).collect();
    for e in errors_of(&marked) {
        assert!(!e.error.contains(&run) && !e.field.contains(&run), "a field error quotes a value: {e:?}");
    }
}

/// `v` with every string of 4 or more characters replaced by as many [`MARK`]s; `keys_marked`
/// is set when a key already holds one.
fn mark(v: &Value, keys_marked: &mut bool) -> Value {
    match v {
        Value::String(s) if s.chars().count() >= 4 => Value::String(s.chars().map(|_| MARK).collect()),
        Value::Array(a) => Value::Array(a.iter().map(|x| mark(x, keys_marked)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    *keys_marked |= k.contains(MARK);
                    (k.clone(), mark(x, keys_marked))
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Keywords whose value is one subschema, a map of subschemas, a list of subschemas (as the
/// pipeline walks them).
const ONE: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
];
const MAP: &[&str] = &["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Every subschema of `v` with the keyword it sits under (`None` for the root).
fn each_subschema<'a>(v: &'a Value, under: Option<&'a str>, f: &mut dyn FnMut(&'a Value, Option<&'a str>)) {
    f(v, under);
    let Value::Object(m) = v else { return };
    for (k, child) in m {
        let k = k.as_str();
        if ONE.contains(&k) {
            match child {
                Value::Array(a) => a.iter().for_each(|c| each_subschema(c, Some(k), f)),
                c => each_subschema(c, Some(k), f),
            }
        } else if MAP.contains(&k) {
            if let Value::Object(c) = child {
                c.values().for_each(|c| each_subschema(c, Some(k), f));
            }
        } else if LIST.contains(&k)
            && let Value::Array(a) = child
        {
            a.iter().for_each(|c| each_subschema(c, Some(k), f));
        }
    }
}

/// The rules every normalized document obeys.
fn rules(n: &Value, contract: Contract) {
    let root = n.as_object().unwrap_or_else(|| panic!("{contract:?}: normalized to a non-object {n}"));
    for k in ["$schema", "$id", "title"] {
        assert!(!root.contains_key(k), "{contract:?}: root keeps `{k}`: {n}");
    }
    let limit = MAX_SAFE_INTEGER as f64;
    each_subschema(n, None, &mut |s, under| {
        let m = match s {
            Value::Object(m) => m,
            Value::Bool(_) if matches!(under, Some("additionalProperties" | "unevaluatedProperties")) => return,
            Value::Bool(b) => panic!("{contract:?}: boolean schema {b} under {under:?}: {n}"),
            // Not a schema at all (a hand-written mistake): left for the validator to refuse.
            _ => return,
        };
        let here = || Value::Object(m.clone());
        assert!(!m.contains_key("$schema"), "{contract:?}: nested `$schema`: {}", here());
        assert!(!m.get("type").is_some_and(Value::is_array), "{contract:?}: type array: {}", here());
        assert!(!m.contains_key("const"), "{contract:?}: `const` left: {}", here());
        assert!(!m.contains_key("oneOf"), "{contract:?}: `oneOf` left: {}", here());
        if let Some(Value::String(f)) = m.get("format") {
            assert!(STANDARD_FORMATS.contains(&f.as_str()), "{contract:?}: format {f:?} left: {}", here());
        }
        if m.get("type") == Some(&Value::from("integer")) {
            for k in ["minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"] {
                if let Some(x) = m.get(k).and_then(Value::as_f64) {
                    assert!((-limit..=limit).contains(&x), "{contract:?}: integer bound {k} {x}: {}", here());
                }
            }
        }
    });
}

/// Whether every `$ref` (in a schema position) is local and resolves in `doc`.
fn all_refs_resolve(doc: &Value) -> bool {
    let mut ok = true;
    each_subschema(doc, None, &mut |s, _| {
        if let Some(r) = s.get("$ref") {
            ok &= r.as_str().is_some_and(|r| resolves(doc, r));
        }
    });
    ok
}

fn resolves(doc: &Value, r: &str) -> bool {
    match r.strip_prefix('#') {
        Some("") => true,
        Some(pointer) => doc.pointer(pointer).is_some_and(|t| t.is_object() || t.is_boolean()),
        None => false,
    }
}
