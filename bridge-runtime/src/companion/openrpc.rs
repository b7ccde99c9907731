//! The OpenRPC 1.3.2 description of the companion API (CP-8-2), generated from the one registry
//! ([`Catalog`]) and from the types the engine itself uses, never kept by hand beside them
//! (CP-2-12, CP-2-13, OQ-CP-13). `rpc.discover` returns it; [`crate::export`] writes
//! it to `openrpc.json`.
//!
//! Shape (abbreviated):
//!
//! ```json
//! {
//!   "openrpc": "1.3.2",
//!   "info": {"title": "bridge desktop companion API", "version": "<implementation version>",
//!            "x-protocolVersion": "0.1", "x-catalogRevision": 8},
//!   "methods": [
//!     {"name": "requests.create", "summary": "…", "description": "…", "paramStructure": "by-name",
//!      "params": [{"name": "capability", "required": true, "schema": {…}, "description": "…"}, …],
//!      "result": {"name": "request", "schema": {"$ref": "#/components/schemas/RequestSnapshot"}},
//!      "errors": [{"$ref": "#/components/errors/QUEUE_FULL"}, …]},
//!     …, {"name": "rpc.discover", …}
//!   ],
//!   "components": {
//!     "schemas": {"RequestSnapshot": {…}, "CapabilityDescriptor": {…}, "ErrorData": {…},
//!                 "notice.show.input": {…}, "notice.show.output": {…}, …},
//!     "errors": {"QUEUE_FULL": {"code": -32020, "message": "…",
//!                               "data": {"code": "QUEUE_FULL", "retryable": true}}, …}
//!   }
//! }
//! ```
//!
//! - Methods: every [`Method`] of the protocol table, in its order (CP-2-1, then the socket
//!   transport's `rpc.discover`, `session.authenticate` and `pairing.request`); summary and
//!   description are the variant's documentation. Params are content descriptors made from
//!   [`Method::params_schema`], the schemas the engine validates with; by name, and a params
//!   object with unknown keys is rejected (`INVALID_PARAMS`).
//! - Result schemas are derived from the result types ([`Method::result_schema`], through the
//!   schema pipeline); the results of the engine's methods and of `rpc.discover` are named
//!   components (`RequestSnapshot`, `CapabilityPage`, …), and the shared types inside them
//!   (`Scope`, `Character`, `Style`, `CapabilityDescriptor`, `FieldProblem`, `ErrorCode`,
//!   `RequestSnapshot`) are referenced rather than repeated. `tests/it/openrpc.rs` checks them
//!   against the real engine's answers.
//! - Errors: every [`ErrorCode`] as an OpenRPC error object under `components/errors`, keyed by
//!   its wire string, with its JSON-RPC integer (OQ-CP-12) and `data` = `{"code", "retryable"}`
//!   (the `data` every such error carries, [`CompanionError::data`]); methods reference the
//!   codes they can raise.
//! - Capability schemas: each capability's `inputSchema`/`outputSchema` under
//!   `components/schemas/<capability id>.input` / `.output` (`input_schema_key`); internal
//!   `$ref`s are rebased so they resolve inside this document. `requests.create`'s `params` and
//!   the snapshot's `result` reference them (`anyOf`).
//!
//! - Further methods can be appended with [`document_with`] and a [`MethodDoc`] each. Without
//!   the Unix socket transport (not Unix), the connection methods are left out.
//! - Result schemas are open (no `additionalProperties: false`): within a major version results
//!   only gain keys (CP-7-4), and the transport adds some to `runtime.describe`.
//!
//! [`CompanionError::data`]: super::CompanionError::data

use super::error::ErrorCode;
use super::model::RequestSnapshot;
use super::protocol::params::PROTOCOL_VERSION;
use super::protocol::results::{Character, Style};
use super::protocol::{Lane, Method};
use crate::catalog::schema::{Contract, Definitions, input_schema_for, normalize, output_schema_for};
use crate::catalog::{CapabilitySpec, Catalog, FieldProblem, Scope};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// The OpenRPC specification version the document follows.
pub const OPENRPC_VERSION: &str = "1.3.2";

/// `info.title` of the document.
pub const TITLE: &str = "bridge desktop companion API";

