//! Group commit (issue #10 item 3): what the engine confirms is durable first, a failed sync
//! confirms nothing, and concurrent requests share syncs (CP-4-20, CP-3-11).

use crate::support::companion as companion_support;

use bridge_runtime::companion::{
    Engine, EngineConfig, ErrorCode, HostError, Loaded, ScriptedPresenter, SqliteStore, Store, StoreError, StoreSync,
    StoredRequest, Tombstone,
};
use companion_support::*;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// A sync that counts its calls, can be made to fail, and takes `delay` (a slow disk).
#[derive(Default)]
struct TestSync {
    calls: AtomicUsize,
    fail: AtomicBool,
    delay: Duration,
}

impl StoreSync for TestSync {
    fn sync(&self) -> Result<(), StoreError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(self.delay);
        if self.fail.load(Ordering::SeqCst) { Err(StoreError("fsync: I/O error".into())) } else { Ok(()) }
    }
}

/// An in-memory store whose writes are durable only once `sync` synced them.
struct Deferred {
    inner: SqliteStore,
    sync: Arc<dyn StoreSync>,
}

impl Store for Deferred {
    fn load(&mut self) -> Result<Loaded, StoreError> {
        self.inner.load()
    }
    fn save(&mut self, rows: &[StoredRequest]) -> Result<(), StoreError> {
        self.inner.save(rows)
    }
    fn bury(&mut self, tombstones: &[Tombstone]) -> Result<(), StoreError> {
        self.inner.bury(tombstones)
    }
    fn forget_tombstones_before(&mut self, cutoff_ms: i64) -> Result<(), StoreError> {
        self.inner.forget_tombstones_before(cutoff_ms)
    }
    fn deferred_sync(&mut self) -> Option<Arc<dyn StoreSync>> {
        Some(self.sync.clone())
    }
}

fn deferred(delay: Duration) -> (Deferred, Arc<TestSync>) {
    let sync = Arc::new(TestSync { delay, ..TestSync::default() });
    (Deferred { inner: SqliteStore::in_memory().unwrap(), sync: sync.clone() }, sync)
}

// CP-4-20: an acceptance and an answer are confirmed only after a sync covered them; once a sync
// has failed nothing more is confirmed (the writes since the last good sync may be lost), not
// even after the disk recovers, until the runtime restarts (CP-4-21 then fails what is live).
#[tokio::test]
async fn a_failed_sync_confirms_nothing_until_restart() {
    let (store, sync) = deferred(Duration::ZERO);
    let f = start_with(EngineConfig::default(), store);
    let a = agent("a");
    assert_eq!(sync.calls.load(Ordering::SeqCst), 1, "the start syncs what it loaded and failed");
    let first = create(&f.engine, &a, create_body("interaction.choose", choose_params(), 30_000)).await;
    assert_eq!(sync.calls.load(Ordering::SeqCst), 2, "the acceptance was synced before it was confirmed");
    let id = id_of(&first);
    f.engine.displayed(&id).unwrap();
    let shown = get(&f.engine, &a, &id).await.unwrap();
    assert_eq!(shown["state"], "awaiting_user");
    assert_eq!(sync.calls.load(Ordering::SeqCst), 3, "a state is reported once it is durable");

    sync.fail.store(true, Ordering::SeqCst);
    let e = create_err(&f.engine, &a, create_body("interaction.choose", choose_params(), 30_000)).await;
    assert_eq!(e.code, ErrorCode::InternalError);
    assert!(e.retryable());
    sync.fail.store(false, Ordering::SeqCst);
    assert!(
        matches!(f.engine.user_responded(&id, json!({"selectedId": "yes"})), Err(HostError::Store(_))),
        "no answer is confirmed after a failed sync"
    );
    let e = create_err(&f.engine, &a, create_body("interaction.choose", choose_params(), 30_000)).await;
    assert_eq!(e.code, ErrorCode::InternalError, "the failure is final until a restart");
    // What was durable before the failure is still reported, unchanged.
    assert_eq!(get(&f.engine, &a, &id).await.expect("a durable snapshot is still reported"), shown);
}

// Group commit: concurrent creates share syncs (one sync covers every write made before it
// started), and each create still returns only after a sync that covered it (CP-4-20).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_share_syncs() {
    let (store, sync) = deferred(Duration::from_millis(20));
    let config = EngineConfig { max_creates_per_minute: 1_000, max_active_per_client: 64, ..EngineConfig::default() };
    let catalog = catalog();
    let (presenter, _events) = ScriptedPresenter::new();
    let engine = Engine::builder(catalog).config(config).store(store).presenter(presenter).start().expect("start");
    let before = sync.calls.load(Ordering::SeqCst);
    let creates: Vec<_> = (0..32)
        .map(|_| {
            let engine = engine.clone();
            tokio::spawn(async move {
                let body = create_body("interaction.choose", choose_params(), 30_000);
                engine.call(&agent("a"), "requests.create", body).await.expect("accepted")
            })
        })
        .collect();
    for c in creates {
        let snap = c.await.unwrap();
        assert!(snap["requestId"].is_string());
    }
    let syncs = sync.calls.load(Ordering::SeqCst) - before;
    assert!(syncs >= 1, "the creates were synced");
    assert!(syncs <= 16, "32 concurrent creates took {syncs} syncs: they were not shared");
}

