//! Streamable HTTP bounded under load (issue #10 item 4): the cap on legacy sessions (idle ones
//! evicted least recently used first, 503 when all are active) and the cap on 2026-07-28
//! `subscriptions/listen` streams. The memory figures are a benchmark, not a test:
//! `examples/http_load.rs`, BENCHMARKS.md "Bounded under load".

use crate::support::mcp as mcp_support;

use bridge_runtime::mcp::{HttpOptions, serve_http_on_with};
use mcp_support::*;
use rmcp::model::{ProtocolVersion, SubscriptionFilter};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

async fn start(options: HttpOptions) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve_http_on_with(bridge(), listener, options.token(HTTP_TOKEN)));
    format!("http://{addr}/mcp")
}

fn authority(url: &str) -> &str {
    url.strip_prefix("http://").and_then(|rest| rest.split('/').next()).expect("http URL")
}

/// Sends one request (`Connection: close`) and returns the connection after the response head
/// was read: `(status, head, stream)`. The body is left unread, so a stream stays open while
/// the returned `TcpStream` lives.
async fn send(url: &str, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, String, TcpStream) {
    let authority = authority(url);
    let mut stream = TcpStream::connect(authority).await.expect("connect");
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nAuthorization: {HTTP_AUTH}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    head.push_str(body);
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    while !bytes.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await.expect("answer").unwrap();
        assert!(n > 0, "connection closed before the response head");
        bytes.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let status = text.split(' ').nth(1).unwrap().parse().unwrap();
    (status, text, stream)
}

/// One whole request: `(status, head, body)`, the body de-chunked and, for SSE, its first
/// `data:` line.
async fn request(url: &str, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, String, Value) {
    let (status, head, mut stream) = send(url, method, headers, body).await;
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut rest)).await;
    let all = format!("{head}{}", String::from_utf8_lossy(&rest));
    let (head, raw_body) = all.split_once("\r\n\r\n").map(|(h, b)| (h.to_owned(), b.to_owned())).unwrap();
    let json = raw_body
        .lines()
        .filter_map(|l| l.strip_prefix("data:").map(str::trim).or(Some(l.trim())))
        .find_map(|l| serde_json::from_str::<Value>(l).ok().filter(Value::is_object))
        .unwrap_or(Value::Null);
    (status, head, json)
}

const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");
const JSON_CT: (&str, &str) = ("Content-Type", "application/json");
const LEGACY: (&str, &str) = ("MCP-Protocol-Version", "2025-11-25");

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| l.split_once(':').filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.trim()))
}

fn initialize_body(id: i64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "cap-test", "version": "1.0.0"}}})
    .to_string()
}

/// Opens a legacy session (initialize + notifications/initialized); its `Mcp-Session-Id`.
async fn open_session(url: &str) -> String {
    let (status, head, body) = request(url, "POST", &[ACCEPT, JSON_CT], &initialize_body(1)).await;
    assert_eq!(status, 200, "{head} {body}");
    let session = header(&head, "mcp-session-id").expect("session id").to_owned();
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let (status, ..) = request(url, "POST", &[ACCEPT, JSON_CT, LEGACY, ("Mcp-Session-Id", &session)], &done).await;
    assert_eq!(status, 202);
    session
}

/// `tools/list` in `session`: the HTTP status and the JSON-RPC answer.
async fn list_tools(url: &str, session: &str) -> (u16, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}).to_string();
    let (status, _, json) = request(url, "POST", &[ACCEPT, JSON_CT, LEGACY, ("Mcp-Session-Id", session)], &body).await;
    (status, json)
}

/// Opens the session's standalone `GET` SSE stream and keeps it open while the stream lives.
async fn open_get(url: &str, session: &str) -> TcpStream {
    let (status, head, stream) =
        send(url, "GET", &[("Accept", "text/event-stream"), LEGACY, ("Mcp-Session-Id", session)], "").await;
    assert_eq!(status, 200, "{head}");
    stream
}

/// `status` 503 and a JSON-RPC error `-32603` echoing `id`; returns the message.
fn assert_busy(status: u16, head: &str, body: &Value, id: i64) -> String {
    assert_eq!(status, 503, "{head} {body}");
    assert_eq!(header(head, "content-type"), Some("application/json"), "{head}");
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(body["id"], id, "{body}");
    assert_eq!(body["error"]["code"], -32603, "{body}");
    body["error"]["message"].as_str().expect("message").to_owned()
}

// Issue #10 item 4: the defaults are the documented ones, and the builder methods set them.
#[test]
fn http_options_defaults_are_documented() {
    let options = HttpOptions::default();
    assert!(!options.allow_non_loopback);
    assert_eq!(options.max_sessions, 32);
    assert_eq!(options.max_sessions, HttpOptions::DEFAULT_MAX_SESSIONS);
    assert_eq!(options.max_listen_streams, 64);
    assert_eq!(options.max_listen_streams, HttpOptions::DEFAULT_MAX_LISTEN_STREAMS);
    let options = HttpOptions::default().max_sessions(3).max_listen_streams(0).allow_non_loopback(true);
    assert_eq!((options.max_sessions, options.max_listen_streams, options.allow_non_loopback), (3, 0, true));
}

