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
//! - Methods: every name of [`METHODS`] (CP-2-1) plus `rpc.discover`; params are content
//!   descriptors made from [`params::params_schema`], the schemas the engine validates with;
//!   by name, and a params object with unknown keys is rejected (`INVALID_PARAMS`).
//! - Result schemas come from the serialized types where they exist
//!   ([`RequestSnapshot`], [`CapabilitySpec::descriptor_schema`], [`CharacterSpec`],
//!   [`StyleSpec`]); the wrappers of the discovery results are written here and checked against
//!   the real engine's answers by `tests/openrpc.rs`.
//! - Errors: every [`ErrorCode`] as an OpenRPC error object under `components/errors`, keyed by
//!   its wire string, with its JSON-RPC integer (OQ-CP-12) and `data` = `{"code", "retryable"}`
//!   (the `data` every such error carries, [`CompanionError::data`]); methods reference the
//!   codes they can raise.
//! - Capability schemas: each capability's `inputSchema`/`outputSchema` under
//!   `components/schemas/<capability id>.input` / `.output` ([`input_schema_key`]); internal
//!   `$ref`s are rebased so they resolve inside this document. `requests.create`'s `params` and
//!   the snapshot's `result` reference them (`anyOf`).
//!
//! - The socket transport's own methods (`pairing.request`,
//!   `session.authenticate`) follow `rpc.discover`; their shapes are those of [`super::auth`].
//!   Further methods can be appended with [`document_with`] and a [`MethodDoc`] each.
//! - Result schemas are open (no `additionalProperties: false`): within a major version results
//!   only gain keys (CP-7-4), and the transport adds some to `runtime.describe`.
//!
//! [`CompanionError::data`]: super::CompanionError::data

use super::error::ErrorCode;
use super::model::RequestSnapshot;
use super::params::{self, METHODS, PROTOCOL_VERSION};
use crate::catalog::schema::{Contract, Definitions, input_schema_for, normalize, output_schema_for};
use crate::catalog::{CapabilitySpec, Catalog, CharacterSpec, FieldProblem, Scope, StyleSpec};
use serde_json::{Map, Value, json};

/// The OpenRPC specification version the document follows.
pub const OPENRPC_VERSION: &str = "1.3.2";

/// The OpenRPC service-discovery method: returns [`document`].
pub const DISCOVER_METHOD: &str = "rpc.discover";

/// `info.title` of the document.
pub const TITLE: &str = "bridge desktop companion API";

/// One extra method for [`document_with`]: what the JSON-RPC server answers beyond CP-2-1
/// (e.g. the auth layer's `pairing.request` / `session.authenticate`).
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

/// The OpenRPC document for the whole companion API, generated from `catalog` (CP-2-13, CP-8-2).
/// Deterministic for a given catalog and build. Never fails: a registry entry that cannot be
/// described (it cannot happen with registered specs) is left out rather than panicking.
pub fn document(catalog: &Catalog) -> Value {
    document_with(catalog, &[])
}

