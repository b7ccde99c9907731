//! Persistence of request records (CP-4-16 … CP-4-23): a small [`Store`] trait the engine writes
//! through before it confirms anything, and its SQLite implementation ([`SqliteStore`], rusqlite
//! with bundled SQLite; in memory for tests, a file for apps).
//!
//! The engine serializes each request record to `body` (JSON); the store keeps a few columns
//! beside it for lookups.
//!
//! Durability is paid for by group commit: a file [`SqliteStore`] runs in WAL
//! mode with `synchronous=NORMAL`, so a write ([`Store::save`], [`Store::bury`]) returns once it
//! is in the write-ahead log (the OS page cache: it survives a crash of the process, not yet a
//! power loss), and [`StoreSync::sync`] (an `fdatasync` of the log) makes every write before it
//! durable at once. The engine confirms nothing before the sync that covers it (CP-4-20); see
//! `BENCHMARKS.md`, "Companion socket". Retention-expired or unreadable records leave a tombstone
//! `(requestId, clientId)` so that their owner is told `RESULT_EXPIRED` rather than a fake
//! success or a bare `NOT_FOUND` (CP-4-23, OQ-CP-10).
//!
//! Removed content leaves no readable copy: `secure_delete` zeroes deleted cells and pages, and
//! after every purge ([`Store::purged`]: retention deletions, a revoked client's content) a
//! `wal_checkpoint(TRUNCATE)` empties the write-ahead log of the older page images.

use rusqlite::{Connection, params};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One persisted request record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRequest {
    /// `requestId`.
    pub request_id: String,
    /// Owning client id.
    pub client_id: String,
    /// The client's idempotency key, if the create carried one (CP-4-1).
    pub idempotency_key: Option<String>,
    /// When the request became terminal (ms since the Unix epoch), `None` while live.
    pub terminal_at: Option<i64>,
    /// The engine's JSON serialization of the record.
    pub body: String,
}

/// Why a record is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TombstoneReason {
    /// Deleted after the retention period (CP-4-16).
    RetentionExpired,
    /// Found corrupt or unreadable (CP-4-23).
    Unrecoverable,
}

impl TombstoneReason {
    fn as_str(self) -> &'static str {
        match self {
            TombstoneReason::RetentionExpired => "retention_expired",
            TombstoneReason::Unrecoverable => "unrecoverable",
        }
    }
    fn parse(s: &str) -> Self {
        if s == "retention_expired" { TombstoneReason::RetentionExpired } else { TombstoneReason::Unrecoverable }
    }
}

/// What is left of a deleted record: enough to tell its owner it expired (CP-6-19).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tombstone {
    /// `requestId`.
    pub request_id: String,
    /// Owning client id.
    pub client_id: String,
    /// Why it is gone.
    pub reason: TombstoneReason,
    /// When it was buried (ms since the Unix epoch).
    pub at: i64,
}

/// Everything a store holds, as read at startup.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Loaded {
    /// Request rows.
    pub requests: Vec<StoredRequest>,
    /// Tombstones.
    pub tombstones: Vec<Tombstone>,
    /// Rows that could not be read: `(requestId, clientId if readable)`.
    pub unreadable: Vec<(String, Option<String>)>,
}

/// A failed read or write. The engine then confirms nothing (CP-4-20).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("state store: {0}")]
pub struct StoreError(pub String);

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError(e.to_string())
    }
}

/// Makes the writes a [`Store`] has made so far durable (group commit): one sync covers every
/// write that returned before it started. Called from any thread, without the store itself.
pub trait StoreSync: Send + Sync + 'static {
    /// Forces every write made before this call to stable storage. Errors: the sync failed; the
    /// writes may then be lost on power failure and must not be confirmed (CP-4-20).
    fn sync(&self) -> Result<(), StoreError>;
}

