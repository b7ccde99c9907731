//! The stdio transport's call order in process (`serve_stdio_on` over in-memory pipes), with a
//! window whose `hold` action blocks the UI until the test lets it go: a call cancelled before
//! its turn never runs (GB-10.1-3), and nothing a peer sends can wedge the queue (a call rmcp
//! answers itself, a duplicate id, the cap); the pre-layer's own answers keep their turn. The
//! same window over a legacy HTTP session: a duplicate id never runs.

use bridge_runtime::catalog::{DescribeActions, DescribeWindow, WindowMeta};
use bridge_runtime::mcp::serve_stdio_on;
use bridge_runtime::{
    ActionContext, ActionError, ActionHints, ActionSpec, Block, Bridge, BridgeActions, BridgeWindow, OpenOptions,
    Rendered,
};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};

/// A window that records marks; `hold` blocks the UI thread until its gate opens.
struct Gate {
    marks: String,
    open: Arc<AtomicBool>,
    /// Set when `hold` starts waiting.
    holding: Arc<AtomicBool>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Mark {
    /// The mark to append.
    mark: String,
}

impl DescribeWindow for Gate {
    fn window_meta() -> WindowMeta {
        WindowMeta { type_name: "Gate".into(), title: "Gate".into(), blocks: vec![] }
    }
}

impl BridgeWindow for Gate {
    fn render(&self) -> Rendered {
        Rendered {
            title: "Gate".into(),
            summary: Some(format!("marks: [{}]", self.marks)),
            blocks: vec![Block::Text { id: Some("marks".into()), text: self.marks.clone() }],
        }
    }
}

impl DescribeActions for Gate {
    fn action_specs_for(window_level: bool) -> Vec<ActionSpec> {
        let hints = ActionHints { read_only: false, destructive: false, idempotent: false, open_world: false };
        vec![
            ActionSpec::new("hold").description("Wait for the gate").hints(hints).finish(window_level),
            ActionSpec::new("mark").description("Append a mark").hints(hints).params::<Mark>().finish(window_level),
        ]
    }
}

impl BridgeActions for Gate {
    fn action_available(&self, _action: &str) -> bool {
        true
    }
    fn invoke_action(
        &mut self,
        action: &str,
        args: Map<String, Value>,
        _cx: &mut ActionContext<'_>,
    ) -> Result<Option<Value>, ActionError> {
        match action {
            "hold" => {
                self.holding.store(true, Ordering::SeqCst);
                // Bounded, so that a failing test ends instead of holding the UI thread forever.
                let give_up = std::time::Instant::now() + Duration::from_secs(60);
                while !self.open.load(Ordering::SeqCst) && std::time::Instant::now() < give_up {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Ok(None)
            }
            "mark" => {
                let m: Mark = serde_json::from_value(Value::Object(args)).map_err(ActionError::from_deserialize)?;
                self.marks.push_str(&m.mark);
                Ok(None)
            }
            other => Err(ActionError::not_available(format!("no action {other}"))),
        }
    }
}

struct Client {
    to_server: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    gate: Arc<AtomicBool>,
}

/// A bridge with one Gate window (`g`); the gate's switch, and the flag `hold` sets.
fn gate_bridge() -> (Bridge, Arc<AtomicBool>, Arc<AtomicBool>) {
    let gate = Arc::new(AtomicBool::new(false));
    let holding = Arc::new(AtomicBool::new(false));
    let (open, held) = (gate.clone(), holding.clone());
    let bridge = Bridge::builder("gate", "1.0.0").window::<Gate>().spawn_headless(move |ui| {
        ui.open(Gate { marks: String::new(), open, holding: held }, OpenOptions::window().with_id("g"));
    });
    (bridge, gate, holding)
}

impl Client {
    /// A bridge with one Gate window (`g`), served by `serve_stdio_on`; no handshake yet.
    fn start() -> Self {
        let (bridge, gate, _) = gate_bridge();
        let (client, server) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server);
        tokio::spawn(serve_stdio_on(bridge, server_read, server_write));
        let (client_read, to_server) = tokio::io::split(client);
        Client { to_server, lines: BufReader::new(client_read).lines(), gate }
    }

