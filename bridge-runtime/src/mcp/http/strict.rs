//! Strict streamable-HTTP wire rules in front of rmcp's [`StreamableHttpService`] (MA-8).
//!
//! rmcp does the transport's work: routing-header checks (`-32020`, MA-6-4), version checks,
//! sessions, SSE. This layer only tightens what reaches it and reshapes a few of its answers:
//!
//! * **Every method**, from the request head alone, in this order: `Host`, `Origin`
//!   (`access.rs`), the access token (`token.rs`), then the connection cap. A refusal is the
//!   HTTP status with no body and `Connection: close` (403; 401 with
//!   `WWW-Authenticate: Bearer realm="bridge"`; 503 past the cap): nothing of the body is read,
//!   and a notification gets no JSON-RPC body (MA-8-4). An admitted request carries its token's
//!   `TokenLabel` in its extensions and runs in an `mcp_http` span with `agent = label`. rmcp's own `Host`/`Origin` checks stay
//!   behind as a second line.
//! * **POST** — the body is buffered once, within `HttpOptions::body_timeout` (HTTP 408 with
//!   no body and `Connection: close` past it), up to the same cap as rmcp's
//!   `max_request_body_bytes`, parsed once with serde_json, and forwarded byte for byte.
//!   - Over the cap: HTTP 413 with a JSON-RPC `-32600` error (`id: null`).
//!   - Declared `application/json` but not JSON: HTTP 400 with a JSON-RPC `-32700` Parse error
//!     (`id: null`), however deep the body goes before it breaks or ends (one answer per POST:
//!     stdio's storm guard has nothing to ration here). rmcp answers 415 with plain text.
//!   - Well-formed JSON nested deeper than the parser reads: the answer stdio gives the same
//!     bytes, from the classifier both transports share (`mcp::inbound`): a `tools/call` gets the
//!     GB tool error `validation_failed` naming the argument and the cap (HTTP 200, a JSON-RPC
//!     result in the dispatcher's shape — the server's `_meta`, `bridge/windowId` for a window
//!     tool, `resultType` only for a 2026-07-28 request — whatever the routing headers say),
//!     another request with a usable id `-32602` with that id (HTTP 400), a notification or a
//!     response no body (HTTP 400), the rest `-32700` with `id: null`.
//!   - A request on a legacy session (`Mcp-Session-Id`) whose `id` is the id of a request of
//!     that session still in flight (its response not yet finished): HTTP 400 with a JSON-RPC
//!     `-32600` error carrying that id, on its own POST and at once, and the request never
//!     reaches rmcp, which would run both and route both answers to one response stream (the
//!     other POST never answered). Every POST gets exactly one answer. (stdio, one stream for
//!     both answers, writes that error after the original's answer instead.) An id is free
//!     again when its POST's response ends or its client drops it.
//!   - JSON, but not an MCP JSON-RPC message (a batch, no `"jsonrpc": "2.0"`, an `id` that is
//!     neither a string nor an integer, a non-string `method`, anything rmcp's own
//!     [`ClientJsonRpcMessage`] refuses): HTTP 400, `-32600` Invalid Request; params or
//!     arguments of the wrong JSON type (`"params": 5`, `"arguments": []`, `"name": 5`, also
//!     where rmcp would take a known method for a custom one and answer `-32601`): HTTP 400,
//!     `-32602` Invalid params, decided by the stdio pre-layer's rules with rmcp's types.
//!   - `params._meta` neither an object nor `null` (which rmcp reads as absent),
//!     `io.modelcontextprotocol/protocolVersion` not a string or
//!     `io.modelcontextprotocol/clientCapabilities` not a capability object: HTTP 400, `-32602`
//!     Invalid params — the code the 2026-07-28 spec and rmcp give a malformed request `_meta`.
//!     These checks run *before* rmcp compares routing headers (MA-8-1): a malformed request
//!     gets the same error whatever its headers say.
//!   - A notification (`method`, no `id`) never gets a body: rejected by this layer or by rmcp,
//!     it keeps the HTTP status and loses the body (MA-8-2, MA-8-4); accepted, it keeps rmcp's
//!     202 with an empty body (MA-8-3).
//!   - An `initialize` without `Mcp-Session-Id` (it would open a legacy session) when the
//!     session cap is reached and no session is idle: HTTP 503 with a JSON-RPC `-32603` error
//!     (`id` echoed), before rmcp sees it (`HttpOptions::max_sessions`; an idle session is
//!     evicted instead when there is one, in `sessions.rs`).
//!   - A `subscriptions/listen` request past the cap on open listen streams: HTTP 503 with a
//!     JSON-RPC `-32603` error. An admitted stream holds its slot until its response body is
//!     dropped (`HttpOptions::max_listen_streams`).
//!   - rmcp's other plain-text errors on a request (406, 415, 404 unknown session, 403 `Host`
//!     or `Origin`, 400 unsupported `MCP-Protocol-Version` header) keep their status and get a
//!     JSON-RPC error body with the request's `id` (`-32600`, or `-32603` for 5xx). rmcp's
//!     JSON-RPC error bodies are kept as they are.
//! * **DELETE** — rmcp ends a legacy (2025-11-25) session with 202; this layer answers 204 No
//!   Content instead (clients expect 200 or 204), and 404 when the `Mcp-Session-Id` named no
//!   live session. rmcp's 405 for the 2026-07-28 endpoint (MA-1-6) and 400 without a session id
//!   are kept.
//! * Other methods pass through untouched.
//!
//! [`StreamableHttpService`]: rmcp::transport::StreamableHttpService

