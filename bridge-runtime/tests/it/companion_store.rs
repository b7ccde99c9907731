//! Persistence: failed writes, restart, retention and unrecoverable records (CP-4-16 … CP-4-23,
//! CP-7-8 "restart"). Time is tokio's paused clock.

use crate::support::companion as companion_support;

use bridge_runtime::companion::{
    Clock, Engine, EngineConfig, EngineError, ErrorCode, HostError, Loaded, PresenterEvent, ScriptedPresenter,
    SqliteStore, Store, StoreError, StoredRequest, Tombstone, TombstoneReason,
};
use companion_support::*;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

const DAY_MS: u64 = 24 * 60 * 60 * 1000;

/// A store whose writes fail while `fail` is set (a full disk, a locked file), except for the
/// next `pass` writes.
struct FailingStore {
    inner: SqliteStore,
    fail: Arc<AtomicBool>,
    pass: Arc<AtomicUsize>,
}

impl FailingStore {
    fn new() -> (Self, Arc<AtomicBool>) {
        let (store, fail, _) = Self::with_pass();
        (store, fail)
    }
    fn with_pass() -> (Self, Arc<AtomicBool>, Arc<AtomicUsize>) {
        let fail = Arc::new(AtomicBool::new(false));
        let pass = Arc::new(AtomicUsize::new(0));
        (Self { inner: SqliteStore::in_memory().unwrap(), fail: fail.clone(), pass: pass.clone() }, fail, pass)
    }
    fn check(&self) -> Result<(), StoreError> {
        if !self.fail.load(Ordering::SeqCst)
            || self.pass.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok()
        {
            Ok(())
        } else {
            Err(StoreError("disk I/O error".into()))
        }
    }
}

impl Store for FailingStore {
    fn load(&mut self) -> Result<Loaded, StoreError> {
        self.inner.load()
    }
    fn save(&mut self, rows: &[StoredRequest]) -> Result<(), StoreError> {
        self.check()?;
        self.inner.save(rows)
    }
    fn bury(&mut self, tombstones: &[Tombstone]) -> Result<(), StoreError> {
        self.check()?;
        self.inner.bury(tombstones)
    }
    fn forget_tombstones_before(&mut self, cutoff_ms: i64) -> Result<(), StoreError> {
        self.check()?;
        self.inner.forget_tombstones_before(cutoff_ms)
    }
}

async fn advance_ms(ms: u64) {
    tokio::time::advance(Duration::from_millis(ms)).await;
    settle().await;
}

fn open_engine(path: &Path, clock: Clock) -> Fixture {
    let catalog = catalog();
    let (presenter, events) = ScriptedPresenter::new();
    let engine = Engine::builder(catalog.clone())
        .store(SqliteStore::open(path).unwrap())
        .presenter(presenter)
        .clock(clock)
        .start()
        .expect("start");
    Fixture { engine, events, catalog }
}

// CP-4-20, CP-3-5, CP-3-7: when the state cannot be written, the create is not confirmed, nothing
// is shown, and nothing is recorded (the idempotency key stays free).
#[tokio::test(start_paused = true)]
async fn a_failed_write_never_confirms_acceptance() {
    let (store, fail) = FailingStore::new();
    let mut f = start_with(EngineConfig::default(), store);
    let a = agent("a");
    let mut body = create_body("interaction.choose", choose_params(), 30_000);
    body["idempotencyKey"] = json!("once");
    fail.store(true, Ordering::SeqCst);
    let e = create_err(&f.engine, &a, body.clone()).await;
    assert_eq!(e.code, ErrorCode::InternalError);
    assert!(e.retryable());
    assert!(drain(&mut f.events).await.is_empty());
    fail.store(false, Ordering::SeqCst);
    let snap = create(&f.engine, &a, body).await;
    assert_eq!(snap["state"], "running");
}

