//! The rewrites behind [`normalize`]; the rules are in the [`super`] module docs.

use super::{Contract, MAX_SAFE_INTEGER, decode_pointer_token, encode_pointer_token, referenced_defs};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// `format` values defined by JSON Schema 2020-12; anything else is dropped.
pub const STANDARD_FORMATS: &[&str] = &[
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

/// Keywords that annotate rather than constrain: a reference's sibling annotation overrides the
/// referenced definition's when it is inlined; they stay on the parent when a nullable type is
/// split into alternatives.
const ANNOTATIONS: &[&str] =
    &["title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment"];

/// Keywords whose value is one subschema (2020-12, plus draft 7's `additionalItems`).
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
/// Keywords whose value maps names to subschemas.
const MAP: &[&str] = &["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
/// Keywords whose value is an array of subschemas.
const LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Calls `f` on every direct subschema of `m` (never on data such as `enum`, `default`).
pub(crate) fn for_each_subschema(m: &mut Map<String, Value>, f: &mut dyn FnMut(&mut Value)) {
    for (k, v) in m.iter_mut() {
        let k = k.as_str();
        if ONE.contains(&k) {
            match v {
                // Draft 7 tuple form of `items`.
                Value::Array(a) => a.iter_mut().for_each(&mut *f),
                _ => f(v),
            }
        } else if MAP.contains(&k) {
            if let Value::Object(c) = v {
                c.values_mut().for_each(&mut *f);
            }
        } else if LIST.contains(&k)
            && let Value::Array(a) = v
        {
            a.iter_mut().for_each(&mut *f);
        }
    }
}

/// Read-only twin of [`for_each_subschema`].
pub(crate) fn visit_subschemas(m: &Map<String, Value>, f: &mut dyn FnMut(&Value)) {
    for (k, v) in m {
        let k = k.as_str();
        if ONE.contains(&k) {
            match v {
                Value::Array(a) => a.iter().for_each(&mut *f),
                _ => f(v),
            }
        } else if MAP.contains(&k) {
            if let Value::Object(c) = v {
                c.values().for_each(&mut *f);
            }
        } else if LIST.contains(&k)
            && let Value::Array(a) = v
        {
            a.iter().for_each(&mut *f);
        }
    }
}

/// Rewrites a standalone schema document (generated or written by hand) so that it obeys every
/// rule of the pipeline (the `catalog::schema` module docs) under `contract`. The result is a
/// standalone document again: definitions that remain (recursive ones) are under its root `$defs`.
/// Never fails: a value that is not a schema becomes `{}`.
pub fn normalize(doc: Value, contract: Contract) -> Value {
    let mut root = match doc {
        Value::Object(m) => m,
        Value::Bool(b) => return bool_schema(b),
        _ => return Value::Object(Map::new()),
    };
    root.remove("$schema");
    root.remove("$id");
    let title = root.remove("title");
    let mut defs = match root.remove("$defs") {
        Some(Value::Object(d)) => d,
        _ => Map::new(),
    };
    if let Some(Value::Object(legacy)) = root.remove("definitions") {
        for (k, v) in legacy {
            defs.entry(k).or_insert(v);
        }
        let to_defs = |r: &str| r.strip_prefix("#/definitions/").map(|rest| format!("#/$defs/{rest}"));
        rewrite_all(&mut root, &mut defs, &to_defs);
    }

    // A root that refers to itself (`#`) becomes a definition of its own, so that the reference
    // still means this type once the document is nested in another one.
    let mut self_ref = false;
    for v in std::iter::once(&Value::Object(root.clone())).chain(defs.values()) {
        super::visit_refs(v, &mut |r| self_ref |= r == "#");
    }
    if self_ref {
        let base = title.as_ref().and_then(Value::as_str).filter(|t| !t.is_empty()).unwrap_or("Root").to_owned();
        let mut name = base.clone();
        let mut n = 2;
        while defs.contains_key(&name) {
            name = format!("{base}{n}");
            n += 1;
        }
        let target = format!("#/$defs/{}", encode_pointer_token(&name));
        let to_def = |r: &str| (r == "#").then(|| target.clone());
        rewrite_all(&mut root, &mut defs, &to_def);
        defs.insert(name, Value::Object(root.clone()));
    }

    let recursive = recursive_defs(&defs);
    let mut root = Value::Object(root);
    inline(&mut root, &defs, &recursive);
    rewrite(&mut root, contract, Null::AsIs);
    let mut kept = Map::new();
    for name in &recursive {
        let mut body = defs[name.as_str()].clone();
        inline(&mut body, &defs, &recursive);
        rewrite(&mut body, contract, Null::AsIs);
        kept.insert(name.clone(), body);
    }

    // Keep only the definitions the document still reaches.
    let mut reachable: BTreeSet<String> = BTreeSet::new();
    let mut todo = referenced_defs(&root);
    while let Some(name) = todo.pop() {
        if let Some(body) = kept.get(&name)
            && reachable.insert(name)
        {
            todo.extend(referenced_defs(body));
        }
    }
    kept.retain(|k, _| reachable.contains(k));
    if let Value::Object(m) = &mut root
        && !kept.is_empty()
    {
        m.insert("$defs".into(), Value::Object(kept));
    }
    root
}

/// The schema of a property that is omitted rather than written as `null` (an `Option` field
/// with `skip_serializing_if = "Option::is_none"`): `schema` (already normalized) without its
/// top-level `null`.
pub(crate) fn omitted_when_none(schema: Value) -> Value {
    let mut v = schema;
    rewrite(&mut v, Contract::Output, Null::Strip);
    v
}

fn rewrite_all(root: &mut Map<String, Value>, defs: &mut Map<String, Value>, map: &dyn Fn(&str) -> Option<String>) {
    let mut r = Value::Object(std::mem::take(root));
    super::rewrite_refs(&mut r, map);
    if let Value::Object(m) = r {
        *root = m;
    }
    for body in defs.values_mut() {
        super::rewrite_refs(body, map);
    }
}

fn bool_schema(b: bool) -> Value {
    if b { json!({}) } else { json!({"not": {}}) }
}

/// The name of a local definition `m` refers to (`#/$defs/<name>`), if it is a reference.
fn local_def(m: &Map<String, Value>) -> Option<String> {
    let rest = m.get("$ref")?.as_str()?.strip_prefix("#/$defs/")?;
    (!rest.contains('/')).then(|| decode_pointer_token(rest))
}

/// Definitions that reach themselves through references.
fn recursive_defs(defs: &Map<String, Value>) -> BTreeSet<String> {
    let edges: Vec<(String, Vec<String>)> = defs.iter().map(|(k, v)| (k.clone(), referenced_defs(v))).collect();
    let next = |name: &str| edges.iter().find(|(k, _)| k == name).map(|(_, e)| e.clone()).unwrap_or_default();
    let mut out = BTreeSet::new();
    for (start, _) in &edges {
        let mut seen = BTreeSet::new();
        let mut todo = next(start);
        while let Some(n) = todo.pop() {
            if n == *start {
                out.insert(start.clone());
                break;
            }
            if seen.insert(n.clone()) {
                todo.extend(next(&n));
            }
        }
    }
    out
}

/// Replaces every reference to a non-recursive definition by the definition itself.
fn inline(v: &mut Value, defs: &Map<String, Value>, recursive: &BTreeSet<String>) {
    let Value::Object(m) = v else { return };
    for_each_subschema(m, &mut |c| inline(c, defs, recursive));
    let Some(name) = local_def(m) else { return };
    if recursive.contains(&name) {
        return;
    }
    let Some(body) = defs.get(&name) else { return };
    // A definition that is not a schema (hand-written, e.g. `"T": "object"`) constrains
    // nothing: `{}`, as `normalize` makes of any non-schema (found by fuzzing).
    let mut body = if body.is_object() || body.is_boolean() { body.clone() } else { json!({}) };
    inline(&mut body, defs, recursive);
    m.remove("$ref");
    let siblings = std::mem::take(m);
    *v = merge(body, siblings);
}

/// `body` with `siblings` (the other keywords next to a `$ref`, or a parent's keywords) laid
/// over it: annotations override, new keywords are added; when both constrain the same keyword
/// differently, the body is kept intact under `allOf`.
fn merge(body: Value, siblings: Map<String, Value>) -> Value {
    if siblings.is_empty() {
        return body;
    }
    let mut body = match body {
        Value::Object(b) => b,
        Value::Bool(true) => Map::new(),
        other => {
            let mut s = siblings;
            s.insert("allOf".into(), json!([other]));
            return Value::Object(s);
        }
    };
    let conflict =
        siblings.iter().any(|(k, v)| !ANNOTATIONS.contains(&k.as_str()) && body.get(k).is_some_and(|b| b != v));
    if conflict {
        let mut s = siblings;
        s.insert("allOf".into(), json!([Value::Object(body)]));
        return Value::Object(s);
    }
    for (k, v) in siblings {
        body.insert(k, v);
    }
    Value::Object(body)
}

/// What the parent says about `null` at a subschema.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Null {
    /// Nothing: the subschema's own rules decide.
    AsIs,
    /// The subschema is an optional input property: it loses its `null` (an explicit `null` is
    /// dropped before validation).
    Strip,
    /// A sibling alternative of the parent `anyOf` is already `{"type":"null"}`.
    Admitted,
}

/// The per-subschema rules; `null` says what the parent knows about `null` here.
fn rewrite(v: &mut Value, contract: Contract, null: Null) {
    if let Value::Bool(b) = v {
        *v = bool_schema(*b);
        return;
    }
    let Value::Object(m) = v else { return };
    if null == Null::Strip && strip_null(m) {
        // The merged alternative is a fresh schema: apply every rule to it.
        return rewrite(v, contract, Null::AsIs);
    }
    m.remove("$schema");
    if let Some(c) = m.remove("const") {
        m.insert("enum".into(), json!([c]));
    }
    if let Some(one_of) = m.remove("oneOf") {
        if m.contains_key("anyOf") {
            let all = m.entry("allOf").or_insert_with(|| json!([]));
            if let Value::Array(a) = all {
                a.push(json!({ "anyOf": one_of }));
            }
        } else {
            m.insert("anyOf".into(), one_of);
        }
    }
    // serde_json writes a non-finite float (NaN, ±inf) as `null`: what a float serializes to
    // includes `null`.
    if contract == Contract::Output && null != Null::Admitted && m.get("type") == Some(&Value::from("number")) {
        m.insert("type".into(), json!(["number", "null"]));
    }
    split_type_array(m);
    formats_and_bounds(m, contract);

    let required: Vec<String> = m
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let null_alternative = m
        .get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|b| b.get("type") == Some(&Value::from("null"))));
    for (k, child) in m.iter_mut() {
        match k.as_str() {
            "properties" => {
                if let Value::Object(props) = child {
                    for (name, s) in props.iter_mut() {
                        let optional = contract == Contract::Input && !required.contains(name);
                        rewrite(s, contract, if optional { Null::Strip } else { Null::AsIs });
                    }
                }
            }
            // `false` here is the conventional "no other keys" and every client reads it.
            "additionalProperties" | "unevaluatedProperties" if child.is_boolean() => {}
            "anyOf" if null_alternative => {
                if let Value::Array(a) = child {
                    a.iter_mut().for_each(|s| rewrite(s, contract, Null::Admitted));
                }
            }
            key if ONE.contains(&key) => match child {
                Value::Array(a) => a.iter_mut().for_each(|c| rewrite(c, contract, Null::AsIs)),
                _ => rewrite(child, contract, Null::AsIs),
            },
            key if MAP.contains(&key) => {
                if let Value::Object(c) = child {
                    c.values_mut().for_each(|s| rewrite(s, contract, Null::AsIs));
                }
            }
            key if LIST.contains(&key) => {
                if let Value::Array(a) = child {
                    a.iter_mut().for_each(|s| rewrite(s, contract, Null::AsIs));
                }
            }
            _ => {}
        }
    }
    if m.get("additionalProperties") == Some(&Value::Bool(true)) {
        m.remove("additionalProperties");
    }
    collapse_unit_enum(m);
    if let Some(Value::Array(a)) = m.get("anyOf")
        && a.len() == 1
    {
        let Some(Value::Array(mut a)) = m.remove("anyOf") else { unreachable!() };
        let only = a.pop().unwrap_or_default();
        let siblings = std::mem::take(m);
        *v = merge(only, siblings);
    }
}