/// [`document`] plus `extra` methods, listed after the transport's methods in the given order.
/// An extra method whose name is already described is ignored (CP-7-7: extensions never
/// redefine core methods).
pub fn document_with(catalog: &Catalog, extra: &[MethodDoc]) -> Value {
    // Every schema goes through the schema pipeline; definitions of recursive types are hoisted
    // into `components/schemas` next to the named ones.
    let mut schemas = Definitions::new("#/components/schemas/");
    for (name, schema) in fixed_schemas() {
        schemas.define(name, normalize(schema, Contract::Output));
    }
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    for cap in catalog.capabilities() {
        let (ik, ok) = (input_schema_key(cap.id()), output_schema_key(cap.id()));
        inputs.push(schemas.define(&ik, Value::Object(cap.input_schema().clone())));
        outputs.push(schemas.define(&ok, Value::Object(cap.output_schema().clone())));
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

    let mut methods = Vec::new();
    let mut names = Vec::new();
    for name in METHODS.iter().copied().chain([DISCOVER_METHOD]) {
        if let Some(m) = core_method(name, &inputs, &mut schemas) {
            methods.push(m);
            names.push(name.to_owned());
        }
    }
    for m in transport_methods().iter().chain(extra) {
        if names.contains(&m.name) {
            continue;
        }
        names.push(m.name.clone());
        let params = schemas.embed(normalize(m.params_schema.clone(), Contract::Input));
        let result = schemas.embed(normalize(m.result_schema.clone(), Contract::Output));
        methods.push(method_object(&m.name, &m.summary, &m.description, &params, &m.result_name, result, &m.errors));
    }

    let errors: Map<String, Value> = ErrorCode::ALL.iter().map(|c| (c.as_str().to_owned(), error_object(*c))).collect();

    json!({
        "openrpc": OPENRPC_VERSION,
        "info": {
            "title": TITLE,
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The desktop companion protocol (CP) over JSON-RPC 2.0: discovery of the runtime, \
                            characters, capabilities and styles, and the request lifecycle (create, get, wait, \
                            cancel, update). A JSON-RPC response does not mean the sprite operation has finished: \
                            the request snapshot's `state` says that (CP-8-1). Capabilities are per-character and \
                            per-authorisation: `capabilities.list` is the authority at run time; the capability \
                            schemas in this document are those registered when it was generated (CP-8-2).",
            "x-protocolVersion": PROTOCOL_VERSION,
            "x-authentication": "Over the socket, every method except `runtime.describe`, `pairing.request` and \
                                 `session.authenticate` needs a connection authenticated with \
                                 `session.authenticate` (else UNAUTHENTICATED); scopes come from the pairing \
                                 (CP-5-6).",
            "x-catalogRevision": catalog.catalog_revision(),
        },
        "methods": methods,
        "components": {"schemas": schemas.into_map(), "errors": errors},
    })
}

/// `components/schemas` key of capability `id`'s `inputSchema`: `<id>.input`, made `$ref`-safe
/// by [`ref_safe`].
pub fn input_schema_key(id: &str) -> String {
    format!("{}.input", ref_safe(id))
}

/// `components/schemas` key of capability `id`'s `outputSchema`: `<id>.output`.
pub fn output_schema_key(id: &str) -> String {
    format!("{}.output", ref_safe(id))
}

/// A component key that needs no escaping in a `$ref` (JSON Pointer `~`/`/`, URI fragment
/// characters): every character outside `[A-Za-z0-9_.-]` becomes `_`. Registered capability
/// ids (`[a-z0-9_.]`, CP-2-27) pass unchanged, so keys never collide.
pub fn ref_safe(id: &str) -> String {
    id.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') { c } else { '_' }).collect()
}

fn schema_pointer(key: &str) -> String {
    format!("#/components/schemas/{key}")
}

fn schema_ref(key: &str) -> Value {
    json!({"$ref": schema_pointer(key)})
}

/// Without the Unix socket transport there are no transport methods to describe.
#[cfg(not(unix))]
fn transport_methods() -> Vec<MethodDoc> {
    Vec::new()
}

/// The components every document has, keyed by name.
fn fixed_schemas() -> Vec<(&'static str, Value)> {
    vec![
        ("RequestSnapshot", output_schema_for::<RequestSnapshot>()),
        ("CapabilityDescriptor", CapabilitySpec::descriptor_schema()),
        ("Character", output_schema_for::<CharacterSpec>()),
        ("Style", output_schema_for::<StyleSpec>()),
        ("ErrorCode", input_schema_for::<ErrorCode>()),
        ("FieldProblem", input_schema_for::<FieldProblem>()),
        ("Scope", input_schema_for::<Scope>()),
        (
            "ErrorData",
            json!({
                "type": "object",
                "description": "`error.data` of every companion error (OQ-CP-12, CP-6-16): the stable string \
                                `code`, `retryable` (the same call may succeed later), and code-specific \
                                details (see each code's description).",
                "properties": {
                    "code": schema_ref("ErrorCode"),
                    "retryable": {"type": "boolean"},
                    "problems": {"type": "array", "items": schema_ref("FieldProblem"),
                                 "description": "INVALID_PARAMS: what is wrong, per JSON pointer."},
                },
                "required": ["code", "retryable"],
            }),
        ),
        (
            "RuntimeDescription",
            json!({
                "type": "object",
                "description": "`runtime.describe` result (CP-2-2, CP-7-1): implementation, protocol version(s), \
                                runtime instance, catalog revision, limits, the caller's authorisation, result \
                                retention and the user's availability settings. Over the socket it is open to \
                                unauthenticated clients, so the protocol version can always be negotiated \
                                (CP-7-2), and carries the transport's limits and `authentication`.",
                "properties": {
                    "implementation": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}, "version": {"type": "string"}},
                        "required": ["name", "version"],
                    },
                    "protocolVersion": {"type": "string", "description": "The protocol version spoken (CP-7-1)."},
                    "supportedProtocolVersions": {"type": "array", "items": {"type": "string"}},
                    "runtimeInstanceId": {"type": "string",
                                          "description": "Changes when the app restarts (CP-4-21)."},
                    "catalogRevision": {"type": "integer", "minimum": 0},
                    "limits": {
                        "type": "object",
                        "description": "Capacity, rate, wait and transport limits; times in ms, sizes in bytes \
                                        (CP-4-8, CP-5-13, OQ-CP-7, OQ-CP-8).",
                        "properties": {
                            "maxActivePerClient": {"type": "integer", "minimum": 0},
                            "maxActiveTotal": {"type": "integer", "minimum": 0},
                            "maxRecords": {"type": "integer", "minimum": 0},
                            "maxCreatesPerMinute": {"type": "integer", "minimum": 0},
                            "defaultWaitMs": {"type": "integer", "minimum": 0},
                            "maxWaitMs": {"type": "integer", "minimum": 0},
                            "maxTimeoutMs": {"type": "integer", "minimum": 0},
                            "maxMessageBytes": {"type": "integer", "minimum": 0},
                            "maxUnauthenticatedMessageBytes": {"type": "integer", "minimum": 0},
                            "authTimeoutMs": {"type": "integer", "minimum": 0},
                            "maxBatchLength": {"type": "integer", "minimum": 0},
                            "maxConnections": {"type": "integer", "minimum": 0},
                            "maxInFlightPerConnection": {"type": "integer", "minimum": 0},
                            "pairingTimeoutMs": {"type": "integer", "minimum": 0},
                        },
                        "required": ["maxActivePerClient", "maxActiveTotal", "maxRecords", "maxCreatesPerMinute",
                                     "defaultWaitMs", "maxWaitMs", "maxTimeoutMs"],
                    },
                    "authorization": {
                        "type": "object",
                        "description": "Who the runtime thinks the caller is (`clientId` `null` before \
                                        authentication).",
                        "properties": {
                            "authenticated": {"type": "boolean"},
                            "clientId": {"type": ["string", "null"]},
                            "scopes": {"type": "array", "items": schema_ref("Scope")},
                            "internal": {"type": "boolean"},
                        },
                        "required": ["clientId", "scopes", "internal"],
                    },
                    "authentication": {
                        "type": "object",
                        "description": "The methods that authenticate a connection and pair a new client.",
                        "properties": {
                            "authenticateMethod": {"type": "string"},
                            "pairingMethod": {"type": "string"},
                        },
                    },
                    "resultRetentionMs": {"type": "integer", "minimum": 0,
                                          "description": "How long results stay readable, ms (CP-4-16)."},
                    "availability": {
                        "type": "object",
                        "description": "The user's settings (CP-4-15).",
                        "properties": {
                            "visible": {"type": "boolean"},
                            "externalPaused": {"type": "boolean"},
                            "reducedMotion": {"type": "boolean"},
                        },
                        "required": ["visible", "externalPaused", "reducedMotion"],
                    },
                },
                "required": ["implementation", "protocolVersion", "supportedProtocolVersions", "runtimeInstanceId",
                             "catalogRevision", "limits", "authorization", "resultRetentionMs", "availability"],
            }),
        ),
        (
            "CharacterList",
            json!({
                "type": "object",
                "description": "`characters.list` result (CP-2-3): the current character and every character with \
                                the registered capabilities it supports.",
                "properties": {
                    "current": {"type": ["string", "null"], "description": "The user's current character."},
                    "characters": {"type": "array", "items": schema_ref("Character")},
                },
                "required": ["current", "characters"],
            }),
        ),
        (
            "CapabilityPage",
            json!({
                "type": "object",
                "description": "`capabilities.list` result (CP-2-4): the descriptors the caller's scopes allow.",
                "properties": {
                    "catalogRevision": {"type": "integer", "minimum": 0},
                    "capabilities": {"type": "array", "items": schema_ref("CapabilityDescriptor")},
                    "nextCursor": {"type": ["string", "null"],
                                   "description": "Pass as `cursor` for the next page; `null` on the last."},
                },
                "required": ["catalogRevision", "capabilities", "nextCursor"],
            }),
        ),
        (
            "StyleList",
            json!({
                "type": "object",
                "description": "`styles.list` result (CP-2-6).",
                "properties": {"styles": {"type": "array", "items": schema_ref("Style")}},
                "required": ["styles"],
            }),
        ),
        (
            "OpenrpcDocument",
            json!({
                "type": "object",
                "description": "An OpenRPC document (https://spec.open-rpc.org): this one.",
                "properties": {"openrpc": {"type": "string"}, "info": {"type": "object"},
                               "methods": {"type": "array", "items": {"type": "object"}}},
                "required": ["openrpc", "info", "methods"],
            }),
        ),
    ]
}

