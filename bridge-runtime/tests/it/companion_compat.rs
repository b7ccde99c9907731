//! Today's answers, pinned (CP-8-1, CP-8-2, CP-4-1 … CP-4-3, OQ-CP-16, CP-4-21, CP-7-2): the
//! fixtures under `tests/it/fixtures/companion/` were written by the build of commit f8aec2f
//! (before the protocol table started routing the companion) and every later build must give the
//! same answers:
//!
//! - `rpc-discover.line`: the `rpc.discover` response line, byte for byte;
//! - `socket-transcript.json`: every method (and an unknown one, a batch) over the socket as an
//!   unauthenticated, a `notify`-only and a fully authorised client, ids and times masked;
//! - `idempotency.json` and `idempotency.db`: creates with and without `"allowFallback": false`
//!   and with `"character": null`, first and again with the same `idempotencyKey`, then again
//!   after a restart on the database that build wrote (a manual clock makes it deterministic).
//!
//! `BRIDGE_PIN=1 cargo test -p bridge-runtime --test it companion_compat` rewrites them; do that
//! only when a wire change is intended.

use crate::support::companion as companion_support;
use crate::support::companion_socket as companion_socket_support;

use bridge_runtime::companion::{AuthConfig, CompanionError};
use bridge_runtime::companion::{
    ClientIdentity, Clock, Engine, EngineConfig, ScriptedPresenter, ServerConfig, SqliteStore,
};
use companion_socket_support::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use tokio::io::AsyncBufReadExt;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/companion")
}

fn pinning() -> bool {
    std::env::var_os("BRIDGE_PIN").is_some()
}

