//! The inbound classifier of the stdio pre-layer: what one line from the client is, and what
//! it must be answered, decided with rmcp's own message types before rmcp sees the line.
//!
//! rmcp drops or misanswers some input (see [`super::stdio`]); the classifier finds exactly that
//! input and leaves everything else to rmcp, unchanged:
//! - a line rmcp's `ClientJsonRpcMessage` accepts is [`Inbound::Forward`], except a request
//!   rmcp would take for a custom method although its method is one of MCP's (its params did
//!   not fit the method's typed params): `-32602` with its id;
//! - valid JSON rmcp refuses: a request with a usable id gets `-32600` (shape) or `-32602`
//!   (params of the wrong JSON type) with that id; one without gets `-32600` with a `null` id;
//!   a notification (no `id`) and anything shaped as a response (`result`/`error`, no `method`)
//!   get nothing (MA-8-2);
//! - input that is not JSON (or not UTF-8) gets `-32700` with a `null` id, unless its first
//!   [`RESPONSE_PREFIX_BYTES`] are shaped as a response cut short (an object whose members so
//!   far include `result` or `error` and no `method`): that gets nothing, like a whole one;
//! - well-formed JSON nested deeper than serde_json's limit ([`MAX_NESTING`]), checked by a
//!   parser without recursion ([`check_syntax`]): a `tools/call` gets the GB tool error
//!   `validation_failed` naming the argument and the cap ([`MAX_ARGUMENT_NESTING`]); another
//!   request `-32602` with its id; a notification nothing; the rest `-32700`. Deep input that
//!   is not well-formed (never closed, broken inside) is unparseable: `-32700`;
//! - `server/discover` without params: `-32602` naming the request `_meta` keys it needs (rmcp
//!   would take it for a custom method); with params, rmcp checks the same keys.
//!
//! Answers without an id go through the pre-layer's storm guard; the classifier only says what
//! the answer would be.

use crate::model::quote::clip;
use crate::model::{FieldError, ToolError};
#[allow(deprecated)] // logging/setLevel: still a method rmcp serves
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestMethod, CallToolRequestParams, CancelTaskMethod, CancelTaskParams, ClientJsonRpcMessage,
    ClientRequest, CompleteRequestMethod, CompleteRequestParams, ConstString, DiscoverRequestMethod,
    DiscoverRequestParams, ErrorCode, ErrorData, GetPromptRequestMethod, GetPromptRequestParams, GetSkillRequestMethod,
    GetSkillRequestParams, GetTaskMethod, GetTaskParams, InitializeRequestParams, InitializeResultMethod,
    ListPromptsRequestMethod, ListResourceTemplatesRequestMethod, ListResourcesRequestMethod, ListSkillsRequestMethod,
    ListToolsRequestMethod, PaginatedRequestParams, PingRequestMethod, ReadResourceDirectoryRequestMethod,
    ReadResourceDirectoryRequestParams, ReadResourceRequestMethod, ReadResourceRequestParams, RequestId,
    SetLevelRequestMethod, SubscribeRequestMethod, SubscribeRequestParams, SubscriptionsListenRequestMethod,
    SubscriptionsListenRequestParams, UnsubscribeRequestMethod, UnsubscribeRequestParams, UpdateTaskMethod,
    UpdateTaskParams,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Longest line (one JSON-RPC message, its newline included) the stdio transport reads: rmcp's
/// own cap, so the pre-layer never forwards a line rmcp would drop.
pub(crate) const MAX_LINE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// How much of an over-long line is kept to look for its `id`.
pub(crate) const OVERSIZED_PREFIX_BYTES: usize = 4096;

/// Deepest nesting of arrays and objects in one message that rmcp's parser (serde_json's
/// recursion limit of 128) accepts, the message object itself counting as 1.
pub(crate) const MAX_NESTING: usize = 127;

/// Deepest nesting of arrays and objects inside one `tools/call` argument value: what
/// [`MAX_NESTING`] leaves after the message, its `params` and `arguments` objects. A deeper
/// argument is refused with `validation_failed` naming it and this cap.
pub(crate) const MAX_ARGUMENT_NESTING: usize = MAX_NESTING - 3;

/// How much of an unparseable line is read to see whether it is shaped as a response (an
/// object whose members so far include `result` or `error` and no `method`).
pub(crate) const RESPONSE_PREFIX_BYTES: usize = OVERSIZED_PREFIX_BYTES;

/// JSON-RPC "Parse error".
const PARSE_ERROR: ErrorCode = ErrorCode::PARSE_ERROR;

