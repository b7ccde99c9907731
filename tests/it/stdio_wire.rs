//! The example servers over real stdio, played by a hostile or careless client: calls written
//! at once take effect in the order they arrived (GB-10.1-3), and every line gets the answer
//! it deserves, or none when it must get none (MA-8-2). The binaries are the built examples
//! (`cargo build --examples`; `BRIDGE_EXAMPLES_DIR` points at another build's
//! `target/<profile>/examples`, e.g. an older one, to see which of these fail there).
//!
//! Tests assert orders and codes, never times; a deadline only turns a missing answer into a
//! failure instead of a hang.

use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Longest wait for one line before the test fails as "no answer".
const NO_ANSWER: Duration = Duration::from_secs(30);

fn examples_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("BRIDGE_EXAMPLES_DIR") {
        return dir.into();
    }
    // target/debug/deps/it-… → target/debug/examples
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(|p| p.parent()).unwrap().join("examples")
}

struct Peer {
    child: Child,
    /// `None` once closed ([`Peer::close`]).
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

impl Peer {
    /// Starts an example and completes the legacy handshake.
    async fn start(example: &str) -> Self {
        let mut peer = Self::spawn(example);
        peer.handshake().await;
        peer
    }

    /// Starts an example; nothing written yet.
    fn spawn(example: &str) -> Self {
        Self::spawn_with_stderr(example, Stdio::null())
    }

    /// Starts an example with its stderr going to `stderr`.
    fn spawn_with_stderr(example: &str, stderr: Stdio) -> Self {
        Self::spawn_with(example, &[], stderr)
    }

    /// Starts an example with `args`, its stderr going to `stderr`.
    fn spawn_with(example: &str, args: &[&str], stderr: Stdio) -> Self {
        let path = examples_dir().join(example);
        let mut child = Command::new(&path)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e} (`cargo build --examples` first)", path.display()));
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Peer { child, stdin: Some(stdin), lines }
    }

    /// The legacy handshake: `initialize`, then `notifications/initialized`.
    async fn handshake(&mut self) {
        let peer = self;
        peer.send(&json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "attacker", "version": "0"}}}))
            .await;
        let init = peer.answer(&json!("init")).await;
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    }

    async fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Closes the server's stdin (end of the stream).
    fn close(&mut self) {
        self.stdin = None;
    }

    async fn send(&mut self, message: &Value) {
        self.write(format!("{message}\n").as_bytes()).await;
    }

    /// The next line the server writes.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(NO_ANSWER, self.lines.next_line())
            .await
            .expect("no answer from the server")
            .unwrap()
            .expect("the server closed stdout");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// The next answer (notifications skipped).
    async fn next_answer(&mut self) -> Value {
        loop {
            let message = self.next().await;
            if message.get("method").is_none() {
                return message;
            }
        }
    }

    /// The answer to `id`, which must be the next answer.
    async fn answer(&mut self, id: &Value) -> Value {
        let message = self.next_answer().await;
        assert_eq!(&message["id"], id, "answers came out of order: {message}");
        message
    }

    async fn call(&mut self, id: i64, tool: &str, arguments: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}))
            .await;
        self.answer(&json!(id)).await
    }

    /// `app://windows` as JSON.
    async fn windows(&mut self, id: i64) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": {"uri": "app://windows"}}))
            .await;
        let answer = self.answer(&json!(id)).await;
        serde_json::from_str(answer["result"]["contents"][0]["text"].as_str().expect("text content")).unwrap()
    }

    /// A `ping` and its answer: everything written before it has been read and handled.
    async fn ping(&mut self, id: i64) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"})).await;
        let answer = self.next_answer().await;
        assert_eq!(answer["id"], json!(id), "an answer nobody should have got came first: {answer}");
    }
}

fn tool_call(id: i64, tool: &str, arguments: Value) -> String {
    format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
    )
}

fn summary(windows: &Value, id: &str) -> String {
    let window = windows["windows"].as_array().unwrap().iter().find(|w| w["id"] == id).expect("window");
    window["summary"].as_str().unwrap().to_owned()
}