/// Compares `actual` with the pinned file `name` (or writes it under `BRIDGE_PIN`).
fn pinned(name: &str, actual: &str) {
    let path = fixtures().join(name);
    if pinning() {
        std::fs::create_dir_all(fixtures()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if expected != actual {
        let at =
            expected.bytes().zip(actual.bytes()).position(|(a, b)| a != b).unwrap_or(expected.len().min(actual.len()));
        let from = at.saturating_sub(200);
        panic!(
            "{name} differs from the pinned answer at byte {at}\n pinned: …{}\n    now: …{}",
            expected.get(from..(at + 200).min(expected.len())).unwrap_or(""),
            actual.get(from..(at + 200).min(actual.len())).unwrap_or(""),
        );
    }
}

/// Masks run-specific values: request, runtime and client ids and keys by the order they first
/// appear (`req#1`, …), and request times.
struct Masks {
    seen: Vec<String>,
    times: bool,
}

impl Masks {
    /// Masks ids, and request times too when `times`.
    fn new(times: bool) -> Self {
        Masks { seen: Vec::new(), times }
    }

    fn mask(&mut self, v: &Value) -> Value {
        match v {
            Value::String(s) => {
                for prefix in ["req_", "rt_", "cl_", "ck_"] {
                    if s.starts_with(prefix) && s.len() > 20 {
                        let n = match self.seen.iter().position(|x| x == s) {
                            Some(i) => i + 1,
                            None => {
                                self.seen.push(s.clone());
                                self.seen.len()
                            }
                        };
                        return Value::String(format!("{}#{n}", &prefix[..prefix.len() - 1]));
                    }
                }
                v.clone()
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| self.mask(x)).collect()),
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| {
                        let x = match (k.as_str(), x) {
                            ("createdAt" | "deadlineAt" | "displayedAt", Value::Number(_)) if self.times => {
                                json!("<time>")
                            }
                            _ => self.mask(x),
                        };
                        (k.clone(), x)
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The socket

/// The next response line, as bytes (without the newline); `None` once the server answers
/// nothing within a moment (notifications).
async fn raw_line(conn: &mut Conn) -> String {
    let mut line = String::new();
    tokio::time::timeout(BOUND, conn.reader.read_line(&mut line)).await.expect("a line in time").expect("read");
    line.trim_end_matches('\n').to_owned()
}

// CP-8-2, CP-2-13: `rpc.discover` answers exactly as before, byte for byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rpc_discover_is_byte_identical_to_the_pinned_answer() {
    let mut h = start().await;
    let (mut c, _) = h.client("agent").await;
    c.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"rpc.discover\"}\n").await;
    let line = raw_line(&mut c).await;
    pinned("rpc-discover.line", &format!("{line}\n"));
}

/// The calls of the transcript: every method of the protocol, valid and invalid params.
fn transcript_calls() -> Vec<Value> {
    let create = companion_support::create_body("notice.show", json!({"text": "pinned"}), 10_000);
    let mut keyed = create.clone();
    keyed["idempotencyKey"] = json!("pin-1");
    vec![
        json!({"method": "runtime.describe", "params": {}}),
        json!({"method": "runtime.describe", "params": {"protocolVersions": ["9.9"]}}),
        json!({"method": "runtime.describe"}),
        json!({"method": "characters.list", "params": {}}),
        json!({"method": "characters.list", "params": {"x": 1}}),
        json!({"method": "capabilities.list", "params": {"limit": 2}}),
        json!({"method": "capabilities.describe", "params": {"capability": "notice.show"}}),
        json!({"method": "capabilities.describe", "params": {"capability": "nope"}}),
        json!({"method": "styles.list", "params": {}}),
        json!({"method": "requests.create", "params": keyed}),
        json!({"method": "requests.create", "params": {}}),
        json!({"method": "requests.create", "params": companion_socket_support::choose_request()}),
        json!({"method": "requests.get", "params": {"requestId": "req_x"}}),
        json!({"method": "requests.wait", "params": {"requestId": "req_x", "waitMs": 0}}),
        json!({"method": "requests.cancel", "params": {"requestId": "req_x"}}),
        json!({"method": "requests.update", "params": {"requestId": "req_x", "expectedRevision": 1}}),
        json!({"method": "rpc.discover", "params": {"x": 1}}),
        json!({"method": "rpc.discover", "params": []}),
        json!({"method": "nope", "params": {}}),
        json!({"method": "session.authenticate", "params": {"clientId": "cl_nobody"}}),
        json!({"method": "pairing.request", "params": {"name": "", "scopes": []}}),
    ]
}

// CP-8-1, CP-5-1, CP-5-6, CP-7-2, OQ-CP-12: every method over the socket answers as before, for an
// unauthenticated, a `notify`-only and a fully authorised connection (single calls and a batch).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn socket_answers_are_the_pinned_ones() {
    let mut h = start_with(ServerConfig::default(), AuthConfig::default()).await;
    let notify = h.pair("notifier", &["notify"]).await;
    let full = h.pair("agent", &["discover", "animate", "notify", "interact"]).await;
    let mut masks = Masks::new(true);
    let mut transcript = Vec::new();
    for (who, creds) in [("anonymous", None), ("notify", Some(&notify)), ("full", Some(&full))] {
        let mut c = h.connect().await;
        if let Some(creds) = creds {
            c.authenticate(creds).await;
        }
        for (i, call) in transcript_calls().into_iter().enumerate() {
            let mut msg = call.clone();
            msg["jsonrpc"] = json!("2.0");
            msg["id"] = json!(i);
            c.send(&msg).await;
            let line = raw_line(&mut c).await;
            let answer: Value = serde_json::from_str(&line).unwrap();
            transcript.push(json!({"who": who, "call": call, "answer": masks.mask(&answer)}));
        }
        // A batch: answered in order, the notification not at all.
        c.send(&json!([
            {"jsonrpc": "2.0", "id": "a", "method": "characters.list"},
            {"jsonrpc": "2.0", "method": "runtime.describe"},
            {"jsonrpc": "2.0", "id": "b", "method": "nope"},
            {"jsonrpc": "2.0", "id": "c", "method": "requests.get", "params": {"requestId": "req_x"}}
        ]))
        .await;
        let line = raw_line(&mut c).await;
        let answer: Value = serde_json::from_str(&line).unwrap();
        transcript.push(json!({"who": who, "call": "batch", "answer": masks.mask(&answer)}));
    }
    let text = serde_json::to_string_pretty(&transcript).unwrap();
    pinned("socket-transcript.json", &format!("{text}\n"));
}

// ---------------------------------------------------------------------------------------------
// Idempotency across a restart (CP-4-1 … CP-4-3, OQ-CP-16, CP-4-21)

/// Fixed wall time of the idempotency scenario.
const T0: i64 = 1_750_000_000_000;

fn engine_on(db: &Path, at: i64) -> Engine {
    let (presenter, _events) = ScriptedPresenter::new();
    Engine::builder(companion_support::catalog())
        .config(EngineConfig::default())
        .store(SqliteStore::open(db).expect("store"))
        .presenter(presenter)
        .clock(Clock::manual(at))
        .start()
        .expect("engine")
}

fn answer(outcome: Result<Value, CompanionError>) -> Value {
    match outcome {
        Ok(v) => json!({"result": v}),
        Err(e) => json!({"error": e.to_jsonrpc()}),
    }
}

fn body(capability: &str, key: Option<&str>, extra: Value) -> Value {
    let params = match capability {
        "animation.celebrate" => json!({"message": "done"}),
        _ => json!({"text": "pinned"}),
    };
    let mut b = companion_support::create_body(capability, params, 10_000);
    if let Some(key) = key {
        b["idempotencyKey"] = json!(key);
    }
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        b[k] = v;
    }
    b
}

/// The creates run before the restart.
fn first_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("plain", body("notice.show", Some("k-plain"), json!({}))),
        ("plain again", body("notice.show", Some("k-plain"), json!({}))),
        ("plain, keys reordered", {
            let mut b = serde_json::Map::new();
            b.insert("timeoutMs".into(), json!(10_000));
            b.insert("idempotencyKey".into(), json!("k-plain"));
            b.insert("params".into(), json!({"text": "pinned"}));
            b.insert("capability".into(), json!("notice.show"));
            Value::Object(b)
        }),
        ("plain + allowFallback false", body("notice.show", Some("k-plain"), json!({"allowFallback": false}))),
        ("plain + character null", body("notice.show", Some("k-plain"), json!({"character": null}))),
        ("false", body("notice.show", Some("k-false"), json!({"allowFallback": false}))),
        ("false again", body("notice.show", Some("k-false"), json!({"allowFallback": false}))),
        ("false without allowFallback", body("notice.show", Some("k-false"), json!({}))),
        ("false + allowFallback true", body("notice.show", Some("k-false"), json!({"allowFallback": true}))),
        ("null", body("notice.show", Some("k-null"), json!({"character": null}))),
        ("null again", body("notice.show", Some("k-null"), json!({"character": null}))),
        ("null without character", body("notice.show", Some("k-null"), json!({}))),
        ("null + character robot", body("notice.show", Some("k-null"), json!({"character": "robot"}))),
        ("unkeyed character null", body("notice.show", None, json!({"character": null}))),
        ("unkeyed allowFallback false", body("notice.show", None, json!({"allowFallback": false}))),
        ("cat celebrates, no fallback", body("animation.celebrate", None, json!({"character": "cat"}))),
        (
            "cat celebrates, allowFallback false",
            body("animation.celebrate", None, json!({"character": "cat", "allowFallback": false})),
        ),
        (
            "cat celebrates, allowFallback true",
            body("animation.celebrate", Some("k-cat"), json!({"character": "cat", "allowFallback": true})),
        ),
        ("cat celebrates, null style", body("animation.celebrate", None, json!({"character": "cat", "style": null}))),
    ]
}