/// What one line from the client is.
#[derive(Debug)]
pub(crate) enum Inbound {
    /// Empty or white space: skipped, as rmcp does.
    Blank,
    /// A message rmcp reads as the client meant it: forwarded unchanged (unless the lifecycle
    /// or the request order refuses it).
    Forward(Message),
    /// A request rmcp would drop or misanswer: answered with this error and its id.
    Reply { id: RequestId, error: ErrorData },
    /// A `tools/call` too deeply nested for the transport: answered with this GB tool error
    /// (in the dispatcher's shape, see `server::refused_call_result`). `tool`: the tool it
    /// names; `version`: the protocol version its `params._meta` names, and `ui`: whether the
    /// client capabilities there declare MCP Apps, when readable.
    RefuseCall { id: RequestId, error: ToolError, tool: Option<String>, version: Option<String>, ui: Option<bool> },
    /// Input with no usable id (not JSON, an invalid request without id): answered with this
    /// error and a `null` id, if the storm guard lets it.
    Unidentified(ErrorData),
    /// A notification or a response, valid or not: never answered (MA-8-2).
    Silent,
}

/// What a message rmcp accepts is, for the pre-layer's lifecycle and request order.
#[derive(Debug)]
pub(crate) enum Message {
    /// `initialize`: starts the 2025-11-25 lifecycle, once per connection; `ui`: its client
    /// capabilities declare MCP Apps.
    Initialize { id: RequestId, ui: bool },
    /// `ping` or `server/discover`: allowed before the lifecycle starts, in no order (its id
    /// is still tracked: no other request in flight may share it).
    Unordered { id: RequestId },
    /// Any other request. `ordered`: it reads or changes state and takes a ticket that orders
    /// it ([`super::order`]), else one that only tracks its id; `meta`: what its inline 2026-07-28 request metadata says.
    Request { id: RequestId, ordered: bool, meta: InlineMeta },
    /// A notification; `cancels`: the request a `notifications/cancelled` names.
    Notification { cancels: Option<RequestId> },
    /// A response or an error from the client.
    Response,
}

/// A request's inline 2026-07-28 metadata (`params._meta["io.modelcontextprotocol/…"]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InlineMeta {
    /// None of its keys: a 2025-11-25 request, which needs `initialize` first.
    Absent,
    /// Some keys, not every required one: rmcp answers `-32602` naming the missing ones.
    Incomplete,
    /// Every required key: the request starts the 2026-07-28 lifecycle.
    Complete,
}

/// Prefix of the 2026-07-28 request metadata keys.
const INLINE_META_PREFIX: &str = "io.modelcontextprotocol/";

/// The request `_meta` key of the request's protocol version.
const PROTOCOL_VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";

/// The request `_meta` key of the client's capabilities.
const CLIENT_CAPABILITIES_META: &str = "io.modelcontextprotocol/clientCapabilities";

/// Whether a request naming protocol version `version` (its own, else its session's) gets
/// results of the 2026-07-28 revision (`resultType`), as rmcp decides it.
pub(crate) fn is_modern(version: &str) -> bool {
    version >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str()
}

fn message(message: ClientJsonRpcMessage) -> Message {
    use rmcp::model::{ClientNotification, GetMeta, ProtocolVersion};
    match message {
        ClientJsonRpcMessage::Request(request) => {
            let ordered = match &request.request {
                ClientRequest::InitializeRequest(init) => {
                    let ui = super::apps::capabilities_support_ui(Some(&init.params.capabilities));
                    return Message::Initialize { id: request.id, ui };
                }
                ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => {
                    return Message::Unordered { id: request.id };
                }
                ClientRequest::CallToolRequest(_)
                | ClientRequest::ListToolsRequest(_)
                | ClientRequest::ReadResourceRequest(_)
                | ClientRequest::ListResourcesRequest(_)
                | ClientRequest::ListResourceTemplatesRequest(_)
                | ClientRequest::SubscribeRequest(_)
                | ClientRequest::UnsubscribeRequest(_) => true,
                _ => false,
            };
            let inline = request.request.get_meta();
            let meta = if inline.missing_required_keys(&ProtocolVersion::V_2026_07_28).is_empty()
                && inline.protocol_version().is_some()
            {
                InlineMeta::Complete
            } else if inline.keys().any(|k| k.starts_with(INLINE_META_PREFIX)) {
                InlineMeta::Incomplete
            } else {
                InlineMeta::Absent
            };
            Message::Request { id: request.id, ordered, meta }
        }
        ClientJsonRpcMessage::Notification(notification) => match notification.notification {
            ClientNotification::CancelledNotification(cancelled) => {
                Message::Notification { cancels: cancelled.params.request_id }
            }
            _ => Message::Notification { cancels: None },
        },
        _ => Message::Response,
    }
}

