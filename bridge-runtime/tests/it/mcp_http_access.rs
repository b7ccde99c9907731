//! Who may drive the app over streamable HTTP, played by an attacker on the same machine: a
//! page on another `localhost` port, a rebinding host name, a slowloris client, a stalled body,
//! a connection flood, a lax request head. Every check runs on the request head, before the body
//! is read, in the order `Host` → `Origin` → token → connection cap (MA-8-1's body checks come
//! after), and a refusal there is an HTTP status with no body (MA-8-4).

use crate::support::mcp as mcp_support;

use bridge_runtime::companion::ClientIdentity;
use bridge_runtime::mcp::{CompanionTools, GuiBridgeServer, HttpOptions, ServeError, http_router, serve_http_on_with};
use mcp_support::*;
use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::json;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Longest any answer may take before a test calls it missing (never the thing measured).
const PATIENCE: Duration = Duration::from_secs(10);

async fn start_with(options: HttpOptions) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve_http_on_with(bridge(), listener, options.token(HTTP_TOKEN)));
    addr
}

/// A 2026-07-28 `tools/list` request, id `id`.
fn tools_list(id: i64) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "attacker", "version": "1.0.0"}}}})
    .to_string()
    .into_bytes()
}

/// The head of a 2026-07-28 `tools/list` POST (keep-alive) with `Host: host`, the tests' token,
/// `extra` headers and `Content-Length: length`.
fn post_head(host: &str, extra: &[(&str, &str)], length: usize) -> String {
    let mut with_token = vec![("Authorization", HTTP_AUTH)];
    with_token.extend_from_slice(extra);
    post_head_as(host, &with_token, length)
}

/// [`post_head`] with no `Authorization` header but those in `extra`.
fn post_head_as(host: &str, extra: &[(&str, &str)], length: usize) -> String {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n\
         Content-Length: {length}\r\n"
    );
    for (name, value) in extra {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    head
}

/// One answer read off a connection.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl std::fmt::Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let body = String::from_utf8_lossy(&self.body);
        f.debug_struct("Answer")
            .field("status", &self.status)
            .field("headers", &self.headers)
            .field("body", &body)
            .finish()
    }
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Reads one HTTP answer (leaving the connection usable for the next one); `None` when the
/// server closed the connection without answering.
async fn read_answer(stream: &mut TcpStream) -> Option<Answer> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let split = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = tokio::time::timeout(PATIENCE, stream.read(&mut chunk)).await.expect("an answer in time").unwrap_or(0);
        if n == 0 {
            assert!(buf.is_empty(), "connection closed mid-answer: {:?}", String::from_utf8_lossy(&buf));
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..split - 4]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned())).collect();
    let mut rest = buf[split..].to_vec();
    let find = |name: &str| headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.clone());
    let body = if let Some(length) = find("content-length") {
        let length: usize = length.parse().unwrap();
        while rest.len() < length {
            let n = tokio::time::timeout(PATIENCE, stream.read(&mut chunk)).await.expect("body in time").unwrap();
            assert!(n > 0, "closed mid-body");
            rest.extend_from_slice(&chunk[..n]);
        }
        rest
    } else if find("transfer-encoding").is_some_and(|te| te.contains("chunked")) {
        while !rest.ends_with(b"0\r\n\r\n") {
            let n = tokio::time::timeout(PATIENCE, stream.read(&mut chunk)).await.expect("body in time").unwrap();
            assert!(n > 0, "closed mid-body");
            rest.extend_from_slice(&chunk[..n]);
        }
        rest
    } else {
        Vec::new()
    };
    Some(Answer { status, headers, body })
}

/// Waits for the server to close `stream`; returns what it sent first, if anything.
async fn closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(PATIENCE, stream.read_to_end(&mut rest)).await.expect("the server closes");
    rest
}

/// A refusal from the request head: `status`, no body, the connection closed.
async fn assert_refused(stream: &mut TcpStream, status: u16, label: &str) {
    let answer = read_answer(stream).await.unwrap_or_else(|| panic!("{label}: closed without an answer"));
    assert_eq!(answer.status, status, "{label}: {answer:?}");
    assert!(answer.body.is_empty(), "{label}: a refusal has no body (MA-8-4): {answer:?}");
    assert_eq!(answer.header("connection"), Some("close"), "{label}: {answer:?}");
    assert!(closed(stream).await.is_empty(), "{label}: nothing after the refusal");
}