// GB-10.1-3: ten `edit_field` calls written at once on one connection take effect in arrival
// order: the form ends with the tenth value, round after round.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_edits_written_at_once_leave_the_tenth_value_gb_10_1_3() {
    let mut peer = Peer::start("order_editor").await;
    for round in 0..5i64 {
        let batch: String = (1..=10)
            .map(|n| {
                tool_call(
                    round * 100 + n,
                    "w-A__edit_field",
                    json!({"field": "recipient", "value": format!("R{round}-{n}")}),
                )
            })
            .collect();
        peer.write(batch.as_bytes()).await;
        let mut answered = Vec::new();
        for _ in 0..10 {
            let answer = peer.next_answer().await;
            assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
            answered.push(answer["id"].as_i64().unwrap());
        }
        // Answers may leave in any order (MCP does not order them); effects may not.
        answered.sort();
        let expected: Vec<i64> = (1..=10).map(|n| round * 100 + n).collect();
        assert_eq!(answered, expected);
        let windows = peer.windows(round * 100 + 99).await;
        assert!(
            summary(&windows, "w-A").contains(&format!("for R{round}-10,")),
            "round {round}: the form does not hold the tenth value: {}",
            summary(&windows, "w-A")
        );
    }
}

// GB-10.1-3: a use, a close, a use, a close of one window, written at once: the first close
// succeeds and what follows it finds the window gone (never the other way round).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn use_close_use_close_first_close_succeeds_gb_10_1_3() {
    let mut peer = Peer::start("order_editor").await;
    let rows = json!({"offset": 0, "limit": 1});
    let batch = [
        tool_call(1, "w-C__load_rows", rows.clone()),
        tool_call(2, "w-C__close", json!({})),
        tool_call(3, "w-C__load_rows", rows),
        tool_call(4, "w-C__close", json!({})),
    ]
    .concat();
    peer.write(batch.as_bytes()).await;
    let mut codes = vec![String::new(); 4];
    for _ in 1..=4 {
        let answer = peer.next_answer().await;
        let id = answer["id"].as_i64().unwrap() as usize;
        codes[id - 1] = answer["result"]["structuredContent"]["code"].as_str().unwrap_or("ok").to_owned();
    }
    assert_eq!(codes, ["ok", "ok", "window_not_found", "window_not_found"]);
}

// GB-7.4-3 through JSON-RPC: params or arguments of the wrong JSON type get -32602 with the
// request's id (rmcp took them for custom methods and answered -32601 "Method not found";
// `"params": 5` got -32600 without an id).
#[tokio::test]
async fn wrong_json_types_get_invalid_params_with_the_id() {
    let mut peer = Peer::start("order_editor").await;
    let cases = [
        json!({"name": "w-A__focus", "arguments": []}),
        json!({"name": "w-A__focus", "arguments": "text"}),
        json!({"name": 5}),
        json!(5),
    ];
    for (i, params) in cases.into_iter().enumerate() {
        let id = 10 + i as i64;
        peer.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})).await;
        let answer = peer.answer(&json!(id)).await;
        assert_eq!(answer["error"]["code"], json!(-32602), "{params}: {answer}");
    }
    // A known method's params of the wrong type, outside tools/call.
    peer.send(&json!({"jsonrpc": "2.0", "id": 20, "method": "resources/read", "params": {"uri": []}})).await;
    assert_eq!(peer.answer(&json!(20)).await["error"]["code"], json!(-32602));
    // An invalid request keeps its id.
    peer.send(&json!({"jsonrpc": "2.0", "id": "m", "method": 5})).await;
    let answer = peer.answer(&json!("m")).await;
    assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
    // A real unknown method is still rmcp's -32601.
    peer.send(&json!({"jsonrpc": "2.0", "id": 21, "method": "no/such"})).await;
    assert_eq!(peer.answer(&json!(21)).await["error"]["code"], json!(-32601));
}

// JSON-RPC 2.0 §5.1: input that is not JSON, or not UTF-8, gets -32700 with a null id.
#[tokio::test]
async fn a_line_that_is_not_json_gets_a_parse_error() {
    let mut peer = Peer::start("order_editor").await;
    peer.write(b"this is not JSON\n").await;
    let answer = peer.next_answer().await;
    assert_eq!(answer["error"]["code"], json!(-32700), "{answer}");
    assert_eq!(answer["id"], Value::Null);
    assert!(answer.as_object().unwrap().contains_key("id"), "the id is null, not missing: {answer}");
    peer.ping(1).await;
}

// The storm guard: a peer that writes its logs (or our own answers) into the pipe gets at most
// a handful of answers, and nothing for a line shaped as a response or error.
#[tokio::test]
async fn log_lines_and_echoed_errors_do_not_start_a_storm() {
    let mut peer = Peer::start("order_editor").await;
    let mut junk = String::new();
    for i in 0..50 {
        junk.push_str(&format!("2026-12-03T05:28:48Z INFO log line {i}\n"));
        junk.push_str("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}\n");
    }
    peer.write(junk.as_bytes()).await;
    peer.send(&json!({"jsonrpc": "2.0", "id": "after", "method": "ping"})).await;
    let mut parse_errors = 0;
    loop {
        let answer = peer.next_answer().await;
        if answer["id"] == json!("after") {
            break;
        }
        assert_eq!(answer["error"]["code"], json!(-32700), "{answer}");
        parse_errors += 1;
    }
    assert!((1..=8).contains(&parse_errors), "{parse_errors} answers to 50 log lines");
}