/// Durable storage of request records: the engine's one extension point for where requests
/// live. [`SqliteStore`] is the built-in implementation; an app that keeps its data in its own
/// database implements this trait and hands it to [`EngineBuilder::store`]. Every method is
/// atomic: it either applies completely or returns an error and changes nothing.
///
/// A store whose [`Store::deferred_sync`] is `None` (the default) is durable when a write
/// returns. One that returns a [`StoreSync`] is durable only once a later
/// [`StoreSync::sync`] returned `Ok`; the engine waits for that before it confirms or reports
/// anything the write recorded (CP-4-20, CP-3-11).
///
/// # Contract for implementors
///
/// The engine's guarantees to its clients (nothing confirmed before it is durable, no request
/// lost or duplicated across a restart, expired results reported as `RESULT_EXPIRED`) hold only
/// if the store keeps these:
///
/// - **Durability before returning.** When [`save`](Store::save), [`bury`](Store::bury) or
///   [`forget_tombstones_before`](Store::forget_tombstones_before) returns `Ok`, the write must
///   survive a crash of the process, and — unless [`deferred_sync`](Store::deferred_sync)
///   returns a [`StoreSync`] — a power loss too. With a `StoreSync`, a write may sit in a volatile
///   buffer until a later `sync` returns `Ok`; that `sync` must cover every write that returned
///   before it started.
/// - **Atomicity.** Each call applies all of its rows or none of them: after an `Err`, and after
///   a crash in the middle of a call, [`load`](Store::load) sees the store as it was before the
///   call or as it is after it, never a part of it.
/// - **Ordering.** The engine calls the store from one thread at a time (`&mut self`), in the
///   order of its state changes; a later call's effects must never become durable without an
///   earlier call's. A `save` replaces the row with the same `request_id` (the last write wins);
///   a `bury` deletes the named rows and records the tombstones; a later `save` of a buried id
///   does not happen.
/// - **Faithful reads.** [`load`](Store::load) is called once, when the engine starts, and
///   returns exactly what was durably written: every row with its `body` byte for byte, every
///   tombstone not yet forgotten. A row that cannot be read goes to [`Loaded::unreadable`] (with
///   its client id when that much is readable) rather than failing the whole load: the engine
///   then records it as unrecoverable (CP-4-23).
/// - **Errors.** Return [`StoreError`] with a readable message and change nothing; never panic.
///   A failed write makes the engine answer the call with `INTERNAL_ERROR` and confirm nothing
///   (CP-4-20); a failed `load` or a failed write at startup makes [`EngineBuilder::start`]
///   fail; a failed `sync` is final: the engine refuses every later write until it restarts.
/// - **Isolation.** One store instance serves one engine. Two engines must not share the same
///   underlying records (the built-in store takes an exclusive lock on its file for that).
///
/// [`EngineBuilder::store`]: crate::companion::EngineBuilder::store
/// [`EngineBuilder::start`]: crate::companion::EngineBuilder::start
pub trait Store: Send + 'static {
    /// Reads everything durably written: request rows, tombstones, and the ids of rows that
    /// could not be read. Called once, at startup, before any write.
    ///
    /// Errors: the store cannot be read at all (the engine does not start).
    fn load(&mut self) -> Result<Loaded, StoreError>;
    /// Inserts or replaces (by `request_id`) `rows`, all or none, in one transaction. Durable
    /// when it returns `Ok` (or after the next [`StoreSync::sync`], see the trait docs).
    ///
    /// Errors: nothing was written.
    fn save(&mut self, rows: &[StoredRequest]) -> Result<(), StoreError>;
    /// Deletes the request rows named by `tombstones` and records the tombstones, in one
    /// transaction.
    ///
    /// Errors: nothing was deleted or recorded.
    fn bury(&mut self, tombstones: &[Tombstone]) -> Result<(), StoreError>;
    /// Deletes tombstones buried before `cutoff_ms` (ms since the Unix epoch, exclusive).
    ///
    /// Errors: nothing was deleted (the engine retries later).
    fn forget_tombstones_before(&mut self, cutoff_ms: i64) -> Result<(), StoreError>;
    /// The handle that makes this store's writes durable, if they are not durable when they
    /// return (group commit). Called once, when the engine starts, after [`Store::load`].
    /// Default: `None` (every write is durable when it returns).
    fn deferred_sync(&mut self) -> Option<Arc<dyn StoreSync>> {
        None
    }
    /// Called after writes that removed content (records buried after their retention period,
    /// a revoked client's params and results purged, CP-4-16, CP-4-22): afterwards no readable
    /// copy of what was removed may stay in the store's files (free pages, a log). Default:
    /// nothing to do.
    fn purged(&mut self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// [`Store`] on SQLite (rusqlite, bundled).
pub struct SqliteStore {
    conn: Connection,
    /// The lock on `PATH.lock` that makes this the file's only store; released on drop.
    _lock: Option<std::fs::File>,
    /// A file in WAL mode: the log to sync. `None`: in memory, or a file whose journal could not
    /// be switched to WAL (then every commit is synced by SQLite itself, `synchronous=FULL`).
    wal: Option<Arc<WalSync>>,
}

/// [`StoreSync`] of a file [`SqliteStore`]: `fdatasync` of its `-wal` file. SQLite appends each
/// commit to that file (never syncing it, `synchronous=NORMAL`), so syncing it through another
/// descriptor makes every commit that returned before durable; its frame checksums make a torn
/// tail roll back to the last whole commit. SQLite syncs the log itself before a checkpoint
/// copies it into the database, and the database before it reuses the log.
#[derive(Debug)]
struct WalSync {
    path: PathBuf,
    db: PathBuf,
    file: std::sync::Mutex<std::fs::File>,
}

impl WalSync {
    fn open(db: &Path) -> Result<Self, StoreError> {
        let mut name = db.as_os_str().to_owned();
        name.push("-wal");
        let path = PathBuf::from(name);
        let file =
            std::fs::File::open(&path).map_err(|e| StoreError(format!("cannot open {}: {e}", path.display())))?;
        // The log's directory entry must survive a power loss too: sync the directory once.
        if let Some(dir) = db.parent()
            && let Ok(d) = std::fs::File::open(dir)
        {
            let _ = d.sync_all();
        }
        Ok(Self { path, db: db.to_owned(), file: std::sync::Mutex::new(file) })
    }
}

impl StoreSync for WalSync {
    fn sync(&self) -> Result<(), StoreError> {
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        #[cfg(unix)]
        {
            // SQLite keeps one log file while a connection is open; should it ever have been
            // replaced (deleted when a last connection closed, after a checkpoint into the
            // database), sync the database and follow the new log.
            if !super::unix::same_file(&self.path, &file) {
                let db = std::fs::File::open(&self.db).map_err(|e| StoreError(format!("sync: {e}")))?;
                db.sync_data().map_err(|e| StoreError(format!("sync {}: {e}", self.db.display())))?;
                if let Ok(f) = std::fs::File::open(&self.path) {
                    *file = f;
                }
            }
        }
        file.sync_data().map_err(|e| StoreError(format!("sync {}: {e}", self.path.display())))
    }
}

/// Takes the advisory lock on `PATH.lock` (created if needed) without waiting. Errors: another
/// store holds it, with a message saying so.
fn hold_exclusively(path: &Path) -> Result<std::fs::File, StoreError> {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let lock_path = std::path::PathBuf::from(name);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| StoreError(format!("cannot open {}: {e}", lock_path.display())))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(StoreError(format!(
            "{} is in use by another companion runtime; stop it first (one runtime per data directory)",
            path.display()
        ))),
        Err(std::fs::TryLockError::Error(e)) => Err(StoreError(format!("cannot lock {}: {e}", lock_path.display()))),
    }
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").finish_non_exhaustive()
    }
}