/// Classifies one line (without its `\n`; a trailing `\r` and a leading UTF-8 BOM are allowed,
/// as rmcp allows them).
pub(crate) fn classify(line: &[u8]) -> Inbound {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Inbound::Blank;
    }
    // The common case costs one parse, rmcp's own: a message rmcp accepts.
    match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(ClientJsonRpcMessage::Request(request)) => match &request.request {
            ClientRequest::CustomRequest(custom)
                if custom.method == DiscoverRequestMethod::VALUE
                    && custom.params.as_ref().is_none_or(Value::is_null) =>
            {
                Inbound::Reply { id: request.id, error: ErrorData::invalid_params(discover_without_meta(), None) }
            }
            ClientRequest::CustomRequest(custom) => match params_problem(&custom.method, custom.params.as_ref()) {
                Some(problem) => Inbound::Reply { id: request.id, error: ErrorData::invalid_params(problem, None) },
                None => Inbound::Forward(message(ClientJsonRpcMessage::Request(request))),
            },
            _ => Inbound::Forward(message(ClientJsonRpcMessage::Request(request))),
        },
        Ok(other) => Inbound::Forward(message(other)),
        Err(_) => match serde_json::from_slice::<Value>(line) {
            Ok(value) => refused(value),
            Err(e) => {
                // Too deep for serde_json: well-formed, or broken somewhere it never reached?
                let why = if e.is_syntax() && nesting(line) > MAX_NESTING {
                    match check_syntax(line) {
                        Ok(()) => return too_deep(line),
                        Err(why) => why,
                    }
                } else {
                    e.to_string()
                };
                // A response or error cut short (a peer echoing our answers, a log line holding
                // one): never answered, like a whole one.
                if Top::scan(&line[..line.len().min(RESPONSE_PREFIX_BYTES)]).is_response() {
                    Inbound::Silent
                } else {
                    Inbound::Unidentified(ErrorData::new(PARSE_ERROR, format!("Parse error: {why}"), None))
                }
            }
        },
    }
}

/// The `-32602` message of a `server/discover` without params: the 2026-07-28 request `_meta`
/// keys it must carry (the keys rmcp requires).
fn discover_without_meta() -> String {
    let missing = rmcp::model::RequestMetaObject::default()
        .missing_required_keys(&rmcp::model::ProtocolVersion::V_2026_07_28)
        .join(", ");
    format!(
        "Invalid params: server/discover carries the 2026-07-28 request metadata in params._meta; \
         request _meta is missing or has malformed required fields: {missing}"
    )
}

/// Checks that `text` is one well-formed JSON value (RFC 8259), however deeply nested, in one
/// pass without recursion (its memory: one byte per open array or object). `Err`: what is
/// wrong and where, for a parse error's message.
pub(crate) fn check_syntax(text: &[u8]) -> Result<(), String> {
    if let Err(e) = std::str::from_utf8(text) {
        return Err(format!("invalid UTF-8 at byte {}", e.valid_up_to()));
    }
    let at = |what: &str, i: usize| {
        if i >= text.len() { format!("EOF while parsing {what}") } else { format!("expected {what} at byte {i}") }
    };
    let ws = |mut i: usize| {
        while text.get(i).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
            i += 1;
        }
        i
    };
    let mut open: Vec<u8> = Vec::new();
    let mut i = ws(0);
    loop {
        // A value starts at `i`.
        match text.get(i) {
            Some(b'{') => {
                i = ws(i + 1);
                if text.get(i) == Some(&b'}') {
                    i += 1;
                } else {
                    open.push(b'{');
                    i = member_value(text, i).ok_or_else(|| at("an object key and ':'", i))?;
                    i = ws(i);
                    continue;
                }
            }
            Some(b'[') => {
                i = ws(i + 1);
                if text.get(i) == Some(&b']') {
                    i += 1;
                } else {
                    open.push(b'[');
                    continue;
                }
            }
            Some(b'"') => i = string(text, i).ok_or_else(|| at("a string", i))?,
            Some(b'-' | b'0'..=b'9') => i = number(text, i).ok_or_else(|| at("a number", i))?,
            Some(_) => {
                let literal = [b"true".as_slice(), b"false", b"null"].into_iter().find(|l| text[i..].starts_with(l));
                i += literal.ok_or_else(|| at("a value", i))?.len();
            }
            None => return Err(at("a value", i)),
        }
        // After a value: close what ends here, then a separator or the end.
        loop {
            i = ws(i);
            let Some(&container) = open.last() else {
                return if i == text.len() { Ok(()) } else { Err(format!("trailing characters at byte {i}")) };
            };
            let close = if container == b'{' { b'}' } else { b']' };
            match text.get(i) {
                Some(&b) if b == close => {
                    open.pop();
                    i += 1;
                }
                Some(b',') if container == b'{' => {
                    i = ws(i + 1);
                    i = member_value(text, i).ok_or_else(|| at("an object key and ':'", i))?;
                    i = ws(i);
                    break;
                }
                Some(b',') => {
                    i = ws(i + 1);
                    break;
                }
                _ => return Err(at(if container == b'{' { "',' or '}'" } else { "',' or ']'" }, i)),
            }
        }
    }
}