// MA-8-2: a notification is never answered, valid or not; neither is a response.
#[tokio::test]
async fn notifications_and_responses_get_no_answer_ma_8_2() {
    let mut peer = Peer::start("order_editor").await;
    for line in [
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": 5}),
        json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": 5}}),
        json!({"jsonrpc": "2.0", "method": "no/such", "params": []}),
        json!({"jsonrpc": "1.0", "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": 77, "result": {}}),
        json!({"jsonrpc": "2.0", "id": 78, "error": {"code": 1, "message": "x"}}),
    ] {
        peer.send(&line).await;
    }
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    peer.write(format!("{{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{{\"a\":{deep}}}}}\n").as_bytes()).await;
    peer.ping(1).await;
}

// A line nested deeper than the parser reads is answered: a request with its id, anything
// else with a parse error; a tools/call one with validation_failed naming the cap.
#[tokio::test]
async fn too_deep_input_is_answered() {
    let mut peer = Peer::start("order_editor").await;
    let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
    peer.write(format!("{deep}\n").as_bytes()).await;
    let answer = peer.next_answer().await;
    assert_eq!(answer["error"]["code"], json!(-32700), "{answer}");
    peer.write(
        tool_call(5, "w-A__edit_field", json!({"field": "recipient", "value": "x"})).replace("\"x\"", &deep).as_bytes(),
    )
    .await;
    let answer = peer.answer(&json!(5)).await;
    let error = &answer["result"]["structuredContent"];
    assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
    assert_eq!(error["code"], json!("validation_failed"));
    assert_eq!(error["fields"][0]["field"], json!("value"));
    assert!(error["message"].as_str().unwrap().contains("124"), "{error}");
    let read = format!(
        r#"{{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{{"uri":"app://windows","x":{deep}}}}}"#
    );
    peer.write(format!("{read}\n").as_bytes()).await;
    assert_eq!(peer.answer(&json!(6)).await["error"]["code"], json!(-32602));
}

// A legitimate recursive argument within the published schema is never dropped: the schema
// zoo's `outline` tree of 62 levels (128 levels of JSON in the message, one past what the
// parser reads; it used to get no answer at all) is refused with validation_failed naming the
// tool's argument `params` and the cap; 61 levels are served.
#[tokio::test]
async fn a_deep_recursive_argument_is_answered_not_dropped() {
    fn tree(levels: usize) -> Value {
        let mut node = json!({"label": "leaf", "children": []});
        for i in 1..levels {
            node = json!({"label": format!("n{i}"), "children": [node]});
        }
        node
    }
    let mut peer = Peer::start("schema_zoo").await;
    let args = |levels| json!({"params": {"title": "Sort", "outline": tree(levels)}, "timeoutMs": 10000});
    let answer = peer.call(1, "companion__outline_sort", args(62)).await;
    let error = &answer["result"]["structuredContent"];
    assert_eq!(error["code"], json!("validation_failed"), "{answer}");
    assert_eq!(error["fields"][0]["field"], json!("params"));
    assert!(error["message"].as_str().unwrap().contains("124"), "{error}");
    let answer = peer.call(2, "companion__outline_sort", args(61)).await;
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
}

// A line over the 16 MiB cap is answered with its id (found in its first bytes) and skipped;
// the connection goes on.
#[tokio::test]
async fn an_oversized_line_is_answered_and_skipped() {
    let mut peer = Peer::start("order_editor").await;
    let mut line =
        br#"{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"w-A__focus","arguments":{"pad":""#
            .to_vec();
    line.resize(line.len() + 17 * 1024 * 1024, b'a');
    line.extend_from_slice(b"\"}}}\n");
    peer.write(&line).await;
    let answer = peer.answer(&json!("big")).await;
    assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
    peer.ping(1).await;
}

// Error messages quote a bounded prefix of what they echo: a 100 KB tool name is not sent back
// whole.
#[tokio::test]
async fn a_huge_tool_name_is_not_echoed_whole() {
    let mut peer = Peer::start("order_editor").await;
    let name = format!("w-A__{}", "x".repeat(100_000));
    let answer = peer.call(1, &name, json!({})).await;
    let text = answer.to_string();
    assert!(text.len() < 2_000, "{} bytes of answer", text.len());
    assert_eq!(answer["result"]["isError"], json!(true));
}