/// The creates run after the restart, on the database the first ones wrote.
fn second_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("plain", body("notice.show", Some("k-plain"), json!({}))),
        ("plain + allowFallback false", body("notice.show", Some("k-plain"), json!({"allowFallback": false}))),
        ("false", body("notice.show", Some("k-false"), json!({"allowFallback": false}))),
        ("false without allowFallback", body("notice.show", Some("k-false"), json!({}))),
        ("null", body("notice.show", Some("k-null"), json!({"character": null}))),
        ("null without character", body("notice.show", Some("k-null"), json!({}))),
        (
            "cat celebrates, allowFallback true",
            body("animation.celebrate", Some("k-cat"), json!({"character": "cat", "allowFallback": true})),
        ),
        ("new key", body("notice.show", Some("k-new"), json!({"character": null, "allowFallback": false}))),
    ]
}

async fn run_calls(engine: &Engine, calls: Vec<(&'static str, Value)>) -> Vec<Value> {
    let client = ClientIdentity::external("pinned-client", "Pinned client", bridge_runtime::catalog::Scope::ALL);
    let mut out = Vec::new();
    for (what, params) in calls {
        let a = answer(engine.call(&client, "requests.create", params.clone()).await);
        out.push(json!({"what": what, "params": params, "answer": a}));
    }
    out
}

fn masked(answers: &[Value]) -> String {
    let mut masks = Masks::new(false);
    let v: Vec<Value> = answers.iter().map(|a| masks.mask(a)).collect();
    format!("{}\n", serde_json::to_string_pretty(&v).unwrap())
}

/// `idempotency.db` (and only it: the store keeps no other file once closed) copied to `dir`.
fn copy_pinned_db(dir: &Path) -> PathBuf {
    let db = dir.join("companion.db");
    std::fs::copy(fixtures().join("idempotency.db"), &db).expect("copy the pinned database");
    db
}

// CP-4-1 … CP-4-3, OQ-CP-16 (canonical JSON of the params as sent: an explicit `"allowFallback":
// false` or `"character": null` is not the same params as their omission), CP-2-29, CP-4-21: the
// creates get the pinned answers, before and after a restart, also on the database the build
// before the redesign wrote.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_and_idempotency_give_the_pinned_answers_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("companion.db");
    let engine = engine_on(&db, T0);
    let first = run_calls(&engine, first_calls()).await;
    drop(engine);
    // The engine's tasks let go of the store once they see it dropped.
    let mut reopened = None;
    for _ in 0..200 {
        match SqliteStore::open(&db) {
            Ok(store) => {
                reopened = Some(store);
                break;
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(10)).await,
        }
    }
    drop(reopened.expect("the store is released"));
    pinned("idempotency-first.json", &masked(&first));
    if pinning() {
        std::fs::copy(&db, fixtures().join("idempotency.db")).unwrap();
    }

    let engine = engine_on(&db, T0 + 60_000);
    let second = run_calls(&engine, second_calls()).await;
    drop(engine);
    pinned("idempotency-second.json", &masked(&second));

    // The same, on the database the build before the redesign wrote.
    let old = tempfile::tempdir().unwrap();
    let engine = engine_on(&copy_pinned_db(old.path()), T0 + 60_000);
    let second_on_old = run_calls(&engine, second_calls()).await;
    pinned("idempotency-second.json", &masked(&second_on_old));
    // Not only masked alike: the very request ids that database holds.
    let pinned_text = std::fs::read_to_string(fixtures().join("idempotency-second-ids.json")).unwrap_or_default();
    let ids: Vec<Value> = second_on_old
        .iter()
        .filter(|a| a["what"] != "new key")
        .map(|a| a["answer"]["result"]["requestId"].clone())
        .collect();
    let ids = format!("{}\n", serde_json::to_string(&ids).unwrap());
    if pinning() {
        std::fs::write(fixtures().join("idempotency-second-ids.json"), &ids).unwrap();
    } else {
        assert_eq!(ids, pinned_text, "the requests of the pinned database");
    }
}