use super::access::Access;
use super::admission::Connection;
use super::sessions::BoundedSessions;
use super::token::Tokens;
use crate::mcp::inbound::{Inbound, is_modern, params_problem, request_problem};
use crate::mcp::server::refused_call_result;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::model::{ClientCapabilities, ClientJsonRpcMessage, ClientRequest, ErrorCode, JsonRpcMessage};
use rmcp::transport::streamable_http_server::session::SessionManager;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashSet;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// `params._meta` key of the request's protocol version (a string, MA-2-4).
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `params._meta` key of the client's capability map (an object, MA-2-4).
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// Longest rmcp plain-text error body this layer reads to reshape (rmcp's are one line).
const MAX_REWRITTEN_BODY: usize = 64 * 1024;

/// State of [`strict_wire`]: the session manager rmcp's service uses (to tell a legacy DELETE of
/// a live session from one of an unknown session, and whether a new session fits), the body cap
/// and the listen-stream slots.
#[derive(Clone)]
pub(super) struct Strict {
    /// The `Host`/`Origin` rules.
    pub(super) access: Arc<Access>,
    /// The access tokens (none: the app opted out).
    pub(super) tokens: Arc<Tokens>,
    /// The same manager the [`StreamableHttpService`](rmcp::transport::StreamableHttpService)
    /// was built with.
    pub(super) sessions: Arc<BoundedSessions>,
    /// Largest POST body accepted, in bytes; the service's `max_request_body_bytes`.
    pub(super) max_body_bytes: usize,
    /// Longest the whole POST body may take to arrive.
    pub(super) body_timeout: std::time::Duration,
    /// Slots for open `subscriptions/listen` streams.
    pub(super) listens: Listens,
    /// The bridge, for a tool result this layer answers in the dispatcher's shape (the
    /// server's identity, the tool's window).
    pub(super) bridge: crate::gui::Bridge,
    /// Request ids in flight on legacy sessions.
    pub(super) in_flight: InFlight,
}

/// The request ids in flight on legacy sessions: `(Mcp-Session-Id, id as JSON)`, one entry per
/// POST whose response has not ended. Bounded by the connections (one POST each).
#[derive(Clone, Default)]
pub(super) struct InFlight(Arc<Mutex<HashSet<(String, String)>>>);

impl InFlight {
    /// Claims `key`; `None` when a request with it is already in flight.
    fn claim(&self, key: (String, String)) -> Option<Claimed> {
        let mut set = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        set.insert(key.clone()).then(|| Claimed { set: self.clone(), key })
    }
}

/// A claimed request id, released when dropped (with its POST's response body).
struct Claimed {
    set: InFlight,
    key: (String, String),
}

impl Drop for Claimed {
    fn drop(&mut self) {
        self.set.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&self.key);
    }
}

/// A response body's data that holds something until it is dropped (the response ended or the
/// client went away).
struct HoldingClaim {
    inner: axum::body::BodyDataStream,
    _claim: Claimed,
}

