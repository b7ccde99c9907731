//! MCP adapter over streamable HTTP at `/mcp` (GB-3-1, GB §10.1): legacy sessions and
//! 2026-07-28 stateless requests on one bridge.

use crate::support::mcp as mcp_support;

use bridge_runtime::Bridge;
use bridge_runtime::mcp::{ServeError, serve_http, serve_http_on, serve_http_on_with};
use mcp_support::*;
use rmcp::model::{ProtocolVersion, ServerNotification, SubscribeRequestParams, SubscriptionFilter};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpListener;

async fn start(bridge: &Bridge) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve_http_on_with(bridge.clone(), listener, http_options()));
    format!("http://{addr}/mcp")
}

async fn http_legacy(url: &str) -> (Client, Recorder) {
    let rec = Recorder::default();
    let client = rec
        .clone()
        .serve(StreamableHttpClientTransport::from_config(authed(url.to_owned())))
        .await
        .expect("initialize");
    (client, rec)
}

async fn http_modern(url: &str) -> (Client, Recorder) {
    let rec = Recorder::default();
    let client = rec
        .clone()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(authed(url.to_owned())),
            ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
        )
        .await
        .expect("discover");
    (client, rec)
}

// GB-10.1-1/2 (one shared UI, optimistic concurrency between agents), GB-7.1-2 (stale_state
// with currentVersion), GB-10.1-4 (both connections are told), over two legacy HTTP sessions.
#[tokio::test]
#[allow(deprecated)]
async fn two_http_clients_share_one_ui() {
    let bridge = bridge();
    let url = start(&bridge).await;
    let (a, rec_a) = http_legacy(&url).await;
    let (b, rec_b) = http_legacy(&url).await;
    assert_eq!(a.peer_info().unwrap().server_info.as_ref().unwrap().name, "test-app");
    a.subscribe(SubscribeRequestParams::new("app://windows")).await.unwrap();
    b.subscribe(SubscribeRequestParams::new("app://windows")).await.unwrap();

    let v = version_of(&b, "w-1").await;
    let r = call(&a, "w-1__set_amount", Some(json!({"amount": 5, "expectedVersion": v}))).await;
    assert_eq!(r.is_error, Some(false));

    let r = call(&b, "w-1__set_amount", Some(json!({"amount": 6, "expectedVersion": v}))).await;
    assert_eq!(error_code(&r), "stale_state");
    assert_eq!(structured(&r)["currentVersion"], v + 1);

    assert!(rec_a.wait_for(UPDATED, 1).await, "A got {:?}", rec_a.events());
    assert!(rec_b.wait_for(UPDATED, 1).await, "B got {:?}", rec_b.events());

    // A tool-list change reaches both sessions (OQ-GB-14).
    call(&b, "w-1__set_recipient", Some(json!({"recipient": "Hal"}))).await;
    assert!(rec_a.wait_for(TOOLS_CHANGED, 1).await, "A got {:?}", rec_a.events());
    assert!(rec_b.wait_for(TOOLS_CHANGED, 1).await, "B got {:?}", rec_b.events());
    assert!(rec_a.wait_for(UPDATED, 2).await && rec_b.wait_for(UPDATED, 2).await);
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
}

// 2026-07-28 over HTTP: discover, list, read and call on per-POST handlers, and a listen stream
// told about a legacy session's write (mixed eras on one bridge).
#[tokio::test]
async fn modern_http_client_listens_across_eras() {
    let bridge = bridge();
    let url = start(&bridge).await;
    let (modern, _) = http_modern(&url).await;
    assert_eq!(modern.peer_info().unwrap().protocol_version.as_str(), "2026-07-28");
    assert_eq!(
        tool_names(&modern).await,
        ["app__new_editor", "w-1__load_rows", "w-1__set_amount", "w-1__set_recipient"]
    );
    assert_eq!(snapshot(&modern).await["operableWindowIds"], json!(["w-1"]));

    let filter = SubscriptionFilter::builder().tools_list_changed().resource_subscription("app://windows").build();
    let mut sub = modern.listen(filter).await.unwrap();
    let (legacy, _) = http_legacy(&url).await;
    call(&legacy, "w-1__set_recipient", Some(json!({"recipient": "Ivy"}))).await;
    let mut got = Vec::new();
    while got.len() < 2 {
        let n = tokio::time::timeout(Duration::from_secs(5), sub.next()).await.expect("notification").unwrap().unwrap();
        got.push(match n {
            ServerNotification::ResourceUpdatedNotification(_) => UPDATED,
            ServerNotification::ToolListChangedNotification(_) => TOOLS_CHANGED,
            other => panic!("unexpected {other:?}"),
        });
    }
    assert_eq!(got, [UPDATED, TOOLS_CHANGED]);

    // The modern client's own write over HTTP reaches its listen stream too.
    let r = call(&modern, "w-1__submit", None).await;
    assert_eq!(structured(&r)["openedWindowIds"], json!(["w-2"]));
    let n = tokio::time::timeout(Duration::from_secs(5), sub.next()).await.expect("notification").unwrap().unwrap();
    assert!(matches!(n, ServerNotification::ResourceUpdatedNotification(_)));
    sub.cancel().await.unwrap();
    legacy.cancel().await.unwrap();
}

