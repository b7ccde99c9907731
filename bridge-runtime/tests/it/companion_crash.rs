//! Stressed, with nothing lost (issue #10 item 6, companion half): 8 clients create requests over
//! the Unix socket against a real server process, whose scripted presenter plays the user and
//! answers, while the server is `kill -9`ed at random points five times and restarted on the same
//! data directory. Afterwards every request a client was told about is still there: terminal as
//! it was reported (CP-3-11, CP-3-24), or `failed`/`runtime_restarted` if it was live at a crash
//! (CP-4-21); none is duplicated (the same idempotency key keeps its `requestId` across restarts,
//! CP-4-2, CP-4-5); no answer whose submission the user was shown as accepted is lost (CP-4-20).
//!
//! The server process is this test binary again, running the ignored test
//! `companion_crash::crash_server_child` (it serves until killed, or until its stdin closes).
//! Bounded: every wait has a limit, the whole test stops by itself well within 2 minutes.

use crate::support::companion as companion_support;

use bridge_runtime::companion::{
    Auth, AuthConfig, CredentialStore, Engine, EngineConfig, HideReason, PairingApprover, PairingReply, PairingRequest,
    Presentation, Presenter, Server, SqliteStore,
};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

const CHILD_DATA: &str = "BRIDGE_CRASH_TEST_DATA";
const CHILD_SOCKET: &str = "BRIDGE_CRASH_TEST_SOCKET";
const CLIENTS: usize = 8;
const KILLS: usize = 5;
/// Requests per client at most (keeps the run and the verification bounded).
const MAX_PER_CLIENT: usize = 300;
/// Upper bound for any single step (connect, call, restart).
const BOUND: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------------
// The server process.

/// Approves every pairing as requested.
struct ApproveAll;

impl PairingApprover for ApproveAll {
    fn review(&self, request: PairingRequest, reply: PairingReply) {
        reply.approve_as_requested(&request);
    }
}

/// Shows everything at once; animations end at once; interactions go to the user thread.
struct PlayUser(std::sync::mpsc::Sender<(Engine, String)>);

impl Presenter for PlayUser {
    fn show(&self, p: &Presentation, engine: &Engine) {
        if engine.displayed(&p.request_id).is_err() {
            return;
        }
        if p.capability == "interaction.choose" {
            let _ = self.0.send((engine.clone(), p.request_id.clone()));
        } else {
            let _ = engine.finished(&p.request_id);
        }
    }
    fn update(&self, _: &Presentation, _: &Engine) {}
    fn hide(&self, _: &str, _: HideReason, _: &Engine) {}
}

/// The answer the scripted user gives to request `id`.
fn answer_for(id: &str) -> &'static str {
    if id.bytes().map(u32::from).sum::<u32>().is_multiple_of(2) { "yes" } else { "no" }
}

/// The user, on its own thread (like a UI thread): answers after 0–2 ms, and writes each answer
/// whose submission was confirmed (`user_responded` returned `Ok`) to `answers.log`.
fn user_thread(rx: std::sync::mpsc::Receiver<(Engine, String)>, log: PathBuf) {
    let mut log = std::fs::OpenOptions::new().create(true).append(true).open(log).expect("answers log");
    let mut n = 0u64;
    for (engine, id) in rx {
        n += 1;
        std::thread::sleep(Duration::from_micros(n % 3 * 1000));
        let answer = answer_for(&id);
        if engine.user_responded(&id, json!({"selectedId": answer})).is_ok() {
            // One write per line: whole lines even if the process is killed right after.
            log.write_all(format!("{id} {answer}\n").as_bytes()).expect("log the answer");
        }
    }
}

fn child_config() -> EngineConfig {
    EngineConfig {
        max_creates_per_minute: 1_000_000,
        max_records: 100_000,
        max_records_per_client: 100_000,
        ..EngineConfig::default()
    }
}