// GB-7.1-2, GB-4.2-8: over the wire, an `expectedVersion` of 0 or a negative int64 is a version
// that differs from the window's, so the write is `stale_state` with `currentVersion`, and the
// window is unchanged (it was `validation_failed`); `null` means absent and the write goes ahead.
#[tokio::test]
async fn expected_version_zero_or_negative_is_stale_state() {
    let mut peer = Peer::start("order_editor").await;
    let before = peer.windows(1).await;
    for (id, expected) in [(2, json!(0)), (3, json!(-7)), (4, json!(-1.0))] {
        let answer = peer
            .call(id, "w-A__edit_field", json!({"field": "recipient", "value": "Mallory", "expectedVersion": expected}))
            .await;
        let error = &answer["result"]["structuredContent"];
        assert_eq!(error["code"], json!("stale_state"), "{expected}: {answer}");
        assert!(error["currentVersion"].is_i64(), "{answer}");
    }
    assert_eq!(peer.windows(5).await, before, "nothing was written");
    let answer =
        peer.call(6, "w-A__edit_field", json!({"field": "recipient", "value": "Ann", "expectedVersion": null})).await;
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
}

// MA-8-2, JSON-RPC 2.0 §4.1: a notification or a response before the session starts gets no
// answer and does not stop the app (rmcp's handshake ended the session on it: the app exited
// with "expect initialized request"); a ping is answered; the handshake then works.
#[tokio::test]
async fn a_stray_line_before_initialize_does_not_stop_the_app() {
    let mut peer = Peer::spawn("order_editor");
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}})).await;
    peer.send(&json!({"jsonrpc": "2.0", "id": 7, "result": {}})).await;
    peer.send(&json!({"jsonrpc": "2.0", "id": 8, "error": {"code": 1, "message": "echo"}})).await;
    peer.ping(9).await;
    peer.handshake().await;
    let windows = peer.windows(10).await;
    assert!(windows["windows"].as_array().is_some_and(|w| !w.is_empty()), "{windows}");
}

fn request(id: impl Into<Value>, method: &str, params: Value) -> String {
    format!("{}\n", json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params}))
}

fn read_windows(id: i64) -> String {
    request(id, "resources/read", json!({"uri": "app://windows"}))
}

/// `app://windows` from a `resources/read` answer.
fn windows_of(answer: &Value) -> Value {
    serde_json::from_str(answer["result"]["contents"][0]["text"].as_str().expect("text content")).unwrap()
}

// GB-10.1-3: a read written right after an edit, without waiting for the edit's answer, takes
// effect after it: the read shows the edit, round after round (only tools/call was ordered;
// the read could run first and show the old value).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_written_after_an_edit_shows_the_edit_gb_10_1_3() {
    let mut peer = Peer::start("order_editor").await;
    for round in 0..10i64 {
        let value = format!("Read{round}");
        let batch = [
            tool_call(round * 10 + 1, "w-A__edit_field", json!({"field": "recipient", "value": value})),
            read_windows(round * 10 + 2),
        ]
        .concat();
        peer.write(batch.as_bytes()).await;
        let mut read = None;
        for _ in 0..2 {
            let answer = peer.next_answer().await;
            if answer["id"] == json!(round * 10 + 2) {
                read = Some(windows_of(&answer));
            } else {
                assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
            }
        }
        let summary = summary(&read.expect("the read's answer"), "w-A");
        assert!(summary.contains(&format!("for {value},")), "round {round}: the read missed the edit: {summary}");
    }
}

// GB-10.1-3, GB-10.1-5: subscribe, unsubscribe, subscribe written at once take effect in that
// order: the connection ends subscribed, so a later change is announced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_unsubscribe_subscribe_at_once_ends_subscribed_gb_10_1_3() {
    let mut peer = Peer::start("order_editor").await;
    let uri = json!({"uri": "app://windows"});
    for round in 0..5i64 {
        let base = round * 10;
        let batch = [
            request(base + 1, "resources/subscribe", uri.clone()),
            request(base + 2, "resources/unsubscribe", uri.clone()),
            request(base + 3, "resources/subscribe", uri.clone()),
        ]
        .concat();
        peer.write(batch.as_bytes()).await;
        for _ in 0..3 {
            let answer = peer.next_answer().await;
            assert!(answer["result"].is_object(), "{answer}");
        }
        // A change after all three: its notification comes before the call's answer.
        peer.send(&json!({"jsonrpc": "2.0", "id": base + 4, "method": "tools/call",
            "params": {"name": "w-A__edit_field", "arguments": {"field": "recipient", "value": format!("S{round}")}}}))
            .await;
        let mut updated = false;
        loop {
            let message = peer.next().await;
            if message["method"] == json!("notifications/resources/updated") {
                updated = true;
            } else if message["id"] == json!(base + 4) {
                break;
            }
        }
        assert!(updated, "round {round}: no update after subscribe, unsubscribe, subscribe");
        // Back to unsubscribed for the next round.
        peer.send(&json!({"jsonrpc": "2.0", "id": base + 5, "method": "resources/unsubscribe", "params": uri})).await;
        loop {
            if peer.next().await["id"] == json!(base + 5) {
                break;
            }
        }
    }
}