/// Removes `null` from a schema's top level: from a type array, from `enum`, and a
/// `{"type":"null"}` alternative of `anyOf`/`oneOf`. Returns true when a single remaining
/// alternative was merged into `m` (then `m` must be rewritten again).
fn strip_null(m: &mut Map<String, Value>) -> bool {
    if let Some(Value::Array(types)) = m.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let t = types.pop().unwrap_or_default();
            m.insert("type".into(), t);
        }
    }
    if let Some(Value::Array(values)) = m.get_mut("enum")
        && values.iter().any(|v| !v.is_null())
    {
        values.retain(|v| !v.is_null());
    }
    for keyword in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = m.get_mut(keyword) else { continue };
        let is_null = |b: &Value| {
            b.get("type") == Some(&Value::from("null"))
                && b.as_object().is_some_and(|o| o.keys().all(|k| k == "type" || ANNOTATIONS.contains(&k.as_str())))
        };
        if !branches.iter().any(is_null) || branches.iter().all(is_null) {
            continue;
        }
        branches.retain(|b| !is_null(b));
        if branches.len() == 1 {
            let Some(Value::Array(mut a)) = m.remove(keyword) else { unreachable!() };
            let only = a.pop().unwrap_or_default();
            let siblings = std::mem::take(m);
            if let Value::Object(merged) = merge(only, siblings) {
                *m = merged;
            }
            return true;
        }
    }
    false
}

