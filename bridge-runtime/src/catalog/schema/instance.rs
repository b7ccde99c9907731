//! What happens to incoming arguments before and during validation against a normalized
//! schema: optional `null`s dropped, problems keyed by parameter.

use crate::model::FieldError;
use serde_json::{Map, Value};

/// Removes, in place, every `null` that `instance` carries for an optional property, at any
/// depth, so that it counts as absent (agents often send `"note": null` for "no note").
///
/// A `null` is dropped where the schema declares the property, no alternative that declares it
/// lists it as `required`, and its schema does not itself admit `null` (a `serde_json::Value`
/// property keeps its `null`). `schema` is a normalized document: references are resolved
/// inside it; alternatives (`anyOf`, `allOf`) are all consulted. Everything else is left as it
/// is, for validation to judge.
pub fn drop_optional_nulls(schema: &Value, instance: &mut Value) {
    walk(schema, &[schema], instance, 0);
}

/// Guards against reference cycles that never reach an instance level.
const MAX_DEPTH: usize = 64;

fn walk(doc: &Value, schemas: &[&Value], instance: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let mut cands: Vec<&Map<String, Value>> = Vec::new();
    for s in schemas {
        candidates(doc, s, &mut cands, 0);
    }
    if cands.is_empty() {
        return;
    }
    match instance {
        Value::Object(map) => {
            let nulls: Vec<String> = map.iter().filter(|(_, v)| v.is_null()).map(|(k, _)| k.clone()).collect();
            for key in nulls {
                let declaring: Vec<&Map<String, Value>> =
                    cands.iter().copied().filter(|c| property(c, &key).is_some()).collect();
                let optional = !declaring.is_empty()
                    && declaring
                        .iter()
                        .all(|c| !required(c, &key) && property(c, &key).is_some_and(|p| !admits_null(doc, p)));
                if optional {
                    map.remove(&key);
                }
            }
            for (key, value) in map.iter_mut() {
                let subs: Vec<&Value> = cands
                    .iter()
                    .filter_map(|c| {
                        property(c, key).or_else(|| c.get("additionalProperties").filter(|a| a.is_object()))
                    })
                    .collect();
                if !subs.is_empty() {
                    walk(doc, &subs, value, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let subs: Vec<&Value> = cands
                    .iter()
                    .filter_map(|c| {
                        c.get("prefixItems")
                            .and_then(Value::as_array)
                            .and_then(|p| p.get(i))
                            .or_else(|| c.get("items").filter(|s| s.is_object()))
                    })
                    .collect();
                if !subs.is_empty() {
                    walk(doc, &subs, item, depth + 1);
                }
            }
        }
        _ => {}
    }
}

fn property<'a>(schema: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    schema.get("properties")?.as_object()?.get(key)
}

fn required(schema: &Map<String, Value>, key: &str) -> bool {
    schema.get("required").and_then(Value::as_array).is_some_and(|r| r.iter().any(|k| k == key))
}

/// `schema` and, through `$ref`, `allOf`, `anyOf` and `oneOf`, every schema an instance may
/// have to satisfy at the same level.
fn candidates<'a>(doc: &'a Value, schema: &'a Value, out: &mut Vec<&'a Map<String, Value>>, depth: usize) {
    let Value::Object(m) = schema else { return };
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(target) = m.get("$ref").and_then(Value::as_str).and_then(|r| resolve(doc, r)) {
        candidates(doc, target, out, depth + 1);
    }
    out.push(m);
    for keyword in ["allOf", "anyOf", "oneOf"] {
        for branch in m.get(keyword).and_then(Value::as_array).into_iter().flatten() {
            candidates(doc, branch, out, depth + 1);
        }
    }
}

/// A local reference (`#`, `#/…`) inside `doc`.
fn resolve<'a>(doc: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() { Some(doc) } else { doc.pointer(pointer) }
}

/// Whether `schema` (inside document `doc`) accepts `null`: an unconstrained schema, a `null`
/// type, an `enum` listing `null`, or an alternative that does.
pub fn admits_null(doc: &Value, schema: &Value) -> bool {
    admits_null_at(doc, schema, 0)
}

fn admits_null_at(doc: &Value, schema: &Value, depth: usize) -> bool {
    let m = match schema {
        Value::Bool(b) => return *b,
        Value::Object(m) => m,
        _ => return false,
    };
    if depth > MAX_DEPTH {
        return true;
    }
    if let Some(target) = m.get("$ref").and_then(Value::as_str).and_then(|r| resolve(doc, r))
        && !admits_null_at(doc, target, depth + 1)
    {
        return false;
    }
    if let Some(t) = m.get("type") {
        let ok = match t {
            Value::String(s) => s == "null",
            Value::Array(a) => a.iter().any(|x| x == "null"),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    if let Some(values) = m.get("enum").and_then(Value::as_array)
        && !values.iter().any(Value::is_null)
    {
        return false;
    }
    if let Some(all) = m.get("allOf").and_then(Value::as_array)
        && !all.iter().all(|b| admits_null_at(doc, b, depth + 1))
    {
        return false;
    }
    for keyword in ["anyOf", "oneOf"] {
        if let Some(any) = m.get(keyword).and_then(Value::as_array)
            && !any.iter().any(|b| admits_null_at(doc, b, depth + 1))
        {
            return false;
        }
    }
    true
}

/// Validates `args` with `validator` and keys each problem by the top-level parameter it is
/// about (GB-7.3-1): the first segment of the instance path, the missing property for
/// `required`, the unexpected property for `additionalProperties`.
pub fn field_errors(validator: &jsonschema::Validator, args: &Value) -> Vec<FieldError> {
    use jsonschema::error::ValidationErrorKind as K;
    let mut out: Vec<FieldError> = Vec::new();
    for err in validator.iter_errors(args) {
        let mut fields: Vec<String> = Vec::new();
        let mut segments = err.instance_path().iter().map(|seg| match seg {
            jsonschema::paths::LocationSegment::Property(p) => p.into_owned(),
            jsonschema::paths::LocationSegment::Index(i) => i.to_string(),
        });
        let top = segments.next();
        // Where inside the parameter, as a JSON pointer (`/children/0`); empty at its top.
        let inner: String = segments.map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1"))).collect();
        let mut message = describe(err.kind());
        match (err.kind(), top) {
            // Something missing or unexpected inside a parameter is that parameter's problem.
            (K::Required { property }, Some(top)) => {
                fields.push(top);
                message = format!("Missing required property `{}`", property.as_str().unwrap_or_default());
            }
            (K::AdditionalProperties { unexpected }, Some(top)) => {
                fields.push(top);
                message = format!("Unknown property `{}`", unexpected.join("`, `"));
            }
            (_, Some(top)) => fields.push(top),
            (K::Required { property }, None) => fields.push(property.as_str().unwrap_or_default().to_owned()),
            (K::AdditionalProperties { unexpected }, None) => fields.extend(unexpected.iter().cloned()),
            (_, None) => fields.push(String::new()),
        }
        if !inner.is_empty() {
            message = format!("{message} (at {inner})");
        }
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
        K::AnyOf { .. } | K::OneOfNotValid { .. } => "Matches none of the accepted shapes".to_owned(),
        K::Format { format } => format!("Must be a valid {format}"),
        other => format!("Does not satisfy the schema keyword `{}`", other.keyword()),
    }
}
