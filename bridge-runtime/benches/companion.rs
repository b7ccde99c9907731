//! Companion socket server, end to end (no criterion: it prints percentiles). Run:
//! `cargo bench -p bridge-runtime --bench companion` (append `-- throughput` or `-- wakeup` for
//! one half).
//!
//! Every scenario starts a real server in-process: a private Unix socket in a temp dir, an
//! [`Engine`] over a [`SqliteStore`] (a file in the same temp dir, or in memory to take disk
//! syncs out), [`Auth`] with an approver that accepts every pairing, and a presenter that
//! reports `displayed` at once and, for the no-op animation, `finished` right after. Clients
//! pair over the socket (`pairing.request`), authenticate (`session.authenticate`) and speak
//! line-delimited JSON-RPC. Clients run in the same process, on the same 2-worker runtime.
//!
//! 1. **Throughput.** Each connection keeps `depth` requests in flight (at most 8, below the
//!    server's 16 calls per connection): `requests.create` of `bench.noop`, then `requests.wait`
//!    with `afterRevision` until the snapshot is `completed`, then the next create. Reported:
//!    requests/s over the measured run, calls per request, and each request's create →
//!    completed latency.
//! 2. **Wake-up latency.** One client is blocked in `requests.wait` on an `awaiting_user`
//!    interaction; 2 ms later the host thread (not a runtime worker, like a UI thread) calls
//!    [`Engine::user_responded`] at time T; measured: T → the client has read the response line,
//!    the `user_responded` call itself (validation + store commit), and its return → the line.
//!
//! Limits raised for the bench (defaults would reject the load, by design): `maxCreatesPerMinute`
//! (60 → 10^7) everywhere; for throughput also `maxActivePerClient` (8 → 64), `maxActiveTotal`
//! (64 → 512) and `maxRecords` (10,000 → 20,000). Records are retained for 24 h, so every
//! completed request stays in the engine for the rest of its scenario.
//!
//! The choice's schemas and parameters are the companion tests' (`tests/it/support/companion.rs`).

// The package's `unreachable_pub` lint is for the library's API; here `pub` marks what the
// fixture modules share.
#![allow(unreachable_pub)]

#[path = "../tests/it/support/companion.rs"]
mod companion_support;

use bridge_runtime::catalog::checks;
use bridge_runtime::catalog::{CapabilityKind, CapabilitySpec, Catalog, CharacterSpec, InteractionType};
use bridge_runtime::companion::{
    Auth, AuthConfig, CredentialStore, Engine, EngineConfig, HideReason, PairingApprover, PairingReply, PairingRequest,
    Presentation, Presenter, Server, SqliteStore, bind_private,
};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

const NOOP: &str = "bench.noop";
const CONFIRM: &str = "bench.confirm";

fn catalog() -> Arc<RwLock<Catalog>> {
    let mut c = Catalog::new();
    let noop = CapabilitySpec::new(NOOP, CapabilityKind::Animation)
        .version("0.1.0")
        .description("Does nothing; ends as soon as it is shown.")
        .build()
        .expect("noop");
    let confirm = CapabilitySpec::new(CONFIRM, CapabilityKind::Interaction)
        .version("0.1.0")
        .description("Asks the user to pick one option.")
        .interaction(InteractionType::Choice)
        .input_schema(companion_support::choose_input_schema())
        .output_schema(companion_support::choose_output_schema())
        .check_params(checks::unique_ids("/options", "id"))
        .check_result(checks::result_id_in("/options", "id", "selectedId"))
        .build()
        .expect("confirm");
    c.register_capability(noop).expect("register noop");
    c.register_capability(confirm).expect("register confirm");
    c.register_character(CharacterSpec::new("robot", "Robot").supports([NOOP, CONFIRM])).expect("robot");
    Arc::new(RwLock::new(c))
}

/// A host that displays instantly and whose no-op animation ends at once.
struct InstantPresenter;

impl Presenter for InstantPresenter {
    fn show(&self, p: &Presentation, engine: &Engine) {
        engine.displayed(&p.request_id).expect("displayed");
        if p.capability == NOOP {
            engine.finished(&p.request_id).expect("finished");
        }
    }
    fn update(&self, _: &Presentation, _: &Engine) {}
    fn hide(&self, _: &str, _: HideReason, _: &Engine) {}
}

/// The bench plays the user and approves every pairing as requested.
struct ApproveAll;