/// Past the object key (a string) starting at `i` and the `:` after it.
fn member_value(text: &[u8], i: usize) -> Option<usize> {
    if text.get(i) != Some(&b'"') {
        return None;
    }
    let mut i = string(text, i)?;
    while text.get(i).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    (text.get(i) == Some(&b':')).then_some(i + 1)
}

/// The end (one past the closing quote) of the JSON string opening at `start`.
fn string(text: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    loop {
        match *text.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => match *text.get(i + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                b'u' if text.get(i + 2..i + 6)?.iter().all(u8::is_ascii_hexdigit) => i += 6,
                _ => return None,
            },
            0x00..=0x1f => return None,
            _ => i += 1,
        }
    }
}

/// The end of the JSON number starting at `start`.
fn number(text: &[u8], start: usize) -> Option<usize> {
    let digits = |mut i: usize| {
        let from = i;
        while text.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > from).then_some(i)
    };
    let mut i = start;
    if text.get(i) == Some(&b'-') {
        i += 1;
    }
    i = if text.get(i) == Some(&b'0') { i + 1 } else { digits(i)? };
    if text.get(i) == Some(&b'.') {
        i = digits(i + 1)?;
    }
    if matches!(text.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(text.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(i)?;
    }
    Some(i)
}

/// Classifies a line longer than [`MAX_LINE_BYTES`] from its first bytes: answered with its
/// id when the prefix holds one, else with a `null` id; never when it looks like a
/// notification or a response.
pub(crate) fn classify_oversized(prefix: &[u8]) -> Inbound {
    let error = ErrorData::invalid_request(
        format!("Message larger than {} MiB: not read", MAX_LINE_BYTES / (1024 * 1024)),
        None,
    );
    let top = Top::scan(prefix);
    if top.is_response() {
        return Inbound::Silent;
    }
    match top.id() {
        Some(Ok(id)) => Inbound::Reply { id, error },
        _ if top.method().is_some_and(|m| m.starts_with("notifications/")) => Inbound::Silent,
        _ => Inbound::Unidentified(error),
    }
}

/// Valid JSON that rmcp's message type refused: what was wrong, answered with the id when there
/// is one.
fn refused(value: Value) -> Inbound {
    let Value::Object(object) = value else {
        let what = if value.is_array() { "batches are not supported" } else { "a message is a JSON object" };
        return Inbound::Unidentified(ErrorData::invalid_request(format!("Invalid Request: {what}"), None));
    };
    let method = object.get("method");
    if method.is_none() && (object.contains_key("result") || object.contains_key("error")) {
        return Inbound::Silent;
    }
    let id = match object.get("id") {
        None if method.is_some() => return Inbound::Silent,
        None => return Inbound::Unidentified(ErrorData::invalid_request("Invalid Request: no method", None)),
        Some(id) => match request_id(id) {
            Some(id) => id,
            None => return Inbound::Unidentified(unusable_id(Some(id))),
        },
    };
    Inbound::Reply { id, error: request_problem(&object) }
}

/// Why a request with a usable id is not one rmcp can serve.
pub(crate) fn request_problem(object: &Map<String, Value>) -> ErrorData {
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return ErrorData::invalid_request("Invalid Request: jsonrpc must be \"2.0\"", None);
    }
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return ErrorData::invalid_request("Invalid Request: method must be a string", None);
    };
    let params = object.get("params");
    if let Some(params) = params.filter(|p| !p.is_object() && !p.is_null()) {
        return ErrorData::invalid_params(
            format!("Invalid params: params must be an object, not {}", json_type(params)),
            None,
        );
    }
    match params_problem(method, params) {
        Some(problem) => ErrorData::invalid_params(problem, None),
        None => ErrorData::invalid_request(format!("Invalid Request: not a valid '{}' request", clip(method)), None),
    }
}