// Loopback only by default.
#[tokio::test]
async fn non_loopback_is_refused_unless_allowed() {
    let bridge = bridge();
    let addr: SocketAddr = "0.0.0.0:0".parse().unwrap();
    assert!(matches!(serve_http(bridge.clone(), addr).await, Err(ServeError::NonLoopback(_))));
    let listener = TcpListener::bind("0.0.0.0:0").await.unwrap();
    assert!(matches!(serve_http_on(bridge.clone(), listener).await, Err(ServeError::NonLoopback(_))));

    // Explicitly allowed: it serves (reach it through loopback here).
    let listener = TcpListener::bind("0.0.0.0:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(serve_http_on_with(bridge.clone(), listener, http_options().allow_non_loopback(true)));
    let (client, _) = http_legacy(&format!("http://127.0.0.1:{port}/mcp")).await;
    assert_eq!(tool_names(&client).await.len(), 4);
    client.cancel().await.unwrap();
}

// ---------------------------------------------------------------------------------------------
// Raw HTTP/1.1: what is on the wire, status and body, without an MCP client in between.

/// One HTTP answer as received.
#[derive(Debug)]
struct RawResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl RawResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as one JSON value: a JSON body, or the first `data:` line of an SSE body.
    fn json(&self) -> Value {
        let text = self.text();
        if self.header("content-type").is_some_and(|ct| ct.starts_with("text/event-stream")) {
            let data = text.lines().find_map(|l| l.strip_prefix("data:")).filter(|d| !d.trim().is_empty());
            return serde_json::from_str(data.expect("an SSE data line").trim()).expect("SSE data is JSON");
        }
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("body is not JSON ({e}): {text:?}"))
    }
}

/// Sends one request with `Connection: close` and reads the whole answer (de-chunked).
async fn raw(url: &str, method: &str, headers: &[(&str, &str)], body: &[u8]) -> RawResponse {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let authority = url.strip_prefix("http://").and_then(|rest| rest.split('/').next()).expect("http URL");
    let mut stream = tokio::net::TcpStream::connect(authority).await.expect("connect");
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nAuthorization: {HTTP_AUTH}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    // The server may answer (and close) before it reads an oversized body.
    let _ = stream.write_all(body).await;
    let mut bytes = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut bytes)).await.expect("answer");
    if let Err(e) = read {
        assert!(!bytes.is_empty(), "read failed before any answer: {e}");
    }
    let split = bytes.windows(4).position(|w| w == b"\r\n\r\n").expect("header end") + 4;
    let head = String::from_utf8_lossy(&bytes[..split - 4]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned())).collect();
    let mut body = bytes[split..].to_vec();
    if headers.iter().any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked")) {
        body = dechunk(&body);
    }
    RawResponse { status, headers, body }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = data.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(String::from_utf8_lossy(&data[..line_end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        let start = line_end + 2;
        out.extend_from_slice(&data[start..(start + size).min(data.len())]);
        data = &data[(start + size + 2).min(data.len())..];
    }
    out
}

const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");
const JSON_CT: (&str, &str) = ("Content-Type", "application/json");
const MODERN: (&str, &str) = ("MCP-Protocol-Version", "2026-07-28");

/// `params._meta` of a well-formed 2026-07-28 request.
fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1.0.0"}
    })
}