// CP-4-20, CP-3-24: an answer, a cancel or an update that cannot be written is not confirmed and
// changes nothing; once the store works again the same answer is accepted.
#[tokio::test(start_paused = true)]
async fn a_failed_write_never_confirms_an_answer() {
    let (store, fail) = FailingStore::new();
    let mut f = start_with(EngineConfig::default(), store);
    let a = agent("a");
    let id = id_of(&create(&f.engine, &a, create_body("interaction.choose", choose_params(), 30_000)).await);
    expect_show(&mut f.events, &id).await;
    f.engine.displayed(&id).unwrap();
    let before = get(&f.engine, &a, &id).await.unwrap();

    fail.store(true, Ordering::SeqCst);
    assert!(matches!(f.engine.user_responded(&id, json!({"selectedId": "yes"})), Err(HostError::Store(_))));
    let e = f.engine.call(&a, "requests.cancel", json!({"requestId": id})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::InternalError);
    assert!(matches!(f.engine.view_closed(&id), Err(HostError::Store(_))));
    assert_eq!(get(&f.engine, &a, &id).await.unwrap(), before, "nothing changed");

    fail.store(false, Ordering::SeqCst);
    f.engine.user_responded(&id, json!({"selectedId": "yes"})).unwrap();
    let s = get(&f.engine, &a, &id).await.unwrap();
    assert_eq!(s["state"], "completed");
    assert_eq!(s["result"], json!({"selectedId": "yes"}));
}

// CP-4-20, CP-3-17: a deadline that passes while the store fails is applied once writing works
// again (retried by the timer task), never reported before it is stored.
#[tokio::test(start_paused = true)]
async fn timer_transitions_wait_for_a_working_store() {
    let (store, fail) = FailingStore::new();
    let f = start_with(EngineConfig::default(), store);
    let a = agent("a");
    let id = id_of(&create(&f.engine, &a, create_body("notice.show", json!({"text": "x"}), 5_000)).await);
    fail.store(true, Ordering::SeqCst);
    advance_ms(6_000).await;
    assert_eq!(get(&f.engine, &a, &id).await.unwrap()["state"], "running");
    fail.store(false, Ordering::SeqCst);
    advance_ms(1_000).await;
    let s = get(&f.engine, &a, &id).await.unwrap();
    assert_eq!(s["state"], "expired");
    assert_eq!(s["terminalReason"], "timeout");
}