// Issue #10 item 4: at the cap, a new session evicts the least recently used idle session; the
// evicted session then gets 404 (with a JSON-RPC error body), as for an unknown session, and
// the others keep working.
#[tokio::test]
async fn cap_reached_evicts_the_least_recently_used_idle_session() {
    let url = start(HttpOptions::default().max_sessions(2)).await;
    let a = open_session(&url).await;
    let b = open_session(&url).await;
    // A is used after B was opened: B is now the least recently used.
    assert_eq!(list_tools(&url, &a).await.0, 200);

    let c = open_session(&url).await;
    let (status, answer) = list_tools(&url, &b).await;
    assert_eq!(status, 404, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("Session not found"), "{answer}");
    let delete = request(&url, "DELETE", &[LEGACY, ("Mcp-Session-Id", &b)], "").await;
    assert_eq!(delete.0, 404, "the evicted session is unknown to DELETE too");

    let (status, answer) = list_tools(&url, &a).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["tools"].as_array().map(Vec::len), Some(4), "{answer}");
    assert_eq!(list_tools(&url, &c).await.0, 200);

    // And again: now C was used last but A before it, so A goes.
    let d = open_session(&url).await;
    assert_eq!(list_tools(&url, &a).await.0, 404);
    assert_eq!(list_tools(&url, &c).await.0, 200);
    assert_eq!(list_tools(&url, &d).await.0, 200);
}

// Issue #10 item 4: a session with an open GET stream is active and never evicted; with every
// session active, `initialize` is refused with HTTP 503 and a JSON-RPC error body, and the
// active sessions are untouched. Once a stream closes, its session is idle and evictable again.
#[tokio::test]
async fn all_sessions_active_refuses_a_new_one_with_503() {
    let url = start(HttpOptions::default().max_sessions(2)).await;
    let a = open_session(&url).await;
    let b = open_session(&url).await;
    let get_a = open_get(&url, &a).await;
    let _get_b = open_get(&url, &b).await;

    let (status, head, body) = request(&url, "POST", &[ACCEPT, JSON_CT], &initialize_body(41)).await;
    let message = assert_busy(status, &head, &body, 41);
    assert!(message.contains("all 2 MCP sessions are active"), "{message}");
    assert_eq!(header(&head, "mcp-session-id"), None, "no session was created");
    assert_eq!(list_tools(&url, &a).await.0, 200);
    assert_eq!(list_tools(&url, &b).await.0, 200);

    // A's stream goes away: A is idle, and the next session takes its place.
    drop(get_a);
    let mut admitted = None;
    for _ in 0..200 {
        let (status, head, _) = request(&url, "POST", &[ACCEPT, JSON_CT], &initialize_body(42)).await;
        if status == 200 {
            admitted = header(&head, "mcp-session-id").map(str::to_owned);
            break;
        }
        assert_eq!(status, 503);
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let c = admitted.expect("a session is admitted once A's GET stream closed");
    assert_eq!(list_tools(&url, &a).await.0, 404, "A, idle, was evicted");
    assert_eq!(list_tools(&url, &b).await.0, 200, "B, active, was kept");
    assert_eq!(list_tools(&url, &c).await.0, 200);
}

// The session cap concerns legacy sessions only: with `max_sessions(0)` an `initialize` is
// refused with 503, and a 2026-07-28 client (no session) is served as before.
#[tokio::test]
async fn zero_sessions_still_serves_2026_clients() {
    let url = start(HttpOptions::default().max_sessions(0)).await;
    let (status, head, body) = request(&url, "POST", &[ACCEPT, JSON_CT], &initialize_body(3)).await;
    assert_busy(status, &head, &body, 3);
    let modern = ()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(authed(url.clone())),
            ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
        )
        .await
        .expect("discover");
    assert_eq!(modern.list_all_tools().await.expect("tools/list").len(), 4);
}

/// A raw 2026-07-28 `subscriptions/listen` request body.
fn listen_body(id: i64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
    "notifications": {"toolsListChanged": true},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "cap-test", "version": "1.0.0"}
    }}})
    .to_string()
}

// Issue #10 item 4: past the cap on open `subscriptions/listen` streams, a listen gets HTTP 503
// with a JSON-RPC error body; cancelling a stream frees its slot.
#[tokio::test]
async fn listen_streams_are_capped() {
    let url = start(HttpOptions::default().max_listen_streams(2)).await;
    let client = ()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(authed(url.clone())),
            ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
        )
        .await
        .expect("discover");
    let filter = || SubscriptionFilter::builder().tools_list_changed().resource_subscription("app://windows").build();
    let mut first = client.listen(filter()).await.expect("first listen");
    let _second = client.listen(filter()).await.expect("second listen");

    let headers = [ACCEPT, JSON_CT, ("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "subscriptions/listen")];
    let (status, head, body) = request(&url, "POST", &headers, &listen_body(77)).await;
    let message = assert_busy(status, &head, &body, 77);
    assert!(message.contains("2 subscriptions/listen streams are open"), "{message}");
    assert!(client.listen(filter()).await.is_err(), "the rmcp client sees the refusal as an error");
    // Other requests are not affected.
    assert_eq!(client.list_all_tools().await.expect("tools/list").len(), 4);

    first.cancel().await.unwrap();
    let mut third = None;
    for _ in 0..200 {
        if let Ok(sub) = client.listen(filter()).await {
            third = Some(sub);
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let mut third = third.expect("a listen is admitted once one was cancelled");
    third.cancel().await.unwrap();
}