/// Opens a legacy (2025-11-25) session over raw HTTP and returns its `Mcp-Session-Id`.
async fn legacy_session(url: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw-test", "version": "1.0.0"}}});
    let r = raw(url, "POST", &[ACCEPT, JSON_CT], init.to_string().as_bytes()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let session = r.header("mcp-session-id").expect("session id").to_owned();
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let headers = [ACCEPT, JSON_CT, ("MCP-Protocol-Version", "2025-11-25"), ("Mcp-Session-Id", session.as_str())];
    let r = raw(url, "POST", &headers, done.to_string().as_bytes()).await;
    assert_eq!(r.status, 202, "{}", r.text());
    session
}

/// POSTs `body` with the headers a 2026-07-28 client sends, `Mcp-Method: method` and `extra`.
async fn post(url: &str, method: &str, extra: &[(&str, &str)], body: &[u8]) -> RawResponse {
    let mut headers = vec![ACCEPT, JSON_CT, MODERN, ("Mcp-Method", method)];
    headers.extend_from_slice(extra);
    raw(url, "POST", &headers, body).await
}

/// A 2026-07-28 `tools/list` request (id 7) whose `_meta` has `key` set to `value`.
fn tools_list_with_meta(key: &str, value: Value) -> Vec<u8> {
    let mut meta = modern_meta();
    meta[key] = value;
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": meta}}).to_string().into_bytes()
}

/// `status` and a JSON-RPC error object with `code` and `id`; returns the error message.
fn assert_jsonrpc_error(r: &RawResponse, status: u16, code: i64, id: Value) -> String {
    assert_eq!(r.status, status, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/json"), "{}", r.text());
    let body = r.json();
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(body["id"], id, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    body["error"]["message"].as_str().expect("message").to_owned()
}

// MA-8-1: the JSON-RPC shape (protocol version a string, client capabilities an object) is
// checked before the routing headers: a malformed `_meta` gets the malformed-request error
// (-32602, HTTP 400, as the 2026-07-28 spec and rmcp give it), never -32020, and the same
// error whether or not the headers match.
#[tokio::test]
async fn shape_is_checked_before_routing_headers() {
    let bridge = bridge();
    let url = start(&bridge).await;
    let bad_capabilities = tools_list_with_meta("io.modelcontextprotocol/clientCapabilities", json!("all"));
    for method_header in ["tools/call", "tools/list"] {
        let r = post(&url, method_header, &[], &bad_capabilities).await;
        let message = assert_jsonrpc_error(&r, 400, -32602, json!(7));
        assert!(message.contains("io.modelcontextprotocol/clientCapabilities"), "{message}");
    }
    let bad_version = tools_list_with_meta("io.modelcontextprotocol/protocolVersion", json!(20260728));
    let r = post(&url, "tools/call", &[("MCP-Protocol-Version", "2025-11-25")], &bad_version).await;
    let message = assert_jsonrpc_error(&r, 400, -32602, json!(7));
    assert!(message.contains("io.modelcontextprotocol/protocolVersion"), "{message}");

    // A broken envelope is an Invalid Request, also ahead of the headers.
    let no_version = json!({"id": 7, "method": "tools/list", "params": {"_meta": modern_meta()}});
    assert_jsonrpc_error(
        &post(&url, "tools/call", &[], no_version.to_string().as_bytes()).await,
        400,
        -32600,
        json!(7),
    );
    let object_id = json!({"jsonrpc": "2.0", "id": {}, "method": "tools/list", "params": {"_meta": modern_meta()}});
    assert_jsonrpc_error(
        &post(&url, "tools/call", &[], object_id.to_string().as_bytes()).await,
        400,
        -32600,
        Value::Null,
    );
}

// Params or arguments of the wrong JSON type get -32602 with the request's id (rmcp took a
// `tools/call` whose `arguments` or `name` had the wrong type for a custom method and answered
// -32601 "Method not found"); a notification with them still gets no body (MA-8-4).
#[tokio::test]
async fn wrong_json_types_get_invalid_params() {
    let bridge = bridge();
    let url = start(&bridge).await;
    for params in [
        json!({"name": "w-1__set_recipient", "arguments": [], "_meta": modern_meta()}),
        json!({"name": "w-1__set_recipient", "arguments": "text", "_meta": modern_meta()}),
        json!({"name": 5, "_meta": modern_meta()}),
        json!(5),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params});
        let name = params.get("name").and_then(Value::as_str).unwrap_or("x").to_owned();
        let r = post(&url, "tools/call", &[("Mcp-Name", name.as_str())], body.to_string().as_bytes()).await;
        assert_jsonrpc_error(&r, 400, -32602, json!(9));
    }
    let notification = json!({"jsonrpc": "2.0", "method": "tools/call", "params": 5});
    let r = post(&url, "tools/call", &[], notification.to_string().as_bytes()).await;
    assert_eq!(r.status, 400);
    assert!(r.body.is_empty(), "{}", r.text());
}

// MA-6-4: with a well-formed body, rmcp's header/body comparison still answers -32020 (HTTP
// 400) for each pair: Mcp-Method ↔ method, Mcp-Name ↔ params.name, MCP-Protocol-Version ↔
// _meta protocolVersion. MA-8-1 step 3 comes after: an agreed but unknown version is -32022.
#[tokio::test]
async fn header_mismatch_is_still_32020() {
    let bridge = bridge();
    let url = start(&bridge).await;
    let list = tools_list_with_meta("io.modelcontextprotocol/clientInfo", json!({"name": "raw-test", "version": "1"}));
    let message = assert_jsonrpc_error(&post(&url, "tools/call", &[], &list).await, 400, -32020, json!(7));
    assert!(message.contains("Mcp-Method"), "{message}");

    let call = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "w-1__load_rows", "arguments": {}, "_meta": modern_meta()}});
    let r = post(&url, "tools/call", &[("Mcp-Name", "w-1__submit")], call.to_string().as_bytes()).await;
    let message = assert_jsonrpc_error(&r, 400, -32020, json!(8));
    assert!(message.contains("Mcp-Name"), "{message}");
    // The same call with the right name header is served.
    let r = post(&url, "tools/call", &[("Mcp-Name", "w-1__load_rows")], call.to_string().as_bytes()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["isError"], false);

    let headers = [ACCEPT, JSON_CT, ("MCP-Protocol-Version", "2025-11-25"), ("Mcp-Method", "tools/list")];
    let r = raw(&url, "POST", &headers, &list).await;
    let message = assert_jsonrpc_error(&r, 400, -32020, json!(7));
    assert!(message.contains("MCP-Protocol-Version"), "{message}");

    let future = tools_list_with_meta("io.modelcontextprotocol/protocolVersion", json!("2099-01-01"));
    let headers = [ACCEPT, JSON_CT, ("MCP-Protocol-Version", "2099-01-01"), ("Mcp-Method", "tools/list")];
    assert_jsonrpc_error(&raw(&url, "POST", &headers, &future).await, 400, -32022, json!(7));
}

