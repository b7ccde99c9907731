//! Shared checks of the OpenRPC tests: the official OpenRPC 1.3 meta-schema (vendored in
//! `openrpc-meta/`, Draft 7, jsonschema crate), a `$ref` walker (pure schema validation does not
//! catch dangling references), and validators for the schemas a document publishes.

#![allow(dead_code)]

use serde_json::{Value, json};
use std::sync::LazyLock;

const OPENRPC_META: &str = include_str!("../../../openrpc-meta/openrpc-1.3.schema.json");
const TOOLS_META: &str = include_str!("../../../openrpc-meta/json-schema-tools-meta-schema.json");

/// The JSON Schema meta-schema the OpenRPC schema references, registered under both spellings it
/// uses, interpreted as Draft 7.
static REGISTRY: LazyLock<jsonschema::Registry<'static>> = LazyLock::new(|| {
    let tools: Value = serde_json::from_str(TOOLS_META).expect("vendored json-schema-tools meta-schema");
    jsonschema::Registry::new()
        .add("https://meta.json-schema.tools/", jsonschema::Draft::Draft7.create_resource(tools.clone()))
        .and_then(|r| r.add("https://meta.json-schema.tools", jsonschema::Draft::Draft7.create_resource(tools)))
        .and_then(|r| r.prepare())
        .expect("registry")
});

/// The official OpenRPC 1.3 meta-schema as a Draft 7 validator.
static META: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
    let openrpc: Value = serde_json::from_str(OPENRPC_META).expect("vendored OpenRPC meta-schema");
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .with_registry(&REGISTRY)
        .build(&openrpc)
        .expect("OpenRPC meta-schema compiles")
});

pub fn meta_errors(doc: &Value) -> Vec<String> {
    META.iter_errors(doc).map(|e| format!("{} at {}", e, e.instance_path())).collect()
}

/// Every `$ref` in `doc` (anywhere) and whether it resolves inside `doc`.
pub fn dangling_refs(doc: &Value) -> Vec<String> {
    fn walk(v: &Value, doc: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, child) in m {
                    match (k.as_str(), child) {
                        ("$ref", Value::String(r)) => {
                            let ok = r.strip_prefix('#').is_some_and(|p| doc.pointer(p).is_some());
                            if !ok {
                                out.push(r.clone());
                            }
                        }
                        _ => walk(child, doc, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|c| walk(c, doc, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(doc, doc, &mut out);
    out
}

pub fn ref_count(doc: &Value) -> usize {
    doc.to_string().matches("\"$ref\"").count()
}

pub fn assert_valid(doc: &Value) {
    let errors = meta_errors(doc);
    assert!(errors.is_empty(), "not a valid OpenRPC 1.3 document: {errors:#?}");
    let dangling = dangling_refs(doc);
    assert!(dangling.is_empty(), "dangling $refs: {dangling:?}");
}

pub fn method<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["methods"].as_array().unwrap().iter().find(|m| m["name"] == name).unwrap_or_else(|| panic!("no {name}"))
}

/// Resolves a `{"$ref": "#/…"}` (or returns the schema itself).
pub fn deref<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => doc.pointer(&r[1..]).unwrap_or_else(|| panic!("dangling {r}")),
        None => schema,
    }
}

/// A validator for the schema at `schema`, whose `#/components/...` references resolve against
/// `doc` (the document's components are copied next to it).
pub fn validator_in(doc: &Value, schema: &Value) -> jsonschema::Validator {
    let root = json!({"allOf": [schema], "components": doc["components"].clone()});
    jsonschema::validator_for(&root).expect("documented schema compiles")
}

/// `doc` with the published result schemas closed (`additionalProperties: false` wherever an
/// object schema lists `properties`), so a key the engine returns but the document does not
/// describe fails the contract test. The published schemas stay open for additions (CP-7-4).
pub fn strict(doc: &Value) -> Value {
    fn close(v: &mut Value) {
        match v {
            Value::Object(m) => {
                if m.contains_key("properties") && !m.contains_key("additionalProperties") {
                    m.insert("additionalProperties".into(), false.into());
                }
                m.values_mut().for_each(close);
            }
            Value::Array(a) => a.iter_mut().for_each(close),
            _ => {}
        }
    }
    let mut doc = doc.clone();
    for name in [
        "RuntimeDescription",
        "CharacterList",
        "CapabilityPage",
        "StyleList",
        "RequestSnapshot",
        "CapabilityDescriptor",
        "Character",
        "Style",
    ] {
        close(&mut doc["components"]["schemas"][name]);
    }
    doc
}

pub fn result_validator(doc: &Value, name: &str) -> jsonschema::Validator {
    validator_in(doc, &method(doc, name)["result"]["schema"])
}

pub fn assert_fits(v: &jsonschema::Validator, value: &Value, what: &str) {
    let errors: Vec<String> = v.iter_errors(value).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "{what} does not fit its documented schema: {errors:#?}\n{value:#}");
}