/// A full keep-alive `tools/list` on `stream`: 200 with the tools.
async fn assert_served(stream: &mut TcpStream, host: &str, id: i64, label: &str) {
    let body = tools_list(id);
    stream.write_all(post_head(host, &[], body.len()).as_bytes()).await.unwrap();
    stream.write_all(&body).await.unwrap();
    let answer = read_answer(stream).await.unwrap_or_else(|| panic!("{label}: closed without an answer"));
    assert_eq!(answer.status, 200, "{label}: {answer:?}");
    assert!(String::from_utf8_lossy(&answer.body).contains("\"tools\""), "{label}: {answer:?}");
}

// A rebinding host name, a page on another localhost port and an opaque (`null`) origin are
// refused from the head alone: the head announces a body that never comes, and the 403 still
// arrives. (Before: the strict layer read and parsed the body first, so this waited forever.)
#[tokio::test]
async fn host_and_origin_are_refused_before_the_body_is_read() {
    let addr = start_with(HttpOptions::default()).await;
    let port = addr.port();
    let own = format!("127.0.0.1:{port}");
    let other_port = format!("http://localhost:{}", port.wrapping_add(1).max(1));
    let cases = [
        (format!("evil.example:{port}"), None, "a rebinding host name"),
        (format!("127.0.0.2:{port}"), None, "a non-loopback-name host"),
        (own.clone(), Some(other_port.as_str()), "a page on another localhost port"),
        (own.clone(), Some("null"), "an opaque origin"),
    ];
    for (host, origin, label) in cases {
        let extra: Vec<(&str, &str)> = origin.map(|o| ("Origin", o)).into_iter().collect();
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(post_head(&host, &extra, 100_000).as_bytes()).await.unwrap();
        assert_refused(&mut stream, 403, label).await;
    }
    // The same head with a body and no Origin, or the server's own, is served.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    assert_served(&mut stream, &own, 1, "no Origin").await;
}

// Trusted origins default to the server's own, in each loopback spelling for the bound port;
// another localhost port is refused, unless the app trusts it (HttpOptions::trust_origin).
#[tokio::test]
async fn only_the_servers_own_origin_is_trusted_by_default() {
    let addr = start_with(HttpOptions::default()).await;
    let port = addr.port();
    let host = format!("127.0.0.1:{port}");
    let body = tools_list(3);
    let send = |origin: String| {
        let (host, body) = (host.clone(), body.clone());
        async move {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            let head = post_head(&host, &[("Origin", origin.as_str())], body.len());
            stream.write_all(head.as_bytes()).await.unwrap();
            stream.write_all(&body).await.unwrap();
            read_answer(&mut stream).await.expect("an answer")
        }
    };
    for own in [format!("http://127.0.0.1:{port}"), format!("http://localhost:{port}"), format!("http://[::1]:{port}")]
    {
        assert_eq!(send(own.clone()).await.status, 200, "{own}");
    }
    let dev_server = "http://localhost:5173".to_owned();
    for other in [dev_server.clone(), format!("https://localhost:{port}"), "http://localhost".to_owned()] {
        let answer = send(other.clone()).await;
        assert_eq!(answer.status, 403, "{other}: {answer:?}");
        assert!(answer.body.is_empty(), "{other}: {answer:?}");
    }

    let addr = start_with(HttpOptions::default().trust_origin("http://localhost:5173")).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = post_head(&format!("127.0.0.1:{}", addr.port()), &[("Origin", dev_server.as_str())], body.len());
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body).await.unwrap();
    assert_eq!(read_answer(&mut stream).await.expect("an answer").status, 200);
}