const SCHEMA_VERSION: i64 = 1;

impl SqliteStore {
    /// Opens (creating if needed) the database file at `path` and holds it, through an advisory
    /// lock on `PATH.lock`, until the store is dropped: one runtime per data directory. A
    /// second runtime would otherwise fail the first one's live requests as
    /// `runtime_restarted` and both would write the same revisions. (Other connections to the
    /// file, e.g. a [`CredentialStore`](super::CredentialStore) on the same database, are
    /// unaffected.) The parent directory should be private to the user (CP-5-12).
    /// The file is made private (mode 0600): it holds interaction content and answers.
    ///
    /// Journal: WAL with `synchronous=NORMAL`, so a write returns once it is in the log and
    /// [`Store::deferred_sync`] gives the [`StoreSync`] that makes it durable (group commit);
    /// where WAL is unavailable, SQLite's default rollback journal with
    /// `synchronous=FULL` (every write durable when it returns, no sync handle).
    ///
    /// Errors: the file is in use by another store (another runtime, or another store in this
    /// process), it cannot be opened, is not a database, or has a newer schema.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let lock = hold_exclusively(path)?;
        let conn = Connection::open(path)?;
        // Before the log and shared-memory files exist: SQLite gives them the database's mode.
        #[cfg(unix)]
        super::unix::make_owner_only(path);
        let mut store = Self::init(conn)?;
        store._lock = Some(lock);
        let mode: String = store.conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        if mode.eq_ignore_ascii_case("wal") {
            // Commits are no longer synced by SQLite; the engine syncs the log (group commit).
            store.conn.pragma_update(None, "synchronous", "NORMAL")?;
            // The log exists once a write went through it.
            store.conn.execute_batch("BEGIN IMMEDIATE; PRAGMA user_version = 1; COMMIT;")?;
            let db = store.conn.path().map(PathBuf::from).unwrap_or_else(|| path.to_owned());
            #[cfg(unix)]
            for suffix in ["-wal", "-shm"] {
                let mut name = db.as_os_str().to_owned();
                name.push(suffix);
                super::unix::make_owner_only(Path::new(&name));
            }
            store.wal = Some(Arc::new(WalSync::open(&db)?));
        } else {
            tracing::warn!(journal_mode = %mode, "companion: WAL unavailable; every commit is synced");
        }
        Ok(store)
    }

    /// A private in-memory database (tests, or apps that keep nothing across restarts).
    pub fn in_memory() -> Result<Self, StoreError> {
        Self::init(Connection::open_in_memory()?)
    }

    fn init(conn: Connection) -> Result<Self, StoreError> {
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        // Deleted and overwritten content is zeroed, not left in free pages and cells.
        conn.pragma_update(None, "secure_delete", "ON")?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version > SCHEMA_VERSION {
            return Err(StoreError(format!("database schema {version} is newer than this runtime ({SCHEMA_VERSION})")));
        }
        conn.execute_batch(
            "BEGIN;
             CREATE TABLE IF NOT EXISTS requests (
                 request_id TEXT PRIMARY KEY NOT NULL,
                 client_id TEXT NOT NULL,
                 idempotency_key TEXT,
                 terminal_at INTEGER,
                 body TEXT NOT NULL
             );
             CREATE UNIQUE INDEX IF NOT EXISTS requests_idempotency
                 ON requests(client_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
             CREATE TABLE IF NOT EXISTS tombstones (
                 request_id TEXT PRIMARY KEY NOT NULL,
                 client_id TEXT NOT NULL,
                 reason TEXT NOT NULL,
                 at INTEGER NOT NULL
             );
             PRAGMA user_version = 1;
             COMMIT;",
        )?;
        Ok(Self { conn, _lock: None, wal: None })
    }
}