// GB-10.1-3, GB-5.1-4: a tools/list written right after a call that opens a window lists the
// new window's tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_after_a_call_that_opens_a_window_lists_its_tools_gb_10_1_3() {
    let mut peer = Peer::start("order_editor").await;
    for round in 0..5i64 {
        let base = round * 10;
        let batch =
            [tool_call(base + 1, "app__new_report", json!({})), request(base + 2, "tools/list", json!({}))].concat();
        peer.write(batch.as_bytes()).await;
        let (mut opened, mut tools) = (None, None);
        for _ in 0..2 {
            let answer = peer.next_answer().await;
            if answer["id"] == json!(base + 1) {
                let ids = &answer["result"]["structuredContent"]["openedWindowIds"];
                opened = Some(ids[0].as_str().unwrap_or_else(|| panic!("no opened window: {answer}")).to_owned());
            } else {
                let names: Vec<String> = answer["result"]["tools"]
                    .as_array()
                    .unwrap_or_else(|| panic!("{answer}"))
                    .iter()
                    .map(|t| t["name"].as_str().unwrap().to_owned())
                    .collect();
                tools = Some(names);
            }
        }
        let (opened, tools) = (opened.unwrap(), tools.unwrap());
        assert!(
            tools.iter().any(|name| name.starts_with(&format!("{opened}__"))),
            "round {round}: tools/list misses the tools of {opened}: {tools:?}"
        );
    }
}

// MCP 2025-11-25 lifecycle: before `initialize` only `ping` is served; another request gets
// -32600 with its id (it was answered -32602 about 2026-07-28 `_meta` keys); a request with
// some 2026-07-28 `_meta` keys is still rmcp's -32602 naming the missing ones; a second
// `initialize` gets -32600 with its id (it succeeded) and the session goes on.
#[tokio::test]
async fn requests_before_initialize_and_a_second_initialize_get_invalid_request() {
    let mut peer = Peer::spawn("order_editor");
    peer.write(request(1, "tools/list", json!({})).as_bytes()).await;
    let answer = peer.answer(&json!(1)).await;
    assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
    peer.write(read_windows(2).as_bytes()).await;
    assert_eq!(peer.answer(&json!(2)).await["error"]["code"], json!(-32600));
    peer.ping(3).await;
    let partial = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
    peer.write(request(4, "tools/list", partial).as_bytes()).await;
    let answer = peer.answer(&json!(4)).await;
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("clientCapabilities"), "{answer}");
    peer.handshake().await;
    peer.send(&json!({"jsonrpc": "2.0", "id": "again", "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "attacker", "version": "0"}}}))
        .await;
    let answer = peer.answer(&json!("again")).await;
    assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
    let windows = peer.windows(5).await;
    assert!(windows["windows"].as_array().is_some_and(|w| !w.is_empty()), "{windows}");
}

// JSON-RPC 2.0 §5: two calls with one id written at once: the first call's result comes
// first, then the duplicate's -32600 (the error used to overtake the result, so the client
// could not tell which answer was whose); the form holds the first call's value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_ids_error_follows_the_originals_result() {
    let mut peer = Peer::start("order_editor").await;
    for round in 0..5i64 {
        let id = 100 + round;
        let batch = [
            tool_call(id, "w-A__edit_field", json!({"field": "recipient", "value": format!("First{round}")})),
            tool_call(id, "w-A__edit_field", json!({"field": "recipient", "value": format!("Second{round}")})),
        ]
        .concat();
        peer.write(batch.as_bytes()).await;
        let first = peer.answer(&json!(id)).await;
        assert_eq!(first["result"]["isError"], json!(false), "round {round}: the error came first: {first}");
        let second = peer.answer(&json!(id)).await;
        assert_eq!(second["error"]["code"], json!(-32600), "{second}");
        let windows = peer.windows(1000 + round).await;
        assert!(summary(&windows, "w-A").contains(&format!("for First{round},")), "{}", summary(&windows, "w-A"));
    }
}

// A peer writing garbage does not fill the app's log: 1,000 bad lines (not JSON, unknown
// methods, missing resources, wrong params, duplicate-free) leave at most a few lines on the
// example's stderr, none with a terminal colour code (stderr is a pipe here).
#[tokio::test]
async fn a_thousand_bad_lines_leave_the_log_quiet() {
    let mut peer = Peer::spawn_with_stderr("order_editor", Stdio::piped());
    let mut stderr = peer.child.stderr.take().unwrap();
    let log = tokio::spawn(async move {
        let mut bytes = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut stderr, &mut bytes).await.unwrap();
        bytes
    });
    peer.handshake().await;
    let mut junk = String::new();
    for i in 0..250i64 {
        junk.push_str(&format!("not JSON {i}\n"));
        junk.push_str(&request(1000 + i, "no/such", json!({})));
        junk.push_str(&request(2000 + i, "resources/read", json!({"uri": "nope://x"})));
        junk.push_str(&request(3000 + i, "tools/call", json!({"name": 5})));
    }
    peer.write(junk.as_bytes()).await;
    peer.send(&json!({"jsonrpc": "2.0", "id": "after", "method": "ping"})).await;
    while peer.next_answer().await["id"] != json!("after") {}
    peer.close();
    tokio::time::timeout(NO_ANSWER, peer.child.wait()).await.expect("the app exits at the end of stdin").unwrap();
    let log = tokio::time::timeout(NO_ANSWER, log).await.expect("stderr closes").unwrap();
    let text = String::from_utf8_lossy(&log);
    assert!(text.lines().count() <= 5, "{} log lines:\n{}", text.lines().count(), text);
    assert!(!log.contains(&0x1b), "colour codes on a pipe:\n{text}");
}