// CP-4-20, CP-2-29, CP-4-15: a queued animation that must switch to its reduced-motion fallback
// when it reaches the display slot is shown only once the switch is stored: while the write
// fails nothing is shown (neither the animation nor the fallback), and the retry shows the
// fallback.
#[tokio::test(start_paused = true)]
async fn a_reduced_motion_switch_is_stored_before_anything_is_shown() {
    let (store, fail, pass) = FailingStore::with_pass();
    let mut f = start_with(EngineConfig::default(), store);
    let a = agent("a");
    let holder =
        id_of(&create(&f.engine, &a, create_body("progress.show", json!({"label": "x", "value": 0}), 60_000)).await);
    expect_show(&mut f.events, &holder).await;
    let mut body = create_body("animation.celebrate", json!({}), 60_000);
    body["allowFallback"] = json!(true);
    let id = id_of(&create(&f.engine, &a, body).await);
    f.engine.set_reduced_motion(true);

    // The slot is released (that write passes), but the display start with the switch fails.
    pass.store(1, Ordering::SeqCst);
    fail.store(true, Ordering::SeqCst);
    f.engine.view_closed(&holder).unwrap();
    let shows = |events: Vec<PresenterEvent>| {
        events
            .into_iter()
            .filter_map(|e| match e {
                PresenterEvent::Show(p) => Some((p.request_id, p.capability)),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(shows(drain(&mut f.events).await), []);
    let s = get(&f.engine, &a, &id).await.unwrap();
    assert_eq!((s["state"].as_str(), s["resolvedCapability"].as_str()), (Some("queued"), Some("animation.celebrate")));

    fail.store(false, Ordering::SeqCst);
    advance_ms(1_000).await;
    assert_eq!(shows(drain(&mut f.events).await), [(id.clone(), "notice.show".to_owned())]);
    let s = get(&f.engine, &a, &id).await.unwrap();
    assert_eq!((s["state"].as_str(), s["fallbackReason"].as_str()), (Some("running"), Some("reduced_motion")));
}

// CP-4-21, CP-4-5, CP-3-8, CP-7-8 "restart": after a restart on the same file, finished requests
// keep their results, unfinished ones are failed/runtime_restarted and are not shown again, the
// runtime has a new runtimeInstanceId, and a retried create with the same key returns the
// original request instead of prompting again.
#[tokio::test(start_paused = true)]
async fn restart_fails_unfinished_requests_without_replaying_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("companion.sqlite");
    let a = agent("a");
    let mut f = open_engine(&path, Clock::system());
    let old_instance = f.engine.runtime_instance_id().to_owned();
    let done = id_of(&create(&f.engine, &a, create_body("interaction.choose", choose_params(), 60_000)).await);
    expect_show(&mut f.events, &done).await;
    f.engine.displayed(&done).unwrap();
    f.engine.user_responded(&done, json!({"selectedId": "no"})).unwrap();
    let mut waiting_body = create_body("interaction.choose", choose_params(), 60_000);
    waiting_body["idempotencyKey"] = json!("ask-once");
    let waiting = create(&f.engine, &a, waiting_body.clone()).await;
    let queued = create(&f.engine, &a, create_body("notice.show", json!({"text": "later"}), 60_000)).await;
    expect_show(&mut f.events, &id_of(&waiting)).await;
    f.engine.displayed(&id_of(&waiting)).unwrap();
    let waiting_rev = get(&f.engine, &a, &id_of(&waiting)).await.unwrap()["revision"].as_u64().unwrap();
    let now = f.engine.clock().now_ms();
    drop(f);

    let mut f = open_engine(&path, Clock::starting_at(now + 1_000));
    assert_ne!(f.engine.runtime_instance_id(), old_instance);
    let d = get(&f.engine, &a, &done).await.unwrap();
    assert_eq!(d["state"], "completed");
    assert_eq!(d["result"], json!({"selectedId": "no"}));
    assert_eq!(d["runtimeInstanceId"], old_instance.as_str());
    for (snap, rev) in [(&waiting, waiting_rev), (&queued, queued["revision"].as_u64().unwrap())] {
        let s = get(&f.engine, &a, &id_of(snap)).await.unwrap();
        assert_eq!(s["state"], "failed");
        assert_eq!(s["terminalReason"], "runtime_restarted");
        assert_eq!(s["result"], Value::Null);
        assert_eq!(s["revision"].as_u64().unwrap(), rev + 1);
    }
    let again = create(&f.engine, &a, waiting_body).await;
    assert_eq!(again["requestId"], waiting["requestId"]);
    assert_eq!(again["state"], "failed");
    let events = drain(&mut f.events).await;
    assert!(!events.iter().any(|e| matches!(e, PresenterEvent::Show(_))), "nothing replayed: {events:?}");
}

// CP-4-16, CP-4-4, CP-6-19, CP-6-18: terminal records, results and idempotency keys are kept for
// 24 h, then deleted; the owner is told RESULT_EXPIRED (others NOT_FOUND), also after a restart,
// and the key is free again.
#[tokio::test(start_paused = true)]
async fn records_are_kept_for_24_hours_then_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("companion.sqlite");
    let (a, b) = (agent("a"), agent("b"));
    let mut f = open_engine(&path, Clock::system());
    let mut body = create_body("interaction.choose", choose_params(), 60_000);
    body["idempotencyKey"] = json!("k");
    let id = id_of(&create(&f.engine, &a, body.clone()).await);
    expect_show(&mut f.events, &id).await;
    f.engine.displayed(&id).unwrap();
    f.engine.user_responded(&id, json!({"selectedId": "yes"})).unwrap();

    advance_ms(DAY_MS - 1).await;
    assert_eq!(get(&f.engine, &a, &id).await.unwrap()["result"], json!({"selectedId": "yes"}));
    assert_eq!(create(&f.engine, &a, body.clone()).await["requestId"], id.as_str());
    advance_ms(1).await;
    let e = get(&f.engine, &a, &id).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::ResultExpired);
    assert!(!e.retryable());
    assert_eq!(get(&f.engine, &b, &id).await.unwrap_err().code, ErrorCode::NotFound);
    let e = f.engine.call(&a, "requests.wait", json!({"requestId": id, "waitMs": 0})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::ResultExpired);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let rows: i64 = conn.query_row("SELECT COUNT(*) FROM requests WHERE request_id = ?1", [&id], |r| r.get(0)).unwrap();
    assert_eq!(rows, 0, "the record itself is deleted");

    let now = f.engine.clock().now_ms();
    drop(f);
    let f = open_engine(&path, Clock::starting_at(now + 1_000));
    assert_eq!(get(&f.engine, &a, &id).await.unwrap_err().code, ErrorCode::ResultExpired);
    let fresh = create(&f.engine, &a, body).await;
    assert_ne!(fresh["requestId"], id.as_str());
    // Tombstones go too, after their own (7-day) period.
    advance_ms(7 * DAY_MS + 1_000).await;
    assert_eq!(get(&f.engine, &a, &id).await.unwrap_err().code, ErrorCode::NotFound);
}