// MA-8-2, MA-8-4: a notification never gets a JSON-RPC body, whatever is wrong with it; the
// HTTP status still says what went wrong.
#[tokio::test]
async fn rejected_notification_gets_no_body() {
    let bridge = bridge();
    let url = start(&bridge).await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}).to_string();
    let bad_shape = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"_meta": {"io.modelcontextprotocol/clientCapabilities": []}}})
    .to_string();
    let mismatched = [ACCEPT, JSON_CT, MODERN, ("Mcp-Method", "tools/list")];
    let missing = [ACCEPT, JSON_CT, MODERN];
    let unknown_version =
        [ACCEPT, JSON_CT, ("MCP-Protocol-Version", "2099-01-01"), ("Mcp-Method", "notifications/cancelled")];
    let plain_text = [ACCEPT, ("Content-Type", "text/plain"), MODERN];
    let also_mismatched = [ACCEPT, JSON_CT, MODERN, ("Mcp-Method", "tools/call")];
    let cases = [
        ("mismatched Mcp-Method", &mismatched[..], &note, 400),
        ("missing Mcp-Method", &missing[..], &note, 400),
        ("unknown MCP-Protocol-Version", &unknown_version[..], &note, 400),
        ("non-JSON Content-Type", &plain_text[..], &note, 415),
        ("malformed shape", &also_mismatched[..], &bad_shape, 400),
    ];
    for (label, headers, body, status) in cases {
        let r = raw(&url, "POST", headers, body.as_bytes()).await;
        assert_eq!(r.status, status, "{label}: {}", r.text());
        assert!(r.body.is_empty(), "{label}: body {:?}", r.text());
    }
}