// A last request the client ends with the stream instead of a newline is still a line: it is
// answered, then the app shuts down as at any end of stdin.
#[tokio::test]
async fn a_last_line_without_a_newline_is_answered() {
    let mut peer = Peer::start("order_editor").await;
    peer.write(br#"{"jsonrpc":"2.0","id":"last","method":"resources/read","params":{"uri":"app://windows"}}"#).await;
    peer.close();
    let answer = peer.answer(&json!("last")).await;
    assert!(answer["result"]["contents"].is_array(), "{answer}");
    tokio::time::timeout(NO_ANSWER, peer.child.wait()).await.expect("the app exits at the end of stdin").unwrap();
}

// The storm guard: a response or error cut short (an echo of our answer that lost its end) is
// never answered, like a whole one (it got -32700).
#[tokio::test]
async fn a_truncated_response_gets_no_answer() {
    let mut peer = Peer::start("order_editor").await;
    peer.write(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32600,\"mess\n").await;
    peer.write(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"contents\":[{\"uri\":\"app://win\n").await;
    peer.ping(1).await;
}

/// A requirement ID (`GB-7.4-8`, `OQ-GB-18`, …) in text a model reads: `\b(GB|CP|MA|OQ)-[0-9]`.
fn rule_ids(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    (0..b.len().saturating_sub(3))
        .filter(|&i| {
            ["GB-", "CP-", "MA-", "OQ-"].iter().any(|p| b[i..].starts_with(p.as_bytes()))
                && b[i + 3].is_ascii_digit()
                && (i == 0 || !word(b[i - 1]))
        })
        .map(|i| String::from_utf8_lossy(&b[i..(i + 12).min(b.len())]).into_owned())
        .collect()
}

// No rule IDs in anything a model reads: the instructions, every `tools/list`, every
// `app://windows` read, every result and every error message of the Appendix A session (the
// order_editor demo's steps: a validation failure, a stale write, a modal, a blocked call, a
// gone window, an unknown action, paging, app-level tools and an app-level modal), and the
// schema zoo's tool list (companion tool included) and instructions.
#[tokio::test]
async fn no_rule_ids_in_what_a_model_reads() {
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut read = |what: String, v: &Value| seen.push((what, v.to_string()));

    for example in ["order_editor", "schema_zoo"] {
        let mut peer = Peer::spawn(example);
        peer.send(&json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "agent", "version": "0"}}}))
            .await;
        let init = peer.answer(&json!("init")).await;
        assert!(init["result"]["instructions"].as_str().is_some_and(|i| i.len() > 1000), "{init}");
        read(format!("{example} instructions"), &init["result"]["instructions"]);
        peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        peer.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
        let tools = peer.answer(&json!(1)).await;
        assert!(!tools["result"]["tools"].as_array().unwrap().is_empty(), "{tools}");
        read(format!("{example} tools/list"), &tools["result"]);
        read(format!("{example} app://windows"), &peer.windows(2).await);
        if example == "schema_zoo" {
            continue;
        }

        let mut session: Vec<(String, [Value; 3])> = Vec::new();
        let mut id = 10;
        let mut play = async |peer: &mut Peer, tool: &str, args: Value| -> Value {
            let parts = after_call(peer, &mut id, tool, args).await;
            let result = parts[0].clone();
            session.push((tool.to_owned(), parts));
            result
        };
        let codes = |r: &Value| r["structuredContent"]["code"].as_str().unwrap_or("ok").to_owned();
        let r = play(&mut peer, "w-A__submit", json!({})).await;
        assert_eq!(codes(&r), "validation_failed");
        let v = peer.windows(3).await["windows"][0]["version"].as_i64().unwrap();
        let args = json!({"field": "Recipient", "value": "Ada", "expectedVersion": v});
        assert_eq!(codes(&play(&mut peer, "w-A__edit_field", args).await), "ok");
        let stale = json!({"field": "amount", "value": "$250.00", "expectedVersion": v});
        assert_eq!(codes(&play(&mut peer, "w-A__edit_field", stale).await), "stale_state");
        let r = play(&mut peer, "w-A__submit", json!({"expectedVersion": v + 1})).await;
        let dialog = r["structuredContent"]["openedWindowIds"][0].as_str().expect("a dialog opened").to_owned();
        assert_eq!(codes(&play(&mut peer, "w-A__focus", json!({})).await), "blocked_by_modal");
        assert_eq!(codes(&play(&mut peer, &format!("{dialog}__confirm"), json!({})).await), "ok");
        assert_eq!(codes(&play(&mut peer, &format!("{dialog}__cancel"), json!({})).await), "window_not_found");
        assert_eq!(codes(&play(&mut peer, "w-A__no_such_action", json!({})).await), "action_not_available");
        assert_eq!(codes(&play(&mut peer, "w-C__load_rows", json!({"offset": 9_998, "limit": 2})).await), "ok");
        let bad_page = json!({"offset": -1, "limit": "ten", "extra": true});
        assert_eq!(codes(&play(&mut peer, "w-C__load_rows", bad_page).await), "validation_failed");
        assert_eq!(codes(&play(&mut peer, "app__new_report", json!({})).await), "ok");
        let r = play(&mut peer, "app__lock", json!({})).await;
        let lock = r["structuredContent"]["openedWindowIds"][0].as_str().expect("the lock opened").to_owned();
        assert_eq!(codes(&play(&mut peer, "w-C__focus", json!({})).await), "blocked_by_modal");
        assert_eq!(codes(&play(&mut peer, &format!("{lock}__unlock"), json!({})).await), "ok");
        for (tool, parts) in session {
            read(format!("{tool}: result"), &parts[0]);
            read(format!("{tool}: app://windows after"), &parts[1]);
            read(format!("{tool}: tools/list after"), &parts[2]);
        }
    }
    let found: Vec<String> = seen
        .iter()
        .flat_map(|(what, text)| rule_ids(text).into_iter().map(move |id| format!("{what}: {id}…")))
        .collect();
    assert!(found.is_empty(), "rule IDs in text a model reads:\n{}", found.join("\n"));
    assert!(seen.len() > 40, "the session was played");
}