    async fn handshake(&mut self) {
        self.write(&[json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})])
            .await;
        assert_eq!(self.answer().await["id"], json!("init"));
        self.write(&[json!({"jsonrpc": "2.0", "method": "notifications/initialized"})]).await;
    }

    /// Writes `messages` in one write, one line each.
    async fn write(&mut self, messages: &[Value]) {
        let text: String = messages.iter().map(|m| format!("{m}\n")).collect();
        self.to_server.write_all(text.as_bytes()).await.unwrap();
    }

    /// The next answer (notifications skipped).
    async fn answer(&mut self) -> Value {
        loop {
            let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
                .await
                .expect("no answer")
                .unwrap()
                .expect("server closed");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("method").is_none() {
                return message;
            }
        }
    }

    async fn marks(&mut self, id: i64) -> String {
        self.write(&[
            json!({"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": {"uri": "app://windows"}}),
        ])
        .await;
        let answer = self.answer().await;
        assert_eq!(answer["id"], json!(id), "{answer}");
        let snapshot: Value = serde_json::from_str(answer["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
        snapshot["windows"][0]["summary"].as_str().unwrap().to_owned()
    }
}

fn call(id: i64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
}

fn cancel(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id, "reason": "changed my mind"}})
}

fn ping(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

// GB-10.1-3: a call cancelled (`notifications/cancelled`) while an earlier call of its
// connection still runs never runs; the calls after it do, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cancelled_before_its_turn_never_runs_gb_10_1_3() {
    let mut client = Client::start();
    client.handshake().await;
    client
        .write(&[
            call(1, "g__hold", json!({})),
            call(2, "g__mark", json!({"mark": "b"})),
            cancel(2),
            call(3, "g__mark", json!({"mark": "c"})),
            ping(4),
        ])
        .await;
    // rmcp reads in order: once the ping is answered, the cancellation has been handled.
    assert_eq!(client.answer().await["id"], json!(4));
    client.gate.store(true, Ordering::SeqCst);
    let mut answered: Vec<Value> = vec![client.answer().await["id"].clone(), client.answer().await["id"].clone()];
    answered.sort_by_key(|v| v.as_i64());
    assert_eq!(answered, [json!(1), json!(3)], "the cancelled call is never answered");
    assert_eq!(client.marks(5).await, "marks: [c]", "the cancelled call must not run");
    client.write(&[call(6, "g__mark", json!({"mark": "d"}))]).await;
    assert_eq!(client.answer().await["id"], json!(6));
    assert_eq!(client.marks(7).await, "marks: [cd]");
}

// A call whose handler never comes (rmcp answers a call before the handshake itself) does not
// hold the calls after it back.
#[tokio::test]
async fn a_call_rmcp_answers_itself_does_not_wedge_the_queue() {
    let mut client = Client::start();
    client.write(&[call(1, "g__mark", json!({"mark": "x"}))]).await;
    let answer = client.answer().await;
    assert_eq!(answer["id"], json!(1));
    assert!(answer["error"].is_object(), "{answer}");
    client.handshake().await;
    client.gate.store(true, Ordering::SeqCst);
    client.write(&[call(2, "g__mark", json!({"mark": "y"}))]).await;
    let answer = client.answer().await;
    assert_eq!(answer["id"], json!(2));
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    assert_eq!(client.marks(3).await, "marks: [y]");
}

// A second call with the id of a call still in progress is refused with -32600 and that id,
// written after the original's answer (never before it); the queue goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_id_is_refused_not_queued() {
    let mut client = Client::start();
    client.handshake().await;
    client.write(&[call(1, "g__hold", json!({})), call(1, "g__mark", json!({"mark": "dup"}))]).await;
    client.gate.store(true, Ordering::SeqCst);
    // The original's result first, then the duplicate's error: the client can tell them apart.
    let answer = client.answer().await;
    assert_eq!(answer["id"], json!(1));
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    let answer = client.answer().await;
    assert_eq!(answer["id"], json!(1));
    assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
    client.write(&[call(2, "g__mark", json!({"mark": "z"}))]).await;
    assert_eq!(client.answer().await["id"], json!(2));
    assert_eq!(client.marks(3).await, "marks: [z]");
}