/// One extra method for [`document_with`]: what the JSON-RPC server answers beyond the protocol
/// table ([`Method`]).
#[derive(Debug, Clone, PartialEq)]
pub struct MethodDoc {
    /// Method name, byte for byte as on the wire.
    pub name: String,
    /// One line.
    pub summary: String,
    /// Longer explanation (Markdown).
    pub description: String,
    /// The params object's JSON Schema: `{"type": "object", "properties": {…}, "required": […]}`;
    /// each property becomes one by-name content descriptor. Internal references (`#/$defs/…`)
    /// are rebased so they resolve in the document; `#/components/schemas/…` references address
    /// the document's shared schemas (e.g. `Scope`).
    pub params_schema: Value,
    /// The result's content descriptor name, e.g. `session`.
    pub result_name: String,
    /// The result's JSON Schema (references as for `params_schema`).
    pub result_schema: Value,
    /// The codes the method can fail with.
    pub errors: Vec<ErrorCode>,
}

/// `error.data` of every companion error (OQ-CP-12, CP-6-16): the stable string `code`,
/// `retryable` (the same call may succeed later), and code-specific details (see each code's
/// description).
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // only its schema is used: the values are built by `CompanionError::data`
struct ErrorData {
    code: ErrorCode,
    /// Whether the same call may succeed later.
    retryable: bool,
    /// INVALID_PARAMS: what is wrong, per JSON pointer.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<FieldProblem>")]
    problems: Option<Vec<FieldProblem>>,
}

/// The OpenRPC document for the whole companion API, generated from `catalog` (CP-2-13, CP-8-2).
/// Deterministic for a given catalog and build. Never fails: a registry entry that cannot be
/// described (it cannot happen with registered specs) is left out rather than panicking.
pub fn document(catalog: &Catalog) -> Value {
    document_with(catalog, &[])
}

/// [`document`] plus `extra` methods, listed after the table's methods in the given order. An
/// extra method whose name is already described is ignored (CP-7-7: extensions never redefine
/// core methods).
pub fn document_with(catalog: &Catalog, extra: &[MethodDoc]) -> Value {
    // Every schema goes through the schema pipeline; definitions of recursive types are hoisted
    // into `components/schemas` next to the named ones. The shared types are defined first, and
    // wherever a derived schema repeats one of them it becomes a reference.
    let mut schemas = Definitions::new("#/components/schemas/");
    let mut shared: Vec<(String, Value)> = Vec::new();
    for (name, schema) in shared_schemas() {
        let body = normalize(schema, Contract::Output);
        schemas.define(name, body.clone());
        shared.push((name.to_owned(), body));
    }
    let error_data = componentize(output_schema_for::<ErrorData>(), &shared, &schemas);
    schemas.define("ErrorData", error_data);

    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    for cap in catalog.capabilities() {
        let (ik, ok) = (input_schema_key(cap.id()), output_schema_key(cap.id()));
        inputs.push(schemas.define(&ik, Value::Object(cap.input_schema().clone())));
        outputs.push(schemas.define(&ok, Value::Object(cap.output_schema().clone())));
    }

    let mut methods = Vec::new();
    let mut names = Vec::new();
    for m in Method::ALL {
        if !described_here(m) {
            continue;
        }
        methods.push(table_method(m, &inputs, &shared, &mut schemas));
        names.push(m.as_str().to_owned());
    }
    for m in extra {
        if names.contains(&m.name) {
            continue;
        }
        names.push(m.name.clone());
        let params = schemas.embed(normalize(m.params_schema.clone(), Contract::Input));
        let result = schemas.embed(normalize(m.result_schema.clone(), Contract::Output));
        methods.push(method_object(&m.name, &m.summary, &m.description, &params, &m.result_name, result, &m.errors));
    }

    if !outputs.is_empty()
        && let Some(result) = schemas.get_mut("RequestSnapshot").and_then(|s| s.pointer_mut("/properties/result"))
    {
        outputs.insert(0, json!({"type": "null"}));
        *result = json!({
            "description": "The business result, only when `completed`: valid against the resolved capability's \
                            outputSchema (`{}` for capabilities without business output); never invented for \
                            cancellation or timeout (CP-3-16).",
            "anyOf": outputs,
        });
    }

    let errors: Map<String, Value> = ErrorCode::ALL.iter().map(|c| (c.as_str().to_owned(), error_object(*c))).collect();
    let open: Vec<String> =
        Method::ALL.iter().filter(|m| !m.needs_session() && described_here(**m)).map(|m| format!("`{m}`")).collect();

    json!({
        "openrpc": OPENRPC_VERSION,
        "info": {
            "title": TITLE,
            "version": env!("CARGO_PKG_VERSION"),
            "description": format!(
                "The desktop companion protocol (CP) over JSON-RPC 2.0: discovery of the runtime, characters, \
                 capabilities and styles, and the request lifecycle (create, get, wait, cancel, update). A JSON-RPC \
                 response does not mean the sprite operation has finished: the request snapshot's `state` says that \
                 (CP-8-1). Capabilities are per-character and per-authorisation: `{}` is the authority at run \
                 time; the capability schemas in this document are those registered when it was generated (CP-8-2).",
                Method::CapabilitiesList
            ),
            "x-protocolVersion": PROTOCOL_VERSION,
            "x-authentication": format!(
                "Over the socket, every method except {} needs a connection authenticated with `{}` (else \
                 UNAUTHENTICATED); scopes come from the pairing (CP-5-6).",
                english_list(&open),
                Method::SessionAuthenticate
            ),
            "x-catalogRevision": catalog.catalog_revision(),
        },
        "methods": methods,
        "components": {"schemas": schemas.into_map(), "errors": errors},
    })
}