/// The server process of `acknowledged_requests_survive_kill_9` (not a test of its own: it only
/// runs when that test starts it, with the data directory and socket in the environment).
#[test]
#[ignore = "the server process of companion_crash::acknowledged_requests_survive_kill_9, which runs it"]
fn crash_server_child() {
    let (Some(data), Some(socket)) = (std::env::var_os(CHILD_DATA), std::env::var_os(CHILD_SOCKET)) else {
        eprintln!("crash_server_child only runs as the child of acknowledged_requests_survive_kill_9");
        return;
    };
    let data = PathBuf::from(data);
    // The parent holds our stdin: when it goes away, so do we. And never longer than 2 minutes.
    std::thread::spawn(|| {
        let mut sink = String::new();
        while std::io::stdin().read_line(&mut sink).is_ok_and(|n| n > 0) {}
        std::process::exit(0);
    });
    std::thread::spawn(|| {
        std::thread::sleep(Duration::from_secs(120));
        std::process::exit(3);
    });
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    rt.block_on(async move {
        let db = data.join("companion.db");
        let (tx, rx) = std::sync::mpsc::channel();
        let log = data.join("answers.log");
        std::thread::spawn(move || user_thread(rx, log));
        let engine = Engine::builder(companion_support::catalog())
            .config(child_config())
            .store(SqliteStore::open(&db).expect("store"))
            .presenter(PlayUser(tx))
            .start()
            .expect("engine");
        let auth = Auth::new(CredentialStore::open(&db).expect("credentials"), ApproveAll, AuthConfig::default())
            .expect("auth");
        let listener = bridge_runtime::companion::bind_private(Path::new(&socket)).expect("bind");
        let mut out = std::io::stdout();
        writeln!(out, "READY {}", std::process::id()).unwrap();
        out.flush().unwrap();
        Server::new(engine, auth).serve(listener).await;
    });
}

/// A running server process.
struct ServerProcess(Child);

impl ServerProcess {
    fn start(data: &Path, socket: &Path) -> Self {
        let exe = std::env::current_exe().expect("test binary");
        let mut child = Command::new(exe)
            .args(["--exact", "companion_crash::crash_server_child", "--ignored", "--nocapture", "--test-threads=1"])
            .env(CHILD_DATA, data)
            .env(CHILD_SOCKET, socket)
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the server process");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.contains("READY ") {
                    let _ = tx.send(());
                }
            }
        });
        rx.recv_timeout(BOUND).expect("the server process is ready");
        ServerProcess(child)
    }

    /// `kill -9` (SIGKILL), then reaps it.
    fn kill9(&mut self) {
        self.0.kill().expect("SIGKILL");
        let status = self.0.wait().expect("reap");
        assert!(!status.success(), "the server was killed, not ended: {status}");
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

// ---------------------------------------------------------------------------------------------
// The clients.

/// The connection broke (the server died): the outcome of the call in flight is unknown.
#[derive(Debug)]
struct Lost;

struct Conn {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    next_id: u64,
}

impl Conn {
    /// `Ok(Ok(result))`, `Ok(Err(error))`, or `Err(Lost)`.
    async fn call(&mut self, method: &str, params: Value) -> Result<Result<Value, Value>, Lost> {
        self.next_id += 1;
        let mut line =
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}))
                .expect("serialize");
        line.push(b'\n');
        self.writer.write_all(&line).await.map_err(|_| Lost)?;
        let mut buf = String::new();
        let n = tokio::time::timeout(BOUND, self.reader.read_line(&mut buf))
            .await
            .unwrap_or_else(|_| panic!("no answer to {method} within {BOUND:?}"))
            .map_err(|_| Lost)?;
        if n == 0 || !buf.ends_with('\n') {
            return Err(Lost);
        }
        let mut v: Value = serde_json::from_str(&buf).unwrap_or_else(|e| panic!("not JSON ({e}): {buf:?}"));
        assert_eq!(v["id"], self.next_id, "a response to another call: {v}");
        Ok(match v.get_mut("result") {
            Some(r) => Ok(r.take()),
            None => Err(v["error"].take()),
        })
    }
}

#[derive(Clone)]
struct Creds {
    client_id: String,
    key: String,
}

/// One paired client that reconnects (and re-authenticates) whenever the server went away.
struct Client {
    socket: PathBuf,
    creds: Creds,
    conn: Option<Conn>,
}