// A `ping` (answered by rmcp at once, in no order) with the id of a call in flight is a
// duplicate too: the call's result first, then the ping's -32600 (the ping's answer used to
// take the call's place, so the client read `{}` as its call's result and never got the
// call's). A ping with a fresh id is answered at once, not held behind the call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_reusing_a_calls_id_is_a_duplicate_not_its_answer() {
    let mut client = Client::start();
    client.handshake().await;
    let ping = |id: i64| json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
    client.write(&[call(1, "g__hold", json!({})), ping(1), ping(2)]).await;
    let answer = client.answer().await;
    assert_eq!(answer["id"], json!(2), "the fresh ping waits for nothing: {answer}");
    assert_eq!(answer["result"], json!({}), "{answer}");
    client.gate.store(true, Ordering::SeqCst);
    let answer = client.answer().await;
    assert_eq!(answer["id"], json!(1));
    assert_eq!(answer["result"]["isError"], json!(false), "the call's own result: {answer}");
    let answer = client.answer().await;
    assert_eq!(answer["id"], json!(1));
    assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
    // The id is free again once answered.
    client.write(&[ping(1)]).await;
    let answer = client.answer().await;
    assert_eq!((answer["id"].clone(), answer["result"].clone()), (json!(1), json!({})), "{answer}");
}

// Bounded queue: beyond the cap of calls waiting or running on one connection, a call gets a
// busy error with its id at once; after the queue drains, calls run again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_beyond_the_queue_cap_get_a_busy_error() {
    let mut client = Client::start();
    client.handshake().await;
    let mut batch = vec![call(1, "g__hold", json!({}))];
    batch.extend((2..=300).map(|id| call(id, "g__mark", json!({"mark": "."}))));
    client.write(&batch).await;
    // Calls 257 to 300 are refused while 1 to 256 wait or run.
    for id in 257..=300 {
        let answer = client.answer().await;
        assert_eq!(answer["id"], json!(id), "{answer}");
        assert_eq!(answer["error"]["code"], json!(-32000), "{answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains("busy"));
    }
    client.gate.store(true, Ordering::SeqCst);
    for _ in 1..=256 {
        assert_eq!(client.answer().await["result"]["isError"], json!(false));
    }
    assert_eq!(client.marks(301).await, format!("marks: [{}]", ".".repeat(255)));
}

/// The line of a `tools/call` of `tool` whose argument `tree` is nested `levels` arrays deep.
fn deep_call(id: i64, tool: &str, levels: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"tree":{}1{}}}}}}}"#,
        "[".repeat(levels),
        "]".repeat(levels)
    )
}

impl Client {
    /// Writes raw lines in one write.
    async fn write_lines(&mut self, lines: &[String]) {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        self.to_server.write_all(text.as_bytes()).await.unwrap();
    }
}