impl PairingApprover for ApproveAll {
    fn review(&self, request: PairingRequest, reply: PairingReply) {
        reply.approve_as_requested(&request);
    }
}

#[derive(Clone, Copy)]
enum StoreKind {
    File,
    Memory,
}

impl StoreKind {
    fn name(self) -> &'static str {
        match self {
            StoreKind::File => "file",
            StoreKind::Memory => "memory",
        }
    }
}

struct Harness {
    _dir: tempfile::TempDir,
    socket: PathBuf,
    engine: Engine,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// Must run inside the runtime.
fn start(config: EngineConfig, store: StoreKind) -> Harness {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("state").join("companion.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let socket = dir.path().join("run").join("companion.sock");
    let builder = Engine::builder(catalog()).config(config).presenter(InstantPresenter);
    let builder = match store {
        StoreKind::File => builder.store(SqliteStore::open(&db).expect("store")),
        StoreKind::Memory => builder.store(SqliteStore::in_memory().expect("store")),
    };
    let engine = builder.start().expect("engine");
    let auth =
        Auth::new(CredentialStore::open(&db).expect("credentials"), ApproveAll, AuthConfig::default()).expect("auth");
    let listener = bind_private(&socket).expect("bind");
    let server = tokio::spawn(Server::new(engine.clone(), auth).serve(listener));
    Harness { _dir: dir, socket, engine, server }
}

/// A line-based JSON-RPC connection.
struct Conn {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    next_id: u64,
    line: String,
}

impl Conn {
    async fn connect(h: &Harness) -> Conn {
        let (r, w) = UnixStream::connect(&h.socket).await.expect("connect").into_split();
        Conn { reader: BufReader::new(r), writer: w, next_id: 0, line: String::new() }
    }

    /// A paired and authenticated connection with `scopes`.
    async fn client(h: &Harness, name: &str, scopes: &[&str]) -> Conn {
        let mut pairing = Conn::connect(h).await;
        let creds = pairing.ok("pairing.request", json!({"name": name, "scopes": scopes})).await;
        let mut conn = Conn::connect(h).await;
        conn.ok("session.authenticate", json!({"clientId": creds["clientId"], "key": creds["key"]})).await;
        conn
    }

    async fn send(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let mut bytes =
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}))
                .expect("serialize");
        bytes.push(b'\n');
        self.writer.write_all(&bytes).await.expect("write");
        self.next_id
    }

    /// The next response: its id and `result` (panics on an error response or a closed socket).
    async fn recv(&mut self) -> (u64, Value) {
        self.line.clear();
        let n = self.reader.read_line(&mut self.line).await.expect("read");
        assert!(n > 0, "the server closed the connection");
        let mut v: Value = serde_json::from_str(&self.line).expect("a JSON line");
        let id = v["id"].as_u64().expect("numeric id");
        match v.get_mut("result") {
            Some(r) => (id, r.take()),
            None => panic!("call {id} failed: {}", v["error"]),
        }
    }

    async fn ok(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        let (got, result) = self.recv().await;
        assert_eq!(got, id);
        result
    }
}

fn create_noop() -> Value {
    json!({"capability": NOOP, "params": {}, "timeoutMs": 60_000})
}

fn wait_params(snapshot: &Value) -> Value {
    json!({"requestId": snapshot["requestId"], "afterRevision": snapshot["revision"], "waitMs": 30_000})
}

/// Keeps `depth` requests in flight on `conn` while `tickets` lasts; returns the create →
/// completed latency of each request it finished.
async fn drive(mut conn: Conn, depth: usize, tickets: Arc<AtomicUsize>) -> (Conn, Vec<Duration>, usize) {
    let take = || tickets.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1)).is_ok();
    let first_id = conn.next_id;
    let mut started: HashMap<u64, Instant> = HashMap::new();
    let mut latencies = Vec::new();
    for _ in 0..depth {
        if take() {
            let id = conn.send("requests.create", create_noop()).await;
            started.insert(id, Instant::now());
        }
    }
    while !started.is_empty() {
        let (id, snapshot) = conn.recv().await;
        let t0 = started.remove(&id).expect("a response to a call in flight");
        let state = snapshot["state"].as_str().unwrap_or("");
        if state == "completed" {
            latencies.push(t0.elapsed());
            if take() {
                let id = conn.send("requests.create", create_noop()).await;
                started.insert(id, Instant::now());
            }
        } else if matches!(state, "failed" | "cancelled" | "expired") {
            panic!("request ended {state}: {snapshot}");
        } else {
            // queued/running after create, or a revision change / `unchanged` from wait.
            let id = conn.send("requests.wait", wait_params(&snapshot)).await;
            started.insert(id, t0);
        }
    }
    let calls = usize::try_from(conn.next_id - first_id).expect("call count");
    (conn, latencies, calls)
}

