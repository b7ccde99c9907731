//! What happens to incoming arguments before and during validation against a normalized
//! schema: optional `null`s dropped, integral floats made integers, problems keyed by parameter.

use crate::model::FieldError;
use crate::model::quote::clip;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// Brings incoming arguments, in place and at any depth, into the form their declared schema
/// and serde agree on, before validation:
///
/// - every `null` sent for an optional property is removed, so it counts as absent (agents
///   often send `"note": null` for "no note"). A `null` is dropped where the schema declares the
///   property, no alternative that declares it lists it as `required`, and its schema does not
///   itself admit `null` (a `serde_json::Value` property keeps its `null`);
/// - a number with no fractional part written as a float (`2.0`) where the schema wants an
///   integer (and not any number) becomes that integer: JSON Schema counts `2.0` as an integer,
///   and serde's integer types would refuse it.
///
/// `schema` is a normalized document: references are resolved inside it; alternatives
/// (`anyOf`, `allOf`) are all consulted. Everything else is left as it is, for validation to
/// judge.
pub fn normalize_arguments(schema: &Value, instance: &mut Value) {
    // Only `null`s and floats are ever changed: arguments without either (the common case) skip
    // the schema walk.
    if needs_normalizing(instance, 0) {
        walk(schema, &[schema], instance, 0);
    }
}

/// Whether `v` holds a `null` or a float anywhere (or nests deeper than a walk would check).
fn needs_normalizing(v: &Value, depth: usize) -> bool {
    match v {
        Value::Null => true,
        Value::Number(n) => n.is_f64(),
        _ if depth > MAX_INSTANCE_DEPTH => true,
        Value::Array(a) => a.iter().any(|x| needs_normalizing(x, depth + 1)),
        Value::Object(m) => m.values().any(|x| needs_normalizing(x, depth + 1)),
        _ => false,
    }
}

/// Deeper than serde_json parses (128 levels): the walk always reaches every instance level.
const MAX_INSTANCE_DEPTH: usize = 256;
/// Guards against reference cycles that never reach an instance level.
const MAX_REF_DEPTH: usize = 64;