// ---------------------------------------------------------------------------------------------
// The CLI's bytes on the wire

/// `text` with every `prefix` + run of at least `min` hex digits replaced by `prefix` + `*`.
fn mask_hex(text: &str, prefix: &str, min: usize) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        let after = &rest[i + prefix.len()..];
        let run = after.bytes().take_while(u8::is_ascii_hexdigit).count();
        out.push_str(&rest[..i + prefix.len()]);
        if run >= min {
            out.push('*');
            rest = &after[run..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// A socket in front of the server that records what clients send, one entry per connection.
async fn recording_proxy(
    dir: &Path,
    server: PathBuf,
) -> (PathBuf, std::sync::Arc<std::sync::Mutex<Vec<Vec<u8>>>>, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let path = dir.join("proxy").join("companion.sock");
    let listener = bridge_runtime::companion::bind_private(&path).expect("bind the proxy");
    let sent = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Vec<u8>>::new()));
    let log = sent.clone();
    let task = tokio::spawn(async move {
        loop {
            let Ok((client, _)) = listener.accept().await else { return };
            let upstream = tokio::net::UnixStream::connect(&server).await.expect("upstream");
            let slot = {
                let mut log = log.lock().unwrap();
                log.push(Vec::new());
                log.len() - 1
            };
            let log = log.clone();
            tokio::spawn(async move {
                let (mut cr, mut cw) = client.into_split();
                let (mut ur, mut uw) = upstream.into_split();
                let up = async {
                    let mut buf = [0u8; 4096];
                    loop {
                        match cr.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => {
                                log.lock().unwrap()[slot].extend_from_slice(&buf[..n]);
                                if uw.write_all(&buf[..n]).await.is_err() {
                                    break;
                                }
                            }
                        }
                    }
                    let _ = uw.shutdown().await;
                };
                let down = async {
                    let _ = tokio::io::copy(&mut ur, &mut cw).await;
                    let _ = cw.shutdown().await;
                };
                tokio::join!(up, down);
            });
        }
    });
    (path, sent, task)
}