// MA-8-3: an accepted notification gets rmcp's 202 with an empty body, in both eras.
#[tokio::test]
async fn accepted_notification_is_202_empty() {
    let bridge = bridge();
    let url = start(&bridge).await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}).to_string();
    let r = post(&url, "notifications/cancelled", &[], note.as_bytes()).await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert!(r.body.is_empty(), "{:?}", r.text());

    let session = legacy_session(&url).await; // its notifications/initialized is also 202 and empty
    let headers = [ACCEPT, JSON_CT, ("MCP-Protocol-Version", "2025-11-25"), ("Mcp-Session-Id", session.as_str())];
    let r = raw(&url, "POST", &headers, note.as_bytes()).await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert!(r.body.is_empty(), "{:?}", r.text());
}

// A body that is not one JSON-RPC message gets a JSON-RPC error object with `id: null`, not
// rmcp's plain-text 415: invalid JSON and an empty body are Parse errors (-32700, HTTP 400), a
// batch is an Invalid Request; an oversized body is refused at once (413); a body sent with
// another Content-Type keeps rmcp's 415, now as a JSON-RPC error.
#[tokio::test]
async fn malformed_json_is_a_parse_error() {
    let bridge = bridge();
    let url = start(&bridge).await;
    for body in [&b"{\"jsonrpc\": \"2.0\", \"id\": 1,"[..], b"", b"not json"] {
        let message = assert_jsonrpc_error(&post(&url, "tools/list", &[], body).await, 400, -32700, Value::Null);
        assert!(message.starts_with("Parse error"), "{message}");
    }
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": modern_meta()}}]);
    let message = assert_jsonrpc_error(
        &post(&url, "tools/list", &[], batch.to_string().as_bytes()).await,
        400,
        -32600,
        Value::Null,
    );
    assert!(message.contains("batch"), "{message}");

    let oversized = vec![b' '; 4 * 1024 * 1024 + 1];
    let message = assert_jsonrpc_error(&post(&url, "tools/list", &[], &oversized).await, 413, -32600, Value::Null);
    assert!(message.contains("4194304"), "{message}");

    let list = tools_list_with_meta("io.modelcontextprotocol/clientInfo", json!({"name": "raw-test", "version": "1"}));
    let r =
        raw(&url, "POST", &[ACCEPT, ("Content-Type", "text/plain"), MODERN, ("Mcp-Method", "tools/list")], &list).await;
    let message = assert_jsonrpc_error(&r, 415, -32600, json!(7));
    assert!(message.contains("Content-Type"), "{message}");

    // Well-formed requests are untouched by all this.
    let r = post(&url, "tools/list", &[], &list).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["tools"].as_array().map(Vec::len), Some(4));
}

// A legacy (2025-11-25) session's DELETE answers 204 No Content (rmcp says 202, which the
// Python client logs as a failed termination); the session is then gone (404), and a DELETE
// naming no live session is 404.
#[tokio::test]
async fn legacy_delete_answers_204() {
    let bridge = bridge();
    let url = start(&bridge).await;
    let session = legacy_session(&url).await;
    let headers = [("MCP-Protocol-Version", "2025-11-25"), ("Mcp-Session-Id", session.as_str())];
    let r = raw(&url, "DELETE", &headers, b"").await;
    assert_eq!(r.status, 204, "{}", r.text());
    assert!(r.body.is_empty());

    assert_eq!(raw(&url, "DELETE", &headers, b"").await.status, 404);
    let unknown = [("MCP-Protocol-Version", "2025-11-25"), ("Mcp-Session-Id", "no-such-session")];
    assert_eq!(raw(&url, "DELETE", &unknown, b"").await.status, 404);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let r = raw(&url, "POST", &[ACCEPT, JSON_CT, headers[0], headers[1]], list.as_bytes()).await;
    let message = assert_jsonrpc_error(&r, 404, -32600, json!(2));
    assert!(message.contains("Session not found"), "{message}");
}

