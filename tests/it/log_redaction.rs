//! A secret an agent passes never reaches the logs: the Order Editor over stdio with
//! `RUST_LOG=trace`, where rmcp logs every message it reads, is given a canary as the payment
//! password (`set_payment_password`'s sensitive parameter, GB-4.5-2), and its whole stderr is
//! searched for it. The
//! example installs `bridge_runtime::mcp::loggable` as its log filter, as the README says.
//! (Old main: rmcp's `received request` debug event printed the arguments, canary included.)

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

const CANARY: &str = "canary-7f3a9c-hunter3";

fn bin_dir() -> PathBuf {
    // target/debug/deps/it-… → target/debug
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(|p| p.parent()).unwrap().to_path_buf()
}

#[test]
fn a_sensitive_argument_never_reaches_a_trace_level_log() {
    let mut child = Command::new(bin_dir().join("examples/order_editor"))
        .env("RUST_LOG", "trace")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the order_editor example: `cargo build --workspace --bins --examples` first (./test.sh does)");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut stderr = child.stderr.take().unwrap();
    // Drain stderr while the server runs, so a full pipe cannot stall it.
    let logs = std::thread::spawn(move || {
        let mut all = Vec::new();
        stderr.read_to_end(&mut all).unwrap();
        String::from_utf8_lossy(&all).into_owned()
    });

    let mut send = |line: serde_json::Value| {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    };
    let mut answer = |id: u64| -> serde_json::Value {
        let mut line = String::new();
        loop {
            line.clear();
            assert_ne!(stdout.read_line(&mut line).unwrap(), 0, "the server closed stdout");
            let msg: serde_json::Value = serde_json::from_str(&line).unwrap();
            if msg["id"] == id {
                return msg;
            }
        }
    };
    send(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
    answer(1);
    send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "w-A__set_payment_password", "arguments": {"password": CANARY}}}));
    // The user's alone (user_only): refused to an agent, but the request line went through the
    // transport and the dispatcher's logs all the same.
    let set = answer(2);
    assert_eq!(set["result"]["isError"], true, "{set}");
    assert_eq!(set["result"]["structuredContent"]["code"], "action_not_available", "{set}");
    // A line rmcp cannot parse is logged too.
    send(serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": 5, "x": CANARY}));
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": "app://windows"}}),
    );
    let read = answer(4).to_string();
    assert!(!read.contains(CANARY), "the state shows the mask: {read}");
    let _ = child.kill();
    let _ = child.wait();
    let logs = logs.join().unwrap();
    assert!(logs.contains("initialized"), "logging was on at trace level: {logs}");
    assert!(!logs.contains(CANARY), "the canary reached stderr:\n{logs}");
}