impl Store for SqliteStore {
    fn load(&mut self) -> Result<Loaded, StoreError> {
        let mut loaded = Loaded::default();
        let mut stmt =
            self.conn.prepare("SELECT request_id, client_id, idempotency_key, terminal_at, body FROM requests")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let parsed = (|| -> rusqlite::Result<StoredRequest> {
                Ok(StoredRequest {
                    request_id: row.get(0)?,
                    client_id: row.get(1)?,
                    idempotency_key: row.get(2)?,
                    terminal_at: row.get(3)?,
                    body: row.get(4)?,
                })
            })();
            match parsed {
                Ok(r) => loaded.requests.push(r),
                Err(_) => {
                    if let Ok(id) = row.get::<_, String>(0) {
                        loaded.unreadable.push((id, row.get::<_, String>(1).ok()));
                    }
                }
            }
        }
        drop(rows);
        drop(stmt);
        let mut stmt = self.conn.prepare("SELECT request_id, client_id, reason, at FROM tombstones")?;
        let tombstones = stmt
            .query_map([], |r| {
                Ok(Tombstone {
                    request_id: r.get(0)?,
                    client_id: r.get(1)?,
                    reason: TombstoneReason::parse(&r.get::<_, String>(2)?),
                    at: r.get(3)?,
                })
            })?
            .filter_map(Result::ok)
            .collect();
        loaded.tombstones = tombstones;
        Ok(loaded)
    }

    fn save(&mut self, rows: &[StoredRequest]) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO requests (request_id, client_id, idempotency_key, terminal_at, body)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT(request_id) DO UPDATE SET
                     client_id = excluded.client_id, idempotency_key = excluded.idempotency_key,
                     terminal_at = excluded.terminal_at, body = excluded.body",
            )?;
            for r in rows {
                stmt.execute(params![r.request_id, r.client_id, r.idempotency_key, r.terminal_at, r.body])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn bury(&mut self, tombstones: &[Tombstone]) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        {
            let mut del = tx.prepare_cached("DELETE FROM requests WHERE request_id = ?1")?;
            let mut ins = tx.prepare_cached(
                "INSERT OR REPLACE INTO tombstones (request_id, client_id, reason, at) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for t in tombstones {
                del.execute(params![t.request_id])?;
                ins.execute(params![t.request_id, t.client_id, t.reason.as_str(), t.at])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn forget_tombstones_before(&mut self, cutoff_ms: i64) -> Result<(), StoreError> {
        self.conn.execute("DELETE FROM tombstones WHERE at < ?1", params![cutoff_ms])?;
        Ok(())
    }

    fn deferred_sync(&mut self) -> Option<Arc<dyn StoreSync>> {
        self.wal.clone().map(|w| w as Arc<dyn StoreSync>)
    }

    /// `secure_delete` zeroes what was removed in the database's pages; the log still holds the
    /// older page images until a checkpoint copies the new ones into the database and
    /// truncates it (SQLite syncs the log and the database on the way). Errors: the checkpoint
    /// could not finish (another connection was reading); the next purge tries again.
    fn purged(&mut self) -> Result<(), StoreError> {
        if self.wal.is_none() {
            return Ok(());
        }
        let (busy, _, _): (i64, i64, i64) =
            self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        if busy != 0 {
            return Err(StoreError("the log could not be truncated: another connection is reading".into()));
        }
        Ok(())
    }
}

/// Group commit: which of the engine's writes are durable. Writes are
/// numbered in the order the store made them (under the engine's lock); one sync makes every
/// write numbered up to the count at its start (its target) durable. Whoever needs a write
/// durable that no running sync covers leads a new one (at most [`MAX_SYNCS`] at a time, so a
/// request that arrives during a sync need not wait for it to end before its own starts);
/// everyone else waits for a running one, so concurrent requests share syncs.
///
/// A write is confirmed only when a sync that started after it succeeded **and no sync that
/// started after it failed** or is still running: on Linux a failed `fdatasync` reports a
/// write-back error once and may leave a concurrent sync of the same file returning `Ok` for
/// pages that never reached the disk, so the success of one of two overlapping syncs proves
/// nothing until the other one has ended well too. While a success waits for an overlapping
/// sync, no new sync starts (so the wait ends). A failed sync is final: the writes since the last
/// confirmed point may be lost, so they are never confirmed, and every later write is refused
/// until the runtime restarts (which then fails whatever is not terminal on disk, CP-4-21);
/// [`Durability::failure`] says so to `runtime.describe` and the log says so once.
pub(crate) struct Durability {
    /// `None`: every write is durable when it returns.
    sync: Option<Arc<dyn StoreSync>>,
    written: std::sync::atomic::AtomicU64,
    inner: std::sync::Mutex<DurableState>,
    cond: std::sync::Condvar,
    /// Bumped after every sync, for async waiters.
    synced: tokio::sync::watch::Sender<u64>,
}

/// Syncs that may run at once.
const MAX_SYNCS: usize = 2;

#[derive(Default)]
struct DurableState {
    /// Every write up to this number is confirmed.
    durable: u64,
    /// The highest target of a sync that succeeded; confirmed once no sync that started after
    /// an unconfirmed write is running.
    succeeded: u64,
    /// Running syncs: `(lead id, target)`.
    running: Vec<(u64, u64)>,
    next_lead: u64,
    failed: Option<StoreError>,
}

impl DurableState {
    /// Confirms what succeeded once no running sync started after an unconfirmed write.
    fn settle(&mut self) {
        if self.failed.is_none() && self.running.iter().all(|(_, t)| *t <= self.durable) {
            self.durable = self.durable.max(self.succeeded);
        }
    }
}

/// What a waiter does next.
enum Step {
    Done(Result<(), StoreError>),
    /// Lead a sync with this id and target.
    Lead(u64, u64),
    Wait,
}

/// The sync one waiter leads; if it is dropped without running (a runtime shutting down), the
/// next waiter leads instead.
struct Lead {
    durability: Arc<Durability>,
    sync: Arc<dyn StoreSync>,
    id: u64,
    target: u64,
    done: bool,
}

impl Lead {
    fn run(mut self) {
        // Writes made since the lead was decided (e.g. the presenter's, during the hand-off to
        // the blocking pool) have returned too: this sync covers them as well, and counts as
        // started after them.
        let target = {
            let mut st = self.durability.state();
            let target = self.target.max(self.durability.written.load(std::sync::atomic::Ordering::SeqCst));
            if let Some(entry) = st.running.iter_mut().find(|(id, _)| *id == self.id) {
                entry.1 = target;
            }
            target
        };
        let result = self.sync.sync();
        self.done = true;
        self.durability.finish(self.id, Some((target, result)));
    }
}

impl Drop for Lead {
    fn drop(&mut self) {
        if !self.done {
            self.durability.finish(self.id, None);
        }
    }
}

impl Durability {
    pub(crate) fn new(sync: Option<Arc<dyn StoreSync>>) -> Arc<Self> {
        Arc::new(Self {
            sync,
            written: std::sync::atomic::AtomicU64::new(0),
            inner: std::sync::Mutex::new(DurableState::default()),
            cond: std::sync::Condvar::new(),
            synced: tokio::sync::watch::channel(0).0,
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, DurableState> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Numbers a write that has just returned (call under the engine's lock, after the write).
    pub(crate) fn wrote(&self) -> u64 {
        self.written.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1
    }

    /// The failed sync that stops all writes, if any.
    pub(crate) fn failure(&self) -> Option<StoreError> {
        self.state().failed.clone()
    }

    fn step(&self, lsn: u64) -> Step {
        if self.sync.is_none() {
            return Step::Done(self.failure().map_or(Ok(()), Err));
        }
        let mut st = self.state();
        // What was confirmed before a failed sync stays reportable.
        if st.durable >= lsn {
            return Step::Done(Ok(()));
        }
        if let Some(e) = &st.failed {
            return Step::Done(Err(e.clone()));
        }
        if st.running.len() >= MAX_SYNCS
            || st.running.iter().any(|(_, t)| *t >= lsn)
            || (st.succeeded > st.durable && !st.running.is_empty())
        {
            return Step::Wait;
        }
        // Every write numbered so far has returned: this sync covers them all.
        let target = self.written.load(std::sync::atomic::Ordering::SeqCst);
        let id = st.next_lead;
        st.next_lead += 1;
        st.running.push((id, target));
        Step::Lead(id, target)
    }

    fn lead(self: &Arc<Self>, id: u64, target: u64) -> Lead {
        let sync = self.sync.clone().expect("a lead needs a sync");
        Lead { durability: self.clone(), sync, id, target, done: false }
    }

    fn finish(&self, id: u64, outcome: Option<(u64, Result<(), StoreError>)>) {
        let mut st = self.state();
        st.running.retain(|(lead, _)| *lead != id);
        match outcome {
            Some((target, Ok(()))) => st.succeeded = st.succeeded.max(target),
            Some((_, Err(e))) => {
                if st.failed.is_none() {
                    tracing::error!(error = %e, "companion: the state store could not sync; the runtime is unhealthy and confirms nothing more until it restarts");
                }
                st.failed = Some(StoreError(format!("{e} (nothing is confirmed until the runtime restarts)")));
            }
            None => {}
        }
        st.settle();
        drop(st);
        self.cond.notify_all();
        self.synced.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Blocks until write `lsn` (and every earlier one) is durable, leading a sync if none runs.
    /// Never call it holding the engine's lock. Errors: the sync failed (CP-4-20).
    pub(crate) fn wait(self: &Arc<Self>, lsn: u64) -> Result<(), StoreError> {
        loop {
            match self.step(lsn) {
                Step::Done(r) => return r,
                Step::Lead(id, target) => self.lead(id, target).run(),
                Step::Wait => {
                    let st = self.state();
                    if !st.running.is_empty() && st.durable < lsn && st.failed.is_none() {
                        drop(self.cond.wait(st).unwrap_or_else(|e| e.into_inner()));
                    }
                }
            }
        }
    }

    /// [`Durability::wait`] for async callers: on a multi-threaded runtime the sync runs on the
    /// blocking pool, so that both workers keep serving while the disk syncs; on a
    /// current-thread runtime (tests, paused clock) it runs inline.
    pub(crate) async fn wait_async(self: &Arc<Self>, lsn: u64) -> Result<(), StoreError> {
        let mut synced = self.synced.subscribe();
        loop {
            match self.step(lsn) {
                Step::Done(r) => return r,
                Step::Lead(id, target) => {
                    let lead = self.lead(id, target);
                    let inline = !matches!(
                        tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()),
                        Ok(tokio::runtime::RuntimeFlavor::MultiThread)
                    );
                    if inline {
                        lead.run();
                    } else {
                        // If this future is dropped, the sync still finishes (or, never started,
                        // releases the lead) on its own.
                        let _ = tokio::task::spawn_blocking(move || lead.run()).await;
                    }
                }
                Step::Wait => {
                    // The sender lives in `self`: `changed` only returns after a sync ended.
                    let _ = synced.changed().await;
                }
            }
        }
    }
}