impl futures_core::Stream for HoldingClaim {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.get_mut().inner).poll_next(cx)
    }
}

/// The cap on open `subscriptions/listen` streams: one semaphore permit per stream.
#[derive(Clone)]
pub(super) struct Listens {
    slots: Arc<Semaphore>,
    max: usize,
}

impl Listens {
    /// At most `max` streams at once (0: none; clamped to tokio's semaphore limit).
    pub(super) fn new(max: usize) -> Self {
        let max = max.min(Semaphore::MAX_PERMITS);
        Self { slots: Arc::new(Semaphore::new(max)), max }
    }

    fn try_acquire(&self) -> Option<OwnedSemaphorePermit> {
        self.slots.clone().try_acquire_owned().ok()
    }
}

/// A response body's data that holds a listen slot until it is dropped (the stream ended or
/// the client went away).
struct Holding {
    inner: axum::body::BodyDataStream,
    _slot: OwnedSemaphorePermit,
}

impl futures_core::Stream for Holding {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.get_mut().inner).poll_next(cx)
    }
}

/// The middleware (`axum::middleware::from_fn_with_state`): see the module docs.
pub(super) async fn strict_wire(State(strict): State<Strict>, mut request: Request, next: Next) -> Response {
    if let Err(status) = strict.access.check(request.version(), request.uri(), request.headers()) {
        return refuse(status);
    }
    let label = if strict.tokens.is_disabled() {
        None
    } else {
        match strict.tokens.check(request.headers()) {
            Some(label) => Some(label),
            None => {
                tracing::warn!("refused an HTTP request without a valid access token");
                let mut response = refuse(StatusCode::UNAUTHORIZED);
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"bridge\""));
                return response;
            }
        }
    };
    if request.extensions().get::<Connection>().is_some_and(|connection| !connection.admit()) {
        tracing::warn!("refused an HTTP request: every connection slot is taken (HttpOptions::max_connections)");
        return refuse(StatusCode::SERVICE_UNAVAILABLE);
    }
    let span = tracing::info_span!("mcp_http", agent = label.as_ref().map(|l| &*l.0));
    if let Some(label) = label {
        request.extensions_mut().insert(label);
    }
    let answer = async move {
        match *request.method() {
            Method::POST => post(&strict, request, next).await,
            Method::DELETE => delete(&strict, request, next).await,
            _ => next.run(request).await,
        }
    };
    tracing::Instrument::instrument(answer, span).await
}

/// What a POST body is, as far as the answer's shape goes.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// A JSON-RPC notification (`method`, no `id`): its answer never has a body (MA-8-2).
    Notification,
    /// Anything else; the `id` to echo in an error (`null` when there is no usable one).
    Other(Value),
}

/// A JSON-RPC error this layer answers with.
#[derive(Debug, Clone, PartialEq)]
struct WireError {
    status: StatusCode,
    code: ErrorCode,
    message: String,
}

impl WireError {
    fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into() }
    }

    fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorCode::INVALID_REQUEST, message)
    }

    fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorCode::INVALID_PARAMS, message)
    }

    /// A cap is reached: HTTP 503, `-32603`.
    fn busy(message: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, ErrorCode::INTERNAL_ERROR, message)
    }

    /// The HTTP answer: for a notification the status alone (MA-8-4), otherwise a JSON-RPC error.
    fn into_response(self, kind: &Kind) -> Response {
        match kind {
            Kind::Notification => empty(self.status),
            Kind::Other(id) => jsonrpc_error(self.status, id, self.code, &self.message),
        }
    }
}

