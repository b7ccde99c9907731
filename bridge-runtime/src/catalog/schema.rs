//! Schemas that real MCP clients accept (issue #2 §3, rmcp #179/#445/#532):
//! every root is `{"type":"object","properties":{…}}`, no `$schema`, no non-standard `format`
//! (`uint32`, `double`, …; bounds become `minimum`/`maximum`), subschemas inlined.

use crate::model::FieldError;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

/// The optional concurrency parameter every non-read-only window action takes (GB-5.5-1).
pub const EXPECTED_VERSION: &str = "expectedVersion";

/// `format` values defined by JSON Schema 2020-12; anything else is dropped.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// `{"type":"object","properties":{}}`.
pub fn empty_object() -> Map<String, Value> {
    let Value::Object(m) = json!({"type": "object", "properties": {}}) else { unreachable!() };
    m
}

/// The schema of `T`, draft 2020-12, subschemas inlined, normalized (see module docs).
pub fn schema_for<T: schemars::JsonSchema>() -> Value {
    generate::<T>(SchemaSettings::draft2020_12().for_deserialize())
}

/// The schema of what `T` serializes to (a result, a descriptor): like [`schema_for`], but with
/// serialization semantics, so every key `T` always writes is `required`, `null`able ones
/// included.
pub fn output_schema_for<T: schemars::JsonSchema>() -> Value {
    generate::<T>(SchemaSettings::draft2020_12().for_serialize())
}

/// Subschemas inlined, no `$schema`/`title` at the root, non-standard formats normalized.
fn generate<T: schemars::JsonSchema>(settings: SchemaSettings) -> Value {
    let generator = settings
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut v = generator.into_root_schema_for::<T>().to_value();
    normalize(&mut v);
    if let Value::Object(m) = &mut v {
        m.remove("$schema");
        m.remove("title");
    }
    v
}

/// The schema of a parameter struct `P`, forced into an object root with `properties`.
/// A `P` whose schema is not an object (a unit struct, `()`) yields the empty object.
pub fn object_schema_for<P: schemars::JsonSchema>() -> Map<String, Value> {
    match schema_for::<P>() {
        Value::Object(mut m) if m.get("type") == Some(&Value::from("object")) => {
            m.entry("properties").or_insert_with(|| Value::Object(Map::new()));
            m.remove("description");
            m
        }
        _ => empty_object(),
    }
}

/// Adds `expectedVersion: {"type":"integer", …}` to an object schema, not required.
pub fn add_expected_version(schema: &mut Map<String, Value>) {
    let props = schema.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(p) = props {
        p.insert(
            EXPECTED_VERSION.to_owned(),
            json!({
                "type": "integer",
                "description": "The window's `version` (from app://windows) this call is based on. \
                                If the window has changed since, the call is rejected with stale_state."
            }),
        );
    }
}

/// The ToolResult envelope with `result`'s schema inside (GB-12.3-4). Permissive (no
/// `required`, no `additionalProperties: false`) so that clients that check error objects
/// against it do not reject them (OQ-GB-18).
pub fn tool_result_envelope(result: Option<Value>) -> Map<String, Value> {
    let mut props = Map::new();
    props.insert("message".into(), json!({"type": "string", "description": "Human-readable outcome of the action"}));
    props.insert(
        "openedWindowIds".into(),
        json!({"type": "array", "items": {"type": "string"},
               "description": "Ids of the windows this call opened"}),
    );
    if let Some(mut r) = result {
        if let Value::Object(m) = &mut r {
            m.remove("$schema");
        }
        props.insert("result".into(), r);
    }
    let mut m = Map::new();
    m.insert("type".into(), "object".into());
    m.insert("properties".into(), Value::Object(props));
    m
}