/// `a`, `a and b`, `a, b and c`.
fn english_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Whether this build's document describes `m`: the connection's methods exist only with the
/// Unix socket transport.
fn described_here(m: Method) -> bool {
    cfg!(unix) || m.lane() != Lane::Connection
}

/// `components/schemas` key of capability `id`'s `inputSchema`: `<id>.input`, made `$ref`-safe
/// by [`ref_safe`].
pub(crate) fn input_schema_key(id: &str) -> String {
    format!("{}.input", ref_safe(id))
}

/// `components/schemas` key of capability `id`'s `outputSchema`: `<id>.output`.
pub(crate) fn output_schema_key(id: &str) -> String {
    format!("{}.output", ref_safe(id))
}

/// A component key that needs no escaping in a `$ref` (JSON Pointer `~`/`/`, URI fragment
/// characters): every character outside `[A-Za-z0-9_.-]` becomes `_`. Registered capability
/// ids (`[a-z0-9_.]`, CP-2-27) pass unchanged, so keys never collide.
pub(crate) fn ref_safe(id: &str) -> String {
    id.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') { c } else { '_' }).collect()
}

/// The shared types every document names, keyed by their component name.
fn shared_schemas() -> Vec<(&'static str, Value)> {
    vec![
        ("RequestSnapshot", output_schema_for::<RequestSnapshot>()),
        ("CapabilityDescriptor", CapabilitySpec::descriptor_schema()),
        ("Character", output_schema_for::<Character>()),
        ("Style", output_schema_for::<Style>()),
        ("ErrorCode", input_schema_for::<ErrorCode>()),
        ("FieldProblem", input_schema_for::<FieldProblem>()),
        ("Scope", input_schema_for::<Scope>()),
    ]
}