// Slowloris: a client dribbling header lines is cut off at the header-read timeout, long
// before it would finish (before: no header timeout at all); a keep-alive connection with
// nothing in flight is closed the same way.
#[tokio::test]
async fn slowloris_and_idle_connections_are_closed() {
    let addr = start_with(HttpOptions::default().header_read_timeout(Duration::from_millis(200))).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n", addr.port()).as_bytes()).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let read = tokio::spawn(async move {
        let mut got = Vec::new();
        let _ = reader.read_to_end(&mut got).await;
        got
    });
    let mut lines_sent = 0;
    // 200 lines at 50 ms each would take 10 s, 50 timeouts' worth.
    while lines_sent < 200 && !read.is_finished() {
        if writer.write_all(format!("X-Slow-{lines_sent}: a\r\n").as_bytes()).await.is_err() {
            break;
        }
        lines_sent += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let got = tokio::time::timeout(PATIENCE, read).await.expect("the server closes the connection").unwrap();
    assert!(lines_sent < 200, "the dribbling client was never cut off");
    let got = String::from_utf8_lossy(&got);
    assert!(got.is_empty() || got.starts_with("HTTP/1.1 408"), "no answer but a timeout: {got:?}");

    // Keep-alive: one request served, then nothing: the server closes the idle connection.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    assert_served(&mut stream, &format!("127.0.0.1:{}", addr.port()), 1, "keep-alive").await;
    assert!(closed(&mut stream).await.is_empty(), "closed without another answer");
}

// A body that stops arriving gets 408 with no body and the connection closed (before: the
// request waited forever).
#[tokio::test]
async fn a_stalled_body_gets_408() {
    let addr = start_with(HttpOptions::default().body_timeout(Duration::from_millis(200))).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(post_head(&format!("127.0.0.1:{}", addr.port()), &[], 100).as_bytes()).await.unwrap();
    stream.write_all(b"{\"jsonrpc\":").await.unwrap();
    assert_refused(&mut stream, 408, "a stalled body").await;
}

// A connection flood beyond the cap is refused (503, no body, closed; or closed unanswered when
// newer connections evicted it before its head arrived) while the established client keeps
// working. The cap comes after the Host check: an over-cap connection with a bad Host still gets
// 403. (Before: no cap, every connection was served.)
#[tokio::test]
async fn a_connection_flood_is_refused_while_the_established_client_works() {
    let options = HttpOptions::default().max_sessions(1).max_listen_streams(0).max_connections(2);
    let addr = start_with(options).await;
    let host = format!("127.0.0.1:{}", addr.port());
    let mut first = TcpStream::connect(addr).await.unwrap();
    assert_served(&mut first, &host, 1, "first connection").await;
    let mut second = TcpStream::connect(addr).await.unwrap();
    assert_served(&mut second, &host, 2, "second connection").await;

    let mut wrong_host = TcpStream::connect(addr).await.unwrap();
    wrong_host.write_all(post_head("evil.example", &[], 10).as_bytes()).await.unwrap();
    assert_refused(&mut wrong_host, 403, "over the cap with a bad Host: Host comes first").await;

    let mut no_token = TcpStream::connect(addr).await.unwrap();
    no_token.write_all(post_head_as(&host, &[], 10).as_bytes()).await.unwrap();
    assert_refused(&mut no_token, 401, "over the cap without a token: the token comes first").await;

    let mut over = TcpStream::connect(addr).await.unwrap();
    over.write_all(post_head(&host, &[], 100_000).as_bytes()).await.unwrap();
    assert_refused(&mut over, 503, "over the cap").await;

    let mut flood = Vec::new();
    for _ in 0..100 {
        flood.push(TcpStream::connect(addr).await.unwrap());
    }
    let body = tools_list(9);
    let (mut refused, mut dropped) = (0, 0);
    for stream in &mut flood {
        let head = post_head(&host, &[], body.len());
        // A connection closed at once may refuse the write; that is a refusal too.
        if stream.write_all(head.as_bytes()).await.is_ok() {
            let _ = stream.write_all(&body).await;
        }
        match tokio::time::timeout(PATIENCE, read_answer_or_reset(stream)).await.expect("an answer or a close") {
            Some(answer) => {
                assert_eq!(answer.status, 503, "{answer:?}");
                refused += 1;
            }
            None => dropped += 1,
        }
    }
    assert_eq!(refused + dropped, 100);

    assert_served(&mut first, &host, 10, "the established client, after the flood").await;
    assert_served(&mut second, &host, 11, "the other established client").await;
}