impl Client {
    async fn connect(socket: &Path) -> Conn {
        let t0 = Instant::now();
        loop {
            if let Ok(s) = UnixStream::connect(socket).await {
                let (r, w) = s.into_split();
                return Conn { reader: BufReader::new(r), writer: w, next_id: 0 };
            }
            assert!(t0.elapsed() < BOUND, "the server did not come back within {BOUND:?}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// A call that must get an answer: retried on new connections while the server restarts.
    /// Only for calls that are safe to repeat (creates carry an idempotency key, CP-4-5).
    async fn call(&mut self, method: &str, params: &Value) -> Result<Value, Value> {
        let t0 = Instant::now();
        loop {
            assert!(t0.elapsed() < BOUND, "{method} got no answer within {BOUND:?}");
            if self.conn.is_none() {
                let mut conn = Self::connect(&self.socket).await;
                let auth = json!({"clientId": self.creds.client_id, "key": self.creds.key});
                match conn.call("session.authenticate", auth).await {
                    Ok(Ok(_)) => self.conn = Some(conn),
                    Ok(Err(e)) => panic!("authentication refused after a restart: {e}"),
                    Err(Lost) => continue,
                }
            }
            match self.conn.as_mut().unwrap().call(method, params.clone()).await {
                Ok(r) => return r,
                Err(Lost) => self.conn = None,
            }
        }
    }
}

/// The create body of a client's `n`th request (the same for every retry, CP-4-2).
fn create_body(n: usize) -> Value {
    let mut body = if n.is_multiple_of(2) {
        companion_support::create_body("interaction.choose", companion_support::choose_params(), 60_000)
    } else {
        companion_support::create_body("animation.celebrate", json!({"message": "done"}), 60_000)
    };
    body["idempotencyKey"] = json!(format!("key-{n}"));
    body
}

fn is_terminal(snapshot: &Value) -> bool {
    matches!(snapshot["state"].as_str(), Some("completed" | "cancelled" | "expired" | "failed"))
}

/// What one client was told.
#[derive(Default)]
struct Told {
    /// Idempotency key → every `requestId` a create with it returned.
    acks: BTreeMap<usize, Vec<String>>,
    /// Every snapshot returned, by `requestId`.
    snapshots: HashMap<String, Vec<Value>>,
}

/// Creates requests one after another until `stop`, following each to a terminal state.
async fn run_client(mut client: Client, stop: Arc<AtomicBool>) -> (Client, Told) {
    let mut told = Told::default();
    for n in 0..MAX_PER_CLIENT {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let body = create_body(n);
        let mut snap = client.call("requests.create", &body).await.unwrap_or_else(|e| panic!("create refused: {e}"));
        let id = snap["requestId"].as_str().expect("requestId").to_owned();
        told.acks.entry(n).or_default().push(id.clone());
        told.snapshots.entry(id.clone()).or_default().push(snap.clone());
        while !is_terminal(&snap) {
            let params = json!({"requestId": id, "afterRevision": snap["revision"], "waitMs": 5_000});
            let r = client.call("requests.wait", &params).await.unwrap_or_else(|e| panic!("wait refused: {e}"));
            if r.get("unchanged").is_none() {
                told.snapshots.get_mut(&id).unwrap().push(r.clone());
                snap = r;
            }
        }
    }
    (client, told)
}

/// splitmix64: the kill points (the seed is printed, to replay a failure).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

// CP-4-20, CP-4-21, CP-3-11 (and CP-3-24, CP-4-2, CP-4-5): kill -9 the server five times under
// load from 8 clients; after each restart every acknowledged request is still there, terminal as
// reported or failed/runtime_restarted, none duplicated, and no confirmed answer is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_requests_survive_kill_9() {
    let seed = std::env::var("BRIDGE_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
    });
    eprintln!("companion_crash: seed {seed} (BRIDGE_CRASH_SEED={seed} replays the kill points)");
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let socket = dir.path().join("run").join("companion.sock");
    let mut server = ServerProcess::start(&data, &socket);

    // Pair the clients once; pairings are kept across restarts too.
    let mut clients = Vec::new();
    for i in 0..CLIENTS {
        let mut conn = Client::connect(&socket).await;
        let creds = conn
            .call("pairing.request", json!({"name": format!("crash-{i}"), "scopes": ["animate", "interact"]}))
            .await
            .expect("connected")
            .expect("paired");
        let creds = Creds {
            client_id: creds["clientId"].as_str().unwrap().to_owned(),
            key: creds["key"].as_str().unwrap().to_owned(),
        };
        clients.push(Client { socket: socket.clone(), creds, conn: None });
    }

    let stop = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = clients.into_iter().map(|c| tokio::spawn(run_client(c, stop.clone()))).collect();
    for _ in 0..KILLS {
        tokio::time::sleep(Duration::from_millis(150 + rng.next() % 600)).await;
        server.kill9();
        server = ServerProcess::start(&data, &socket);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::SeqCst);
    let mut results: Vec<(Client, Told)> = Vec::new();
    for t in tasks {
        results.push(tokio::time::timeout(Duration::from_secs(60), t).await.expect("clients stop").expect("client"));
    }

    // The answers the user was told were accepted, from every server run.
    let answers: HashMap<String, String> = std::fs::read_to_string(data.join("answers.log"))
        .expect("answers log")
        .lines()
        .map(|l| {
            let (id, answer) = l.split_once(' ').expect("id answer");
            (id.to_owned(), answer.to_owned())
        })
        .collect();

    let (mut requests, mut restarted) = (0, 0);
    let mut finals: HashMap<String, Value> = HashMap::new();
    for (i, (client, told)) in results.iter_mut().enumerate() {
        for (n, ids) in &told.acks {
            // None duplicated: every retry of a create got the same request (CP-4-2, CP-4-5).
            assert!(ids.iter().all(|id| *id == ids[0]), "client {i} key-{n} got several requests: {ids:?}");
            let id = &ids[0];
            requests += 1;
            let now = client.call("requests.get", &json!({"requestId": id})).await;
            let now = now.unwrap_or_else(|e| panic!("acknowledged request {id} is gone after the restarts: {e}"));
            assert!(is_terminal(&now), "after a restart nothing from before is live (CP-4-21): {now}");
            let seen = &told.snapshots[id];
            let max_seen = seen.iter().map(|s| s["revision"].as_u64().unwrap()).max().unwrap();
            if let Some(terminal) = seen.iter().find(|s| is_terminal(s)) {
                // Terminal states never revert (CP-3-11): the same state, reason, result, revision.
                assert_eq!(&now, terminal, "request {id} changed after it was reported terminal");
            } else {
                // It was live when the server died: failed/runtime_restarted (CP-4-21), with a
                // revision above everything reported before (only durable states are reported).
                assert_eq!(now["state"], "failed", "{now}");
                assert_eq!(now["terminalReason"], "runtime_restarted", "{now}");
                assert!(now["revision"].as_u64().unwrap() > max_seen, "revision went back: {now} after {seen:?}");
            }
            if now["terminalReason"] == "runtime_restarted" {
                restarted += 1;
            }
            if now["state"] == "completed" && now["capability"] == "interaction.choose" {
                assert_eq!(now["result"], json!({"selectedId": answer_for(id)}), "an answer nobody gave: {now}");
            }
            // The same key after the restarts: the same request, not a new one (CP-4-2).
            let again = client.call("requests.create", &create_body(*n)).await.expect("idempotent create");
            assert_eq!(again["requestId"], json!(id), "client {i} key-{n} was duplicated after a restart");
            finals.insert(id.clone(), now);
        }
    }
    // No answer whose submission was confirmed to the user is lost (CP-4-20).
    for (id, answer) in &answers {
        let now = finals.get(id).unwrap_or_else(|| panic!("answered request {id} was never acknowledged to a client"));
        assert_eq!(now["state"], "completed", "a confirmed answer was lost: {now}");
        assert_eq!(now["result"], json!({"selectedId": answer}), "a confirmed answer changed: {now}");
    }
    eprintln!(
        "companion_crash: {requests} requests, {restarted} failed/runtime_restarted by {KILLS} kills, {} confirmed answers",
        answers.len()
    );
    assert!(restarted > 0, "the kills hit no live request: the test proved nothing");
    drop(server);
}
