//! Local identity and authorisation (CP §5): pairing, keys, connection authentication and
//! revocation. The authentication profile CP-5-8 asks for:
//!
//! 1. **Off by default (CP-5-1).** A fresh runtime knows no client: every method except
//!    `runtime.describe` and `pairing.request` answers `UNAUTHENTICATED`.
//! 2. **Pairing (CP-5-2, CP-5-11).** A client calls `pairing.request {"name": string 1..64
//!    chars, no control characters, "scopes": [scope, ...]}` (scopes from `discover`, `animate`,
//!    `notify`, `interact`). The runtime hands the request to the host's [`PairingApprover`],
//!    which asks the user (self-reported name, requested scopes, the peer's process id) — nothing
//!    is ever approved from the name alone. The name must differ from every paired client's
//!    name and label once invisible characters and case are set aside (`Clau\u{200b}de` and
//!    `CLAUDE` are `Claude`), else `INVALID_PARAMS` on `/name` without asking the user: two
//!    clients the user cannot tell apart never both hold keys (the refusal tells a peer that a
//!    client of that name is paired, which any process of this user could read from the
//!    credential file anyway, CP-5-14). Who may put a prompt in front of the user, checked in
//!    this order, each refusal `RATE_LIMITED` saying why in `data.limit` with `retryAfterMs`:
//!    the user denied this client recently (`pairingBackoff`, [`AuthConfig::pairing_backoff`]:
//!    per client name, invisible characters and case aside, and peer user id, growing with each
//!    denial in a row), another pairing is waiting for the user (`pendingPairings`: one at a
//!    time), or the cap on prompts per interval that did not end in a pairing is reached
//!    (`pairingPrompts`, [`AuthConfig::max_pairing_prompts`], whoever asks: the backstop against
//!    a peer that keeps changing its name). A denial → `FORBIDDEN`; no decision within
//!    [`AuthConfig::pairing_timeout`] → `FORBIDDEN` too, but no denial. A request whose
//!    connection closes is withdrawn ([`PairingReply::is_withdrawn`], [`PairingReply::on_closed`]):
//!    it can no longer be approved, the host takes it off the screen, and it counts as no denial.
//!    On approval the runtime generates a client id (`cl_` + 32 hex digits) and a key
//!    (`ck_` + 64 hex digits: 256 bits from the OS CSPRNG, CP-5-3), stores only the key's SHA-256
//!    with the name, the label the user confirmed (the source label shown with every request,
//!    CP-4-7) and the granted scopes (CP-5-4), and returns `{"clientId", "key", "scopes",
//!    "label"}` exactly once.
//! 3. **Authentication (connection level).** The first call on a connection that needs an
//!    identity must be preceded by `session.authenticate {"clientId": string ≤ 64, "key":
//!    string ≤ 128}` → `{"clientId", "label", "scopes"}`. The key is compared by digest in
//!    constant time (subtle); an unknown client and a wrong key give the same `UNAUTHENTICATED`.
//!    Before authentication, messages are limited in size and time (CP-5-13; see
//!    [`super::server::ServerConfig`]). Credentials are never logged or echoed.
//! 4. **Scopes (CP-5-6, CP-5-7).** The engine checks scopes per method and capability
//!    (`FORBIDDEN` with `requiredScopes`); ownership applies whatever the scopes.
//! 5. **Revocation (CP-4-22).** [`Auth::revoke`] records the revocation, deletes the
//!    verification material, tells every live connection of that client why and closes it, and
//!    tells the engine, which cancels the client's open requests (`cancelled`/`key_revoked`) and
//!    purges their content.
//!
//! Limits (CP-5-14): socket permissions and keys separate integrators from each other; they are
//! no protection against code already running as the same user.

