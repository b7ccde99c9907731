//! The one schema pipeline: every JSON Schema that leaves the process goes through here —
//! window and app action `inputSchema`/`outputSchema`, companion capability schemas and their
//! `companion__…` MCP tool forms, `capabilities.list`/`describe`, the exported catalog files and
//! the OpenRPC components (GB-5.2-3, GB-12.3-4, CP-2-13, CP-8-3).
//!
//! For any `T: JsonSchema` the output obeys these rules, which the real MCP clients need
//! (the TypeScript SDK validates listings with Zod and results with Ajv; the Python SDK with
//! `jsonschema`; Gemini-based hosts accept an OpenAPI-like subset):
//!
//! - **Root**: a parameter object is `{"type":"object","properties":{…}}` with no
//!   `oneOf`/`anyOf`/`allOf` at the root ([`object_root`]); no `$schema` anywhere, no root
//!   `title`.
//! - **References**: every `$ref` resolves inside the document it is served in. Definitions
//!   that are not recursive are inlined; recursive ones stay in the root's `$defs` and, when a
//!   schema is nested in another document (a result in the ToolResult envelope, params in a
//!   companion tool), [`Definitions::embed`] hoists them to that document's root and rewrites
//!   the references. A type that refers to itself from its own root refers to its own
//!   definition, never to `#` (which would mean the wrapper once nested).
//! - **No boolean schemas**: `true` → `{}`, `false` → `{"not":{}}`.
//! - **No type arrays**: in an *input* schema, an optional property (not `required`) simply
//!   loses its `null` (an explicit `null` sent for it is dropped before validation, see
//!   [`normalize_arguments`]); everywhere else a nullable type becomes a nested
//!   `anyOf: [{"type": T, …}, {"type": "null"}]`.
//! - **No `const`**: one value becomes a one-element `enum`. `oneOf` becomes `anyOf` (serde's
//!   untagged enums accept the first variant that fits, so "exactly one" would reject values
//!   serde accepts). Unit enums whose variants carry doc comments become
//!   `{"type":"string","enum":[…]}` with the variants' docs folded into the description.
//! - **Formats**: only JSON Schema 2020-12's own `format` values; schemars' integer formats
//!   (`uint8` … `int64`) become `minimum`/`maximum`, float formats are dropped.
//! - **Integer bounds** beyond ±(2^53−1) (`Number.MAX_SAFE_INTEGER`, the largest integer every
//!   JSON client reads exactly) are **clamped** to it in input schemas, so what is declared is
//!   exactly what validation accepts, and **dropped** in output schemas, so a large value the
//!   app writes is never rejected by a client. Of an inclusive and an exclusive bound on the
//!   same side only the tighter stays.
//!
//! Input schemas describe what `Deserialize` accepts, output schemas what `Serialize` writes
//! ([`Contract`]; schemars' `for_deserialize`/`for_serialize`, as rmcp does). Incoming arguments
//! are validated against the same normalized schema that is published.

mod instance;
mod limits;
mod normalize;

pub use instance::{FieldErrors, MAX_REPORTED_PROBLEMS, field_errors, normalize_arguments};
pub use limits::{
    ArgumentLimits, Capped, DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_ARGUMENT_DEPTH, DEFAULT_MAX_ARGUMENT_KEYS,
    DEFAULT_MAX_REPORTED_PROBLEMS,
};

/// Compiles a normalized schema for validating incoming values: draft 2020-12, and `format`s
/// are checked (a `uuid` parameter rejects a non-UUID string up front, with the parameter's
/// name, rather than failing later in serde).
pub fn validator(schema: &Value) -> Result<jsonschema::Validator, jsonschema::ValidationError<'static>> {
    jsonschema::options().with_draft(jsonschema::Draft::Draft202012).should_validate_formats(true).build(schema)
}
pub(crate) use normalize::for_each_subschema;
pub use normalize::{STANDARD_FORMATS, normalize};

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

/// The optional concurrency parameter every non-read-only window action takes (GB-5.5-1).
pub(crate) const EXPECTED_VERSION: &str = "expectedVersion";

/// 2^53 − 1: integer bounds beyond ± this are clamped (input) or dropped (output).
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Which side of serde a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contract {
    /// What `Deserialize` accepts: tool arguments, capability params.
    Input,
    /// What `Serialize` writes: tool results, snapshots, descriptors.
    Output,
}