/// Calls `tool`, then reads `app://windows` and `tools/list` as an agent does after every call
/// (GB-6-6, GB-8.3-3): the call's `result`, the snapshot, the tool list.
async fn after_call(peer: &mut Peer, id: &mut i64, tool: &str, args: Value) -> [Value; 3] {
    *id += 1;
    let answer = peer.call(*id, tool, args).await;
    assert!(answer["result"]["content"][0]["text"].is_string(), "{tool}: {answer}");
    *id += 1;
    let windows = peer.windows(*id).await;
    *id += 1;
    peer.send(&json!({"jsonrpc": "2.0", "id": *id, "method": "tools/list"})).await;
    let tools = peer.answer(&json!(*id)).await;
    [answer["result"].clone(), windows, tools["result"].clone()]
}

/// What a host that hands the model only `content` has of a result: the first line, and the
/// JSON object on the lines after it (`{}` when there are none).
fn content_only(result: &Value) -> (String, Value) {
    let content = result["content"].as_array().expect("content");
    assert_eq!(content.len(), 1, "one text item (GB-12.3-3, OQ-GB-20): {result}");
    let text = content[0]["text"].as_str().expect("a text item");
    match text.split_once('\n') {
        Some((line, rest)) => (line.to_owned(), serde_json::from_str(rest).expect("the rest is JSON")),
        None => (text.to_owned(), json!({})),
    }
}