use super::engine::Engine;
use super::error::{CompanionError, ErrorCode};
use super::model::ClientIdentity;
use super::protocol::Method;
use super::protocol::results::Pairing;
use super::store::StoreError;
use crate::catalog::{FieldProblem, Scope};
use crate::model::quote::{clip, default_ignorable};
use rusqlite::{Connection, params};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use subtle::ConstantTimeEq;
use tokio::sync::{Semaphore, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Longest pairing `name` and label, in characters.
pub(crate) const MAX_NAME_CHARS: usize = 64;

/// The method that asks the user to pair a new client.
pub(crate) const PAIRING_METHOD: &str = Method::PairingRequest.as_str();
/// Longest `clientId` accepted by `session.authenticate`, in bytes.
pub(crate) const MAX_CLIENT_ID_BYTES: usize = 64;
/// Longest `key` accepted by `session.authenticate`, in bytes (issued keys have 67).
pub(crate) const MAX_KEY_BYTES: usize = 128;

/// Authentication settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthConfig {
    /// How long a `pairing.request` waits for the user's decision before it fails with
    /// `FORBIDDEN` (default 120 s).
    pub pairing_timeout: Duration,
    /// How long after the user *denied* a pairing the same client's next `pairing.request` is
    /// refused with `RATE_LIMITED` (`limit: "pairingBackoff"`, `retryAfterMs`) without asking
    /// the user. The same client: the same name, invisible characters and case aside, from the
    /// same peer user id; other clients are not held back. It doubles with each further denial
    /// of that client in a row, up to 64 times this, and starts again after an approval or
    /// after 64 times this without a denial. A pairing withdrawn by its requester (the
    /// connection closed) or not answered in time is no denial. Default 5 s; zero turns it off.
    pub pairing_backoff: Duration,
    /// At most this many pairing prompts that did not end in a pairing (denied, withdrawn,
    /// unanswered, or still open) are put in front of the user within
    /// [`pairing_prompt_window`](Self::pairing_prompt_window), whoever asks; more requests are
    /// refused with `RATE_LIMITED` (`limit: "pairingPrompts"`, `retryAfterMs`) without asking
    /// the user. An approved prompt gives its place back. The backstop against a peer that
    /// connects and withdraws under ever new names. Default 5; zero turns the cap off.
    pub max_pairing_prompts: u32,
    /// The interval [`max_pairing_prompts`](Self::max_pairing_prompts) counts over (a sliding
    /// window). Default 60 s.
    pub pairing_prompt_window: Duration,
}

/// How many times [`AuthConfig::pairing_backoff`] the backoff grows at most.
const MAX_BACKOFF_FACTOR: u32 = 64;

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            pairing_timeout: Duration::from_secs(120),
            pairing_backoff: Duration::from_secs(5),
            max_pairing_prompts: 5,
            pairing_prompt_window: Duration::from_secs(60),
        }
    }
}

/// What the user is asked to approve (CP-5-11). Everything here except `peer_pid` is
/// self-reported by the client: show it as such, as plain text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairingRequest {
    /// The name the client gave (1..=64 characters, no control characters), as given: it may
    /// hold invisible characters. Show it with [`PairingRequest::shown_name`].
    pub name: String,
    /// The scopes it asks for.
    pub scopes: BTreeSet<Scope>,
    /// The connecting process id, from the socket's peer credentials, when known.
    pub peer_pid: Option<i32>,
}

impl PairingRequest {
    /// [`PairingRequest::name`] as a person should see it: control characters, zero-width and
    /// other default-ignorable code points (bidi controls, tag characters, …) written as
    /// visible escapes (`Clau\u{200b}de`, [`crate::model::escape_invisible`]), so a name can
    /// neither pass for another nor reorder the prompt around it.
    pub fn shown_name(&self) -> String {
        crate::model::escape_invisible(&self.name).into_owned()
    }
}

/// The user's decision on a [`PairingRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairingDecision {
    /// Pair the client with `scopes` (intersected with the requested ones: never more than asked)
    /// and `label`, the source label shown with its requests (CP-4-7); `None` = the name.
    Approve {
        /// Granted scopes.
        scopes: BTreeSet<Scope>,
        /// The source label the user confirmed.
        label: Option<String>,
    },
    /// Refuse: the client gets `FORBIDDEN`.
    Deny,
}

/// The answer channel for one pairing request. Dropping it without answering denies.
#[derive(Debug)]
pub struct PairingReply {
    tx: oneshot::Sender<PairingDecision>,
    /// Cancelled when the request can no longer be answered.
    closed: CancellationToken,
}

impl PairingReply {
    /// Answers with `decision`. Returns false if nobody waits any more (the request timed out
    /// or the client went away): nothing was paired.
    pub fn send(self, decision: PairingDecision) -> bool {
        self.tx.send(decision).is_ok()
    }

    /// Approves with every requested scope and the client's name as label.
    pub fn approve_as_requested(self, request: &PairingRequest) -> bool {
        self.send(PairingDecision::Approve { scopes: request.scopes.clone(), label: None })
    }

    /// Denies.
    pub fn deny(self) -> bool {
        self.send(PairingDecision::Deny)
    }

    /// Whether nobody waits for the answer any more: the requesting connection closed, or the
    /// request timed out. The host then withdraws its prompt.
    pub fn is_withdrawn(&self) -> bool {
        self.tx.is_closed()
    }