/// [`read_answer`], where a reset connection counts as closed without an answer.
async fn read_answer_or_reset(stream: &mut TcpStream) -> Option<Answer> {
    let mut probe = [0u8; 1];
    match stream.peek(&mut probe).await {
        Ok(0) | Err(_) => None,
        Ok(_) => read_answer(stream).await,
    }
}

// SSE and `subscriptions/listen` streams sit idle for hours by design: the idle timeout
// (here 200 ms) never cuts a listen stream with its response in flight.
#[tokio::test]
async fn a_listen_stream_outlives_the_idle_timeout() {
    let addr = start_with(HttpOptions::default().header_read_timeout(Duration::from_millis(200))).await;
    let url = format!("http://{addr}/mcp");
    let rec = Recorder::default();
    let modern = rec
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(authed(url.clone())),
            ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
        )
        .await
        .expect("discover");
    let filter = SubscriptionFilter::builder().resource_subscription("app://windows").build();
    let mut sub = modern.listen(filter).await.unwrap();
    // Five idle timeouts with nothing on the stream.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let writer = Recorder::default()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(authed(url)),
            ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
        )
        .await
        .expect("discover");
    let r = call(&writer, "w-1__set_recipient", Some(json!({"recipient": "Ivy"}))).await;
    assert_eq!(r.is_error, Some(false), "{:?}", structured(&r));
    let n = tokio::time::timeout(PATIENCE, sub.next()).await.expect("a notification").unwrap().unwrap();
    assert!(matches!(n, ServerNotification::ResourceUpdatedNotification(_)), "{n:?}");
    sub.cancel().await.unwrap();
}

// ---------------------------------------------------------------------------------------------
// The access token.

/// A 401 from the head: no body, `WWW-Authenticate: Bearer realm="bridge"` and no OAuth
/// resource metadata, the connection closed.
async fn assert_unauthorized(stream: &mut TcpStream, label: &str) {
    let answer = read_answer(stream).await.unwrap_or_else(|| panic!("{label}: closed without an answer"));
    assert_eq!(answer.status, 401, "{label}: {answer:?}");
    assert_eq!(answer.header("www-authenticate"), Some("Bearer realm=\"bridge\""), "{label}: {answer:?}");
    assert!(answer.body.is_empty(), "{label}: {answer:?}");
    assert!(closed(stream).await.is_empty(), "{label}");
}