/// The socket transport's methods besides `rpc.discover` (`session.authenticate`, `pairing.request`), with
/// the shapes [`super::auth`] accepts and returns. A name this module has no description for
/// still appears, with a generic one, so nothing the server answers goes undocumented.
#[cfg(unix)]
fn transport_methods() -> Vec<MethodDoc> {
    use super::auth::{MAX_CLIENT_ID_BYTES, MAX_KEY_BYTES, MAX_NAME_CHARS};
    use ErrorCode as E;
    let scopes = json!({"type": "array", "items": schema_ref("Scope")});
    [super::auth::AUTHENTICATE_METHOD, super::auth::PAIRING_METHOD]
        .iter()
        .filter(|name| **name != DISCOVER_METHOD)
        .map(|name| match *name {
            "pairing.request" => MethodDoc {
                name: (*name).to_owned(),
                summary: "Asks the user to pair a new client; returns its id and key once.".into(),
                description: "No authentication needed. The host asks the user, showing the self-reported `name`, \
                              the requested scopes and the caller's process; nothing is approved from the name \
                              alone (CP-5-2, CP-5-11). On approval the result carries the new `clientId` and `key` \
                              (shown only this once; the runtime keeps only its digest, CP-5-3, CP-5-4), the \
                              granted scopes (a subset of those asked for) and the label the user confirmed. \
                              Another pairing waiting for the user: RATE_LIMITED; denied, unanswered in time or \
                              nothing granted: FORBIDDEN."
                    .into(),
                params_schema: json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "minLength": 1, "maxLength": MAX_NAME_CHARS,
                                 "description": "The client's self-reported name, no control characters."},
                        "scopes": {"type": "array", "items": schema_ref("Scope"), "minItems": 1, "maxItems": 16,
                                   "description": "The scopes asked for (CP-5-6)."},
                    },
                    "required": ["name", "scopes"],
                    "additionalProperties": false,
                }),
                result_name: "pairing".into(),
                result_schema: json!({
                    "type": "object",
                    "properties": {
                        "clientId": {"type": "string", "description": "`cl_` + 32 hex digits."},
                        "key": {"type": "string", "description": "`ck_` + 64 hex digits; store it, it is never \
                                                                   shown again."},
                        "scopes": scopes,
                        "label": {"type": "string", "description": "The source label shown with every request \
                                                                     (CP-4-7)."},
                    },
                    "required": ["clientId", "key", "scopes", "label"],
                }),
                errors: vec![E::InvalidParams, E::RateLimited, E::Forbidden, E::InternalError],
            },
            "session.authenticate" => MethodDoc {
                name: (*name).to_owned(),
                summary: "Authenticates this connection as a paired client.".into(),
                description: "Must precede every call that needs an identity on this connection; once per \
                              connection. An unknown client and a wrong key give the same UNAUTHENTICATED."
                    .into(),
                params_schema: json!({
                    "type": "object",
                    "properties": {
                        "clientId": {"type": "string", "minLength": 1, "maxLength": MAX_CLIENT_ID_BYTES,
                                     "description": "The `clientId` from pairing."},
                        "key": {"type": "string", "minLength": 1, "maxLength": MAX_KEY_BYTES,
                                "description": "The `key` from pairing."},
                    },
                    "required": ["clientId", "key"],
                    "additionalProperties": false,
                }),
                result_name: "session".into(),
                result_schema: json!({
                    "type": "object",
                    "properties": {"clientId": {"type": "string"}, "label": {"type": "string"}, "scopes": scopes},
                    "required": ["clientId", "label", "scopes"],
                }),
                errors: vec![E::InvalidParams, E::Unauthenticated, E::InternalError],
            },
            other => MethodDoc {
                name: other.to_owned(),
                summary: format!("`{other}` (transport method)."),
                description: "Served by the socket transport.".into(),
                params_schema: json!({"type": "object", "properties": {}}),
                result_name: "result".into(),
                result_schema: json!({}),
                errors: vec![E::InvalidParams, E::InternalError],
            },
        })
        .collect()
}