// CP-4-16: the first local profile keeps records for at least 24 hours.
#[tokio::test(start_paused = true)]
async fn retention_below_24_hours_is_refused() {
    let config = EngineConfig { result_retention_ms: DAY_MS - 1, ..EngineConfig::default() };
    let (presenter, _events) = ScriptedPresenter::new();
    let r = Engine::builder(catalog()).config(config).presenter(presenter).start();
    assert!(matches!(r, Err(EngineError::Config(_))));
}

// CP-4-23, OQ-CP-10: a record that cannot be read back is reported as RESULT_EXPIRED to its owner
// (NOT_FOUND to others), never as a success; a file that is not a database is an error, not a
// panic.
#[tokio::test(start_paused = true)]
async fn unrecoverable_records_are_reported_not_faked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("companion.sqlite");
    let a = agent("a");
    let mut f = open_engine(&path, Clock::system());
    let id = id_of(&create(&f.engine, &a, create_body("interaction.choose", choose_params(), 60_000)).await);
    expect_show(&mut f.events, &id).await;
    f.engine.displayed(&id).unwrap();
    f.engine.user_responded(&id, json!({"selectedId": "yes"})).unwrap();
    drop(f);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE requests SET body = '{\"snapshot\": {\"state\": \"completed\"' WHERE request_id = ?1", [&id])
        .unwrap();
    drop(conn);

    let f = open_engine(&path, Clock::system());
    let e = get(&f.engine, &a, &id).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::ResultExpired);
    assert_eq!(get(&f.engine, &agent("b"), &id).await.unwrap_err().code, ErrorCode::NotFound);

    let garbage = dir.path().join("garbage.sqlite");
    std::fs::write(&garbage, b"this is not a database, just some bytes that are long enough to matter").unwrap();
    assert!(SqliteStore::open(&garbage).is_err());
}

// The store's writes are atomic: a batch that breaks a constraint (two records with one client's
// idempotency key) changes nothing.
#[test]
fn sqlite_batches_are_atomic() {
    let mut s = SqliteStore::in_memory().unwrap();
    let row = |id: &str, key: Option<&str>| StoredRequest {
        request_id: id.into(),
        client_id: "a".into(),
        idempotency_key: key.map(Into::into),
        terminal_at: None,
        body: "{}".into(),
    };
    s.save(&[row("r1", Some("k"))]).unwrap();
    assert!(s.save(&[row("r2", None), row("r3", Some("k"))]).is_err());
    let loaded = s.load().unwrap();
    assert_eq!(loaded.requests.len(), 1);
    s.bury(&[Tombstone {
        request_id: "r1".into(),
        client_id: "a".into(),
        reason: TombstoneReason::RetentionExpired,
        at: 5,
    }])
    .unwrap();
    let loaded = s.load().unwrap();
    assert!(loaded.requests.is_empty());
    assert_eq!(loaded.tombstones.len(), 1);
    s.forget_tombstones_before(6).unwrap();
    assert!(s.load().unwrap().tombstones.is_empty());
}

// Starting needs a tokio runtime; without one it is an error, not a panic.
#[test]
fn starting_outside_a_runtime_is_an_error() {
    let (presenter, _events) = ScriptedPresenter::new();
    let r = Engine::builder(catalog()).presenter(presenter).start();
    assert!(matches!(r, Err(EngineError::NoRuntime)));
}