/// `{"type":"object","properties":{}}`.
pub(crate) fn empty_object() -> Map<String, Value> {
    let Value::Object(m) = json!({"type": "object", "properties": {}}) else { unreachable!() };
    m
}

/// The normalized input-contract schema of `T` (any root; see the module docs).
pub(crate) fn input_schema_for<T: schemars::JsonSchema>() -> Value {
    generate::<T>(Contract::Input)
}

/// The normalized output-contract schema of `T` (any root): every key `T` always writes is
/// `required`, `null`able ones included (as a nested `anyOf`).
pub fn output_schema_for<T: schemars::JsonSchema>() -> Value {
    generate::<T>(Contract::Output)
}

fn generate<T: schemars::JsonSchema>(contract: Contract) -> Value {
    let settings = match contract {
        Contract::Input => SchemaSettings::draft2020_12().for_deserialize(),
        Contract::Output => SchemaSettings::draft2020_12().for_serialize(),
    };
    let generator = settings
        .with(|s| {
            s.inline_subschemas = false;
            s.meta_schema = None;
            s.definitions_path = "/$defs".into();
        })
        .into_generator();
    normalize(generator.into_root_schema_for::<T>().to_value(), contract)
}

/// The input schema of a parameter struct `P` as an object root without a description (the
/// struct's doc is not the tool's): see [`object_root`].
pub fn object_schema_for<P: schemars::JsonSchema>() -> Map<String, Value> {
    let mut m = object_root(input_schema_for::<P>());
    m.remove("description");
    m
}

/// The output schema of a result struct `R` as an object root without a description (a
/// companion capability's business result, CP-2-13): see [`object_root`].
pub(crate) fn output_object_schema_for<R: schemars::JsonSchema>() -> Map<String, Value> {
    let mut m = object_root(output_schema_for::<R>());
    m.remove("description");
    m
}

/// Forces a normalized document into an object root `{"type":"object","properties":{…}}` with
/// no combinator at the root.
///
/// A struct is already one. A struct with a `#[serde(flatten)]`ed enum carries the variants as a
/// root `oneOf`/`anyOf`/`allOf` of objects: they are merged into the root — every variant's
/// properties become properties (a key declared differently by several variants gets a nested
/// `anyOf`; string enums are united), `required` keeps only keys every alternative requires.
/// Such a merged schema admits some combinations serde then rejects; those calls fail with a
/// coded validation error naming the problem. Non-object alternatives (which serde cannot
/// flatten) are left out. A non-object root (a bare enum, an integer) yields an object with no
/// properties; the macros reject those at compile time, so only hand-built specs meet it. So
/// does a `properties` that is not an object (found by fuzzing): it becomes `{}`.
pub fn object_root(doc: Value) -> Map<String, Value> {
    let mut root = match doc {
        Value::Object(m) => m,
        _ => return empty_object(),
    };
    let defs = root.remove("$defs");
    for keyword in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = root.remove(keyword) {
            merge_alternatives(&mut root, branches, keyword == "allOf", defs.as_ref());
        }
    }
    let is_object = match root.get("type") {
        None => root.contains_key("properties"),
        Some(t) => t == "object",
    };
    if !is_object {
        tracing::error!("a parameter schema whose root is not an object was replaced by an empty object");
        root = empty_object();
    }
    root.insert("type".into(), "object".into());
    if !root.get("properties").is_some_and(Value::is_object) {
        if root.contains_key("properties") {
            tracing::error!("a parameter schema whose `properties` is not an object got an empty one");
        }
        root.insert("properties".into(), Value::Object(Map::new()));
    }
    if let Some(defs) = defs {
        root.insert("$defs".into(), defs);
    }
    root
}