async fn post(strict: &Strict, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(strict.body_timeout, read_capped(&parts.headers, body, strict.max_body_bytes));
    let bytes = match read.await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(error)) => return error.into_response(&Kind::Other(Value::Null)),
        Err(_elapsed) => {
            tracing::warn!(timeout = ?strict.body_timeout, "refused an HTTP request whose body did not arrive in time");
            return refuse(StatusCode::REQUEST_TIMEOUT);
        }
    };
    let parsed = serde_json::from_slice::<Value>(&bytes);
    if parsed.is_err()
        && is_json(&parts.headers)
        && let Some(answer) = unparseable(strict, &parts.headers, &bytes)
    {
        return answer;
    }
    let kind = parsed.as_ref().map_or(Kind::Other(Value::Null), classify);
    // A body not declared as JSON is rmcp's to refuse (415); it is reshaped below.
    let mut slot = None;
    let mut claim = None;
    if is_json(&parts.headers) {
        let checked = parsed
            .map_err(|e| WireError::new(StatusCode::BAD_REQUEST, ErrorCode::PARSE_ERROR, format!("Parse error: {e}")))
            .and_then(|value| check_message(&value).map(|()| value));
        let value = match checked {
            Ok(value) => value,
            Err(error) => return error.into_response(&kind),
        };
        match admit(strict, &parts.headers, &value, &kind) {
            Ok(admitted) => slot = admitted,
            Err(error) => return error.into_response(&kind),
        }
        match claim_id(strict, &parts.headers, &value) {
            Ok(claimed) => claim = claimed,
            Err(error) => return error.into_response(&kind),
        }
    }
    let response = next.run(Request::from_parts(parts, Body::from(bytes))).await;
    let response = finish_post(response, &kind).await;
    let response = match slot {
        Some(slot) => response.map(|body| Body::from_stream(Holding { inner: body.into_data_stream(), _slot: slot })),
        None => response,
    };
    match claim {
        Some(claim) => {
            response.map(|body| Body::from_stream(HoldingClaim { inner: body.into_data_stream(), _claim: claim }))
        }
        None => response,
    }
}

/// A request on a legacy session claims its id for as long as its POST's response lasts; a
/// second request with that id meanwhile is refused (see the module docs).
fn claim_id(strict: &Strict, headers: &HeaderMap, value: &Value) -> Result<Option<Claimed>, WireError> {
    let Some(session) = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) else {
        return Ok(None);
    };
    let (Some(id), true) = (value.get("id").filter(|id| valid_id(id)), value.get("method").is_some()) else {
        return Ok(None);
    };
    match strict.in_flight.claim((session.to_owned(), id.to_string())) {
        Some(claim) => Ok(Some(claim)),
        None => {
            tracing::debug!(%id, "refused a request whose id is in flight on its session");
            Err(WireError::invalid_request(
                "Invalid Request: a request with this id is still in progress on this session",
            ))
        }
    }
}

/// A JSON body serde_json cannot parse, answered as the stdio pre-layer answers the same bytes
/// (the classifier both transports share, `mcp::inbound`): too deep, a `tools/call` gets the
/// tool error `validation_failed` naming the argument (HTTP 200), another request `-32602` with
/// its id; not JSON, `-32700` with `id: null`; a notification or a response no body (HTTP 400).
/// `None` for an empty body, left to the caller's parse error.
fn unparseable(strict: &Strict, headers: &HeaderMap, bytes: &[u8]) -> Option<Response> {
    let message = match crate::mcp::inbound::classify(bytes) {
        Inbound::Blank | Inbound::Forward { .. } => return None,
        Inbound::Silent => return Some(empty(StatusCode::BAD_REQUEST)),
        Inbound::Reply { id, error } => {
            (StatusCode::BAD_REQUEST, serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error}))
        }
        Inbound::Unidentified(error) => {
            (StatusCode::BAD_REQUEST, serde_json::json!({"jsonrpc": "2.0", "id": null, "error": error}))
        }
        Inbound::RefuseCall { id, error, tool, version, ui } => {
            // The request's own era, else its session's: a legacy session has an id header.
            // Its own capabilities (a legacy session's, declared at its `initialize`, are not
            // kept here: without them, no window state).
            let modern = version.as_deref().map_or(!headers.contains_key("mcp-session-id"), is_modern);
            let result = refused_call_result(&strict.bridge, tool.as_deref(), error, modern, ui.unwrap_or(false));
            (StatusCode::OK, serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}))
        }
    };
    let (status, value) = message;
    let mut response = Response::new(Body::from(serde_json::to_vec(&value).unwrap_or_default()));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Some(response)
}