fn walk(doc: &Value, schemas: &[&Value], instance: &mut Value, depth: usize) {
    if depth > MAX_INSTANCE_DEPTH {
        return;
    }
    let mut cands: Vec<&Map<String, Value>> = Vec::new();
    for s in schemas {
        candidates(doc, s, &mut cands, 0);
    }
    if cands.is_empty() {
        return;
    }
    let typed = |t: &str| cands.iter().any(|c| c.get("type").and_then(Value::as_str) == Some(t));
    if let Value::Number(n) = instance
        && n.is_f64()
        && let Some(f) = n.as_f64()
        && f.fract() == 0.0
        && f.abs() <= super::MAX_SAFE_INTEGER as f64
        && typed("integer")
        && !typed("number")
    {
        *instance = Value::from(f as i64);
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
    if depth > MAX_REF_DEPTH {
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
fn admits_null(doc: &Value, schema: &Value) -> bool {
    admits_null_at(doc, schema, 0)
}

fn admits_null_at(doc: &Value, schema: &Value, depth: usize) -> bool {
    let m = match schema {
        Value::Bool(b) => return *b,
        Value::Object(m) => m,
        _ => return false,
    };
    if depth > MAX_REF_DEPTH {
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

/// By default at most this many problems are listed for one call; the rest are counted
/// ([`FieldErrors::omitted`]). A hostile call with 160,000 unknown keys is answered with 20 of
/// them, not a 17 MB reply. Apps set their own with
/// [`BridgeBuilder::max_reported_problems`](crate::gui::BridgeBuilder::max_reported_problems).
pub const MAX_REPORTED_PROBLEMS: usize = 20;

/// The problems [`field_errors`] found: the first `max_problems` distinct ones, in the order
/// the validator reported them, and how many more distinct problems were left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldErrors {
    /// `{field, error}` items (GB-7.3-1), at most the `max_problems` asked for.
    pub fields: Vec<FieldError>,
    /// Distinct problems found beyond those listed.
    pub omitted: usize,
}

impl FieldErrors {
    /// No problem at all: the arguments are valid.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }
}

/// Validates `args` with `validator` and keys each problem by the top-level parameter it is
/// about (GB-7.3-1): the first segment of the instance path, the missing property for
/// `required`, the unexpected property for `additionalProperties`. A problem inside a
/// parameter says where (`(at /children/0)`). When a value fits none of the alternatives of an
/// `anyOf` (an enum with data, an untagged enum), the problem reported is that of the closest
/// alternative: the one whose first problem lies deepest in the value (the variant the caller
/// evidently meant), preferring a wrong value over a wrong type; when every alternative only
/// rejects the type, the message lists the accepted types.
///
/// Linear in the number of problems (duplicates are found by hashing); at most `max_problems`
/// (at least 1) are listed, the rest counted.
pub fn field_errors(validator: &jsonschema::Validator, args: &Value, max_problems: usize) -> FieldErrors {
    let max_problems = max_problems.max(1);
    let mut out = FieldErrors::default();
    if validator.is_valid(args) {
        return out;
    }
    let mut seen: HashSet<(String, String)> = HashSet::new();
    for err in validator.iter_errors(args) {
        let (path, message) = explain(&err);
        let mut segments = path.into_iter();
        let top = segments.next();
        // Where inside the parameter, as a JSON pointer (`/children/0`); empty at its top.
        // Property names are the peer's text: escaped and bounded ([`clip`]).
        let inner: String = segments.map(|s| format!("/{}", clip(&s.replace('~', "~0").replace('/', "~1")))).collect();
        let mut fields: Vec<String> = Vec::new();
        let mut message = message;
        use jsonschema::error::ValidationErrorKind as K;
        match (err.kind(), top) {
            (_, Some(top)) => fields.push(clip(&top).into_owned()),
            (K::Required { property }, None) => fields.push(property.as_str().unwrap_or_default().to_owned()),
            (K::AdditionalProperties { unexpected }, None) => {
                fields.extend(unexpected.iter().map(|u| clip(u).into_owned()))
            }
            (_, None) => fields.push(String::new()),
        }
        if !inner.is_empty() {
            message = format!("{message} (at {inner})");
        }
        for field in fields {
            if !seen.insert((field.clone(), message.clone())) {
                continue;
            }
            if out.fields.len() < max_problems {
                out.fields.push(FieldError::new(field, message.clone()));
            } else {
                out.omitted += 1;
            }
        }
    }
    out
}

/// The instance path (segments) and the message of one validation problem, descending into the
/// closest alternative of a failed `anyOf`/`oneOf`.
fn explain(err: &jsonschema::ValidationError<'_>) -> (Vec<String>, String) {
    use jsonschema::error::ValidationErrorKind as K;
    let path = segments(err);
    match err.kind() {
        K::AnyOf { context } | K::OneOfNotValid { context } => {
            // Every alternative wants another type of value right here: say which types.
            let wrong_type =
                |e: &jsonschema::ValidationError<'_>| matches!(e.kind(), K::Type { .. }) && segments(e) == path;
            let only_types = context.iter().all(|branch| branch.iter().any(wrong_type));
            if only_types && !context.is_empty() {
                let mut types: Vec<String> = Vec::new();
                for e in context.iter().flatten().filter(|e| wrong_type(e)) {
                    if let K::Type { kind } = e.kind() {
                        let t = match kind {
                            jsonschema::error::TypeKind::Single(t) => t.to_string(),
                            jsonschema::error::TypeKind::Multiple(ts) => {
                                ts.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(" or ")
                            }
                        };
                        if !types.contains(&t) {
                            types.push(t);
                        }
                    }
                }
                return (path, format!("Must be of type {}", types.join(" or ")));
            }
            // The alternative whose first problem lies deepest; then one that does not merely
            // reject the type; then the one with the fewest problems.
            let best = context.iter().filter(|branch| !branch.is_empty()).max_by_key(|branch| {
                let depth = branch.iter().map(|e| segments(e).len()).max().unwrap_or(0);
                let not_type = branch.iter().any(|e| !matches!(e.kind(), K::Type { .. }));
                (depth, not_type, std::cmp::Reverse(branch.len()))
            });
            match best.and_then(|b| b.iter().max_by_key(|e| segments(e).len())) {
                Some(e) => explain(e),
                None => (path, describe(err.kind())),
            }
        }
        K::Required { property } if !path.is_empty() => {
            (path, format!("Missing required property `{}`", property.as_str().unwrap_or_default()))
        }
        K::AdditionalProperties { unexpected } if !path.is_empty() => {
            // The first few names, escaped and bounded; the rest counted.
            const NAMED: usize = 5;
            let named: Vec<String> = unexpected.iter().take(NAMED).map(|u| format!("`{}`", clip(u))).collect();
            let more = match unexpected.len().saturating_sub(NAMED) {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            (path, format!("Unknown property {}{more}", named.join(", ")))
        }
        kind => (path, describe(kind)),
    }
}

fn segments(err: &jsonschema::ValidationError<'_>) -> Vec<String> {
    err.instance_path()
        .iter()
        .map(|seg| match seg {
            jsonschema::paths::LocationSegment::Property(p) => p.into_owned(),
            jsonschema::paths::LocationSegment::Index(i) => i.to_string(),
        })
        .collect()
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