// Without the token nobody on the machine drives the app: a missing, wrong, truncated,
// extended or non-Bearer token gets 401 from the head, while the announced body never comes
// (before: every local process could list and call tools). A wrong Origin is still 403: the
// Origin check comes first.
#[tokio::test]
async fn without_the_token_requests_get_401_before_the_body() {
    let addr = start_with(HttpOptions::default()).await;
    let host = format!("127.0.0.1:{}", addr.port());
    let truncated = format!("Bearer {}", &HTTP_TOKEN[..HTTP_TOKEN.len() - 1]);
    let extended = format!("Bearer {HTTP_TOKEN}0");
    let basic = format!("Basic {HTTP_TOKEN}");
    let cases: [(Option<&str>, &str); 6] = [
        (None, "no Authorization"),
        (Some("Bearer wrong-token-0123456789abcdef"), "a wrong token"),
        (Some(truncated.as_str()), "a truncated token"),
        (Some(extended.as_str()), "an extended token"),
        (Some(basic.as_str()), "the token as Basic"),
        (Some(HTTP_TOKEN), "the token without a scheme"),
    ];
    for (auth, label) in cases {
        let extra: Vec<(&str, &str)> = auth.map(|a| ("Authorization", a)).into_iter().collect();
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(post_head_as(&host, &extra, 100_000).as_bytes()).await.unwrap();
        assert_unauthorized(&mut stream, label).await;
    }
    // A notification without the token: the same bare 401 (MA-8-4).
    let note = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(post_head_as(&host, &[], note.len()).as_bytes()).await.unwrap();
    stream.write_all(note).await.unwrap();
    assert_unauthorized(&mut stream, "a notification").await;

    let mut stream = TcpStream::connect(addr).await.unwrap();
    let other = format!("http://localhost:{}", addr.port().wrapping_add(1).max(1));
    stream.write_all(post_head_as(&host, &[("Origin", other.as_str())], 10).as_bytes()).await.unwrap();
    assert_refused(&mut stream, 403, "a bad Origin and no token").await;

    // An rmcp client without the token cannot even initialize.
    let refused =
        Recorder::default().serve(StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"))).await;
    assert!(refused.is_err(), "initialize without the token must fail");
}

// Named tokens: each agent its own; each works, none other does.
#[tokio::test]
async fn named_tokens_each_admit_their_agent() {
    let options = HttpOptions::default()
        .named_token("planner", "planner-secret-0123456789")
        .named_token("reviewer", "reviewer-secret-0123456789");
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve_http_on_with(bridge(), listener, options));
    let host = format!("127.0.0.1:{}", addr.port());
    let body = tools_list(4);
    for secret in ["planner-secret-0123456789", "reviewer-secret-0123456789"] {
        let auth = format!("Bearer {secret}");
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(post_head_as(&host, &[("Authorization", auth.as_str())], body.len()).as_bytes())
            .await
            .unwrap();
        stream.write_all(&body).await.unwrap();
        assert_eq!(read_answer(&mut stream).await.expect("an answer").status, 200, "{secret}");
    }
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(post_head(&host, &[], 10).as_bytes()).await.unwrap();
    assert_unauthorized(&mut stream, "the tests' default token is not configured here").await;
}

// The opt-out: `no_token()` serves without the header (and is refused with companion tools).
#[tokio::test]
async fn no_token_is_an_explicit_opt_out_refused_with_companion_tools() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve_http_on_with(bridge(), listener, HttpOptions::default().no_token()));
    let body = tools_list(5);
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(post_head_as(&format!("127.0.0.1:{}", addr.port()), &[], body.len()).as_bytes()).await.unwrap();
    stream.write_all(&body).await.unwrap();
    assert_eq!(read_answer(&mut stream).await.expect("an answer").status, 200);

    // The companion's engine (its own catalog: what matters here is that the tools are carried).
    let companion = crate::support::companion::start();
    let identity = ClientIdentity::external("mcp", "MCP host", [bridge_runtime::catalog::Scope::Discover]);
    let server = GuiBridgeServer::new(bridge()).with_companion(CompanionTools::new(companion.engine, identity));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let refused = serve_http_on_with(server.clone(), listener, HttpOptions::default().no_token()).await;
    assert!(matches!(refused, Err(ServeError::CompanionWithoutToken)), "{refused:?}");
    assert!(http_router(server, &HttpOptions::default().token(HTTP_TOKEN)).is_ok());
}

// Weak configured tokens stop the start with a clear error.
#[tokio::test]
async fn a_weak_token_is_refused_at_start() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let refused = serve_http_on_with(bridge(), listener, HttpOptions::default().token("short")).await;
    assert!(matches!(&refused, Err(ServeError::Token(m)) if m.contains("16")), "{refused:?}");
}

// With no token configured and BRIDGE_MCP_TOKEN unset, a token is generated at start: 64 hex
// digits in `mcp-PID-PORT.token`, mode 0600, in a 0700 directory of this user's; it admits, and
// nothing else does.
#[cfg(unix)]
#[tokio::test]
async fn a_generated_token_is_written_to_a_private_file() {
    use std::os::unix::fs::PermissionsExt;
    if std::env::var_os(bridge_runtime::mcp::TOKEN_ENV).is_some() {
        eprintln!("BRIDGE_MCP_TOKEN is set in this environment: the token is not generated");
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve_http_on_with(bridge(), listener, HttpOptions::default()));
    let dir = bridge_runtime::mcp::token_dir();
    let file = dir.join(format!("mcp-{}-{}.token", std::process::id(), addr.port()));
    let host = format!("127.0.0.1:{}", addr.port());
    // The file is written before the server accepts: a request that gets an answer proves it.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(post_head(&host, &[], 10).as_bytes()).await.unwrap();
    assert_unauthorized(&mut stream, "the tests' token is not the generated one").await;

    let token = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let token = token.trim();
    assert_eq!(token.len(), 64, "{token:?}");
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()), "{token:?}");
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
    assert_ne!(dir, std::env::temp_dir(), "never the shared temp directory itself");

    let body = tools_list(6);
    let auth = format!("Bearer {token}");
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(post_head_as(&host, &[("Authorization", auth.as_str())], body.len()).as_bytes()).await.unwrap();
    stream.write_all(&body).await.unwrap();
    assert_eq!(read_answer(&mut stream).await.expect("an answer").status, 200);
    let _ = std::fs::remove_file(&file);
}

