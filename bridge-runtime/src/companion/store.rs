//! Persistence of request records (CP-4-16 … CP-4-23): a small [`Store`] trait the engine writes
//! through before it confirms anything, and its SQLite implementation ([`SqliteStore`], rusqlite
//! with bundled SQLite; in memory for tests, a file for apps).
//!
//! The engine serializes each request record to `body` (JSON); the store keeps a few columns
//! beside it for lookups. Retention-expired or unreadable records leave a tombstone
//! `(requestId, clientId)` so that their owner is told `RESULT_EXPIRED` rather than a fake
//! success or a bare `NOT_FOUND` (CP-4-23, OQ-CP-10).

use rusqlite::{Connection, params};
use std::path::Path;

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

/// Durable storage of request records. Every method is atomic: it either applies completely or
/// returns an error and changes nothing.
pub trait Store: Send + 'static {
    /// Reads everything.
    fn load(&mut self) -> Result<Loaded, StoreError>;
    /// Inserts or replaces `rows` in one transaction.
    fn save(&mut self, rows: &[StoredRequest]) -> Result<(), StoreError>;
    /// Deletes the request rows named by `tombstones` and records the tombstones, in one
    /// transaction.
    fn bury(&mut self, tombstones: &[Tombstone]) -> Result<(), StoreError>;
    /// Deletes tombstones buried before `cutoff_ms`.
    fn forget_tombstones_before(&mut self, cutoff_ms: i64) -> Result<(), StoreError>;
}

/// [`Store`] on SQLite (rusqlite, bundled).
pub struct SqliteStore {
    conn: Connection,
    /// The lock on `PATH.lock` that makes this the file's only store; released on drop.
    _lock: Option<std::fs::File>,
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
    /// lock on `PATH.lock`, until the store is dropped: one runtime per data directory (issue
    /// #10 item 7). A second runtime would otherwise fail the first one's live requests as
    /// `runtime_restarted` and both would write the same revisions. (Other connections to the
    /// file, e.g. a [`CredentialStore`](super::CredentialStore) on the same database, are
    /// unaffected.) The parent directory should be private to the user (CP-5-12).
    /// The file is made private (mode 0600): it holds interaction content and answers.
    ///
    /// Errors: the file is in use by another store (another runtime, or another store in this
    /// process), it cannot be opened, is not a database, or has a newer schema.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let lock = hold_exclusively(path)?;
        let mut store = Self::init(Connection::open(path)?)?;
        store._lock = Some(lock);
        #[cfg(unix)]
        super::unix::make_owner_only(path);
        Ok(store)
    }

    /// A private in-memory database (tests, or apps that keep nothing across restarts).
    pub fn in_memory() -> Result<Self, StoreError> {
        Self::init(Connection::open_in_memory()?)
    }

    fn init(conn: Connection) -> Result<Self, StoreError> {
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
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
        Ok(Self { conn, _lock: None })
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
}