// MA-1-6: the 2026-07-28 endpoint answers GET and DELETE with 405 (rmcp's answer, kept).
#[tokio::test]
async fn modern_get_and_delete_are_405() {
    let bridge = bridge();
    let url = start(&bridge).await;
    for method in ["GET", "DELETE"] {
        let r = raw(&url, method, &[ACCEPT, MODERN], b"").await;
        assert_eq!(r.status, 405, "{method}: {}", r.text());
        assert!(r.header("allow").is_some_and(|allow| allow.contains("POST")), "{method}: {:?}", r.headers);
    }
}

/// `params._meta` of a 2026-07-28 request from a client with the MCP Apps extension.
fn apps_meta() -> Value {
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}});
    meta
}

/// One 2026-07-28 request on the wire with its routing headers; the result, checked for the
/// envelope every result carries: `resultType` (MA-1-5) and the server identity (MA-13-4), and
/// no session id header (MA-1-2, MA-13-5).
async fn stateless(url: &str, id: i64, method: &str, name: Option<&str>, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let extra: Vec<(&str, &str)> = name.map(|n| ("Mcp-Name", n)).into_iter().collect();
    let r = post(url, method, &extra, body.to_string().as_bytes()).await;
    assert_eq!(r.status, 200, "{method}: {}", r.text());
    assert_eq!(r.header("mcp-session-id"), None, "{method}");
    let answer = r.json();
    assert_eq!(answer["id"], id, "{answer}");
    let result = answer["result"].clone();
    assert_eq!(result["resultType"], "complete", "{method}: {result}");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "test-app", "{method}: {result}");
    assert!(!r.text().contains("sessionId"), "{method}: {}", r.text());
    result
}

// The MCP Apps contract on the raw 2026-07-28 wire, core methods only (MA-2-1: the extension
// adds `_meta` and a `ui://` resource, no method), one independent POST each (MA-13-1), each
// carrying its own `_meta` capabilities (MA-1-3, MA-13-2), in the lesson's order but with no
// `initialize` (MA-1-1) and no prior `server/discover` needed (MA-3-3): a call first, then
// discovery (MA-1-4, MA-3-1, MA-3-2, MA-13-6), the resource list (MA-6-1, MA-6-2, MA-13-3),
// the view read with `Mcp-Name` (MA-6-3), and `Mcp-Name` naming another view: -32020 (MA-6-4,
// MA-13-9).
#[tokio::test]
async fn the_apps_contract_on_the_stateless_wire() {
    let bridge = bridge();
    let url = start(&bridge).await;

    let call = stateless(
        &url,
        1,
        "tools/call",
        Some("w-1__load_rows"),
        json!({"name": "w-1__load_rows", "arguments": {}, "_meta": apps_meta()}),
    )
    .await;
    assert_eq!(call["isError"], false, "{call}");
    assert!(call["content"][0]["text"].is_string(), "MA-5-1, MA-12-3: {call}");
    assert_eq!(call["_meta"]["bridge/windowId"], "w-1");

    let discover = stateless(&url, 2, "server/discover", None, json!({"_meta": apps_meta()})).await;
    assert_eq!(discover["capabilities"]["extensions"], json!({"io.modelcontextprotocol/ui": {}}), "{discover}");
    assert!(discover["supportedVersions"].as_array().unwrap().contains(&json!("2026-07-28")), "{discover}");

    let list = stateless(&url, 3, "resources/list", None, json!({"_meta": apps_meta()})).await;
    assert_eq!(list["resources"].as_array().unwrap().len(), 1, "{list}");
    let entry = &list["resources"][0];
    for key in ["uri", "name", "description", "mimeType"] {
        assert!(entry[key].is_string(), "{key}: {entry}");
    }
    assert!(list["ttlMs"].is_u64() && list["cacheScope"].is_string(), "{list}");
    let templates = stateless(&url, 40, "resources/templates/list", None, json!({"_meta": apps_meta()})).await;
    assert_eq!(templates["resourceTemplates"], json!([]), "{templates}");
    let again = stateless(&url, 4, "resources/list", None, json!({"_meta": modern_meta()})).await;
    assert_eq!(again["resources"], list["resources"], "a stable descriptor, extension or not");

    let tools = stateless(&url, 5, "tools/list", None, json!({"_meta": apps_meta()})).await;
    let uri = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|t| t["_meta"]["ui"]["resourceUri"].as_str())
        .expect("a window tool with its view")
        .to_owned();
    let read = stateless(&url, 6, "resources/read", Some(&uri), json!({"uri": uri, "_meta": apps_meta()})).await;
    assert_eq!(read["contents"][0]["mimeType"], "text/html;profile=mcp-app");
    assert!(read["ttlMs"].is_u64() && read["cacheScope"] == "public", "{read}");

    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "resources/read",
        "params": {"uri": uri, "_meta": apps_meta()}});
    let r =
        post(&url, "resources/read", &[("Mcp-Name", "ui://test-app/other.html")], body.to_string().as_bytes()).await;
    assert_jsonrpc_error(&r, 400, -32020, json!(7));

    // The same read without the extension: -32021 naming the capability (MA-12-4).
    let body = json!({"jsonrpc": "2.0", "id": 8, "method": "resources/read",
        "params": {"uri": uri, "_meta": modern_meta()}});
    let r = post(&url, "resources/read", &[("Mcp-Name", &uri)], body.to_string().as_bytes()).await;
    let body = r.json();
    assert_eq!(r.status, 400, "OQ-MA-4: {body}");
    assert_eq!(body["error"]["code"], -32021, "{body}");
    assert_eq!(
        body["error"]["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/ui"],
        json!({"mimeTypes": ["text/html;profile=mcp-app"]}),
        "{body}"
    );
}

