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
//! - JSON nested deeper than serde_json's limit ([`MAX_NESTING`]): a `tools/call` gets the GB
//!   tool error `validation_failed` naming the argument and the cap ([`MAX_ARGUMENT_NESTING`]);
//!   another request `-32602` with its id; a notification nothing; the rest `-32700`.
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
    /// A `tools/call` too deeply nested for the transport: answered with this GB tool error.
    RefuseCall { id: RequestId, error: ToolError },
    /// Input with no usable id (not JSON, an invalid request without id): answered with this
    /// error and a `null` id, if the storm guard lets it.
    Unidentified(ErrorData),
    /// A notification or a response, valid or not: never answered (MA-8-2).
    Silent,
}

/// What a message rmcp accepts is, for the pre-layer's lifecycle and request order.
#[derive(Debug)]
pub(crate) enum Message {
    /// `initialize`: starts the 2025-11-25 lifecycle, once per connection.
    Initialize(RequestId),
    /// `ping` or `server/discover`: allowed before the lifecycle starts, in no order.
    Unordered,
    /// Any other request. `ordered`: it reads or changes state and takes a ticket
    /// ([`super::order`]); `meta`: what its inline 2026-07-28 request metadata says.
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

fn message(message: ClientJsonRpcMessage) -> Message {
    use rmcp::model::{ClientNotification, GetMeta, ProtocolVersion};
    match message {
        ClientJsonRpcMessage::Request(request) => {
            let ordered = match &request.request {
                ClientRequest::InitializeRequest(_) => return Message::Initialize(request.id),
                ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => return Message::Unordered,
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
            ClientRequest::CustomRequest(custom) => match params_problem(&custom.method, custom.params.as_ref()) {
                Some(problem) => Inbound::Reply { id: request.id, error: ErrorData::invalid_params(problem, None) },
                None => Inbound::Forward(message(ClientJsonRpcMessage::Request(request))),
            },
            _ => Inbound::Forward(message(ClientJsonRpcMessage::Request(request))),
        },
        Ok(other) => Inbound::Forward(message(other)),
        Err(_) => match serde_json::from_slice::<Value>(line) {
            Ok(value) => refused(value),
            Err(e) if e.is_syntax() && nesting(line) > MAX_NESTING => too_deep(line),
            // A response or error cut short (a peer echoing our answers, a log line holding
            // one): never answered, like a whole one.
            Err(_) if Top::scan(&line[..line.len().min(RESPONSE_PREFIX_BYTES)]).is_response() => Inbound::Silent,
            Err(e) => Inbound::Unidentified(ErrorData::new(PARSE_ERROR, format!("Parse error: {e}"), None)),
        },
    }
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
        Some(Some(id)) => Inbound::Reply { id, error },
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
            None => {
                return Inbound::Unidentified(ErrorData::invalid_request(
                    "Invalid Request: id must be a string or an integer",
                    None,
                ));
            }
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
        Some(None) => {
            return Inbound::Unidentified(ErrorData::invalid_request(
                "Invalid Request: id must be a string or an integer",
                None,
            ));
        }
        Some(Some(id)) => id,
    };
    match method.as_deref() {
        Some(m) if m == CallToolRequestMethod::VALUE => {
            let field = top.deep_argument.unwrap_or_else(|| "arguments".to_owned());
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
            Inbound::RefuseCall { id, error }
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
    deep_argument: Option<String>,
}

impl<'a> Top<'a> {
    fn scan(line: &'a [u8]) -> Self {
        let start = line.iter().position(|b| !b.is_ascii_whitespace());
        let mut top = Top { object: false, seen: Vec::new(), members: Vec::new(), deep_argument: None };
        let Some(start) = start.filter(|&s| line[s] == b'{') else { return top };
        top.object = true;
        // The member key being read at depths 1 to 3 (message, params, arguments).
        let mut keys: [Option<&[u8]>; 4] = [None; 4];
        let mut expect_key = [false; 4];
        let mut is_object = [false; 4];
        let mut value_start = None;
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
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        break;
                    }
                }
                b',' => {
                    if depth == 1 {
                        top.close_member(line, keys[1], value_start.take(), i);
                    }
                    if (1..=3).contains(&depth) && is_object[depth] {
                        expect_key[depth] = true;
                    }
                }
                b':' if depth == 1 => {
                    value_start = Some(i + 1);
                    top.seen.extend(keys[1]);
                }
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

    fn get(&self, key: &str) -> Option<&'a [u8]> {
        self.members.iter().find(|(k, _)| *k == key.as_bytes()).map(|(_, v)| *v)
    }

    fn is_response(&self) -> bool {
        let has = |key: &str| self.seen.contains(&key.as_bytes());
        !has("method") && (has("result") || has("error"))
    }

    /// `None`: no `id` member; `Some(None)`: one rmcp cannot use.
    fn id(&self) -> Option<Option<RequestId>> {
        self.get("id").map(|raw| serde_json::from_slice::<Value>(raw).ok().as_ref().and_then(request_id))
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
        let Inbound::RefuseCall { id, error } = classify(line.as_bytes()) else { panic!("{line}") };
        assert_eq!(id, RequestId::Number(3));
        assert_eq!(error.code, crate::model::ErrorCode::ValidationFailed);
        let fields = error.fields.unwrap();
        assert_eq!(fields[0].field, "tree");
        assert!(fields[0].error.contains(&MAX_ARGUMENT_NESTING.to_string()));
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