// The pre-layer's refusal of a `tools/call` nested deeper than the transport reads is a GB tool
// error in the dispatcher's own shape (GB-7.4-1, GB-12.3): the same keys as a `validation_failed`
// the dispatcher returns, `_meta["bridge/windowId"]` included, no `resultType` on a 2025-11-25
// session (rmcp strips it for such a peer); and it takes its turn (GB-10.1-3): written after the
// answer of the call written before it. (Before: a stray `resultType`, no window id, and the
// refusal written while the earlier call still ran.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_too_deep_call_is_refused_in_its_turn_in_the_dispatchers_shape() {
    let mut client = Client::start();
    client.handshake().await;
    // A validation_failed from the dispatcher, for comparison.
    client.write(&[call(1, "g__mark", json!({"mark": 5}))]).await;
    let normal = client.answer().await;
    assert_eq!(normal["result"]["structuredContent"]["code"], json!("validation_failed"), "{normal}");
    client.write_lines(&[call(2, "g__hold", json!({})).to_string(), deep_call(3, "g__mark", 200)]).await;
    client.write(&[ping(4)]).await;
    assert_eq!(client.answer().await["id"], json!(4), "ping waits for nothing");
    client.gate.store(true, Ordering::SeqCst);
    let first = client.answer().await;
    assert_eq!(first["id"], json!(2), "the earlier call's answer comes first: {first}");
    let refusal = client.answer().await;
    assert_eq!(refusal["id"], json!(3), "{refusal}");
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&refusal), keys(&normal), "{refusal}");
    assert_eq!(keys(&refusal["result"]), keys(&normal["result"]), "{refusal}\n{normal}");
    assert_eq!(keys(&refusal["result"]["_meta"]), keys(&normal["result"]["_meta"]), "{refusal}\n{normal}");
    assert_eq!(refusal["result"]["_meta"]["bridge/windowId"], json!("g"), "{refusal}");
    assert_eq!(refusal["result"]["isError"], json!(true));
    assert_eq!(refusal["result"]["structuredContent"]["code"], json!("validation_failed"));
    assert_eq!(refusal["result"]["structuredContent"]["fields"][0]["field"], json!("tree"));
    assert_eq!(client.marks(5).await, "marks: []");
}

// MCP lifecycle: a second `initialize` written together with the first gets -32600 with its id,
// written after the first one's result (before: ahead of it).
#[tokio::test]
async fn a_second_initialize_is_refused_after_the_firsts_result() {
    let mut client = Client::start();
    let init = |id: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
    };
    client.write(&[init("a"), init("b")]).await;
    let first = client.answer().await;
    assert_eq!(first["id"], json!("a"), "{first}");
    assert!(first["result"].is_object(), "{first}");
    let second = client.answer().await;
    assert_eq!(second["id"], json!("b"), "{second}");
    assert_eq!(second["error"]["code"], json!(-32600), "{second}");
}

// An integer id beyond what a JSON-RPC id may hold here (i64) is an invalid request whose
// message says so (code -32600, id null), not "not a string or an integer".
#[tokio::test]
async fn an_id_beyond_64_bits_is_out_of_range() {
    let mut client = Client::start();
    client.handshake().await;
    client.write_lines(&[r#"{"jsonrpc":"2.0","id":100000000000000000000,"method":"ping"}"#.to_owned()]).await;
    let answer = client.answer().await;
    assert_eq!(answer["id"], Value::Null, "{answer}");
    assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("out of range"), "{message}");
}

// 2026-07-28: `server/discover` needs no `initialize`; without the request `_meta` its spec
// requires (no params, or `params: {}`) it is refused with -32602 naming what is missing, never
// "send initialize first"; with it, it is served.
#[tokio::test]
async fn server_discover_before_initialize_is_served_or_told_what_is_missing() {
    let mut client = Client::start();
    client
        .write(&[
            json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {}}),
        ])
        .await;
    for id in [1, 2] {
        let answer = client.answer().await;
        assert_eq!(answer["id"], json!(id), "{answer}");
        assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("io.modelcontextprotocol/protocolVersion"), "{message}");
        assert!(message.contains("io.modelcontextprotocol/clientCapabilities"), "{message}");
    }
    client
        .write(&[json!({"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}}}})])
        .await;
    let answer = client.answer().await;
    assert_eq!(answer["id"], json!(3), "{answer}");
    assert!(answer["result"]["supportedVersions"].is_array(), "{answer}");
}

// ---------------------------------------------------------------------------------------------
// The same window over a legacy (2025-11-25) HTTP session.

/// POSTs `body` to `addr`'s `/mcp` (with `session` when given) and reads the whole answer:
/// the status, the session id header, and the JSON-RPC messages (SSE `data:` lines or a JSON
/// body).
async fn http_post(
    addr: std::net::SocketAddr,
    session: Option<&str>,
    body: &Value,
) -> (u16, Option<String>, Vec<Value>) {
    use tokio::io::AsyncReadExt;
    let body = body.to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAuthorization: Bearer {}\r\n\
         Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
         MCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n",
        crate::support::mcp::HTTP_TOKEN,
        body.len()
    );
    if let Some(session) = session {
        head.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
    }
    head.push_str("\r\n");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut bytes = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut bytes)).await.expect("an answer").unwrap();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n").expect("a head");
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let session = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(n, _)| n.eq_ignore_ascii_case("mcp-session-id")))
        .map(|(_, v)| v.trim().to_owned());
    // Chunk sizes and SSE framing aside, every JSON object line is a message.
    let messages = rest
        .lines()
        .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
        .filter(|l| l.starts_with('{'))
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (status, session, messages)
}