/// When `method` is one of MCP's client requests and `params` do not deserialize into its
/// rmcp params type: why, for a `-32602` message (`None` for any other method, or params that
/// fit).
pub(crate) fn params_problem(method: &str, params: Option<&Value>) -> Option<String> {
    fn required<M: ConstString, P: DeserializeOwned>(method: &str, params: Option<&Value>) -> Option<Option<String>> {
        (method == M::VALUE).then(|| check::<P>(method, params.cloned().unwrap_or(Value::Null)))
    }
    fn optional<M: ConstString, P: DeserializeOwned>(method: &str, params: Option<&Value>) -> Option<Option<String>> {
        (method == M::VALUE).then(|| check::<Option<P>>(method, params.cloned().unwrap_or(Value::Null)))
    }
    fn check<P: DeserializeOwned>(method: &str, params: Value) -> Option<String> {
        serde_json::from_value::<P>(params).err().map(|e| {
            let why = e.to_string();
            format!("Invalid params for '{method}': {}", clip(&why))
        })
    }
    // Every request rmcp's `ClientRequest` types (its variants with params); the method names
    // and the params types are rmcp's.
    let checks = [
        required::<InitializeResultMethod, InitializeRequestParams>,
        optional::<DiscoverRequestMethod, DiscoverRequestParams>,
        required::<CompleteRequestMethod, CompleteRequestParams>,
        #[allow(deprecated)] // still a method rmcp serves
        required::<SetLevelRequestMethod, SetLevelRequestParams>,
        required::<GetPromptRequestMethod, GetPromptRequestParams>,
        optional::<ListPromptsRequestMethod, PaginatedRequestParams>,
        optional::<ListResourcesRequestMethod, PaginatedRequestParams>,
        optional::<ListResourceTemplatesRequestMethod, PaginatedRequestParams>,
        required::<ReadResourceRequestMethod, ReadResourceRequestParams>,
        required::<SubscriptionsListenRequestMethod, SubscriptionsListenRequestParams>,
        required::<SubscribeRequestMethod, SubscribeRequestParams>,
        required::<UnsubscribeRequestMethod, UnsubscribeRequestParams>,
        required::<CallToolRequestMethod, CallToolRequestParams>,
        optional::<ListToolsRequestMethod, PaginatedRequestParams>,
        required::<GetTaskMethod, GetTaskParams>,
        required::<UpdateTaskMethod, UpdateTaskParams>,
        required::<CancelTaskMethod, CancelTaskParams>,
        optional::<ListSkillsRequestMethod, PaginatedRequestParams>,
        required::<GetSkillRequestMethod, GetSkillRequestParams>,
        required::<ReadResourceDirectoryRequestMethod, ReadResourceDirectoryRequestParams>,
        optional::<PingRequestMethod, Map<String, Value>>,
    ];
    checks.iter().find_map(|check| check(method, params)).flatten()
}

/// The `-32600` error of a request whose `id` rmcp cannot use (`None`: not JSON at all).
pub(crate) fn unusable_id(id: Option<&Value>) -> ErrorData {
    let out_of_range = match id {
        Some(Value::Number(n)) => n.is_u64() || n.as_f64().is_some_and(|f| f.is_finite() && f.fract() == 0.0),
        _ => false,
    };
    ErrorData::invalid_request(
        if out_of_range {
            "Invalid Request: id is out of range (an integer id must fit in 64 signed bits, \
             -9223372036854775808 to 9223372036854775807)"
        } else {
            "Invalid Request: id must be a string or an integer"
        },
        None,
    )
}