/// Rewrites a schema in place: drops non-standard `format`s (turning integer formats into
/// bounds) and recurses into every subschema.
pub fn normalize(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(f)) = m.get("format").cloned()
                && !STANDARD_FORMATS.contains(&f.as_str())
            {
                m.remove("format");
                if let Some((min, max)) = int_bounds(&f) {
                    m.entry("minimum").or_insert(min);
                    if let Some(max) = max {
                        m.entry("maximum").or_insert(max);
                    }
                }
            }
            for (_, child) in m.iter_mut() {
                normalize(child);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(normalize),
        _ => {}
    }
}

fn int_bounds(format: &str) -> Option<(Value, Option<Value>)> {
    Some(match format {
        "uint8" => (0.into(), Some(u8::MAX.into())),
        "uint16" => (0.into(), Some(u16::MAX.into())),
        "uint32" => (0.into(), Some(u32::MAX.into())),
        "uint64" | "uint" | "uint128" => (0.into(), None),
        "int8" => (i8::MIN.into(), Some(i8::MAX.into())),
        "int16" => (i16::MIN.into(), Some(i16::MAX.into())),
        "int32" => (i32::MIN.into(), Some(i32::MAX.into())),
        "int64" => (i64::MIN.into(), Some(i64::MAX.into())),
        _ => return None,
    })
}

/// Validates `args` with `validator` and keys each problem by the top-level parameter it is
/// about (GB-7.3-1): the first segment of the instance path, the missing property for
/// `required`, the unexpected property for `additionalProperties`.
pub fn field_errors(validator: &jsonschema::Validator, args: &Value) -> Vec<FieldError> {
    use jsonschema::error::ValidationErrorKind as K;
    let mut out: Vec<FieldError> = Vec::new();
    for err in validator.iter_errors(args) {
        let mut fields: Vec<String> = Vec::new();
        match err.kind() {
            K::Required { property } => {
                fields.push(property.as_str().unwrap_or_default().to_owned());
            }
            K::AdditionalProperties { unexpected } if err.instance_path().is_empty() => {
                fields.extend(unexpected.iter().cloned());
            }
            _ => {
                let first = err.instance_path().iter().next().map(|seg| match seg {
                    jsonschema::paths::LocationSegment::Property(p) => p.into_owned(),
                    jsonschema::paths::LocationSegment::Index(i) => i.to_string(),
                });
                fields.push(first.unwrap_or_default());
            }
        }
        let message = describe(err.kind());
        for field in fields {
            if !out.iter().any(|f| f.field == field && f.error == message) {
                out.push(FieldError::new(field, message.clone()));
            }
        }
    }
    out
}

/// A readable reason that never quotes the offending value: arguments may carry secrets (a
/// password typed into the wrong field) or megabytes of text, and error objects are echoed to
/// the agent and into logs (GB-4.5-2).
fn describe(kind: &jsonschema::error::ValidationErrorKind) -> String {
    use jsonschema::error::{TypeKind, ValidationErrorKind as K};
    match kind {
        K::Required { .. } => "Required".to_owned(),
        K::AdditionalProperties { .. } => "Unknown parameter".to_owned(),
        K::Type { kind: TypeKind::Single(t) } => format!("Must be of type {t}"),
        K::Type { kind: TypeKind::Multiple(ts) } => {
            format!("Must be one of the types {}", ts.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", "))
        }
        K::Minimum { limit } => format!("Must be at least {limit}"),
        K::Maximum { limit } => format!("Must be at most {limit}"),
        K::ExclusiveMinimum { limit } => format!("Must be greater than {limit}"),
        K::ExclusiveMaximum { limit } => format!("Must be less than {limit}"),
        K::MinLength { limit } => format!("Must be at least {limit} characters long"),
        K::MaxLength { limit } => format!("Must be at most {limit} characters long"),
        K::MinItems { limit } => format!("Must have at least {limit} items"),
        K::MaxItems { limit } => format!("Must have at most {limit} items"),
        K::Enum { options } => format!("Must be one of {options}"),
        K::Pattern { pattern } => format!("Must match the pattern {pattern}"),
        K::UniqueItems => "Items must be unique".to_owned(),
        other => format!("Does not satisfy the schema keyword `{}`", other.keyword()),
    }
}