/// Merges root alternatives (`allOf` when `all`, else `anyOf`/`oneOf`) into `root`.
fn merge_alternatives(root: &mut Map<String, Value>, branches: Vec<Value>, all: bool, defs: Option<&Value>) {
    let resolve = |b: Value| -> Option<Map<String, Value>> {
        let b = match b.get("$ref").and_then(Value::as_str) {
            Some(r) => {
                let name = r.strip_prefix("#/$defs/")?;
                defs?.get(name)?.clone()
            }
            None => b,
        };
        match b {
            Value::Object(m) if m.get("type").is_none_or(|t| t == "object") && m.contains_key("properties") => Some(m),
            _ => None,
        }
    };
    let objects: Vec<Map<String, Value>> = branches.into_iter().filter_map(resolve).collect();
    if objects.is_empty() {
        return;
    }
    let mut props = match root.remove("properties") {
        Some(Value::Object(p)) => p,
        _ => Map::new(),
    };
    let mut required: Vec<Value> = match root.remove("required") {
        Some(Value::Array(r)) => r,
        _ => Vec::new(),
    };
    let branch_required = |b: &Map<String, Value>| -> Vec<Value> {
        b.get("required").and_then(Value::as_array).cloned().unwrap_or_default()
    };
    let mut common: Option<Vec<Value>> = None;
    for branch in &objects {
        for (k, s) in branch.get("properties").and_then(Value::as_object).into_iter().flatten() {
            match props.get_mut(k) {
                None => {
                    props.insert(k.clone(), s.clone());
                }
                Some(existing) => unite(existing, s.clone(), all),
            }
        }
        let req = branch_required(branch);
        if all {
            required.extend(req);
        } else {
            common = Some(match common {
                None => req,
                Some(c) => c.into_iter().filter(|k| req.contains(k)).collect(),
            });
        }
    }
    required.extend(common.unwrap_or_default());
    let mut seen = Vec::new();
    required.retain(|k| {
        let new = !seen.contains(k);
        seen.push(k.clone());
        new
    });
    root.insert("properties".into(), Value::Object(props));
    if !required.is_empty() {
        root.insert("required".into(), Value::Array(required));
    }
}

/// Combines two declarations of one property: conjunction (`allOf`) or alternatives.
fn unite(existing: &mut Value, other: Value, all: bool) {
    if *existing == other {
        return;
    }
    let string_enum = |v: &Value| -> Option<Vec<Value>> {
        let m = v.as_object()?;
        let only = m.keys().all(|k| matches!(k.as_str(), "type" | "enum" | "description" | "title"));
        (only && m.get("type").is_none_or(|t| t == "string")).then(|| m.get("enum")?.as_array().cloned())?
    };
    if !all && let (Some(mut a), Some(b)) = (string_enum(existing), string_enum(&other)) {
        for v in b {
            if !a.contains(&v) {
                a.push(v);
            }
        }
        existing["enum"] = Value::Array(a);
        existing["type"] = "string".into();
        return;
    }
    let keyword = if all { "allOf" } else { "anyOf" };
    *existing = json!({ keyword: [existing.take(), other] });
}

/// What `expectedVersion` says about itself: one line, as GB-5.5-1's example has it; the
/// instructions say the rest.
pub(crate) const EXPECTED_VERSION_DESCRIPTION: &str = "The window version this call is based on";

/// Adds `expectedVersion` to an object schema, not required (GB-5.5-1, GB-7.1-2): an integer,
/// with no `minimum` or `maximum`: any int64 other than the window's version, `0` and negative
/// numbers included, is `stale_state` (GB-4.2-8), and a fraction is `validation_failed`.
pub(crate) fn add_expected_version(schema: &mut Map<String, Value>) {
    let props = schema.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(p) = props {
        p.insert(EXPECTED_VERSION.to_owned(), json!({"type": "integer", "description": EXPECTED_VERSION_DESCRIPTION}));
    }
}

/// The ToolResult envelope with `result`'s schema inside (GB-12.3-4): the base fields the
/// [`ToolResult`](crate::model::ToolResult) type writes, `message` (string) and
/// `openedWindowIds` (string array), and `result` = the action's normalized output schema with
/// its definitions hoisted to the envelope's `$defs`; no `result` key when the action returns
/// none. Tools keep only `result`'s own description (see `lean_output`).
///
/// Permissive, as OQ-GB-18 allows: nothing is `required` and unknown keys are allowed, so the
/// one schema fits the success object and the error object `{code, message, currentVersion?,
/// fields?}` alike (every error key it lists, `message`, has the same type in both), and a
/// client that validates `structuredContent` against it on `isError` accepts every error.
pub fn tool_result_envelope(result: Option<Value>) -> Map<String, Value> {
    // Generated once: the base type never changes.
    static BASE: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(|| {
        let doc = output_schema_for::<crate::model::ToolResult>();
        let mut props = Map::new();
        for (k, v) in doc.get("properties").and_then(Value::as_object).into_iter().flatten() {
            if k == "result" {
                continue;
            }
            props.insert(k.clone(), normalize::omitted_when_none(v.clone()));
        }
        props
    });
    let mut defs = Definitions::new("#/$defs/");
    let mut props = BASE.clone();
    if let Some(r) = result {
        props.insert("result".into(), defs.embed(r));
    }
    let mut m = Map::new();
    m.insert("type".into(), "object".into());
    m.insert("properties".into(), Value::Object(props));
    defs.attach(&mut m);
    lean_output(&mut m);
    m
}