    /// Completes when nobody waits for the answer any more ([`PairingReply::is_withdrawn`]):
    /// a host that shows the prompt asynchronously closes it then.
    pub async fn withdrawn(&mut self) {
        self.tx.closed().await
    }

    /// A future, independent of this reply (the reply can be stored or answered meanwhile),
    /// that completes once the request can no longer be answered: its requester went away, it
    /// timed out, or it was answered. A host that keeps prompts on screen awaits it to take a
    /// withdrawn prompt off at once, rather than at the user's next action.
    pub fn on_closed(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        self.closed.clone().cancelled_owned()
    }
}

/// Implemented by the host app: asks the user to confirm a pairing (CP-5-11). Never approve
/// automatically from the self-reported name.
pub trait PairingApprover: Send + Sync + 'static {
    /// Shows `request` to the user and answers through `reply`, now or later, from any thread.
    /// Runs on a blocking-capable thread, so it may block (e.g. read the terminal).
    fn review(&self, request: PairingRequest, reply: PairingReply);
}

/// Shared approvers (the host keeps its own `Arc`).
impl<A: PairingApprover + ?Sized> PairingApprover for Arc<A> {
    fn review(&self, request: PairingRequest, reply: PairingReply) {
        (**self).review(request, reply)
    }
}

/// A paired client as the host lists it (no secrets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairedClient {
    /// `cl_` + 32 hex digits.
    pub client_id: String,
    /// The self-reported name from the pairing request.
    pub name: String,
    /// The source label the user confirmed (CP-4-7).
    pub label: String,
    /// Granted scopes.
    pub scopes: BTreeSet<Scope>,
    /// Pairing time, ms since the Unix epoch.
    pub created_at: i64,
}

/// Persistent verification material: one row per paired client in table `companion_clients`
/// (`client_id`, `name`, `label`, `scopes` JSON, `key_sha256` 32-byte blob, `created_at`), never
/// the key (CP-5-4), and one row per revoked client id in `companion_revocations` (`client_id`,
/// `at`), which keeps a revoked client refused even if its row could not be deleted. It may
/// share the engine's database file.
pub struct CredentialStore {
    conn: Connection,
}

impl std::fmt::Debug for CredentialStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CredentialStore").finish_non_exhaustive()
    }
}