struct Run {
    requests: usize,
    /// JSON-RPC calls sent (creates and waits).
    calls: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
}

/// `total` requests over `conns` (fresh tickets), all connections at once.
async fn run(conns: Vec<Conn>, depth: usize, total: usize) -> (Run, Vec<Conn>) {
    let tickets = Arc::new(AtomicUsize::new(total));
    let t0 = Instant::now();
    let tasks: Vec<_> = conns.into_iter().map(|c| tokio::spawn(drive(c, depth, tickets.clone()))).collect();
    let mut latencies = Vec::with_capacity(total);
    let mut conns = Vec::new();
    let mut calls = 0;
    for t in tasks {
        let (conn, l, c) = t.await.expect("driver task");
        conns.push(conn);
        latencies.extend(l);
        calls += c;
    }
    let elapsed = t0.elapsed();
    assert_eq!(latencies.len(), total);
    (Run { requests: total, calls, elapsed, latencies }, conns)
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

fn fmt(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us >= 1000.0 { format!("{:.2} ms", us / 1000.0) } else { format!("{us:.0} µs") }
}

fn throughput_config() -> EngineConfig {
    EngineConfig {
        max_active_per_client: 64,
        max_active_total: 512,
        max_records: 20_000,
        max_records_per_client: 20_000,
        max_creates_per_minute: 10_000_000,
        ..EngineConfig::default()
    }
}

async fn clients(h: &Harness, n: usize) -> Vec<Conn> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(Conn::client(h, &format!("bench-{i}"), &["animate", "interact"]).await);
    }
    out
}

const WARMUP: usize = 200;

/// One throughput scenario on a fresh server: warm-up, then `rounds` measured runs of `total`.
/// Returns the first round's requests/s.
async fn throughput(store: StoreKind, n_clients: usize, depth: usize, total: usize, rounds: usize) -> f64 {
    let h = start(throughput_config(), store);
    let (_, mut conns) = run(clients(&h, n_clients).await, depth, WARMUP).await;
    let mut retained = WARMUP;
    let mut first = None;
    for _ in 0..rounds {
        let (mut r, back) = run(conns, depth, total).await;
        conns = back;
        r.latencies.sort();
        let rate = r.requests as f64 / r.elapsed.as_secs_f64();
        first.get_or_insert(rate);
        println!(
            "throughput {:<7} clients={n_clients} depth={depth} retained_before={retained:>5} requests={} \
             calls/request={:.2} elapsed={:.2}s rate={rate:.0} req/s latency p50={} p99={} max={}",
            store.name(),
            r.requests,
            r.calls as f64 / r.requests as f64,
            r.elapsed.as_secs_f64(),
            fmt(pct(&r.latencies, 0.50)),
            fmt(pct(&r.latencies, 0.99)),
            fmt(*r.latencies.last().unwrap()),
        );
        retained += total;
    }
    drop(h);
    first.unwrap_or(0.0)
}

/// Commands from the host thread to the client task.
enum Cmd {
    /// Create an interaction, wait until it is `awaiting_user`, send a blocking `requests.wait`
    /// and report the request id; then report when the wait's response line arrives.
    Sample,
    Stop,
}