/// Makes a tool's `outputSchema` lean: every `description` goes except that of the top-level
/// `result` property (one line on what the tool returns).
///
/// An `outputSchema` is what clients validate `structuredContent` against (GB-12.3-4), and
/// hosts that show it to a model send it with every turn; descriptions change no validation.
/// The base fields are explained once, by the instructions; a result's nested fields mostly
/// repeat the input's (the same types in and out) and the tool's description, and the model
/// reads the keys themselves in the result. The Rust docs, the input schemas and the action's
/// description keep every word.
pub(crate) fn lean_output(schema: &mut Map<String, Value>) {
    let kept = schema.get("properties").and_then(|p| p.get("result")).and_then(|r| r.get("description")).cloned();
    strip_descriptions(schema);
    if let (Some(d), Some(Value::Object(r))) = (kept, schema.get_mut("properties").and_then(|p| p.get_mut("result"))) {
        r.insert("description".into(), d);
    }
}

/// Removes `description` from `schema` and every subschema (never from data such as `enum`
/// values or `default`, nor a property that happens to be named `description`).
fn strip_descriptions(schema: &mut Map<String, Value>) {
    schema.remove("description");
    normalize::for_each_subschema(schema, &mut |child| {
        if let Value::Object(c) = child {
            strip_descriptions(c);
        }
    });
}

/// The definitions of one schema document, gathered from the standalone documents nested in
/// it. `base` is where they live in the target document: `#/$defs/` for a tool schema,
/// `#/components/schemas/` for OpenRPC.
#[derive(Debug, Clone)]
pub(crate) struct Definitions {
    base: String,
    defs: Map<String, Value>,
}

impl Definitions {
    /// No definitions yet; references will read `{base}{name}`.
    pub(crate) fn new(base: impl Into<String>) -> Self {
        Self { base: base.into(), defs: Map::new() }
    }

    /// Takes a standalone normalized document (definitions under its root `$defs`, references
    /// `#/$defs/<name>`), moves its definitions here — under a new name when the name is taken
    /// by a different definition, reusing an identical one — and rewrites its references to
    /// `{base}<name>`. Returns the document without `$defs`, ready to nest anywhere in the
    /// target document.
    pub(crate) fn embed(&mut self, doc: Value) -> Value {
        let mut doc = doc;
        let own = match &mut doc {
            Value::Object(m) => match m.remove("$defs") {
                Some(Value::Object(d)) => d,
                _ => Map::new(),
            },
            _ => Map::new(),
        };
        if own.is_empty() {
            return doc;
        }
        // A definition identical to the one already under its name is shared, provided every
        // definition it refers to is shared too (the same type reached twice); any other
        // definition whose name is taken gets a fresh name.
        let identity: Vec<(String, String)> = Vec::new();
        let rebased = |body: &Value| {
            let mut b = body.clone();
            rewrite_refs(&mut b, &|r| rename_ref(r, &identity, &self.base));
            b
        };
        let mut shared: Vec<String> =
            own.iter().filter(|(n, b)| self.defs.get(*n) == Some(&rebased(b))).map(|(n, _)| n.clone()).collect();
        loop {
            let before = shared.len();
            let keep: Vec<String> = shared
                .iter()
                .filter(|n| {
                    referenced_defs(&own[n.as_str()]).iter().all(|r| !own.contains_key(r) || shared.contains(r))
                })
                .cloned()
                .collect();
            shared = keep;
            if shared.len() == before {
                break;
            }
        }
        let mut renames: Vec<(String, String)> = Vec::new();
        let mut taken: Vec<String> = self.defs.keys().cloned().collect();
        for name in own.keys().filter(|n| !shared.contains(n)) {
            let mut new = name.clone();
            let mut n = 2;
            while taken.contains(&new) || own.contains_key(&new) && new != *name {
                new = format!("{name}{n}");
                n += 1;
            }
            taken.push(new.clone());
            renames.push((name.clone(), new));
        }
        let map = |r: &str| rename_ref(r, &renames, &self.base);
        for (name, mut body) in own {
            if shared.contains(&name) {
                continue;
            }
            rewrite_refs(&mut body, &map);
            let new = renames.iter().find(|(o, _)| *o == name).map_or(name, |(_, n)| n.clone());
            self.defs.insert(new, body);
        }
        rewrite_refs(&mut doc, &map);
        doc
    }