// GB-12.3-3, GB-5.4-9: a client that reads only `content` (as several hosts do) gets the message
// as the first line and every other key of `structuredContent` as JSON after it: the rows
// `load_rows` fetched, the dialog a submit opened, an error's code, `currentVersion` and
// `fields`. A result that holds only a message is that line alone, not the message twice.
#[tokio::test]
async fn a_content_only_client_loses_nothing() {
    let mut peer = Peer::start("order_editor").await;
    let mut id = 0;
    let mut check = async |peer: &mut Peer, tool: &str, args: Value| -> (String, Value) {
        id += 1;
        let result = peer.call(id, tool, args).await["result"].clone();
        let (line, rest) = content_only(&result);
        let mut structured = result["structuredContent"].clone();
        let message = structured.as_object_mut().unwrap().remove("message");
        if let Some(message) = message {
            assert_eq!(message.as_str(), Some(line.as_str()), "{tool}: {result}");
        }
        assert_eq!(rest, structured, "{tool}: the text mirror carries every other key: {result}");
        (line, rest)
    };

    let (line, rest) = check(&mut peer, "w-C__load_rows", json!({"offset": 9_998, "limit": 2})).await;
    assert!(!line.is_empty());
    assert_eq!(rest["result"]["rows"].as_array().map(Vec::len), Some(2), "{rest}");
    assert_eq!(rest["result"]["total"], 10_000);

    let (_, rest) = check(&mut peer, "w-A__submit", json!({})).await;
    assert_eq!(rest["code"], "validation_failed");
    assert_eq!(rest["fields"][0]["field"], "recipient", "{rest}");

    let (line, rest) = check(&mut peer, "w-A__edit_field", json!({"field": "Recipient", "value": "Ada"})).await;
    assert_eq!(rest, json!({}), "a message alone is one line: {line}");

    let (_, rest) =
        check(&mut peer, "w-A__edit_field", json!({"field": "amount", "value": "$5", "expectedVersion": -1})).await;
    assert_eq!(rest["code"], "stale_state");
    assert!(rest["currentVersion"].is_i64(), "{rest}");

    let (_, rest) = check(&mut peer, "w-A__submit", json!({})).await;
    let dialog = rest["openedWindowIds"][0].as_str().expect("the dialog's id is in the text");
    assert!(!dialog.is_empty());
}

// Issue #20 item 2: with `--journal FILE`, each call's entry is in the file by the time its
// answer arrives (handed to the sink before the result returns), as one JSON line with the
// stdio connection's actor; a secret sent to a user-only action is masked there (GB-4.5-2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_journal_file_has_each_call_before_its_answer() {
    let file = std::env::temp_dir().join(format!("bridge-journal-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let mut peer = Peer::spawn_with("order_editor", &["--journal", file.to_str().unwrap()], Stdio::null());
    peer.handshake().await;
    let lines = |file: &std::path::Path| -> Vec<Value> {
        std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    };
    for (id, value) in [(1, "Ada"), (2, "Grace")] {
        let answer = peer.call(id, "w-A__edit_field", json!({"field": "recipient", "value": value})).await;
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        let last = lines(&file).pop().expect("an entry");
        assert_eq!(last["operation"], json!({"kind": "tool", "name": "w-A__edit_field"}));
        assert_eq!(last["arguments"]["value"], value);
        assert_eq!(last["actor"]["transport"], "stdio");
        assert_eq!(last["outcome"], json!({"status": "ok"}));
    }
    let canary = "canary-3b9d-password";
    let refused = peer.call(3, "w-A__set_payment_password", json!({"password": canary})).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let last = lines(&file).pop().expect("an entry");
    assert_eq!(last["outcome"], json!({"status": "error", "code": "action_not_available"}));
    assert_eq!(last["arguments"]["password"], "••••••");
    assert!(!std::fs::read_to_string(&file).unwrap_or_default().contains(canary));
    let connections: std::collections::BTreeSet<String> =
        lines(&file).iter().filter_map(|l| l["actor"]["connection"].as_str().map(str::to_owned)).collect();
    assert_eq!(connections.len(), 1, "one stdio connection, one agent: {connections:?}");
    let _ = std::fs::remove_file(&file);
}