// A legacy HTTP session behaves as stdio does for a request id still in flight: the second POST
// with that id gets -32600 with the id on its own response, at once, and never runs; the first
// POST gets its own answer. (Before: both ran, and one POST was never answered.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_a_duplicate_id_in_a_legacy_session_never_runs() {
    let (bridge, gate, holding) = gate_bridge();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(bridge_runtime::mcp::serve_http_on_with(bridge, listener, crate::support::mcp::http_options()));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let (status, session, _) = http_post(addr, None, &init).await;
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    let (status, _, _) =
        http_post(addr, Some(&session), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    assert_eq!(status, 202);

    let original = tokio::spawn({
        let session = session.clone();
        async move { http_post(addr, Some(&session), &call(7, "g__hold", json!({}))).await }
    });
    while !holding.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (_, _, duplicate) = http_post(addr, Some(&session), &call(7, "g__mark", json!({"mark": "dup"}))).await;
    assert_eq!(duplicate.len(), 1, "exactly one answer: {duplicate:?}");
    assert_eq!(duplicate[0]["id"], json!(7), "{duplicate:?}");
    assert_eq!(duplicate[0]["error"]["code"], json!(-32600), "{duplicate:?}");
    gate.store(true, Ordering::SeqCst);
    let (status, _, answers) = original.await.unwrap();
    assert_eq!(status, 200);
    let answers: Vec<&Value> = answers.iter().filter(|m| m.get("id").is_some()).collect();
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], json!(7));
    assert_eq!(answers[0]["result"]["isError"], json!(false), "{answers:?}");
    // The duplicate never ran.
    let read = json!({"jsonrpc": "2.0", "id": 8, "method": "resources/read", "params": {"uri": "app://windows"}});
    let (_, _, answers) = http_post(addr, Some(&session), &read).await;
    let snapshot: Value = serde_json::from_str(answers[0]["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(snapshot["windows"][0]["summary"], json!("marks: []"));
    // The id is free again once answered.
    let (_, _, answers) = http_post(addr, Some(&session), &call(7, "g__mark", json!({"mark": "x"}))).await;
    assert_eq!(answers[0]["result"]["isError"], json!(false), "{answers:?}");
}

// For a client with the MCP Apps extension, the dispatcher's tool results carry the window's
// state (`bridge/window`, `bridge/windowTools`); the pre-layer's refusal of a too-deep call does
// too, so a view following the window misses nothing (MA-5).
#[tokio::test]
async fn a_too_deep_calls_refusal_carries_the_window_state_for_an_apps_client() {
    let mut client = Client::start();
    client
        .write(&[json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "clientInfo": {"name": "t", "version": "0"},
            "capabilities": {"extensions": {"io.modelcontextprotocol/ui": {}}}}})])
        .await;
    assert_eq!(client.answer().await["id"], json!("init"));
    client.write(&[json!({"jsonrpc": "2.0", "method": "notifications/initialized"})]).await;
    client.write(&[call(1, "g__mark", json!({"mark": 5}))]).await;
    let normal = client.answer().await;
    client.write_lines(&[deep_call(2, "g__mark", 200)]).await;
    let refusal = client.answer().await;
    assert_eq!(refusal["id"], json!(2), "{refusal}");
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert!(normal["result"]["_meta"]["bridge/window"].is_object(), "{normal}");
    assert_eq!(keys(&refusal["result"]["_meta"]), keys(&normal["result"]["_meta"]), "{refusal}\n{normal}");
    assert_eq!(refusal["result"]["_meta"]["bridge/window"], normal["result"]["_meta"]["bridge/window"]);
}