/// A sync whose first call blocks until the test releases it, then fails (a slow disk whose
/// write-back fails); every later call succeeds at once. `entered`/`returned` count calls.
#[derive(Default)]
struct OverlapSync {
    entered: AtomicUsize,
    returned: AtomicUsize,
    release: std::sync::Mutex<Option<std::sync::mpsc::Receiver<()>>>,
}

impl StoreSync for OverlapSync {
    fn sync(&self) -> Result<(), StoreError> {
        let n = self.entered.fetch_add(1, Ordering::SeqCst);
        // The start's own sync is call 0; the first sync of a write is call 1.
        let result = if n == 1 {
            let rx = self.release.lock().unwrap().take().expect("one blocked sync");
            let _ = rx.recv();
            Err(StoreError("fdatasync: EIO (write-back error)".into()))
        } else {
            Ok(())
        };
        self.returned.fetch_add(1, Ordering::SeqCst);
        result
    }
}

async fn until(what: &str, cond: impl Fn() -> bool) {
    tokio::time::timeout(Duration::from_secs(20), async {
        while !cond() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("never: {what}"));
}

type Create = tokio::task::JoinHandle<Result<serde_json::Value, bridge_runtime::companion::CompanionError>>;

/// Create 1 starts sync A, which hangs; create 2 (of another client) starts sync B, which has
/// returned `Ok` when this returns. Sending on the channel lets A fail.
async fn overlapped() -> (Fixture, std::sync::mpsc::Sender<()>, Create, Create) {
    let (release, rx) = std::sync::mpsc::channel();
    let sync = Arc::new(OverlapSync { release: std::sync::Mutex::new(Some(rx)), ..OverlapSync::default() });
    let store = Deferred { inner: SqliteStore::in_memory().unwrap(), sync: sync.clone() };
    let f = start_with(EngineConfig::default(), store);
    let body = || create_body("interaction.choose", choose_params(), 30_000);
    let (e1, e2) = (f.engine.clone(), f.engine.clone());
    let first = tokio::spawn(async move { e1.call(&agent("a"), "requests.create", body()).await });
    until("sync A started", || sync.entered.load(Ordering::SeqCst) == 2).await;
    let second = tokio::spawn(async move { e2.call(&agent("b"), "requests.create", body()).await });
    until("sync B returned", || sync.returned.load(Ordering::SeqCst) == 2).await;
    (f, release, first, second)
}

// CP-4-20: a write is confirmed only when a sync that started after it succeeded and no sync that
// started after it failed. Sync A covers create 1 and hangs; create 2 starts sync B, which
// succeeds; then A fails (fsyncgate: the write-back error went to A, so B's success proves
// nothing). Neither create may be confirmed, and the runtime says it is unhealthy. (Old main
// confirmed create 2, and with it create 1, as soon as B returned.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overlapping_failed_sync_confirms_nothing() {
    let (f, release, first, second) = overlapped().await;
    // Give a wrongly confirmed create every chance to come back before A ends.
    tokio::task::yield_now().await;
    assert!(!second.is_finished() || second.await.unwrap().is_err(), "create 2 was confirmed while sync A was running");
    release.send(()).unwrap();
    let first = first.await.unwrap();
    assert_eq!(first.expect_err("create 1 is not confirmed").code, ErrorCode::InternalError);
    let d = f.engine.call(&agent("a"), "runtime.describe", json!({})).await.unwrap();
    assert_eq!(d["health"]["status"], "unhealthy", "runtime.describe reports the failed sync: {d}");
    let fresh = start();
    let d = fresh.engine.call(&agent("a"), "runtime.describe", json!({})).await.unwrap();
    assert!(d.get("health").is_none(), "a healthy runtime has no health member: {d}");
}

// CP-4-20: the same overlap, when sync B succeeded and the waiter of create 2 is still waiting
// when A fails: create 2 gets INTERNAL_ERROR, never its snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_covered_by_a_good_sync_and_a_failed_one_is_not_confirmed() {
    let (_f, release, first, second) = overlapped().await;
    release.send(()).unwrap();
    let (first, second) = (first.await.unwrap(), second.await.unwrap());
    assert_eq!(first.expect_err("create 1 is not confirmed").code, ErrorCode::InternalError);
    assert_eq!(
        second.expect_err("create 2 is not confirmed: a sync that started after it failed").code,
        ErrorCode::InternalError
    );
}