    /// Stores `doc` itself as definition `name` (after [`embed`](Self::embed)ding its own
    /// definitions), replacing any earlier one of that name, and returns the reference to it,
    /// `{"$ref": "{base}<name>"}`. For documents whose named schemas are public (OpenRPC
    /// `components/schemas`): define the fixed names first, so hoisted definitions never take
    /// them.
    #[cfg_attr(not(feature = "companion"), allow(dead_code))]
    pub(crate) fn define(&mut self, name: &str, doc: Value) -> Value {
        let doc = self.embed(doc);
        self.defs.insert(name.to_owned(), doc);
        self.reference(name)
    }

    /// `{"$ref": "{base}<name>"}`.
    #[cfg_attr(not(feature = "companion"), allow(dead_code))]
    pub(crate) fn reference(&self, name: &str) -> Value {
        json!({"$ref": format!("{}{}", self.base, encode_pointer_token(name))})
    }

    /// The definition stored under `name`.
    #[cfg_attr(not(feature = "companion"), allow(dead_code))]
    pub(crate) fn get_mut(&mut self, name: &str) -> Option<&mut Value> {
        self.defs.get_mut(name)
    }

    /// The gathered definitions, by name.
    #[cfg_attr(not(feature = "companion"), allow(dead_code))]
    pub(crate) fn into_map(self) -> Map<String, Value> {
        self.defs
    }

    /// Puts the gathered definitions under `root`'s `$defs` (nothing when there are none).
    pub(crate) fn attach(self, root: &mut Map<String, Value>) {
        if !self.defs.is_empty() {
            root.insert("$defs".into(), Value::Object(self.defs));
        }
    }
}

/// `#/$defs/<old>[/rest]` → `{base}<new>[/rest]`.
fn rename_ref(r: &str, renames: &[(String, String)], base: &str) -> Option<String> {
    let rest = r.strip_prefix("#/$defs/")?;
    let (token, tail) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let name = decode_pointer_token(token);
    let new = renames.iter().find(|(o, _)| *o == name).map_or(name.as_str(), |(_, n)| n.as_str());
    Some(format!("{base}{}{tail}", encode_pointer_token(new)))
}

/// Applies `map` to every `$ref` string in the schema positions of `v`.
pub(crate) fn rewrite_refs(v: &mut Value, map: &dyn Fn(&str) -> Option<String>) {
    if let Value::Object(m) = v {
        if let Some(Value::String(r)) = m.get_mut("$ref")
            && let Some(new) = map(r)
        {
            *r = new;
        }
        normalize::for_each_subschema(m, &mut |child| rewrite_refs(child, map));
    }
}

/// Calls `f` with every `$ref` string in the schema positions of `v`.
pub(crate) fn visit_refs(v: &Value, f: &mut dyn FnMut(&str)) {
    if let Value::Object(m) = v {
        if let Some(Value::String(r)) = m.get("$ref") {
            f(r);
        }
        normalize::visit_subschemas(m, &mut |child| visit_refs(child, f));
    }
}

/// Names of the `#/$defs/<name>` definitions `v` refers to.
pub(crate) fn referenced_defs(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    visit_refs(v, &mut |r| {
        if let Some(rest) = r.strip_prefix("#/$defs/") {
            let token = rest.split('/').next().unwrap_or_default();
            out.push(decode_pointer_token(token));
        }
    });
    out
}

/// One JSON Pointer reference token, unescaped (`~1` → `/`, `~0` → `~`).
pub(crate) fn decode_pointer_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// One JSON Pointer reference token, escaped.
pub(crate) fn encode_pointer_token(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests;