/// A JSON-RPC id rmcp accepts: a string or an integer in `i64`.
fn request_id(id: &Value) -> Option<RequestId> {
    match id {
        Value::String(_) | Value::Number(_) => serde_json::from_value(id.clone()).ok(),
        _ => None,
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A line nested deeper than [`MAX_NESTING`]: read its top level without recursing.
fn too_deep(line: &[u8]) -> Inbound {
    let parse_error = || {
        Inbound::Unidentified(ErrorData::new(
            PARSE_ERROR,
            format!("Parse error: nested deeper than {MAX_NESTING} levels of arrays and objects"),
            None,
        ))
    };
    let top = Top::scan(line);
    if !top.object {
        return parse_error();
    }
    if top.is_response() {
        return Inbound::Silent;
    }
    let method = top.method();
    let id = match top.id() {
        None if method.is_some() => return Inbound::Silent,
        None => return parse_error(),
        Some(Err(error)) => return Inbound::Unidentified(error),
        Some(Ok(id)) => id,
    };
    match method.as_deref() {
        Some(m) if m == CallToolRequestMethod::VALUE => {
            let field = top.deep_argument.clone().unwrap_or_else(|| "arguments".to_owned());
            let error = ToolError::validation_failed(
                format!(
                    "An argument is nested deeper than {MAX_ARGUMENT_NESTING} levels of arrays and objects, \
                     more than this server can read; send a flatter value"
                ),
                vec![FieldError::new(
                    field,
                    format!("Nested deeper than {MAX_ARGUMENT_NESTING} levels of arrays and objects"),
                )],
            );
            let tool = top.param("name").and_then(|raw| serde_json::from_slice::<String>(raw).ok());
            let meta = top.param("_meta").and_then(|raw| serde_json::from_slice::<Value>(raw).ok());
            let version =
                meta.as_ref().and_then(|m| m.get(PROTOCOL_VERSION_META)).and_then(Value::as_str).map(str::to_owned);
            let ui = meta.as_ref().and_then(|m| m.get(CLIENT_CAPABILITIES_META)).map(|caps| {
                let caps = serde_json::from_value::<rmcp::model::ClientCapabilities>(caps.clone()).ok();
                super::apps::capabilities_support_ui(caps.as_ref())
            });
            Inbound::RefuseCall { id, error, tool, version, ui }
        }
        Some(_) => Inbound::Reply {
            id,
            error: ErrorData::invalid_params(
                format!("Invalid params: nested deeper than {MAX_NESTING} levels of arrays and objects"),
                None,
            ),
        },
        None => Inbound::Reply { id, error: ErrorData::invalid_request("Invalid Request: no method", None) },
    }
}

/// Deepest nesting of arrays and objects in `line`, strings skipped; one pass, no recursion.
pub(crate) fn nesting(line: &[u8]) -> usize {
    let (mut depth, mut max, mut i) = (0usize, 0usize, 0usize);
    while i < line.len() {
        match line[i] {
            b'"' => i = string_end(line, i),
            b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    max
}

/// Index of the closing quote of the string opening at `start` (or the last index).
fn string_end(line: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < line.len() {
        match line[i] {
            b'\\' => i += 2,
            b'"' => return i,
            _ => i += 1,
        }
    }
    line.len().saturating_sub(1)
}

/// The top level of a JSON object read without recursion (for input serde_json cannot parse:
/// too deep, or cut short): its complete members' raw values, and the name of the `tools/call`
/// argument whose value first goes deeper than [`MAX_NESTING`].
struct Top<'a> {
    object: bool,
    /// Every top-level key whose value began, complete or not.
    seen: Vec<&'a [u8]>,
    members: Vec<(&'a [u8], &'a [u8])>,
    /// The complete members of the top-level `params` object, raw.
    params: Vec<(&'a [u8], &'a [u8])>,
    deep_argument: Option<String>,
}

impl<'a> Top<'a> {
    fn scan(line: &'a [u8]) -> Self {
        let start = line.iter().position(|b| !b.is_ascii_whitespace());
        let mut top =
            Top { object: false, seen: Vec::new(), members: Vec::new(), params: Vec::new(), deep_argument: None };
        let Some(start) = start.filter(|&s| line[s] == b'{') else { return top };
        top.object = true;
        // The member key being read at depths 1 to 3 (message, params, arguments).
        let mut keys: [Option<&[u8]>; 4] = [None; 4];
        let mut expect_key = [false; 4];
        let mut is_object = [false; 4];
        let mut value_start = None;
        let mut param_start = None;
        let in_params = |keys: &[Option<&[u8]>; 4]| keys[1] == Some(b"params".as_slice());
        let mut depth = 0usize;
        let mut i = start;
        while i < line.len() {
            match line[i] {
                b'"' => {
                    let end = string_end(line, i);
                    if (1..=3).contains(&depth) && is_object[depth] && expect_key[depth] {
                        keys[depth] = line.get(i + 1..end);
                        expect_key[depth] = false;
                    }
                    i = end;
                }
                b'{' | b'[' => {
                    depth += 1;
                    if depth <= 3 {
                        is_object[depth] = line[i] == b'{';
                        expect_key[depth] = is_object[depth];
                        keys[depth] = None;
                    }
                    if depth == MAX_NESTING + 1 && top.deep_argument.is_none() {
                        let path = [keys[1], keys[2]];
                        if path == [Some(b"params".as_slice()), Some(b"arguments".as_slice())] {
                            top.deep_argument = keys[3].map(|k| clip(&String::from_utf8_lossy(k)).into_owned());
                        }
                    }
                }
                b'}' | b']' => {
                    if depth == 1 {
                        top.close_member(line, keys[1], value_start.take(), i);
                    }
                    if depth == 2 && is_object[2] && in_params(&keys) {
                        top.close_param(line, keys[2], param_start.take(), i);
                    }
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        break;
                    }
                }
                b',' => {
                    if depth == 1 {
                        top.close_member(line, keys[1], value_start.take(), i);
                    }
                    if depth == 2 && is_object[2] && in_params(&keys) {
                        top.close_param(line, keys[2], param_start.take(), i);
                    }
                    if (1..=3).contains(&depth) && is_object[depth] {
                        expect_key[depth] = true;
                    }
                }
                b':' if depth == 1 => {
                    value_start = Some(i + 1);
                    top.seen.extend(keys[1]);
                }
                b':' if depth == 2 && is_object[2] && in_params(&keys) => param_start = Some(i + 1),
                _ => {}
            }
            i += 1;
        }
        top
    }

    fn close_member(&mut self, line: &'a [u8], key: Option<&'a [u8]>, start: Option<usize>, end: usize) {
        if let (Some(key), Some(start)) = (key, start) {
            self.members.push((key, line[start..end].trim_ascii()));
        }
    }

    fn close_param(&mut self, line: &'a [u8], key: Option<&'a [u8]>, start: Option<usize>, end: usize) {
        if let (Some(key), Some(start)) = (key, start) {
            self.params.push((key, line[start..end].trim_ascii()));
        }
    }

    /// The raw value of the top-level `params` object's member `key`, when complete.
    fn param(&self, key: &str) -> Option<&'a [u8]> {
        self.params.iter().find(|(k, _)| *k == key.as_bytes()).map(|(_, v)| *v)
    }

    fn get(&self, key: &str) -> Option<&'a [u8]> {
        self.members.iter().find(|(k, _)| *k == key.as_bytes()).map(|(_, v)| *v)
    }

    fn is_response(&self) -> bool {
        let has = |key: &str| self.seen.contains(&key.as_bytes());
        !has("method") && (has("result") || has("error"))
    }

    /// `None`: no `id` member; `Some(Err)`: one rmcp cannot use, and why.
    fn id(&self) -> Option<Result<RequestId, ErrorData>> {
        self.get("id").map(|raw| {
            let value = serde_json::from_slice::<Value>(raw).ok();
            value.as_ref().and_then(request_id).ok_or_else(|| unusable_id(value.as_ref()))
        })
    }

    fn method(&self) -> Option<String> {
        self.get("method").and_then(|raw| serde_json::from_slice::<String>(raw).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deep(levels: usize) -> String {
        format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
    }

    fn call(arguments: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"w-A__focus","arguments":{arguments}}}}}"#
        )
    }

    // MAX_NESTING is exactly what rmcp's message parser accepts.
    #[test]
    fn max_nesting_is_rmcps_limit() {
        let at = |levels| call(&format!(r#"{{"v":{}}}"#, deep(levels - 3)));
        assert_eq!(nesting(at(MAX_NESTING).as_bytes()), MAX_NESTING);
        assert!(serde_json::from_str::<ClientJsonRpcMessage>(&at(MAX_NESTING)).is_ok());
        assert!(serde_json::from_str::<ClientJsonRpcMessage>(&at(MAX_NESTING + 1)).is_err());
        assert!(matches!(
            classify(at(MAX_NESTING).as_bytes()),
            Inbound::Forward(Message::Request { ordered: true, meta: InlineMeta::Absent, .. })
        ));
    }

    #[test]
    fn a_too_deep_call_names_its_argument_and_the_cap() {
        let line = call(&format!(r#"{{"ok":1,"tree":{}}}"#, deep(MAX_ARGUMENT_NESTING + 1)));
        let Inbound::RefuseCall { id, error, tool, version, ui } = classify(line.as_bytes()) else { panic!("{line}") };
        assert_eq!(ui, None);
        assert_eq!(id, RequestId::Number(3));
        assert_eq!(tool.as_deref(), Some("w-A__focus"));
        assert_eq!(version, None);
        assert_eq!(error.code, crate::model::ErrorCode::ValidationFailed);
        let fields = error.fields.unwrap();
        assert_eq!(fields[0].field, "tree");
        assert!(fields[0].error.contains(&MAX_ARGUMENT_NESTING.to_string()));
    }

    // Deep input that never closes, or breaks deep inside, is unparseable (-32700), not a deep
    // argument; the syntax check agrees with serde_json wherever serde_json can tell.
    #[test]
    fn deep_but_broken_input_is_a_parse_error() {
        let open = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"x","arguments":{{"v":{}"#,
            "[".repeat(2000)
        );
        let broken = call(&format!(r#"{{"v":{}1,]{}}}"#, "[".repeat(300), "]".repeat(299)));
        for line in [open, broken] {
            match classify(line.as_bytes()) {
                Inbound::Unidentified(e) => assert_eq!(e.code, ErrorCode::PARSE_ERROR, "{}", e.message),
                other => panic!("{other:?}"),
            }
        }
        let good = [
            "1",
            " [] ",
            "{}",
            r#"{"a":[1,-2.5e+3,true,false,null,"x\u00e9\n"],"b":{}}"#,
            "0",
            "-0.0E1",
            r#""""#,
            r#"{ "a" : [ ] , "b" : { } }"#,
        ];
        for text in good {
            assert_eq!(check_syntax(text.as_bytes()), Ok(()), "{text}");
            assert!(serde_json::from_str::<Value>(text).is_ok(), "{text}");
        }
        let bad = [
            "",
            "[",
            "[1,]",
            r#"{"a"}"#,
            r#"{"a":1,}"#,
            "01",
            "1.",
            "-",
            "1e",
            "[1 2]",
            "tru",
            r#""\x""#,
            r#""\u00""#,
            "{1:2}",
            "[]]",
            "\"\u{1}\"",
            r#"{"a":1}x"#,
            "nul",
        ];
        for text in bad {
            assert!(check_syntax(text.as_bytes()).is_err(), "{text}");
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
        }
    }

    #[test]
    fn an_integer_id_beyond_64_bits_is_out_of_range() {
        for line in [
            r#"{"jsonrpc":"2.0","id":100000000000000000000,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
        ] {
            match classify(line.as_bytes()) {
                Inbound::Unidentified(e) => assert!(e.message.contains("out of range"), "{}", e.message),
                other => panic!("{other:?}"),
            }
        }
        match classify(br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#) {
            Inbound::Unidentified(e) => assert!(e.message.contains("string or an integer"), "{}", e.message),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn wrong_json_types_are_invalid_params_with_the_id() {
        for bad in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":"text"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":[]}}"#,
        ] {
            match classify(bad.as_bytes()) {
                Inbound::Reply { id, error } => {
                    assert_eq!(id, RequestId::Number(1), "{bad}");
                    assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{bad}");
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn notifications_and_responses_are_never_answered() {
        for line in [
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#,
            r#"{"jsonrpc":"1.0","method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
            r#"{"id":1,"error":5}"#,
        ] {
            assert!(matches!(classify(line.as_bytes()), Inbound::Silent | Inbound::Forward(_)), "{line}");
        }
        let deep_notification = format!(r#"{{"jsonrpc":"2.0","method":"x","params":{{"a":{}}}}}"#, deep(200));
        assert!(matches!(classify(deep_notification.as_bytes()), Inbound::Silent));
    }

    #[test]
    fn unparseable_input_is_a_parse_error() {
        for line in [b"not json".as_slice(), b"{\"a\":", b"\xff\xfe{}", deep(300).as_bytes()] {
            match classify(line) {
                Inbound::Unidentified(e) => assert_eq!(e.code, ErrorCode::PARSE_ERROR),
                other => panic!("{other:?}"),
            }
        }
        assert!(matches!(classify(b"  \r"), Inbound::Blank));
    }

    // A response or error cut short is never answered (a storm would follow); a request cut
    // short still gets its parse error.
    #[test]
    fn a_truncated_response_is_silent() {
        for line in [
            br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"mess"#.as_slice(),
            br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"te"#,
            br#"{"id":null,"error":"#,
        ] {
            assert!(matches!(classify(line), Inbound::Silent), "{}", String::from_utf8_lossy(line));
        }
        for line in [br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"result":"#.as_slice(), b"{\"a\":"] {
            match classify(line) {
                Inbound::Unidentified(e) => assert_eq!(e.code, ErrorCode::PARSE_ERROR),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn invalid_requests_keep_their_id() {
        match classify(br#"{"jsonrpc":"2.0","id":"q","method":5}"#) {
            Inbound::Reply { id, error } => {
                assert_eq!(id, RequestId::String("q".into()));
                assert_eq!(error.code, ErrorCode::INVALID_REQUEST);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(classify(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#), Inbound::Unidentified(_)));
    }

    #[test]
    fn an_oversized_line_is_answered_with_the_id_in_its_prefix() {
        let prefix = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"x","arguments":{"v":"aaaa"#;
        assert!(matches!(classify_oversized(prefix), Inbound::Reply { id: RequestId::Number(42), .. }));
        assert!(matches!(
            classify_oversized(br#"{"jsonrpc":"2.0","method":"tools/call","params":{"#),
            Inbound::Unidentified(_)
        ));
        assert!(matches!(
            classify_oversized(br#"{"jsonrpc":"2.0","method":"notifications/x","params":{"#),
            Inbound::Silent
        ));
        assert!(matches!(classify_oversized(br#"{"jsonrpc":"2.0","id":1,"result":{"x":"#), Inbound::Silent));
    }
}