// ---------------------------------------------------------------------------------------------
// Admission that does not wait for a complete head.

/// The pending budget of the default options (connections still sending their first head).
const PENDING: usize = HttpOptions::DEFAULT_MAX_PENDING_CONNECTIONS;

// CP-5-16 (the HTTP profile's authentication must hold under attack): a slowloris flood that
// fills every connection slot with heads it never finishes does not lock out a token holder: the header timeout is a minute, so only admission that does not wait
// for the heads can let the client in. The client initializes and calls a tool while the flood
// is on; the oldest dribbling connections are closed without an answer, none is served.
// (Before: the dribblers held every slot and the reserve, and the client was refused until the
// header timeout freed them.)
#[tokio::test]
async fn a_slowloris_flood_does_not_lock_out_a_token_holder() {
    let options = HttpOptions::default()
        .max_sessions(2)
        .max_listen_streams(2)
        .max_connections(8)
        .header_read_timeout(Duration::from_secs(60));
    let addr = start_with(options).await;
    // Far more than the cap (8), its reserve (32) and the pending budget together.
    let flood_size = 8 + 32 + PENDING + 100;
    let mut flood = Vec::with_capacity(flood_size);
    for i in 0..flood_size {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let head = format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nX-Slow-{i}: a", addr.port());
        // A connection the server already closed may refuse the write; it is closed either way.
        let _ = stream.write_all(head.as_bytes()).await;
        flood.push(stream);
    }

    let url = format!("http://{addr}/mcp");
    let client = tokio::time::timeout(
        PATIENCE,
        Recorder::default().serve(StreamableHttpClientTransport::from_config(authed(url))),
    )
    .await
    .expect("initialize in time")
    .expect("a token holder initializes during the flood");
    let r = call(&client, "w-1__set_recipient", Some(json!({"recipient": "Ivy"}))).await;
    assert_eq!(r.is_error, Some(false), "{:?}", structured(&r));

    // The oldest dribblers were evicted to make room: closed, nothing sent to them.
    for (i, stream) in flood.iter_mut().take(flood_size - PENDING).enumerate() {
        assert!(closed(stream).await.is_empty(), "dribbling connection {i} was answered");
    }
    // The flood goes on: the client still works.
    let r = call(&client, "w-1__set_recipient", Some(json!({"recipient": "Jo"}))).await;
    assert_eq!(r.is_error, Some(false), "{:?}", structured(&r));
}

// ---------------------------------------------------------------------------------------------
// Strict request heads: exactly one Host of a strict grammar, at most one Origin, an
// origin-form target (or an absolute-form one naming the Host itself). Each refusal comes from
// the head (the announced body never arrives), with no body (MA-8-4).