/// The caps: a session-opening `initialize` needs room in the session table;
/// a `subscriptions/listen` takes a listen slot, returned to be held by the response body.
fn admit(
    strict: &Strict,
    headers: &HeaderMap,
    value: &Value,
    kind: &Kind,
) -> Result<Option<OwnedSemaphorePermit>, WireError> {
    let Kind::Other(id) = kind else {
        return Ok(None);
    };
    match value.get("method").and_then(Value::as_str) {
        Some("initialize") if !headers.contains_key("mcp-session-id") && !strict.sessions.has_room() => {
            let (sessions, max) = (strict.sessions.len(), strict.sessions.max());
            tracing::warn!(%id, sessions, max_sessions = max, "refused a new HTTP session: every session is active");
            Err(WireError::busy(format!(
                "Server busy: all {max} MCP sessions are active (none is idle to evict); \
                 retry later or end an unused session with DELETE"
            )))
        }
        Some("subscriptions/listen") => match strict.listens.try_acquire() {
            Some(slot) => Ok(Some(slot)),
            None => {
                let max = strict.listens.max;
                tracing::warn!(%id, max_listen_streams = max, "refused subscriptions/listen: too many open streams");
                Err(WireError::busy(format!(
                    "Server busy: {max} subscriptions/listen streams are open (the limit); \
                     cancel one or retry later"
                )))
            }
        },
        _ => Ok(None),
    }
}

/// Buffers `body`, refusing more than `max` bytes (at once when `Content-Length` says so).
async fn read_capped(headers: &HeaderMap, mut body: Body, max: usize) -> Result<Bytes, WireError> {
    let too_large = || {
        WireError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::INVALID_REQUEST,
            format!("Invalid Request: request body exceeds {max} bytes"),
        )
    };
    let declared =
        headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > max as u64) {
        return Err(too_large());
    }
    let mut collected = Vec::with_capacity(declared.map_or(0, |len| len as usize));
    while let Some(frame) = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await {
        let frame =
            frame.map_err(|e| WireError::invalid_request(format!("Invalid Request: cannot read the body: {e}")))?;
        if let Ok(data) = frame.into_data() {
            if data.len() > max - collected.len() {
                return Err(too_large());
            }
            collected.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from(collected))
}

/// `Content-Type` is `application/json` (parameters allowed), as rmcp requires.
fn is_json(headers: &HeaderMap) -> bool {
    headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|ct| {
        let essence = ct.split_once(';').map_or(ct, |(essence, _)| essence);
        essence.trim().eq_ignore_ascii_case("application/json")
    })
}

/// Notification (an object with `method` and no `id`, rmcp's reading) or not, and the `id` to
/// echo: a string or an integer, else `null`.
fn classify(value: &Value) -> Kind {
    let Some(object) = value.as_object() else {
        return Kind::Other(Value::Null);
    };
    match object.get("id") {
        None if object.contains_key("method") => Kind::Notification,
        Some(id) if valid_id(id) => Kind::Other(id.clone()),
        _ => Kind::Other(Value::Null),
    }
}

/// MCP request ids are strings or integers (no `null`, no fraction).
fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// MA-8-1 step 1: the JSON-RPC shape of one message, before rmcp looks at any header.
fn check_message(value: &Value) -> Result<(), WireError> {
    let object = match value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return Err(WireError::invalid_request(
                "Invalid Request: JSON-RPC batches are not supported; send one message per POST",
            ));
        }
        _ => return Err(WireError::invalid_request("Invalid Request: the body must be a JSON-RPC message object")),
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(WireError::invalid_request("Invalid Request: `jsonrpc` must be \"2.0\""));
    }
    if object.get("id").is_some_and(|id| !valid_id(id)) {
        return Err(WireError::invalid_request("Invalid Request: `id` must be a string or an integer"));
    }
    if object.get("method").is_some_and(|method| !method.is_string()) {
        return Err(WireError::invalid_request("Invalid Request: `method` must be a string"));
    }
    // `"_meta": null` is left to rmcp, which reads it as absent.
    if let Some(meta) = object.get("params").and_then(|params| params.get("_meta")).filter(|meta| !meta.is_null()) {
        check_meta(meta)?;
    }
    // Whatever else rmcp's own message type refuses is refused here, before the headers too:
    // params of the wrong JSON type as -32602, as over stdio (the stdio pre-layer's rules,
    // `mcp::inbound`), the rest as -32600. A known method rmcp would take for a custom one
    // (its params did not fit) is -32602 too, not rmcp's -32601.
    match ClientJsonRpcMessage::deserialize(value) {
        Ok(JsonRpcMessage::Request(request)) => match &request.request {
            ClientRequest::CustomRequest(custom) => match params_problem(&custom.method, custom.params.as_ref()) {
                Some(problem) => Err(WireError::invalid_params(problem)),
                None => Ok(()),
            },
            _ => Ok(()),
        },
        Ok(_) => Ok(()),
        Err(e) => match request_problem(object) {
            wrong_params if wrong_params.code == ErrorCode::INVALID_PARAMS => {
                Err(WireError::invalid_params(wrong_params.message))
            }
            _ => Err(WireError::invalid_request(format!("Invalid Request: not an MCP JSON-RPC message: {e}"))),
        },
    }
}