// ---------------------------------------------------------------------------------------------
// The same bytes get the same answer on stdio and on HTTP.

/// One stdio session (`serve_stdio_on` over an in-memory pipe), initialized.
struct Stdio {
    to_server: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl Stdio {
    async fn start(bridge: &Bridge) -> Self {
        use tokio::io::AsyncBufReadExt;
        let (client, server) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server);
        tokio::spawn(bridge_runtime::mcp::serve_stdio_on(bridge.clone(), server_read, server_write));
        let (client_read, to_server) = tokio::io::split(client);
        let mut stdio = Stdio { to_server, lines: tokio::io::BufReader::new(client_read).lines() };
        let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
        stdio.send(init.to_string().as_bytes()).await;
        assert_eq!(stdio.answer().await["id"], "init");
        stdio.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string().as_bytes()).await;
        stdio
    }

    async fn send(&mut self, line: &[u8]) {
        use tokio::io::AsyncWriteExt;
        self.to_server.write_all(line).await.unwrap();
        self.to_server.write_all(b"\n").await.unwrap();
    }

    /// The next answer (notifications skipped).
    async fn answer(&mut self) -> Value {
        loop {
            let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
                .await
                .expect("an answer in time")
                .unwrap()
                .expect("the server keeps the pipe open");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("method").is_none() {
                return message;
            }
        }
    }
}

/// `levels` nested arrays around `1`.
fn nested(levels: usize) -> String {
    format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
}