impl CredentialStore {
    /// Opens (creating if needed) the database at `path` and makes the file `0600`; keep it in
    /// a private directory.
    /// Errors: the file cannot be opened or is not a database.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let store = Self::init(Connection::open(path)?)?;
        // Digests only, but no reason for anyone else to read them.
        if let Ok(md) = std::fs::symlink_metadata(path)
            && md.is_file()
            && md.permissions().mode() & 0o077 != 0
        {
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
        }
        Ok(store)
    }

    /// An in-memory store: pairings last as long as the process (tests).
    pub fn in_memory() -> Result<Self, StoreError> {
        Self::init(Connection::open_in_memory()?)
    }

    fn init(conn: Connection) -> Result<Self, StoreError> {
        conn.busy_timeout(Duration::from_secs(5))?;
        // A revoked client's digest is zeroed, not left in a free page.
        conn.pragma_update(None, "secure_delete", "ON")?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS companion_clients (
                 client_id TEXT PRIMARY KEY NOT NULL,
                 name TEXT NOT NULL,
                 label TEXT NOT NULL,
                 scopes TEXT NOT NULL,
                 key_sha256 BLOB NOT NULL,
                 created_at INTEGER NOT NULL
             );
             CREATE TABLE IF NOT EXISTS companion_revocations (
                 client_id TEXT PRIMARY KEY NOT NULL,
                 at INTEGER NOT NULL
             );",
        )?;
        // Revocations whose delete failed last time: finish them (a failure here changes
        // nothing, `load` skips revoked clients anyway).
        let _ = conn.execute(
            "DELETE FROM companion_clients WHERE client_id IN (SELECT client_id FROM companion_revocations)",
            [],
        );
        Ok(Self { conn })
    }

    fn load(&self) -> Result<Vec<(PairedClient, [u8; 32])>, StoreError> {
        // A client with a revocation record stays revoked, even if its row could not be deleted.
        let mut stmt = self.conn.prepare(
            "SELECT client_id, name, label, scopes, key_sha256, created_at FROM companion_clients
             WHERE client_id NOT IN (SELECT client_id FROM companion_revocations)",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, Vec<u8>>(4)?,
                r.get::<_, i64>(5)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let Ok((client_id, name, label, scopes, digest, created_at)) = row else { continue };
            // A row that cannot be read grants nothing.
            let Ok(digest) = <[u8; 32]>::try_from(digest.as_slice()) else { continue };
            let Ok(scopes) = serde_json::from_str::<BTreeSet<Scope>>(&scopes) else { continue };
            out.push((PairedClient { client_id, name, label, scopes, created_at }, digest));
        }
        Ok(out)
    }

    fn insert(&self, client: &PairedClient, digest: &[u8; 32]) -> Result<(), StoreError> {
        let scopes = serde_json::to_string(&client.scopes).map_err(|e| StoreError(e.to_string()))?;
        self.conn.execute(
            "INSERT INTO companion_clients (client_id, name, label, scopes, key_sha256, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![client.client_id, client.name, client.label, scopes, digest.as_slice(), client.created_at],
        )?;
        Ok(())
    }

    /// Revokes `client_id` durably: first a revocation record (committed and synced on its own,
    /// so the key is refused at every later start even if the delete below fails), then the
    /// delete of the verification material, then a checkpoint that leaves no copy of it in the
    /// log. Errors: neither the record nor the delete could be written (the key would work again
    /// after a restart).
    fn revoke(&self, client_id: &str) -> Result<(), StoreError> {
        let recorded = self
            .conn
            .execute(
                "INSERT OR REPLACE INTO companion_revocations (client_id, at) VALUES (?1, ?2)",
                params![client_id, now_ms()],
            )
            .map_err(StoreError::from);
        let deleted = self
            .conn
            .execute("DELETE FROM companion_clients WHERE client_id = ?1", params![client_id])
            .map_err(StoreError::from);
        if deleted.is_ok() {
            // The log may be shared with the engine's store (same file) and be busy: best effort.
            let _ = self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
        match (recorded, deleted) {
            (Err(r), Err(d)) => Err(StoreError(format!("{r}; {d}"))),
            (Err(e), Ok(_)) | (Ok(_), Err(e)) => {
                tracing::warn!(client_id = %client_id, error = %e, "companion: revocation recorded only in part; it holds across restarts");
                Ok(())
            }
            (Ok(_), Ok(_)) => Ok(()),
        }
    }
}

/// The authentication layer: paired clients, pairing, key checks, revocation. Cheap to clone;
/// every clone is the same.
#[derive(Clone)]
pub struct Auth {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth").finish_non_exhaustive()
    }
}

struct Inner {
    store: Mutex<CredentialStore>,
    state: Mutex<State>,
    approver: Arc<dyn PairingApprover>,
    config: AuthConfig,
    pairing: Semaphore,
    pacing: Mutex<Pacing>,
}

/// Who asks to pair, for the backoff: the client's name folded ([`fold_name`]) and the peer's
/// user id (`None` in process).
type Requester = (String, Option<u32>);

/// What decides whether a pairing request may put a prompt in front of the user.
#[derive(Default)]
struct Pacing {
    /// The user's recent denials, per requester.
    denials: HashMap<Requester, Denials>,
    /// When each prompt within the last [`AuthConfig::pairing_prompt_window`] that did not end
    /// in a pairing was shown.
    prompts: VecDeque<Instant>,
}

/// One requester's denials in a row.
struct Denials {
    in_a_row: u32,
    /// No prompt for this requester before this.
    until: Instant,
    /// Forgotten after this (a quiet period of [`MAX_BACKOFF_FACTOR`] backoffs).
    forget: Instant,
}

/// `now + d`, or, past what the clock can represent (a configured `Duration::MAX`), a point
/// about a century away: never a panic.
fn later(now: Instant, d: Duration) -> Instant {
    now.checked_add(d).or_else(|| now.checked_add(Duration::from_secs(100 * 365 * 86_400))).unwrap_or(now)
}