/// `"type": [A, B, …]` → `"anyOf": [{"type": A, …}, {"type": B, …}]` (constraints copied into
/// every alternative, annotations kept on the parent; `{"type":"null"}` bare); a one-element
/// array becomes a plain type.
fn split_type_array(m: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = m.get("type") else { return };
    let mut types: Vec<Value> = types.clone();
    let mut seen = Vec::new();
    types.retain(|t| {
        let new = !seen.contains(t);
        seen.push(t.clone());
        new
    });
    if types.len() == 1 {
        m.insert("type".into(), types.pop().unwrap_or_default());
        return;
    }
    m.remove("type");
    let constraints: Map<String, Value> =
        m.iter().filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
    m.retain(|k, _| ANNOTATIONS.contains(&k.as_str()));
    let branches: Vec<Value> = types
        .into_iter()
        .map(|t| {
            if t == "null" {
                return json!({"type": "null"});
            }
            let mut b = constraints.clone();
            b.insert("type".into(), t);
            if let Some(Value::Array(values)) = b.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
            Value::Object(b)
        })
        .collect();
    m.insert("anyOf".into(), Value::Array(branches));
}

/// Drops non-standard formats (integer formats become bounds) and keeps integer bounds within
/// ±(2^53 − 1): clamped for input, dropped for output. Of an inclusive and an exclusive bound
/// on the same side, only the tighter stays.
fn formats_and_bounds(m: &mut Map<String, Value>, contract: Contract) {
    if let Some(Value::String(f)) = m.get("format")
        && !STANDARD_FORMATS.contains(&f.as_str())
    {
        let bounds = int_bounds(f);
        m.remove("format");
        if let Some((min, max)) = bounds {
            m.entry("minimum").or_insert(min);
            if let Some(max) = max {
                m.entry("maximum").or_insert(max);
            }
        }
    }
    if m.get("type") != Some(&Value::from("integer")) {
        return;
    }
    let limit = MAX_SAFE_INTEGER as f64;
    for keyword in ["minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"] {
        let Some(n) = m.get(keyword).and_then(Value::as_f64) else { continue };
        if (-limit..=limit).contains(&n) {
            continue;
        }
        m.remove(keyword);
        if contract == Contract::Output {
            continue;
        }
        let (inclusive, clamped) = if keyword.ends_with("inimum") {
            ("minimum", if n < 0.0 { -MAX_SAFE_INTEGER } else { MAX_SAFE_INTEGER })
        } else {
            ("maximum", if n > 0.0 { MAX_SAFE_INTEGER } else { -MAX_SAFE_INTEGER })
        };
        let tighter = m
            .get(inclusive)
            .and_then(Value::as_f64)
            .is_some_and(|cur| if inclusive == "minimum" { cur >= clamped as f64 } else { cur <= clamped as f64 });
        if !tighter {
            m.insert(inclusive.into(), clamped.into());
        }
    }
    // A bound the other one of its side already implies says nothing more.
    for (inclusive, exclusive, lower) in [("minimum", "exclusiveMinimum", true), ("maximum", "exclusiveMaximum", false)]
    {
        let (Some(i), Some(e)) = (m.get(inclusive).and_then(Value::as_f64), m.get(exclusive).and_then(Value::as_f64))
        else {
            continue;
        };
        // `minimum: i` implies `exclusiveMinimum: e` when i > e; otherwise the exclusive one is
        // at least as tight (integers: `exclusiveMinimum: e` admits e + 1 onwards).
        let drop = if (lower && i > e) || (!lower && i < e) { exclusive } else { inclusive };
        m.remove(drop);
    }
}