// A message nested deeper than the parser reads gets the same answer on HTTP as on stdio, from
// the one classifier both share: a `tools/call` the GB tool error `validation_failed` naming the
// argument (GB-7.3-1), another request `-32602` with its id, a request without an id `-32700`
// with id null; a notification none (MA-8-2: HTTP keeps a bare status). (Before: HTTP answered
// every one `-32700` with id null, the notification included.)
#[tokio::test]
async fn too_deep_json_is_answered_as_on_stdio() {
    let bridge = bridge();
    let url = start(&bridge).await;
    let mut stdio = Stdio::start(&bridge).await;
    let deep = nested(200);
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{{"name":"w-1__set_recipient","arguments":{{"tree":{deep}}},"_meta":{}}}}}"#,
        modern_meta()
    );
    let list = format!(
        r#"{{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{{"x":{deep},"_meta":{}}}}}"#,
        modern_meta()
    );
    let no_id = format!(r#"{{"jsonrpc":"2.0","method2":"tools/list","params":{{"x":{deep}}}}}"#);
    for (body, method, name) in [
        (call.as_str(), "tools/call", Some("w-1__set_recipient")),
        (list.as_str(), "tools/list", None),
        (no_id.as_str(), "tools/list", None),
    ] {
        stdio.send(body.as_bytes()).await;
        let on_stdio = stdio.answer().await;
        let extra: Vec<(&str, &str)> = name.map(|n| ("Mcp-Name", n)).into_iter().collect();
        let r = post(&url, method, &extra, body.as_bytes()).await;
        assert_eq!(r.json(), on_stdio, "{method}: HTTP {} {}", r.status, r.text());
    }
    let call_answer = post(&url, "tools/call", &[("Mcp-Name", "w-1__set_recipient")], call.as_bytes()).await.json();
    assert_eq!(call_answer["result"]["structuredContent"]["code"], "validation_failed", "{call_answer}");
    assert_eq!(call_answer["result"]["structuredContent"]["fields"][0]["field"], "tree", "{call_answer}");
    assert_eq!(post(&url, "tools/list", &[], list.as_bytes()).await.json()["error"]["code"], -32602);

    // A notification: nothing on stdio (the next answer is the ping's), no body on HTTP.
    let notification = format!(r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"x":{deep}}}}}"#);
    stdio.send(notification.as_bytes()).await;
    stdio.send(br#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#).await;
    assert_eq!(stdio.answer().await["id"], "p");
    let r = post(&url, "notifications/cancelled", &[], notification.as_bytes()).await;
    assert!(r.body.is_empty(), "HTTP {} {}", r.status, r.text());
    assert_eq!(r.status, 400);
}

// Unparseable JSON is a parse error however deep it goes before it breaks: a `tools/call` whose
// arguments open 2,000,000 arrays and never close them gets -32700 with id null (HTTP 400), as a
// body that is not JSON does; a well-formed body nested too deep keeps `validation_failed`
// naming the cap (above). The same line on stdio gets the same parse error. (Before: the
// unterminated body was answered `validation_failed`.)
#[tokio::test]
async fn an_unterminated_deep_body_is_a_parse_error() {
    let bridge = bridge();
    let url = start(&bridge).await;
    let mut stdio = Stdio::start(&bridge).await;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"w-1__set_recipient","arguments":{{"tree":{}"#,
        "[".repeat(2_000_000)
    );
    let r = post(&url, "tools/call", &[("Mcp-Name", "w-1__set_recipient")], body.as_bytes()).await;
    let message = assert_jsonrpc_error(&r, 400, -32700, Value::Null);
    assert!(message.starts_with("Parse error"), "{message}");
    // Well-formed up to a point, then broken deep inside: the same.
    let broken = format!(
        r#"{{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{{"name":"w-1__set_recipient","arguments":{{"tree":{}1,]{}}}}}}}"#,
        "[".repeat(300),
        "]".repeat(299)
    );
    let r = post(&url, "tools/call", &[("Mcp-Name", "w-1__set_recipient")], broken.as_bytes()).await;
    assert_jsonrpc_error(&r, 400, -32700, Value::Null);
    stdio.send(broken.as_bytes()).await;
    let on_stdio = stdio.answer().await;
    assert_eq!(on_stdio["id"], Value::Null, "{on_stdio}");
    assert_eq!(on_stdio["error"]["code"], -32700, "{on_stdio}");
}

// 2026-07-28 over HTTP as over stdio: `server/discover` without the request `_meta` its spec
// requires (no params, or `params: {}`) gets -32602 naming the missing keys, never a
// method-not-found; with it, it is served.
#[tokio::test]
async fn server_discover_without_meta_is_told_what_is_missing() {
    let bridge = bridge();
    let url = start(&bridge).await;
    for (id, body) in [
        (1, json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover"})),
        (2, json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {}})),
    ] {
        let r = post(&url, "server/discover", &[], body.to_string().as_bytes()).await;
        assert_eq!(r.json()["id"], id, "{}", r.text());
        assert_eq!(r.json()["error"]["code"], -32602, "{}", r.text());
        let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains("io.modelcontextprotocol/protocolVersion"), "{message}");
        assert!(message.contains("io.modelcontextprotocol/clientCapabilities"), "{message}");
    }
    let discover = json!({"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {"_meta": modern_meta()}});
    let r = post(&url, "server/discover", &[], discover.to_string().as_bytes()).await;
    assert!(r.json()["result"]["supportedVersions"].is_array(), "{}", r.text());
}