fn retry_after(left: Duration) -> u64 {
    u64::try_from(left.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl Pacing {
    /// `RATE_LIMITED` (`pairingBackoff`) while the user's last denial of `who` holds.
    fn backoff(&mut self, who: &Requester, shown: &str, now: Instant) -> Result<(), CompanionError> {
        self.denials.retain(|_, d| d.forget > now);
        match self.denials.get(who).and_then(|d| d.until.checked_duration_since(now)) {
            Some(left) if !left.is_zero() => Err(CompanionError::new(
                ErrorCode::RateLimited,
                format!(
                    "The user denied a pairing of \"{}\" recently; ask again in {} s at the earliest",
                    clip(shown),
                    left.as_secs().max(1)
                ),
            )
            .with("limit", "pairingBackoff")
            .with("retryAfterMs", retry_after(left))),
            _ => Ok(()),
        }
    }

    /// Takes a place among the prompts of the window (returned, for [`Pacing::approved`]), or
    /// `RATE_LIMITED` (`pairingPrompts`).
    fn prompt(&mut self, config: &AuthConfig, now: Instant) -> Result<Instant, CompanionError> {
        if config.max_pairing_prompts == 0 {
            return Ok(now);
        }
        let window = config.pairing_prompt_window;
        while self.prompts.front().is_some_and(|t| now.saturating_duration_since(*t) >= window) {
            self.prompts.pop_front();
        }
        if self.prompts.len() >= config.max_pairing_prompts as usize
            && let Some(oldest) = self.prompts.front()
        {
            let left = later(*oldest, window).saturating_duration_since(now);
            return Err(CompanionError::new(
                ErrorCode::RateLimited,
                format!(
                    "Too many pairing prompts: {} were shown to the user in the last {} s, the most allowed; ask \
                     again in {} s at the earliest",
                    self.prompts.len(),
                    window.as_secs(),
                    left.as_secs().max(1)
                ),
            )
            .with("limit", "pairingPrompts")
            .with("retryAfterMs", retry_after(left)));
        }
        self.prompts.push_back(now);
        Ok(now)
    }

    /// The user approved `who`, prompted at `shown`: its denials are forgotten and the prompt
    /// gives its place back.
    fn approved(&mut self, who: &Requester, shown: Instant) {
        self.denials.remove(who);
        if let Some(i) = self.prompts.iter().rposition(|t| *t == shown) {
            self.prompts.remove(i);
        }
    }

    /// The user denied `who`: its backoff starts or doubles.
    fn denied(&mut self, who: Requester, config: &AuthConfig, now: Instant) {
        let base = config.pairing_backoff;
        if base.is_zero() {
            return;
        }
        let d = self.denials.entry(who).or_insert(Denials { in_a_row: 0, until: now, forget: now });
        d.in_a_row = d.in_a_row.saturating_add(1);
        let factor = 1u32 << d.in_a_row.saturating_sub(1).min(MAX_BACKOFF_FACTOR.trailing_zeros());
        d.until = later(now, base.saturating_mul(factor));
        d.forget = later(d.until, base.saturating_mul(MAX_BACKOFF_FACTOR));
    }
}

/// Ends the prompt when the pairing ends, however it ends (answered, timed out, or dropped
/// because its connection closed): [`PairingReply::on_closed`] completes.
struct CloseOnDrop(CancellationToken);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

#[derive(Default)]
struct State {
    clients: HashMap<String, (PairedClient, [u8; 32])>,
    /// Live authenticated connections per client id, closed on revocation.
    connections: HashMap<String, HashMap<u64, CancellationToken>>,
}

/// Removes a connection from the revocation registry when it ends.
pub(crate) struct Registration {
    inner: Arc<Inner>,
    client_id: String,
    conn_id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut st = lock(&self.inner.state);
        if let Some(conns) = st.connections.get_mut(&self.client_id) {
            conns.remove(&self.conn_id);
            if conns.is_empty() {
                st.connections.remove(&self.client_id);
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn unauthenticated() -> CompanionError {
    CompanionError::new(ErrorCode::Unauthenticated, "Unknown client or wrong key")
}

fn invalid(message: &str, path: &str, problem: &str) -> CompanionError {
    CompanionError::invalid_params(message.to_owned(), vec![FieldProblem::new(path, problem)])
}

fn digest(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

fn random_hex(bytes: usize) -> Result<String, CompanionError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|_| {
        tracing::error!("companion: the system random source failed");
        CompanionError::new(ErrorCode::InternalError, "Could not generate credentials")
    })?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// A name as compared for sameness: default-ignorable code points (zero-width characters, bidi
/// controls, tag characters, …) and control characters removed, surrounding white space
/// trimmed, lower-cased. `Clau\u{200b}de`, ` CLAUDE` and `Claude` fold alike.
fn fold_name(s: &str) -> String {
    let visible: String = s.chars().filter(|c| !default_ignorable(*c) && !c.is_control()).collect();
    visible.trim().to_lowercase()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// A plain, printable name: 1..=64 characters, no control characters, not blank.
fn clean_name(s: &str) -> bool {
    let n = s.chars().count();
    (1..=MAX_NAME_CHARS).contains(&n) && !s.chars().any(char::is_control) && !s.trim().is_empty()
}

impl Auth {
    /// Loads the paired clients from `store`. `approver` is asked to confirm every pairing.
    /// Errors: the store cannot be read.
    pub fn new(store: CredentialStore, approver: impl PairingApprover, config: AuthConfig) -> Result<Self, StoreError> {
        let clients = store.load()?.into_iter().map(|(c, d)| (c.client_id.clone(), (c, d))).collect();
        Ok(Self {
            inner: Arc::new(Inner {
                store: Mutex::new(store),
                state: Mutex::new(State { clients, connections: HashMap::new() }),
                approver: Arc::new(approver),
                config,
                pairing: Semaphore::new(1),
                pacing: Mutex::new(Pacing::default()),
            }),
        })
    }

    /// The settings.
    pub fn config(&self) -> &AuthConfig {
        &self.inner.config
    }

    /// Every paired client, by id.
    pub fn clients(&self) -> Vec<PairedClient> {
        let mut v: Vec<PairedClient> = lock(&self.inner.state).clients.values().map(|(c, _)| c.clone()).collect();
        v.sort_by(|a, b| a.client_id.cmp(&b.client_id));
        v
    }

    /// Checks a client id and key (CP-5-4: digest compared in constant time). Returns the
    /// identity the engine works with (CP-3-4: never taken from request params). Errors:
    /// `UNAUTHENTICATED`, the same for an unknown client and a wrong key.
    pub fn authenticate(&self, client_id: &str, key: &str) -> Result<ClientIdentity, CompanionError> {
        let st = lock(&self.inner.state);
        Self::check(&st, client_id, key)
    }

    fn check(st: &State, client_id: &str, key: &str) -> Result<ClientIdentity, CompanionError> {
        let offered = digest(key);
        match st.clients.get(client_id) {
            Some((client, stored)) if bool::from(offered.ct_eq(stored)) => {
                Ok(ClientIdentity::external(&client.client_id, &client.label, client.scopes.iter().copied()))
            }
            Some(_) => Err(unauthenticated()),
            None => {
                // Same work as a known id, so timing does not tell which ids exist.
                let _ = offered.ct_eq(&[0u8; 32]);
                Err(unauthenticated())
            }
        }
    }

    /// Authenticates and registers the connection `conn_id` for revocation in one step, so a
    /// concurrent revocation either refuses it or closes it.
    pub(crate) fn authenticate_connection(
        &self,
        client_id: &str,
        key: &str,
        conn_id: u64,
        kill: CancellationToken,
    ) -> Result<(ClientIdentity, Registration), CompanionError> {
        let mut st = lock(&self.inner.state);
        let identity = Self::check(&st, client_id, key)?;
        st.connections.entry(identity.id.clone()).or_default().insert(conn_id, kill);
        Ok((identity.clone(), Registration { inner: self.inner.clone(), client_id: identity.id, conn_id }))
    }

    /// `pairing.request` (see the module docs): validates `params`, asks the approver, and on
    /// approval stores the new client and returns `{"clientId", "key", "scopes", "label"}`.
    /// Errors: `INVALID_PARAMS` (shape, name, unknown scope, a name already paired),
    /// `RATE_LIMITED` with `data.limit` saying why (`pairingBackoff`: the user denied this
    /// client recently; `pendingPairings`: another pairing is waiting for the user;
    /// `pairingPrompts`: too many prompts lately, [`AuthConfig`]), `FORBIDDEN` (denied, not
    /// answered in time, or nothing granted), `INTERNAL_ERROR` (random source or store failure;
    /// nothing is paired).
    ///
    /// Dropping the future withdraws the request (the connection closed): the approver's
    /// [`PairingReply`] reports [`PairingReply::is_withdrawn`] and can no longer pair anyone.
    pub async fn pair(&self, params: Value, peer_pid: Option<i32>) -> Result<Pairing, CompanionError> {
        self.pair_from(params, peer_pid, None).await
    }

    /// [`Auth::pair`] for a peer whose user id is known (the socket's peer credentials): the
    /// backoff after a denial is kept per name and user id.
    pub(crate) async fn pair_from(
        &self,
        params: Value,
        peer_pid: Option<i32>,
        peer_uid: Option<u32>,
    ) -> Result<Pairing, CompanionError> {
        let (name, scopes) = parse_pairing(&params)?;
        self.name_free(&lock(&self.inner.state), &name)?;
        let who: Requester = (fold_name(&name), peer_uid);
        lock(&self.inner.pacing).backoff(&who, &name, Instant::now())?;
        let Ok(_turn) = self.inner.pairing.try_acquire() else {
            return Err(CompanionError::new(
                ErrorCode::RateLimited,
                "Another pairing request is waiting for the user's decision; ask again once it is decided",
            )
            .with("limit", "pendingPairings")
            .with("retryAfterMs", self.inner.config.pairing_timeout.as_millis() as u64));
        };
        let shown = lock(&self.inner.pacing).prompt(&self.inner.config, Instant::now())?;
        let closed = CancellationToken::new();
        let _close = CloseOnDrop(closed.clone());
        let request = PairingRequest { name: name.clone(), scopes: scopes.clone(), peer_pid };
        let (tx, rx) = oneshot::channel();
        let approver = self.inner.approver.clone();
        let reply = PairingReply { tx, closed };
        // The approver may block (a terminal prompt); keep it off the async workers.
        tokio::task::spawn_blocking(move || approver.review(request, reply));
        let decision = tokio::time::timeout(self.inner.config.pairing_timeout, rx).await;
        let denied = || {
            tracing::info!("companion: pairing denied by the user");
            lock(&self.inner.pacing).denied(who.clone(), &self.inner.config, Instant::now());
        };
        let (granted, label) = match decision {
            Ok(Ok(PairingDecision::Approve { scopes: granted, label })) => (granted, label),
            // An approver that dropped the reply unanswered denied it.
            Ok(Ok(PairingDecision::Deny)) | Ok(Err(_)) => {
                denied();
                return Err(CompanionError::new(ErrorCode::Forbidden, "The user denied the pairing"));
            }
            Err(_) => {
                tracing::info!("companion: pairing request not answered in time");
                return Err(CompanionError::new(ErrorCode::Forbidden, "The pairing was not approved in time")
                    .with("timeoutMs", self.inner.config.pairing_timeout.as_millis() as u64));
            }
        };
        let granted: BTreeSet<Scope> = granted.intersection(&scopes).copied().collect();
        if granted.is_empty() {
            denied();
            return Err(CompanionError::new(ErrorCode::Forbidden, "The user granted none of the requested scopes"));
        }
        lock(&self.inner.pacing).approved(&who, shown);
        let label = label.filter(|l| clean_name(l)).unwrap_or(name.clone());
        let client_id = format!("cl_{}", random_hex(16)?);
        let key = format!("ck_{}", random_hex(32)?);
        let client = PairedClient { client_id: client_id.clone(), name, label, scopes: granted, created_at: now_ms() };
        let key_digest = digest(&key);
        // Checked and inserted under one lock: a client paired meanwhile by the host cannot
        // share the name.
        let mut st = lock(&self.inner.state);
        self.name_free(&st, &client.name)?;
        self.name_free(&st, &client.label)?;
        lock(&self.inner.store).insert(&client, &key_digest).map_err(|e| {
            tracing::error!(error = %e, "companion: could not store a new pairing; nothing was paired");
            CompanionError::new(ErrorCode::InternalError, "The pairing could not be recorded")
        })?;
        let result = Pairing {
            client_id: client.client_id.clone(),
            key,
            scopes: client.scopes.iter().copied().collect(),
            label: client.label.clone(),
        };
        tracing::info!(client_id = %client.client_id, "companion: client paired");
        st.clients.insert(client_id, (client, key_digest));
        Ok(result)
    }

    /// `INVALID_PARAMS` on `/name` when `name` folds ([`fold_name`]) to a paired client's name
    /// or label.
    fn name_free(&self, st: &State, name: &str) -> Result<(), CompanionError> {
        let folded = fold_name(name);
        if st.clients.values().any(|(c, _)| fold_name(&c.name) == folded || fold_name(&c.label) == folded) {
            return Err(CompanionError::invalid_params(
                format!(
                    "A client named \"{}\" is already paired (names are compared without invisible characters and \
                     case); pick another name, or have the user revoke the old pairing first",
                    clip(name)
                ),
                vec![FieldProblem::new("/name", "already paired under this name")],
            ));
        }
        Ok(())
    }

    /// Revokes `client_id` (CP-4-22): records the revocation durably and deletes its
    /// verification material, closes its live connections, and tells `engine`
    /// ([`Engine::client_revoked`]: open requests end `cancelled`/`key_revoked`, content
    /// purged). `Ok` only once the revocation holds across restarts (a revocation record is
    /// written before the delete, so a failed delete still refuses the key at the next start).
    /// The key stops working in this process at once whatever happens; if neither the record
    /// nor the delete could be written, the store error is returned and logged as an error: the
    /// key would work again after a restart (call again to retry). Returns whether the client
    /// was paired.
    pub fn revoke(&self, engine: &Engine, client_id: &str) -> Result<bool, StoreError> {
        let (known, connections) = {
            let mut st = lock(&self.inner.state);
            let known = st.clients.remove(client_id).is_some();
            (known, st.connections.remove(client_id).unwrap_or_default())
        };
        for token in connections.values() {
            token.cancel();
        }
        engine.client_revoked(client_id);
        tracing::info!(client_id = %client_id, closed = connections.len(), "companion: client revoked");
        lock(&self.inner.store).revoke(client_id).inspect_err(|e| {
            tracing::error!(client_id = %client_id, error = %e, "companion: the revocation could not be recorded; the key is refused until the app restarts, not after");
        })?;
        Ok(known)
    }
}

/// `pairing.request` params `{"name", "scopes"}` as the name and the set of scopes asked for
/// (CP-5-2, CP-5-11). Errors: `INVALID_PARAMS` with `problems`.
pub(super) fn parse_pairing(params: &Value) -> Result<(String, BTreeSet<Scope>), CompanionError> {
    let Some(obj) = params.as_object() else {
        return Err(invalid(&format!("{PAIRING_METHOD} takes {{\"name\", \"scopes\"}}"), "", "expected an object"));
    };
    if let Some(k) = obj.keys().find(|k| *k != "name" && *k != "scopes") {
        return Err(invalid("Unknown pairing parameter", &format!("/{}", clip(k)), "not allowed"));
    }
    let name = match obj.get("name") {
        Some(Value::String(n)) if clean_name(n) => n.clone(),
        Some(Value::String(_)) => {
            return Err(invalid(
                "The name must be 1..64 printable characters",
                "/name",
                "1..64 characters, no control characters",
            ));
        }
        _ => return Err(invalid(&format!("{PAIRING_METHOD} needs a name"), "/name", "required string")),
    };
    let Some(Value::Array(list)) = obj.get("scopes") else {
        return Err(invalid(&format!("{PAIRING_METHOD} needs scopes"), "/scopes", "required array of scopes"));
    };
    if list.is_empty() || list.len() > 16 {
        return Err(invalid("Ask for at least one scope", "/scopes", "1..16 items"));
    }
    let mut scopes = BTreeSet::new();
    let mut problems = Vec::new();
    for (i, s) in list.iter().enumerate() {
        match Scope::ALL.iter().find(|x| Some(x.as_str()) == s.as_str()) {
            Some(scope) => {
                scopes.insert(*scope);
            }
            None => problems.push(FieldProblem::new(
                format!("/scopes/{i}"),
                "unknown scope; one of discover, animate, notify, interact",
            )),
        }
    }
    if !problems.is_empty() {
        return Err(CompanionError::invalid_params("Unknown scope", problems));
    }
    Ok((name, scopes))
}

#[cfg(test)]
mod tests {
    use super::*;

    // CP-5-11, CP-4-7: names compare without invisible characters, controls, surrounding space
    // and case; other names stay apart.
    #[test]
    fn names_fold_alike_when_a_person_could_not_tell_them_apart() {
        let claude = fold_name("Claude");
        for same in ["Clau\u{200B}de", " CLAUDE ", "\u{2066}Claude\u{2069}", "Cl\u{E0041}aude", "Claude\u{FEFF}"] {
            assert_eq!(fold_name(same), claude, "{same:?}");
        }
        assert_ne!(fold_name("Claude 2"), claude);
    }

    // Bad configuration never panics: a backoff or window of `Duration::MAX` holds the requester
    // back (a century) instead of overflowing the clock.
    #[test]
    fn huge_durations_do_not_overflow() {
        let config = AuthConfig {
            pairing_backoff: Duration::MAX,
            max_pairing_prompts: 1,
            pairing_prompt_window: Duration::MAX,
            ..AuthConfig::default()
        };
        let mut p = Pacing::default();
        let now = Instant::now();
        let who: Requester = (fold_name("x"), Some(1));
        for _ in 0..10 {
            p.denied(who.clone(), &config, now);
        }
        let e = p.backoff(&who, "x", now).unwrap_err();
        assert_eq!(e.details["limit"], "pairingBackoff");
        assert!(p.backoff(&(fold_name("y"), Some(1)), "y", now).is_ok(), "another client is not held back");
        assert!(p.prompt(&config, now).is_ok());
        assert_eq!(p.prompt(&config, now).unwrap_err().details["limit"], "pairingPrompts");
    }
}