fn int_bounds(format: &str) -> Option<(Value, Option<Value>)> {
    Some(match format {
        "uint8" => (0.into(), Some(u8::MAX.into())),
        "uint16" => (0.into(), Some(u16::MAX.into())),
        "uint32" => (0.into(), Some(u32::MAX.into())),
        // The type's own maximum, clamped (input) or dropped (output) like every other bound.
        "uint64" | "uint" | "uint128" => (0.into(), Some(u64::MAX.into())),
        "int8" => (i8::MIN.into(), Some(i8::MAX.into())),
        "int16" => (i16::MIN.into(), Some(i16::MAX.into())),
        "int32" => (i32::MIN.into(), Some(i32::MAX.into())),
        "int64" | "int" | "int128" => (i64::MIN.into(), Some(i64::MAX.into())),
        _ => return None,
    })
}

/// `anyOf` whose alternatives are all plain string values (a unit enum whose variants carry doc
/// comments) → `{"type":"string","enum":[…]}`, each variant's doc folded into the description
/// as a `- \`Value\`: doc` line.
fn collapse_unit_enum(m: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = m.get("anyOf") else { return };
    if m.contains_key("enum") || m.get("type").is_some_and(|t| t != "string") {
        return;
    }
    let mut values = Vec::new();
    let mut docs = Vec::new();
    for b in branches {
        let Some(b) = b.as_object() else { return };
        if !b.keys().all(|k| matches!(k.as_str(), "type" | "enum" | "description" | "title")) {
            return;
        }
        if b.get("type").is_some_and(|t| t != "string") {
            return;
        }
        let Some(vals) = b.get("enum").and_then(Value::as_array) else { return };
        if vals.is_empty() || !vals.iter().all(Value::is_string) {
            return;
        }
        if let Some(d) = b.get("description").and_then(Value::as_str) {
            for v in vals {
                docs.push(format!("- `{}`: {}", v.as_str().unwrap_or_default(), d.trim()));
            }
        }
        values.extend(vals.iter().cloned());
    }
    m.remove("anyOf");
    m.insert("type".into(), "string".into());
    m.insert("enum".into(), Value::Array(values));
    if !docs.is_empty() {
        let lead = m.get("description").and_then(Value::as_str).map(str::trim).filter(|d| !d.is_empty());
        let text = match lead {
            Some(lead) => format!("{lead}\n{}", docs.join("\n")),
            None => docs.join("\n"),
        };
        m.insert("description".into(), text.into());
    }
}