// CP-5-16's binding scope and Origin check, read from one unambiguous head: two Host headers,
// userinfo in Host (`evil.com@127.0.0.1` read as 127.0.0.1), two Origins, an absolute-form target
// naming another host were all accepted before.
#[tokio::test]
async fn lax_request_heads_are_refused_before_the_body() {
    let addr = start_with(HttpOptions::default()).await;
    let port = addr.port();
    let own = format!("127.0.0.1:{port}");
    let own_origin = format!("http://127.0.0.1:{port}");
    let head = |target: &str, hosts: &[&str], origins: &[&str]| {
        let mut head = format!(
            "POST {target} HTTP/1.1\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n\
             Authorization: {HTTP_AUTH}\r\nContent-Length: 100000\r\n"
        );
        for host in hosts {
            head.push_str(&format!("Host: {host}\r\n"));
        }
        for origin in origins {
            head.push_str(&format!("Origin: {origin}\r\n"));
        }
        head.push_str("\r\n");
        head
    };
    let userinfo = format!("evil.com@127.0.0.1:{port}");
    let cases = [
        (head("/mcp", &[own.as_str(), own.as_str()], &[]), 400, "two Host headers, both loopback"),
        (head("/mcp", &[own.as_str(), "evil.example"], &[]), 400, "two Host headers"),
        (head("/mcp", &[userinfo.as_str()], &[]), 400, "userinfo in Host"),
        (head("/mcp", &["127.0.0.1:80:80"], &[]), 400, "two ports in Host"),
        (head("/mcp", &["local host"], &[]), 400, "a space in Host"),
        (head("/mcp", &[], &[]), 400, "no Host"),
        (head("/mcp", &[own.as_str()], &[own_origin.as_str(), "http://evil.example"]), 403, "two Origin headers"),
        (head("/mcp", &[own.as_str()], &[own_origin.as_str(), own_origin.as_str()]), 403, "two own Origin headers"),
        (head("http://evil.example/mcp", &[own.as_str()], &[]), 403, "an absolute-form target elsewhere"),
        (head(&format!("http://evil.example:{port}/mcp"), &[own.as_str()], &[]), 403, "absolute-form, other host"),
        (head(&format!("http://localhost:{port}/mcp"), &[own.as_str()], &[]), 403, "absolute-form, not the Host"),
    ];
    for (head, status, label) in cases {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        assert_refused(&mut stream, status, label).await;
    }

    // The absolute form naming the server exactly as its Host does is served.
    let body = tools_list(12);
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let absolute = post_head(&own, &[], body.len()).replacen("POST /mcp", &format!("POST http://{own}/mcp"), 1);
    stream.write_all(absolute.as_bytes()).await.unwrap();
    stream.write_all(&body).await.unwrap();
    let answer = read_answer(&mut stream).await.expect("an answer");
    assert_eq!(answer.status, 200, "{answer:?}");
    // So are IPv6 and name spellings of loopback with or without a port.
    for host in ["[::1]", &format!("[::1]:{port}"), "localhost", &format!("LOCALHOST:{port}")] {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        assert_served(&mut stream, host, 13, host).await;
    }
}

// ---------------------------------------------------------------------------------------------
// The generated token's file lives as long as the server.

/// Starts a server with `options` (no token of the tests'), waits until it answers, and returns
/// its task and address.
async fn serve_until_answered(options: HttpOptions) -> (tokio::task::JoinHandle<Result<(), ServeError>>, SocketAddr) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(serve_http_on_with(bridge(), listener, options));
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(post_head_as(&format!("127.0.0.1:{}", addr.port()), &[], 10).as_bytes()).await.unwrap();
    assert_unauthorized(&mut stream, "no token offered").await;
    (server, addr)
}