fn wakeup(rt: &tokio::runtime::Runtime, store: StoreKind, samples: usize) {
    let config = EngineConfig { max_creates_per_minute: 10_000_000, ..EngineConfig::default() };
    let h = rt.block_on(async { start(config, store) });
    let mut conn = rt.block_on(Conn::client(&h, "bench-wakeup", &["interact"]));
    let (cmd_tx, mut cmd_rx) = tokio::sync::mpsc::unbounded_channel::<Cmd>();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<String>();
    let (arrived_tx, arrived_rx) = std::sync::mpsc::channel::<Instant>();
    let client = rt.spawn(async move {
        let create = companion_support::create_body(CONFIRM, companion_support::choose_params(), 60_000);
        while let Some(Cmd::Sample) = cmd_rx.recv().await {
            let mut snap = conn.ok("requests.create", create.clone()).await;
            while snap["state"] != "awaiting_user" {
                assert!(snap.get("unchanged").is_some() || snap["state"] == "queued" || snap["state"] == "running");
                snap = conn.ok("requests.wait", wait_params(&snap)).await;
            }
            let id = conn.send("requests.wait", wait_params(&snap)).await;
            ready_tx.send(snap["requestId"].as_str().unwrap().to_owned()).unwrap();
            let (got, done) = conn.recv().await;
            let at = Instant::now();
            assert_eq!(got, id);
            assert_eq!(done["state"], "completed", "{done}");
            arrived_tx.send(at).unwrap();
        }
    });
    // This thread plays the host's UI thread.
    let _enter = rt.enter();
    let answer = json!({"selectedId": "yes"});
    let mut wake = Vec::with_capacity(samples);
    let mut call = Vec::with_capacity(samples);
    let mut after = Vec::with_capacity(samples);
    let warmup = 100;
    let t_run = Instant::now();
    for i in 0..warmup + samples {
        cmd_tx.send(Cmd::Sample).unwrap();
        let id = ready_rx.recv().unwrap();
        std::thread::sleep(Duration::from_millis(2));
        let t = Instant::now();
        h.engine.user_responded(&id, answer.clone()).expect("user_responded");
        let returned = t.elapsed();
        let arrived = arrived_rx.recv().unwrap();
        if i >= warmup {
            wake.push(arrived.duration_since(t));
            call.push(returned);
            after.push(arrived.saturating_duration_since(t + returned));
        }
    }
    let total = t_run.elapsed();
    cmd_tx.send(Cmd::Stop).unwrap();
    rt.block_on(client).expect("client task");
    wake.sort();
    call.sort();
    after.sort();
    println!(
        "wakeup {:<7} samples={samples} (after {warmup} warm-up) T->response line: p50={} p99={} max={} | \
         user_responded call: p50={} p99={} max={} | its return->line: p50={} p99={} max={} | run {:.1}s",
        store.name(),
        fmt(pct(&wake, 0.50)),
        fmt(pct(&wake, 0.99)),
        fmt(*wake.last().unwrap()),
        fmt(pct(&call, 0.50)),
        fmt(pct(&call, 0.99)),
        fmt(*call.last().unwrap()),
        fmt(pct(&after, 0.50)),
        fmt(pct(&after, 0.99)),
        fmt(*after.last().unwrap()),
        total.as_secs_f64(),
    );
    drop(h);
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this without it: then only
    // a smoke run (a few requests per path) checks that the bench still works.
    if !std::env::args().any(|a| a == "--bench") {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        rt.block_on(throughput(StoreKind::Memory, 2, 2, 20, 1));
        rt.block_on(throughput(StoreKind::File, 2, 2, 20, 1));
        wakeup(&rt, StoreKind::Memory, 20);
        return;
    }
    // A filter argument selects `throughput` or `wakeup`.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let want = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    if want("throughput") {
        rt.block_on(async {
            // Each shape on the durable store, then in memory, back to back: the ratio is of two
            // runs minutes apart at most, on the same noisy machine.
            //
            // The durable store: four SQLite commits per no-op request (accepted, running,
            // displayed, completed) into the write-ahead log, and the syncs its two reports wait
            // for (create → acceptance, CP-4-20; wait → the terminal state, CP-3-11), shared
            // between concurrent requests (group commit).
            // In memory: the same path without disk I/O (socket, JSON-RPC, engine, scheduler and
            // SQLite itself).
            let mut ratios = Vec::new();
            for (clients, depth) in [(1, 1), (1, 8), (8, 1), (8, 4)] {
                let file = throughput(StoreKind::File, clients, depth, 3_000, 1).await;
                let memory = throughput(StoreKind::Memory, clients, depth, 3_000, 1).await;
                ratios.push((clients, depth, file, memory));
            }
            for (clients, depth, file, memory) in ratios {
                println!(
                    "ratio clients={clients} depth={depth} file={file:.0} memory={memory:.0} req/s \
                     file/memory={:.2}",
                    file / memory
                );
            }
            // Rounds on one engine: how the retained records (24 h retention) slow it down.
            throughput(StoreKind::Memory, 8, 4, 3_000, 6).await;
            throughput(StoreKind::File, 8, 4, 3_000, 6).await;
        });
    }
    if want("wakeup") {
        wakeup(&rt, StoreKind::File, 2_000);
        wakeup(&rt, StoreKind::Memory, 2_000);
    }
}