/// Codes every call can fail with at the authentication/validation/storage layer.
const BASE_ERRORS: [ErrorCode; 3] = [ErrorCode::Unauthenticated, ErrorCode::InvalidParams, ErrorCode::InternalError];

/// Summary, description, result (name, schema) and extra errors of a CP-2-1 method or
/// `rpc.discover`; `None` for a name this module does not know (a new entry in `METHODS` then
/// still gets a generic description).
fn core_method(name: &str, capability_inputs: &[Value], schemas: &mut Definitions) -> Option<Value> {
    use ErrorCode as E;
    const DISCOVER: &str = "Needs the `discover` scope (CP-2-14).";
    let (summary, description, result_name, result, errors): (&str, String, &str, Value, &[ErrorCode]) = match name {
        "runtime.describe" => (
            "Describes the runtime: versions, instance, limits, authorisation, retention.",
            "Implementation and protocol versions, runtime instance id, `catalogRevision`, limits, the caller's \
             authorisation and the result retention period (CP-2-2). With `protocolVersions`, at least one must be \
             supported, else INVALID_PARAMS (CP-7-2). Over the socket it needs neither authentication nor a scope, \
             so a client can always negotiate the protocol version."
                .to_owned(),
            "runtime",
            schema_ref("RuntimeDescription"),
            &[E::Forbidden],
        ),
        "characters.list" => (
            "Lists the characters, the current one, and the capabilities each supports.",
            format!("Counts derive from the arrays (CP-2-3). {DISCOVER}"),
            "characters",
            schema_ref("CharacterList"),
            &[E::Forbidden],
        ),
        "capabilities.list" => (
            "Lists the capability descriptors the caller's authorisation allows, paginated.",
            format!(
                "Descriptors whose `requiredScopes` the caller holds, with `catalogRevision`; a cursor from another \
                 revision is INVALID_PARAMS (CP-2-4). {DISCOVER}"
            ),
            "page",
            schema_ref("CapabilityPage"),
            &[E::Forbidden],
        ),
        "capabilities.describe" => (
            "Returns the complete contract of one capability.",
            format!("Unknown capability: UNSUPPORTED_CAPABILITY (CP-2-5, CP-2-28). {DISCOVER}"),
            "capability",
            schema_ref("CapabilityDescriptor"),
            &[E::Forbidden, E::UnsupportedCapability],
        ),
        "styles.list" => (
            "Lists the styles and the capabilities each applies to.",
            format!("No promise that every capability supports every style (CP-2-6). {DISCOVER}"),
            "styles",
            schema_ref("StyleList"),
            &[E::Forbidden],
        ),
        "requests.create" => (
            "Validates and creates a request; returns its snapshot.",
            "Validates `params` against the capability's inputSchema plus its semantic checks, checks the \
             capability's `requiredScopes`, and accepts the request into the queue (CP-2-7, CP-3-1). Acceptance \
             is not completion: follow the snapshot with `requests.wait` (CP-8-1). `timeoutMs` must lie within the \
             capability's `limits` and runs from acceptance (CP-3-17). The same `idempotencyKey` with the same \
             params returns the same request; with other params IDEMPOTENCY_CONFLICT (CP-4-1 … CP-4-3)."
                .to_owned(),
            "request",
            schema_ref("RequestSnapshot"),
            &[
                E::Forbidden,
                E::UnsupportedCapability,
                E::UnsupportedStyle,
                E::IdempotencyConflict,
                E::RuntimeUnavailable,
                E::RateLimited,
                E::QueueFull,
            ],
        ),
        "requests.get" => (
            "Returns one of the caller's requests and its current result.",
            "Another client's request is NOT_FOUND, indistinguishable from a missing one (CP-2-8, CP-6-18).".to_owned(),
            "request",
            schema_ref("RequestSnapshot"),
            &[E::NotFound, E::ResultExpired],
        ),
        "requests.wait" => (
            "Waits, for a bounded time, until the request changes or ends.",
            "Returns as soon as `revision` exceeds `afterRevision` (default: the current one) or the request is \
             terminal, else after `waitMs`; a wait timeout does not cancel the request (CP-2-9, CP-3-20)."
                .to_owned(),
            "request",
            schema_ref("RequestSnapshot"),
            &[E::NotFound, E::ResultExpired],
        ),
        "requests.cancel" => (
            "Cancels one of the caller's requests.",
            "Only the owner can cancel (CP-2-10); the state becomes `cancelled` at once (CP-3-24). A terminal \
             request is returned unchanged."
                .to_owned(),
            "request",
            schema_ref("RequestSnapshot"),
            &[E::NotFound, E::ResultExpired],
        ),
        "requests.update" => (
            "Updates a non-terminal request's updatable fields, or completes a progress request.",
            "Only the capability's `updatableFields` may change; `expectedRevision` must be current, else \
             REVISION_CONFLICT (CP-2-11, CP-3-25). `complete: true` ends a `caller_completes` request."
                .to_owned(),
            "request",
            schema_ref("RequestSnapshot"),
            &[E::NotFound, E::ResultExpired, E::RevisionConflict, E::UnsupportedCapability],
        ),
        DISCOVER_METHOD => (
            "Returns this OpenRPC document.",
            format!(
                "OpenRPC service discovery (CP-8-2): generated from the same registry the runtime serves (CP-2-13). \
                 {DISCOVER}"
            ),
            "openrpcDocument",
            schema_ref("OpenrpcDocument"),
            &[E::Forbidden],
        ),
        _ => return None,
    };
    let mut params_schema = if name == DISCOVER_METHOD {
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    } else {
        schemas.embed(params::params_schema(name)?)
    };
    if name == "requests.create"
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
    let mut all_errors: Vec<ErrorCode> = BASE_ERRORS.to_vec();
    all_errors.extend_from_slice(errors);
    let mut m = method_object(name, summary, &description, &params_schema, result_name, result, &all_errors);
    if name != "runtime.describe"
        && !name.starts_with("requests.")
        && let Value::Object(obj) = &mut m
    {
        obj.insert("x-requiredScopes".into(), json!([Scope::Discover.as_str()]));
    }
    Some(m)
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