// CP-6-1, OQ-CP-16: the `companion` CLI sends the same bytes as before, command by command (a
// request file is sent as written: `"character": null`, `"allowFallback": false` and the key
// order stay as they are, so idempotency compares what the user wrote).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_sends_the_pinned_bytes() {
    let mut h = start().await;
    let (proxy, sent, _task) = recording_proxy(h.dir.path(), h.socket.clone()).await;
    let config = h.dir.path().join("config");
    let run = |args: Vec<String>| {
        let config = config.clone();
        let proxy = proxy.clone();
        async move {
            let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_companion"))
                .args(&args)
                .env("COMPANION_CONFIG_DIR", &config)
                .env("COMPANION_SOCKET", &proxy)
                .env_remove("XDG_RUNTIME_DIR")
                .env_remove("XDG_CONFIG_HOME")
                .stdin(std::process::Stdio::null())
                .output();
            let out = tokio::time::timeout(BOUND, out).await.expect("the CLI finished").expect("run the CLI");
            let stdout = String::from_utf8(out.stdout).unwrap();
            (out.status.code().unwrap_or(-1), serde_json::from_str::<Value>(&stdout).unwrap_or(Value::Null))
        }
    };
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();

    let pairing = run(args(&[
        "--json",
        "pair",
        "--name",
        "Pinned CLI",
        "--scopes",
        "discover,notify,interact",
        "--profile",
        "p",
    ]));
    let approve = async {
        let (request, reply) = h.next_approval().await;
        assert!(reply.approve_as_requested(&request));
    };
    let ((code, _), ()) = tokio::join!(pairing, approve);
    assert_eq!(code, 0);

    let file = h.dir.path().join("create.json");
    std::fs::write(
        &file,
        br#"{"timeoutMs": 60000, "character": null, "allowFallback": false, "capability": "interaction.choose",
 "params": {"title": "Pinned?", "options": [{"id": "yes", "label": "Yes"}, {"id": "no", "label": "No"}]},
 "idempotencyKey": "cli-pin", "taskId": "t-1", "style": "bubble"}"#,
    )
    .unwrap();
    let update = h.dir.path().join("update.json");
    std::fs::write(&update, br#"{"expectedRevision": 1, "params": {"title": "Still pinned?"}}"#).unwrap();
    let file = file.to_str().unwrap();
    let update = update.to_str().unwrap();

    let mut codes = Vec::new();
    for a in [
        vec!["--json", "runtime", "describe", "--protocol-version", "0.1"],
        vec!["--json", "characters", "list"],
        vec!["--json", "styles", "list"],
        vec!["--json", "capabilities", "list"],
        vec!["--json", "capabilities", "describe", "notice.show"],
        vec!["--json", "requests", "create", "--file", file],
    ] {
        codes.push(run(args(&a)).await.0);
    }
    let (code, created) = run(args(&["--json", "requests", "create", "--file", file])).await;
    codes.push(code);
    let id = created["requestId"].as_str().expect("created").to_owned();
    for a in [
        vec!["--json", "requests", "get", &id],
        vec!["--json", "requests", "wait", &id, "--wait-ms", "0"],
        vec!["--json", "requests", "wait", &id, "--wait-ms", "0", "--after-revision", "1000"],
        vec!["--json", "requests", "update", &id, "--file", update],
        vec!["--json", "requests", "cancel", &id],
    ] {
        codes.push(run(args(&a)).await.0);
    }
    let mut text = format!("exit codes: {codes:?}\n");
    for conn in sent.lock().unwrap().iter() {
        let mut conn = String::from_utf8(conn.clone()).expect("UTF-8");
        for (prefix, min) in [("req_", 32), ("cl_", 32), ("ck_", 64)] {
            conn = mask_hex(&conn, prefix, min);
        }
        text.push_str("--- connection\n");
        text.push_str(&conn);
    }
    pinned("cli-wire.txt", &text);
}