/// `schema` with every subschema that repeats a shared type (equal to its body, apart from its
/// own `description`) replaced by a reference to it (keeping a description of its own).
fn componentize(schema: Value, shared: &[(String, Value)], schemas: &Definitions) -> Value {
    fn without_description(v: &Value) -> Value {
        let mut v = v.clone();
        if let Value::Object(m) = &mut v {
            m.remove("description");
        }
        v
    }
    fn walk(v: &mut Value, shared: &[(String, Value, Value)], schemas: &Definitions) {
        if v.is_object() {
            let bare = without_description(v);
            if let Some((name, body, _)) = shared.iter().find(|(_, _, b)| *b == bare) {
                let own = v.get("description").filter(|d| Some(*d) != body.get("description")).cloned();
                let mut r = schemas.reference(name);
                if let (Some(d), Value::Object(m)) = (own, &mut r) {
                    m.insert("description".into(), d);
                }
                *v = r;
                return;
            }
        }
        match v {
            Value::Object(m) => {
                for (k, child) in m.iter_mut() {
                    // Property names, enum values and constants are data, not schemas.
                    if !matches!(k.as_str(), "enum" | "const" | "default" | "examples" | "required") {
                        walk(child, shared, schemas);
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|c| walk(c, shared, schemas)),
            _ => {}
        }
    }
    let shared: Vec<(String, Value, Value)> =
        shared.iter().map(|(n, b)| (n.clone(), b.clone(), without_description(b))).collect();
    let mut schema = schema;
    if let Value::Object(m) = &mut schema {
        // The root itself is never replaced: it is the schema being described.
        for child in m.values_mut() {
            walk(child, &shared, schemas);
        }
    }
    schema
}

/// The OpenRPC method object of a table method.
fn table_method(
    m: Method,
    capability_inputs: &[Value],
    shared: &[(String, Value)],
    schemas: &mut Definitions,
) -> Value {
    let params = componentize(m.params_schema(), shared, schemas);
    let mut params_schema = schemas.embed(params);
    if m == Method::RequestsCreate
        && !capability_inputs.is_empty()
        && let Some(p) = params_schema.pointer_mut("/properties/params")
        && let Value::Object(p) = p
    {
        p.insert("anyOf".into(), Value::Array(capability_inputs.to_vec()));
        p.insert(
            "description".into(),
            "The capability's params, valid against its inputSchema (one of the `<id>.input` schemas); `{}` when \
             it takes none (CP-2-16)."
                .into(),
        );
    }
    // The connection's own results are described inline.
    let result = if m.lane() == Lane::Connection {
        let body = componentize(m.result_schema(), shared, schemas);
        schemas.embed(body)
    } else {
        let name = m.result_type_name();
        if shared.iter().any(|(n, _)| *n == name) {
            schemas.reference(&name)
        } else {
            let body = componentize(m.result_schema(), shared, schemas);
            schemas.define(&name, body)
        }
    };
    let mut obj =
        method_object(m.as_str(), &m.summary(), &m.description(), &params_schema, m.result_name(), result, m.errors());
    if m.needs_session()
        && let Some(scope) = m.scope()
        && let Value::Object(o) = &mut obj
    {
        o.insert("x-requiredScopes".into(), json!([scope.as_str()]));
    }
    obj
}
/// One OpenRPC method object, params by name.
fn method_object(
    name: &str,
    summary: &str,
    description: &str,
    params_schema: &Value,
    result_name: &str,
    result_schema: Value,
    errors: &[ErrorCode],
) -> Value {
    let mut errs: Vec<ErrorCode> = Vec::new();
    for e in errors {
        if !errs.contains(e) {
            errs.push(*e);
        }
    }
    errs.sort_by_key(|e| std::cmp::Reverse(e.jsonrpc_code()));
    let errors: Vec<Value> =
        errs.iter().map(|e| json!({"$ref": format!("#/components/errors/{}", e.as_str())})).collect();
    json!({
        "name": name,
        "summary": summary,
        "description": format!(
            "{description}\n\nParams are passed by name as one JSON object; absent params equal `{{}}` and unknown \
             keys are rejected with INVALID_PARAMS."
        ),
        "paramStructure": "by-name",
        "params": content_descriptors(params_schema),
        "result": {"name": result_name, "required": true, "schema": result_schema},
        "errors": errors,
    })
}

/// The by-name content descriptors of an object schema's properties: required ones first, each
/// group by name (independent of JSON map order, so the output is stable).
fn content_descriptors(schema: &Value) -> Vec<Value> {
    let required: Vec<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let mut props: Vec<(&String, &Value)> =
        schema.get("properties").and_then(Value::as_object).map(|p| p.iter().collect()).unwrap_or_default();
    props.sort_by_key(|(name, _)| (!required.contains(&name.as_str()), name.as_str()));
    props
        .into_iter()
        .map(|(name, prop)| {
            let mut d = Map::new();
            d.insert("name".into(), name.as_str().into());
            if let Some(text) = prop.get("description").and_then(Value::as_str) {
                d.insert("description".into(), text.into());
            }
            d.insert("required".into(), required.contains(&name.as_str()).into());
            d.insert("schema".into(), prop.clone());
            Value::Object(d)
        })
        .collect()
}

/// The OpenRPC error object of `code` (OQ-CP-12): the JSON-RPC integer, a one-sentence message
/// from the code's own documentation, and the `data` every such error carries.
fn error_object(code: ErrorCode) -> Value {
    let message = code_description(code).unwrap_or_else(|| code.as_str().to_owned());
    json!({
        "code": code.jsonrpc_code(),
        "message": format!("{}: {message}", code.as_str()),
        "data": {"code": code.as_str(), "retryable": code.retryable()},
    })
}

/// The doc comment of `code`'s variant, as schemars publishes it in [`ErrorCode`]'s schema.
fn code_description(code: ErrorCode) -> Option<String> {
    // The variants' own docs, as schemars reads them (before the pipeline folds them together).
    let schema = schemars::schema_for!(ErrorCode).to_value();
    let variants = schema.get("oneOf").and_then(Value::as_array)?;
    variants
        .iter()
        .find(|v| v.get("const").and_then(Value::as_str) == Some(code.as_str()))
        .and_then(|v| v.get("description").and_then(Value::as_str))
        .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ref_safe_keeps_capability_ids_and_replaces_the_rest() {
        assert_eq!(ref_safe("vendor.com.example.wave"), "vendor.com.example.wave");
        assert_eq!(ref_safe("a/b~c d#e"), "a_b_c_d_e");
        assert_eq!(input_schema_key("notice.show"), "notice.show.input");
        assert_eq!(output_schema_key("notice.show"), "notice.show.output");
    }

    #[test]
    fn every_code_has_a_documented_message() {
        for code in ErrorCode::ALL {
            assert!(code_description(code).is_some_and(|d| !d.is_empty()), "{code}");
        }
    }
}