// Issue #10 item 7: one runtime per data directory. A second runtime started on a data file in
// use is refused with a clear error before it reads anything, so the first one's live request
// is not failed as runtime_restarted and keeps its revision; once the first stops, the data
// opens (and the restart rules apply as usual).
#[tokio::test(start_paused = true)]
async fn a_second_runtime_on_the_same_data_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("companion.sqlite");
    let a = agent("a");
    let mut f = open_engine(&path, Clock::system());
    let live = id_of(&create(&f.engine, &a, create_body("interaction.choose", choose_params(), 60_000)).await);
    expect_show(&mut f.events, &live).await;
    f.engine.displayed(&live).unwrap();
    let before = get(&f.engine, &a, &live).await.unwrap();

    let refused = SqliteStore::open(&path).unwrap_err().to_string();
    assert!(refused.contains("in use by another companion runtime"), "{refused}");
    assert!(refused.contains("companion.sqlite"), "{refused}");
    // Another connection to the same file (credentials kept in the same database) still works.
    assert!(bridge_runtime::companion::CredentialStore::open(&path).is_ok());

    let after = get(&f.engine, &a, &live).await.unwrap();
    assert_eq!(after, before, "the first runtime's request is untouched");
    assert_eq!(after["state"], "awaiting_user");
    drop(f);
    assert!(SqliteStore::open(&path).is_ok(), "free once the first runtime is gone");
}

/// Whether any of the store's files (the database, its `-wal` and `-shm`) holds `needle`.
fn files_hold(path: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        if let Ok(bytes) = std::fs::read(&name)
            && bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
        {
            found.push(format!("{}", Path::new(&name).display()));
        }
    }
    found
}

/// A question and its answer that carry `canary` (title, option id, and the answer).
async fn answered_canary(f: &mut Fixture, client: &bridge_runtime::companion::ClientIdentity, canary: &str) -> String {
    let params = json!({"title": format!("Ship {canary}?"),
        "options": [{"id": canary, "label": "Yes"}, {"id": "no", "label": "No"}]});
    let id = id_of(&create(&f.engine, client, create_body("interaction.choose", params, 60_000)).await);
    expect_show(&mut f.events, &id).await;
    f.engine.displayed(&id).unwrap();
    f.engine.user_responded(&id, json!({"selectedId": canary})).unwrap();
    assert_eq!(get(&f.engine, client, &id).await.unwrap()["result"]["selectedId"], canary);
    id
}

// CP-4-16: records deleted after the retention period leave no readable copy of their question,
// options or answer in the database file, its free pages, or the write-ahead log (old main: the
// canary stayed readable in the file and the log).
#[tokio::test(start_paused = true)]
async fn expired_content_leaves_no_readable_copy() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("companion.sqlite");
    let a = agent("a");
    let mut f = open_engine(&path, Clock::system());
    let canary = "CANARY-7f3a9c21-expiry";
    let id = answered_canary(&mut f, &a, canary).await;
    assert!(!files_hold(&path, canary).is_empty(), "the canary was written (the test sees the files)");
    advance_ms(DAY_MS + 1_000).await;
    assert_eq!(get(&f.engine, &a, &id).await.unwrap_err().code, ErrorCode::ResultExpired);
    assert_eq!(files_hold(&path, canary), Vec::<String>::new(), "an expired record is still readable");
}

// CP-4-22: a revoked client's params and results are purged and leave no readable copy in the
// database file or its log (old main: the canary stayed readable).
#[tokio::test(start_paused = true)]
async fn revoked_content_leaves_no_readable_copy() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("companion.sqlite");
    let a = agent("a");
    let mut f = open_engine(&path, Clock::system());
    let canary = "CANARY-5be01d77-revoked";
    answered_canary(&mut f, &a, canary).await;
    // A live one too: its question is purged as it is cancelled.
    let live =
        json!({"title": format!("Again {canary}?"), "options": [{"id": "y", "label": "Y"}, {"id": "n", "label": "N"}]});
    create(&f.engine, &a, create_body("interaction.choose", live, 60_000)).await;
    assert!(!files_hold(&path, canary).is_empty());
    f.engine.client_revoked("a");
    settle().await;
    assert_eq!(files_hold(&path, canary), Vec::<String>::new(), "a revoked client's content is still readable");
}
