//! A real companion socket server in a temp dir (engine + SQLite file + auth + scripted
//! presenter + test approver), and a line-based JSON-RPC client for the socket and CLI tests.
//! Every wait is bounded (it fails the test instead of hanging); nothing asserts speed.

#![allow(dead_code)]

use crate::support::companion as companion_support;
use bridge_runtime::companion::{
    Auth, AuthConfig, CredentialStore, Engine, EngineConfig, PairingApprover, PairingDecision, PairingReply,
    PairingRequest, PresenterEvent, ScriptedPresenter, Server, ServerConfig, SqliteStore,
};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// Upper bound for any single wait in these tests.
pub const BOUND: Duration = Duration::from_secs(20);

/// Forwards every pairing request to the test, which decides.
pub struct TestApprover(pub UnboundedSender<(PairingRequest, PairingReply)>);

impl PairingApprover for TestApprover {
    fn review(&self, request: PairingRequest, reply: PairingReply) {
        let _ = self.0.send((request, reply));
    }
}

pub struct Harness {
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
    pub db: PathBuf,
    pub engine: Engine,
    pub auth: Auth,
    pub events: UnboundedReceiver<PresenterEvent>,
    pub approvals: UnboundedReceiver<(PairingRequest, PairingReply)>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// Starts a server with default limits; the presenter reports display at once.
pub async fn start() -> Harness {
    start_with(ServerConfig::default(), AuthConfig::default()).await
}

pub async fn start_with(config: ServerConfig, auth_config: AuthConfig) -> Harness {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("state").join("companion.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let socket = dir.path().join("run").join("companion.sock");
    let (presenter, events) = ScriptedPresenter::new();
    let engine = Engine::builder(companion_support::catalog())
        .config(EngineConfig::default())
        .store(SqliteStore::open(&db).expect("store"))
        .presenter(presenter.auto_display(true))
        .start()
        .expect("engine");
    let (tx, approvals) = unbounded_channel();
    let auth =
        Auth::new(CredentialStore::open(&db).expect("credentials"), TestApprover(tx), auth_config).expect("auth");
    let listener = bridge_runtime::companion::bind_private(&socket).expect("bind");
    let server = tokio::spawn(Server::new(engine.clone(), auth.clone()).config(config).serve(listener));
    Harness { dir, socket, db, engine, auth, events, approvals, server }
}

/// Credentials returned by a pairing.
#[derive(Debug, Clone)]
pub struct Creds {
    pub client_id: String,
    pub key: String,
    pub scopes: Value,
}

impl Harness {
    pub async fn connect(&self) -> Conn {
        Conn::connect(&self.socket).await
    }

    /// The next pairing request the approver got.
    pub async fn next_approval(&mut self) -> (PairingRequest, PairingReply) {
        tokio::time::timeout(BOUND, self.approvals.recv()).await.expect("a pairing request").expect("approver open")
    }

    /// Pairs `name` with `scopes` over the socket; the test plays the user and approves.
    pub async fn pair(&mut self, name: &str, scopes: &[&str]) -> Creds {
        let mut conn = self.connect().await;
        conn.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "pairing.request",
            "params": {"name": name, "scopes": scopes}}))
            .await;
        let (request, reply) = self.next_approval().await;
        assert!(reply.approve_as_requested(&request));
        let r = conn.recv().await;
        let result = &r["result"];
        Creds {
            client_id: result["clientId"].as_str().expect("clientId").to_owned(),
            key: result["key"].as_str().expect("key").to_owned(),
            scopes: result["scopes"].clone(),
        }
    }

    /// Pairs with every scope and returns an authenticated connection.
    pub async fn client(&mut self, name: &str) -> (Conn, Creds) {
        let creds = self.pair(name, &["discover", "animate", "notify", "interact"]).await;
        let mut conn = self.connect().await;
        conn.authenticate(&creds).await;
        (conn, creds)
    }

    /// The next presenter event.
    pub async fn next_event(&mut self) -> PresenterEvent {
        tokio::time::timeout(BOUND, self.events.recv()).await.expect("a presenter event").expect("presenter open")
    }

    /// Waits until request `id` is shown.
    pub async fn expect_show(&mut self, id: &str) -> bridge_runtime::companion::Presentation {
        loop {
            if let PresenterEvent::Show(p) = self.next_event().await
                && p.request_id == id
            {
                return p;
            }
        }
    }

    pub fn approve(reply: PairingReply, scopes: &[bridge_runtime::catalog::Scope], label: Option<&str>) -> bool {
        reply.send(PairingDecision::Approve {
            scopes: scopes.iter().copied().collect(),
            label: label.map(str::to_owned),
        })
    }
}

/// A raw line-based connection.
pub struct Conn {
    pub reader: BufReader<OwnedReadHalf>,
    pub writer: OwnedWriteHalf,
    next_id: u64,
}

impl Conn {
    pub async fn connect(path: &std::path::Path) -> Conn {
        let stream =
            tokio::time::timeout(BOUND, UnixStream::connect(path)).await.expect("connect in time").expect("connect");
        let (r, w) = stream.into_split();
        Conn { reader: BufReader::new(r), writer: w, next_id: 1000 }
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.expect("write");
    }

    pub async fn send(&mut self, v: &Value) {
        let mut line = serde_json::to_vec(v).unwrap();
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    /// The next line, parsed; panics on end of stream.
    pub async fn recv(&mut self) -> Value {
        match self.recv_opt().await {
            Some(v) => v,
            None => panic!("connection closed while a response was expected"),
        }
    }

    /// The next line, or `None` at end of stream (or a reset after the server closed).
    pub async fn recv_opt(&mut self) -> Option<Value> {
        let mut line = String::new();
        match tokio::time::timeout(BOUND, self.reader.read_line(&mut line)).await.expect("a line in time") {
            Ok(0) => None,
            Ok(_) => Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => None,
            Err(e) => panic!("read: {e}"),
        }
    }

    /// Asserts that the server closed the connection.
    pub async fn expect_closed(&mut self) {
        if let Some(v) = self.recv_opt().await {
            panic!("expected the connection to be closed, got {v}");
        }
    }

    /// Sends a request and returns the whole response.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let r = self.recv().await;
        assert_eq!(r["id"], id, "response to another call: {r}");
        assert_eq!(r["jsonrpc"], "2.0");
        r
    }

    /// `result` of a call that must succeed.
    pub async fn ok(&mut self, method: &str, params: Value) -> Value {
        let r = self.call(method, params).await;
        assert!(r.get("error").is_none(), "{method} failed: {r}");
        r["result"].clone()
    }

    /// `error` of a call that must fail.
    pub async fn err(&mut self, method: &str, params: Value) -> Value {
        let r = self.call(method, params).await;
        assert!(r.get("result").is_none(), "{method} unexpectedly succeeded: {r}");
        r["error"].clone()
    }

    pub async fn authenticate(&mut self, creds: &Creds) -> Value {
        self.ok("session.authenticate", json!({"clientId": creds.client_id, "key": creds.key})).await
    }
}

/// `error.data.code` of an error object.
pub fn code(error: &Value) -> &str {
    error["data"]["code"].as_str().unwrap_or_else(|| panic!("no data.code in {error}"))
}

pub fn choose_request() -> Value {
    companion_support::create_body("interaction.choose", companion_support::choose_params(), 60_000)
}
