//! The stdio transport's call order in process (`serve_stdio_on` over in-memory pipes), with a
//! window whose `hold` action blocks the UI until the test lets it go: a call cancelled before
//! its turn never runs (GB-10.1-3), and nothing a peer sends can wedge the queue (a call rmcp
//! answers itself, a duplicate id, the cap).

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

impl Client {
    /// A bridge with one Gate window (`g`), served by `serve_stdio_on`; no handshake yet.
    fn start() -> Self {
        let gate = Arc::new(AtomicBool::new(false));
        let open = gate.clone();
        let bridge = Bridge::builder("gate", "1.0.0").window::<Gate>().spawn_headless(move |ui| {
            ui.open(Gate { marks: String::new(), open }, OpenOptions::window().with_id("g"));
        });
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
