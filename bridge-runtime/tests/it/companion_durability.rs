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

/// An in-memory store whose writes are durable only once synced.
struct Deferred {
    inner: SqliteStore,
    sync: Arc<TestSync>,
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