/// The request `_meta` keys MA-8-1 names: protocol version a string, capabilities an object
/// (one rmcp reads as [`ClientCapabilities`]).
fn check_meta(meta: &Value) -> Result<(), WireError> {
    let Some(meta) = meta.as_object() else {
        return Err(WireError::invalid_params("Invalid params: `params._meta` must be an object"));
    };
    if meta.get(META_PROTOCOL_VERSION).is_some_and(|version| !version.is_string()) {
        return Err(WireError::invalid_params(format!(
            "Invalid params: request _meta has a malformed {META_PROTOCOL_VERSION} (must be a string)"
        )));
    }
    if let Some(capabilities) = meta.get(META_CLIENT_CAPABILITIES) {
        let malformed = |why: String| {
            WireError::invalid_params(format!(
                "Invalid params: request _meta has a malformed {META_CLIENT_CAPABILITIES} ({why})"
            ))
        };
        if !capabilities.is_object() {
            return Err(malformed("must be an object".into()));
        }
        ClientCapabilities::deserialize(capabilities).map_err(|e| malformed(e.to_string()))?;
    }
    Ok(())
}

/// rmcp's answer to a POST, reshaped: no body for a notification (MA-8-2, MA-8-4), a JSON-RPC
/// error body in place of plain text on a failed request.
async fn finish_post(response: Response, kind: &Kind) -> Response {
    let status = response.status();
    let failed = status.is_client_error() || status.is_server_error();
    let (mut parts, body) = response.into_parts();
    let body = match kind {
        Kind::Notification => Body::empty(),
        Kind::Other(id) if failed && !is_json(&parts.headers) => {
            let text = axum::body::to_bytes(body, MAX_REWRITTEN_BODY).await.unwrap_or_default();
            let mut message = String::from_utf8_lossy(&text).trim().to_owned();
            if message.is_empty() {
                message = status.canonical_reason().unwrap_or("HTTP error").to_owned();
            }
            let code = if status.is_server_error() { ErrorCode::INTERNAL_ERROR } else { ErrorCode::INVALID_REQUEST };
            parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            jsonrpc_error_body(id, code, &message)
        }
        Kind::Other(_) => return Response::from_parts(parts, body),
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    if matches!(kind, Kind::Notification) {
        parts.headers.remove(header::CONTENT_TYPE);
    }
    Response::from_parts(parts, body)
}

async fn delete(strict: &Strict, request: Request, next: Next) -> Response {
    // Asked before rmcp closes the session; a failed look-up leaves rmcp's answer standing.
    let session = request.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(Arc::<str>::from);
    let live = match &session {
        Some(id) => strict.sessions.has_session(id).await.unwrap_or(true),
        None => true,
    };
    let response = next.run(request).await;
    if response.status() != StatusCode::ACCEPTED {
        return response;
    }
    if live {
        empty(StatusCode::NO_CONTENT)
    } else {
        let mut response = Response::new(Body::from("Not Found: Session not found"));
        *response.status_mut() = StatusCode::NOT_FOUND;
        response
    }
}

/// A refusal from the request head (or a stalled body): `status`, no body, and the connection
/// closed after it (whatever of the body is still on its way is never read).
fn refuse(status: StatusCode) -> Response {
    let mut response = empty(status);
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// `status` with an empty body.
fn empty(status: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    response
}

/// `status` with `{"jsonrpc":"2.0","id":ID,"error":{"code":CODE,"message":MESSAGE}}`.
fn jsonrpc_error(status: StatusCode, id: &Value, code: ErrorCode, message: &str) -> Response {
    let mut response = Response::new(jsonrpc_error_body(id, code, message));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn jsonrpc_error_body(id: &Value, code: ErrorCode, message: &str) -> Body {
    /// A JSON-RPC error object, members in the usual order.
    #[derive(serde::Serialize)]
    struct ErrorObject<'a> {
        jsonrpc: &'static str,
        id: &'a Value,
        error: ErrorMember<'a>,
    }
    #[derive(serde::Serialize)]
    struct ErrorMember<'a> {
        code: i32,
        message: &'a str,
    }
    let object = ErrorObject { jsonrpc: "2.0", id, error: ErrorMember { code: code.0, message } };
    Body::from(serde_json::to_vec(&object).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta_error(meta: Value) -> Option<ErrorCode> {
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}});
        check_message(&message).err().map(|e| e.code)
    }

    // MA-8-1: the shape rules, one by one.
    #[test]
    fn shape_rules() {
        let ok = json!({META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {"extensions": {"io.modelcontextprotocol/ui": {}}}});
        assert_eq!(meta_error(ok), None);
        assert_eq!(meta_error(json!({})), None, "absent keys are rmcp's to require");
        assert_eq!(meta_error(Value::Null), None, "rmcp reads a null _meta as absent");
        assert_eq!(meta_error(json!({META_PROTOCOL_VERSION: 20260728})), Some(ErrorCode::INVALID_PARAMS));
        assert_eq!(meta_error(json!({META_CLIENT_CAPABILITIES: "all"})), Some(ErrorCode::INVALID_PARAMS));
        assert_eq!(meta_error(json!({META_CLIENT_CAPABILITIES: {"extensions": 5}})), Some(ErrorCode::INVALID_PARAMS));
        assert_eq!(meta_error(json!([])), Some(ErrorCode::INVALID_PARAMS));

        let invalid = |v: Value| check_message(&v).err().map(|e| (e.status, e.code));
        let bad = Some((StatusCode::BAD_REQUEST, ErrorCode::INVALID_REQUEST));
        assert_eq!(invalid(json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])), bad);
        assert_eq!(invalid(json!("ping")), bad);
        assert_eq!(invalid(json!({"id": 1, "method": "ping"})), bad);
        assert_eq!(invalid(json!({"jsonrpc": "1.0", "id": 1, "method": "ping"})), bad);
        assert_eq!(invalid(json!({"jsonrpc": "2.0", "id": {}, "method": "ping"})), bad);
        assert_eq!(invalid(json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"})), bad);
        assert_eq!(invalid(json!({"jsonrpc": "2.0", "id": 1, "method": 5})), bad);
        // Params of the wrong JSON type are -32602 (a notification's answer loses its body).
        let bad_params = Some((StatusCode::BAD_REQUEST, ErrorCode::INVALID_PARAMS));
        assert_eq!(invalid(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": 5})), bad_params);
        assert_eq!(
            invalid(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": 5}})),
            bad_params
        );
        assert_eq!(invalid(json!({"jsonrpc": "2.0", "id": "a", "method": "ping"})), None);
        assert_eq!(invalid(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})), None);
        assert_eq!(invalid(json!({"jsonrpc": "2.0", "id": 3, "result": {}})), None);
    }

    #[test]
    fn notifications_and_ids() {
        assert_eq!(classify(&json!({"jsonrpc": "2.0", "method": "x"})), Kind::Notification);
        assert_eq!(classify(&json!({"method": 5})), Kind::Notification, "a broken notification is still one");
        assert_eq!(classify(&json!({"jsonrpc": "2.0", "id": 7, "method": "x"})), Kind::Other(json!(7)));
        assert_eq!(classify(&json!({"jsonrpc": "2.0", "id": "a", "method": "x"})), Kind::Other(json!("a")));
        assert_eq!(classify(&json!({"jsonrpc": "2.0", "id": [1], "method": "x"})), Kind::Other(Value::Null));
        assert_eq!(classify(&json!({"jsonrpc": "2.0", "id": null, "method": "x"})), Kind::Other(Value::Null));
        assert_eq!(classify(&json!([{"jsonrpc": "2.0", "method": "x"}])), Kind::Other(Value::Null));
    }
}