// A generated token's 0600 file is deleted when the server stops; a file the app named stays,
// and so does a generated token's file that no longer holds the token this server wrote.
// (Before: every generated token stayed on disk after its server stopped.)
#[cfg(unix)]
#[tokio::test]
async fn the_generated_token_file_is_deleted_when_the_server_stops() {
    if std::env::var_os(bridge_runtime::mcp::TOKEN_ENV).is_some() {
        eprintln!("BRIDGE_MCP_TOKEN is set in this environment: the token is not generated");
        return;
    }
    let file_of = |addr: SocketAddr| {
        bridge_runtime::mcp::token_dir().join(format!("mcp-{}-{}.token", std::process::id(), addr.port()))
    };
    let (server, addr) = serve_until_answered(HttpOptions::default()).await;
    let file = file_of(addr);
    assert!(file.exists(), "{} is written at start", file.display());
    server.abort();
    assert!(server.await.unwrap_err().is_cancelled());
    assert!(!file.exists(), "{} is deleted when the server stops", file.display());

    // Replaced by someone else meanwhile: not this server's to delete.
    let (server, addr) = serve_until_answered(HttpOptions::default()).await;
    let file = file_of(addr);
    std::fs::write(&file, "someone-elses-token-0123456789\n").unwrap();
    server.abort();
    assert!(server.await.unwrap_err().is_cancelled());
    assert!(file.exists(), "a file holding another token stays");
    std::fs::remove_file(&file).unwrap();

    // A token file the app named is the app's: it stays.
    let named = std::env::temp_dir().join(format!("bridge-app-token-{}-{}", std::process::id(), addr.port()));
    std::fs::write(&named, "app-named-token-0123456789\n").unwrap();
    let (server, _) = serve_until_answered(HttpOptions::default().token_file(&named)).await;
    server.abort();
    assert!(server.await.unwrap_err().is_cancelled());
    assert_eq!(std::fs::read_to_string(&named).unwrap(), "app-named-token-0123456789\n");
    std::fs::remove_file(&named).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Only the endpoint is served, the Origin is one exact serialized origin, one Authorization.

/// A keep-alive POST of a 2026-07-28 `tools/list` to `target` with the token and `extra`.
async fn post_to(addr: SocketAddr, target: &str, extra: &[(&str, &str)]) -> Answer {
    let host = format!("127.0.0.1:{}", addr.port());
    let body = tools_list(21);
    let head = post_head(&host, extra, body.len()).replacen("POST /mcp ", &format!("POST {target} "), 1);
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body).await.unwrap();
    read_answer(&mut stream).await.expect("an answer")
}

// Only `/mcp` itself (with a query string, which a client may carry in its endpoint URL) is
// the MCP endpoint; every other path is 404: `/mcp/`, `/mcp/anything`, `/mcp/%2e%2e/admin`
// (before: served as `/mcp`), `/MCP`, `/mcpx`.
#[tokio::test]
async fn only_the_exact_endpoint_path_is_served() {
    let addr = start_with(HttpOptions::default()).await;
    for target in ["/mcp", "/mcp?client=x"] {
        let answer = post_to(addr, target, &[]).await;
        assert_eq!(answer.status, 200, "{target}: {answer:?}");
    }
    for target in ["/mcp/", "/mcp/anything", "/mcp/%2e%2e/admin", "/mcp//", "/MCP", "/mcpx", "/", "/mcp/?x=1"] {
        let answer = post_to(addr, target, &[]).await;
        assert_eq!(answer.status, 404, "{target}: {answer:?}");
    }
}

// CP-5-16's Origin rule: an Origin is the exact serialized origin `scheme://host[:port]`; the
// server's own with a trailing slash or any path is refused with 403 (before: the slash passed).
#[tokio::test]
async fn an_origin_with_a_path_or_trailing_slash_is_refused() {
    let addr = start_with(HttpOptions::default()).await;
    let own = format!("http://127.0.0.1:{}", addr.port());
    assert_eq!(post_to(addr, "/mcp", &[("Origin", own.as_str())]).await.status, 200);
    for origin in [format!("{own}/"), format!("{own}/mcp"), format!("{own}?x"), format!("{own}#x")] {
        let host = format!("127.0.0.1:{}", addr.port());
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(post_head(&host, &[("Origin", origin.as_str())], 100_000).as_bytes()).await.unwrap();
        assert_refused(&mut stream, 403, &origin).await;
    }
}

// More than one Authorization header is refused with 401, whichever comes first (before: the
// first one decided).
#[tokio::test]
async fn two_authorization_headers_are_refused() {
    let addr = start_with(HttpOptions::default()).await;
    let host = format!("127.0.0.1:{}", addr.port());
    for pair in [
        [HTTP_AUTH, "Bearer wrong-token-0123456789abcdef"],
        ["Bearer wrong-token-0123456789abcdef", HTTP_AUTH],
        [HTTP_AUTH, HTTP_AUTH],
    ] {
        let extra = [("Authorization", pair[0]), ("Authorization", pair[1])];
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(post_head_as(&host, &extra, 100_000).as_bytes()).await.unwrap();
        assert_unauthorized(&mut stream, &format!("{pair:?}")).await;
    }
}
