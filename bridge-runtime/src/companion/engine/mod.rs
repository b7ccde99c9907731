//! [`Engine`]: the one dispatcher for the ten companion methods (CP-2-1). The socket server, the
//! MCP tools and host-internal triggers all call it (CP-1-5 … CP-1-7, CP-7-10): a method of the
//! protocol table + params JSON + the caller in, the method's result type (JSON on the wire) or
//! a coded error out. The entries and admission are in `entry`, the methods in `discovery` and
//! `requests`, the host's reports and settings in `host`.

mod discovery;
mod entry;
mod host;
mod requests;

pub use entry::EngineMethod;
pub(crate) use entry::{Admitted, Caller};

use super::clock::Clock;
use super::error::{CompanionError, ErrorCode};
use super::model::{ClientIdentity, RequestSnapshot, RequestState, TerminalReason};
use super::presenter::Presenter;
use super::protocol::Method;
use super::protocol::results::{
    CapabilityDescriptor, CapabilityPage, CharacterList, RuntimeDescription, StyleList, WaitResult,
};
use super::state::{Effect, Record, RuntimeSettings, State};
use super::store::{Durability, SqliteStore, Store, StoreError, Tombstone, TombstoneReason};
use crate::catalog::{CapabilitySpec, Catalog, CharacterSpec, FieldProblem, Scope};
use serde::Serialize;
use serde_json::Value;
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, Weak};
use tokio::sync::{Notify, mpsc, watch};

/// Minimum result retention of the first local profile: 24 h (CP-4-16).
pub const MIN_RESULT_RETENTION_MS: u64 = 24 * 60 * 60 * 1000;

/// Published limits and retention (CP-4-8, CP-4-16, CP-4-19, OQ-CP-7, OQ-CP-8). Every number is
/// returned by `runtime.describe` under `limits`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineConfig {
    /// Implementation name for `runtime.describe` (CP-2-2).
    pub implementation_name: String,
    /// Implementation version (CP-7-1: distinct from protocol and capability versions).
    pub implementation_version: String,
    /// Non-terminal requests one client may have (`maxActivePerClient`); beyond → `QUEUE_FULL`.
    pub max_active_per_client: usize,
    /// Non-terminal requests overall (`maxActiveTotal`); beyond → `QUEUE_FULL`.
    pub max_active_total: usize,
    /// Stored records, terminal ones included (`maxRecords`); beyond → `QUEUE_FULL`, never an
    /// early eviction of a valid result (CP-4-19).
    pub max_records: usize,
    /// Stored records one client may hold, terminal ones included (`maxRecordsPerClient`): its
    /// share of `max_records`, so that one client cannot fill the store and lock the others out
    /// for the retention period (CP-4-8); beyond → `QUEUE_FULL`, never an early eviction.
    /// Default 1,000 (a tenth of `max_records`); above `max_records` it is `max_records`.
    pub max_records_per_client: usize,
    /// Accepted creates per client per sliding minute (`maxCreatesPerMinute`); beyond →
    /// `RATE_LIMITED` with `retryAfterMs`.
    pub max_creates_per_minute: usize,
    /// `waitMs` when omitted, ms (`defaultWaitMs`).
    pub default_wait_ms: u64,
    /// Largest `waitMs`, ms (`maxWaitMs`); beyond → `INVALID_PARAMS`.
    pub max_wait_ms: u64,
    /// How long terminal records, results and idempotency keys are kept, ms; at least
    /// [`MIN_RESULT_RETENTION_MS`] (`resultRetentionMs`).
    pub result_retention_ms: u64,
    /// How long a deleted record's tombstone still yields `RESULT_EXPIRED`, ms.
    pub tombstone_retention_ms: u64,
    /// Presentation changes (show, update, hide) the engine may queue for the [`Presenter`]
    /// before the presenter takes them (`maxPendingPresentations`, CP-4-8): a presenter that
    /// stops drawing (a frozen UI thread) costs bounded memory. Past the bound, a
    /// `requests.update` that would change the view on screen is refused with `QUEUE_FULL`
    /// (`limit: "maxPendingPresentations"`, retryable) before anything is recorded, and the
    /// display slot is not handed to the next queued request (it stays `queued`, shown once the
    /// presenter catches up); taking a view down always has room. At least 2; default 64.
    pub max_pending_presentations: usize,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            implementation_name: "bridge-runtime".into(),
            implementation_version: env!("CARGO_PKG_VERSION").into(),
            max_active_per_client: 8,
            max_active_total: 64,
            max_records: 10_000,
            max_records_per_client: 1_000,
            max_creates_per_minute: 60,
            default_wait_ms: 30_000,
            max_wait_ms: 60_000,
            result_retention_ms: MIN_RESULT_RETENTION_MS,
            tombstone_retention_ms: 7 * MIN_RESULT_RETENTION_MS,
            max_pending_presentations: 64,
        }
    }
}

impl EngineConfig {
    /// The records one client may hold: `max_records_per_client`, at most `max_records`.
    pub(crate) fn records_share(&self) -> usize {
        self.max_records_per_client.min(self.max_records)
    }
}

/// Why the engine could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// `start` was called outside a tokio runtime.
    #[error("the companion engine must be started inside a tokio runtime")]
    NoRuntime,
    /// A configuration value is out of range.
    #[error("invalid engine configuration: {0}")]
    Config(String),
    /// The registry contradicts itself (dangling fallback, style or character references).
    #[error("invalid companion catalog: {0}")]
    Catalog(String),
    /// The store could not be read or the restart transitions could not be written.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A host report ([`Engine::displayed`], [`Engine::user_responded`], …) that was not applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// No such request.
    #[error("no request {0}")]
    NotFound(String),
    /// The request is not in a state the report applies to (e.g. it already ended: the click
    /// lost the race, CP-3-24).
    #[error("request is {}", .state.as_str())]
    WrongState {
        /// Its current state.
        state: RequestState,
    },
    /// The user's result does not fit the capability's `outputSchema` or result check.
    #[error("result rejected: {0:?}")]
    InvalidResult(Vec<FieldProblem>),
    /// The change could not be persisted, so it was not applied (CP-4-20).
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Builds and starts an [`Engine`].
#[must_use = "call .start() to get the Engine"]
pub struct EngineBuilder {
    catalog: Arc<RwLock<Catalog>>,
    config: EngineConfig,
    store: Option<Box<dyn Store>>,
    presenter: Option<Arc<dyn Presenter>>,
    clock: Option<Clock>,
    settings: RuntimeSettings,
}

impl EngineBuilder {
    /// Sets the configuration (default: [`EngineConfig::default`]).
    pub fn config(mut self, config: EngineConfig) -> Self {
        self.config = config;
        self
    }
    /// Sets the store (default: an in-memory [`SqliteStore`]).
    pub fn store(mut self, store: impl Store) -> Self {
        self.store = Some(Box::new(store));
        self
    }
    /// Sets the presenter (required).
    pub fn presenter(mut self, presenter: impl Presenter) -> Self {
        self.presenter = Some(Arc::new(presenter));
        self
    }
    /// Sets the clock (default: [`Clock::system`]).
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = Some(clock);
        self
    }
    /// Sets the initial user settings (default: visible, not paused, no reduced motion).
    pub fn settings(mut self, settings: RuntimeSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Checks configuration and catalog, loads the store, turns every unfinished request into
    /// `failed`/`runtime_restarted` without replaying it (CP-4-21), records unreadable records as
    /// unrecoverable (CP-4-23), and starts the timer and presenter tasks.
    ///
    /// Errors: [`EngineError`]; in particular a store that cannot be read or written.
    pub fn start(self) -> Result<Engine, EngineError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(EngineError::NoRuntime);
        }
        validate_config(&self.config)?;
        let presenter = self.presenter.ok_or_else(|| EngineError::Config("a presenter is required".into()))?;
        {
            let cat = self.catalog.read().unwrap_or_else(|e| e.into_inner());
            validate_catalog(&cat, &self.settings)?;
        }
        let mut store = match self.store {
            Some(s) => s,
            None => Box::new(SqliteStore::in_memory()?),
        };
        let clock = self.clock.unwrap_or_else(Clock::system);
        let now = clock.now_ms();

        let loaded = store.load()?;
        let mut unrecoverable: Vec<Tombstone> = loaded
            .unreadable
            .into_iter()
            .filter_map(|(id, client)| {
                client.map(|client_id| Tombstone {
                    request_id: id,
                    client_id,
                    reason: TombstoneReason::Unrecoverable,
                    at: now,
                })
            })
            .collect();
        let mut records = Vec::new();
        for row in loaded.requests {
            match serde_json::from_str::<Record>(&row.body) {
                Ok(rec) if rec.snapshot.request_id == row.request_id && rec.client_id == row.client_id => {
                    records.push(rec)
                }
                _ => unrecoverable.push(Tombstone {
                    request_id: row.request_id,
                    client_id: row.client_id,
                    reason: TombstoneReason::Unrecoverable,
                    at: now,
                }),
            }
        }
        if !unrecoverable.is_empty() {
            tracing::warn!(count = unrecoverable.len(), "companion: unreadable request records marked unrecoverable");
            store.bury(&unrecoverable)?;
        }
        let mut restarted = Vec::new();
        for rec in &mut records {
            if !rec.state().is_terminal() {
                rec.terminate(RequestState::Failed, Some(TerminalReason::RuntimeRestarted), None, now);
                restarted.push(rec.to_row()?);
            }
        }
        store.save(&restarted)?;
        // Everything loaded, and the restart's transitions, are durable before anything is
        // reported: records start at write number 0, which counts as durable.
        let sync = store.deferred_sync();
        if let Some(sync) = &sync {
            sync.sync()?;
        }
        let durability = Durability::new(sync);

        let (effects_tx, effects_rx) = mpsc::channel(self.config.max_pending_presentations);
        let mut state = State::new(store, durability.clone(), self.settings, effects_tx);
        for t in loaded.tombstones.into_iter().chain(unrecoverable) {
            state.add_tombstone(t);
        }
        for rec in records {
            state.adopt(rec);
        }

        let wake = Arc::new(Notify::new());
        let inner = Arc::new(Inner {
            catalog: self.catalog,
            config: self.config,
            clock,
            instance_id: format!("rt_{}", uuid::Uuid::new_v4().simple()),
            state: Mutex::new(state),
            durability,
            changes: watch::channel(0).0,
            wake: wake.clone(),
        });
        tokio::spawn(driver(Arc::downgrade(&inner), wake));
        tokio::spawn(presenter_task(Arc::downgrade(&inner), presenter, effects_rx));
        tracing::info!(runtime_instance_id = %inner.instance_id, "companion engine started");
        Ok(Engine { inner })
    }
}

struct Inner {
    catalog: Arc<RwLock<Catalog>>,
    config: EngineConfig,
    clock: Clock,
    instance_id: String,
    state: Mutex<State>,
    /// The same as the state's: waited on outside the lock.
    durability: Arc<Durability>,
    changes: watch::Sender<u64>,
    wake: Arc<Notify>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.wake.notify_one();
    }
}

impl Inner {
    fn catalog(&self) -> RwLockReadGuard<'_, Catalog> {
        self.catalog.read().unwrap_or_else(|e| e.into_inner())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn retention_ms(&self) -> i64 {
        i64::try_from(self.config.result_retention_ms).unwrap_or(i64::MAX)
    }

    fn tombstone_ms(&self) -> i64 {
        i64::try_from(self.config.tombstone_retention_ms).unwrap_or(i64::MAX)
    }

    /// Runs due transitions now; returns the next wake-up time.
    fn tick(&self) -> Option<i64> {
        let cat = self.catalog();
        let next = self.lock().tick(&cat, self.clock.now_ms(), self.retention_ms(), self.tombstone_ms());
        drop(cat);
        self.changed();
        next
    }

    /// Waits (outside the lock) until write `lsn` is durable, then returns `result`: what the
    /// engine reports about a record is durable first (CP-4-20, CP-3-11). A failed sync →
    /// `INTERNAL_ERROR`, nothing confirmed.
    async fn report<T>(&self, lsn: u64, result: Result<T, CompanionError>) -> Result<T, CompanionError> {
        match self.durability.wait_async(lsn).await {
            Ok(()) => result,
            Err(e) => {
                tracing::error!(error = %e, "companion: a change could not be made durable; not confirmed");
                Err(store_failed())
            }
        }
    }

    /// Wakes waiters and the timer task after a change.
    fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
        self.wake.notify_one();
    }
}

async fn driver(weak: Weak<Inner>, wake: Arc<Notify>) {
    loop {
        let sleep = {
            let Some(inner) = weak.upgrade() else { return };
            let cat = inner.catalog();
            let st_next = inner.lock().tick(&cat, inner.clock.now_ms(), inner.retention_ms(), inner.tombstone_ms());
            drop(cat);
            inner.changes.send_modify(|n| *n = n.wrapping_add(1));
            st_next.map(|t| inner.clock.until(t))
        };
        match sleep {
            Some(d) => {
                tokio::select! {
                    _ = tokio::time::sleep(d) => {}
                    _ = wake.notified() => {}
                }
            }
            None => wake.notified().await,
        }
    }
}

/// Hands the queued presentation changes to the presenter, in order. Once the presenter has
/// taken one, a display start the full queue held back is tried again (by the timer task).
async fn presenter_task(weak: Weak<Inner>, presenter: Arc<dyn Presenter>, mut rx: mpsc::Receiver<Effect>) {
    while let Some(effect) = rx.recv().await {
        let Some(inner) = weak.upgrade() else { return };
        let engine = Engine { inner };
        match effect {
            Effect::Show(p) => presenter.show(&p, &engine),
            Effect::Update(p) => presenter.update(&p, &engine),
            Effect::Hide(id, why) => presenter.hide(&id, why, &engine),
        }
        if std::mem::take(&mut engine.inner.lock().show_deferred) {
            engine.inner.wake.notify_one();
        }
    }
}

/// The companion request engine (CP §2–§4): discovery, request lifecycle, scheduler, store.
/// Cheap to clone; every clone is the same engine. Must run inside a tokio runtime.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

/// A non-owning handle to an [`Engine`] (for presenters, which the engine owns).
#[derive(Clone)]
pub struct WeakEngine(Weak<Inner>);

impl WeakEngine {
    /// The engine, if it still runs.
    pub fn upgrade(&self) -> Option<Engine> {
        self.0.upgrade().map(|inner| Engine { inner })
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("runtime_instance_id", &self.inner.instance_id).finish_non_exhaustive()
    }
}

impl Engine {
    /// Starts building an engine over the shared registry (the same [`Catalog`] every surface
    /// reads, CP-2-13, CP-7-10).
    pub fn builder(catalog: Arc<RwLock<Catalog>>) -> EngineBuilder {
        EngineBuilder {
            catalog,
            config: EngineConfig::default(),
            store: None,
            presenter: None,
            clock: None,
            settings: RuntimeSettings::default(),
        }
    }

    /// A non-owning handle.
    pub fn downgrade(&self) -> WeakEngine {
        WeakEngine(Arc::downgrade(&self.inner))
    }

    /// This run's `runtimeInstanceId` (new on every start).
    pub fn runtime_instance_id(&self) -> &str {
        &self.inner.instance_id
    }

    /// The engine's clock.
    pub fn clock(&self) -> &Clock {
        &self.inner.clock
    }

    /// The published limits.
    pub fn config(&self) -> &EngineConfig {
        &self.inner.config
    }

    /// The registry this engine reads (shared with the other surfaces, CP-2-13).
    pub fn catalog(&self) -> RwLockReadGuard<'_, Catalog> {
        self.inner.catalog()
    }
}

/// A method's typed result, as far as an answer that could not be encoded must still tell:
/// the request snapshot it carries, if any.
pub(crate) trait Outcome: Serialize {
    /// The request the result reports on.
    fn snapshot(&self) -> Option<&RequestSnapshot> {
        None
    }
}

impl Outcome for RequestSnapshot {
    fn snapshot(&self) -> Option<&RequestSnapshot> {
        Some(self)
    }
}

impl Outcome for WaitResult {
    fn snapshot(&self) -> Option<&RequestSnapshot> {
        match self {
            WaitResult::Changed(s) => Some(s),
            WaitResult::Unchanged(_) => None,
        }
    }
}

impl Outcome for RuntimeDescription {}
impl Outcome for CharacterList {}
impl Outcome for CapabilityPage {}
impl Outcome for CapabilityDescriptor {}
impl Outcome for StyleList {}

/// A method's typed result as its wire JSON (see [`encoded`]).
fn wire<T: Outcome>(method: Method, result: Result<T, CompanionError>) -> Result<Value, CompanionError> {
    encoded(method, &result?, |v| serde_json::to_value(v))
}

/// `value`, the result of `method` that already ran, encoded by `encode`.
///
/// An answer that cannot be encoded is never reported as if the call had not run. The protocol's
/// result model (CP-3-8, CP-3-11, CP-4-20) makes the request's record the truth, already durable
/// when a result exists: so a call that changes a request (`requests.create`, `update`,
/// `cancel`) and cannot be answered gets `INTERNAL_ERROR` with `retryable: false` (repeating a
/// create without an idempotency key would accept it twice), a message saying that it took
/// effect, and `data.requestId`, `data.state`, `data.revision` naming the request's record, which
/// a get of the request reads. A call that changes nothing (discovery, `get`, `wait`) gets
/// `INTERNAL_ERROR`, retryable, saying that nothing changed.
pub(crate) fn encoded<T: Outcome>(
    method: Method,
    value: &T,
    encode: impl FnOnce(&T) -> Result<Value, serde_json::Error>,
) -> Result<Value, CompanionError> {
    let err = match encode(value) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    let writes = matches!(method, Method::RequestsCreate | Method::RequestsUpdate | Method::RequestsCancel);
    Err(match value.snapshot().filter(|_| writes) {
        Some(s) => {
            tracing::error!(error = %err, method = %method, request_id = %s.request_id, "companion: a call took effect, but its result could not be encoded");
            CompanionError::new(
                ErrorCode::InternalError,
                format!(
                    "{method} took effect and is not undone: request {} is now {} at revision {}, but the \
                     result could not be encoded. Read it with {}; do not repeat the call",
                    s.request_id,
                    s.state.as_str(),
                    s.revision,
                    Method::RequestsGet,
                ),
            )
            .with("retryable", false)
            .with("requestId", s.request_id.as_str())
            .with("state", s.state.as_str())
            .with("revision", s.revision)
        }
        None => {
            tracing::error!(error = %err, method = %method, "companion: a result could not be encoded");
            CompanionError::new(ErrorCode::InternalError, "The result could not be encoded; nothing was changed")
        }
    })
}

fn owned<'a>(st: &'a State, client: &ClientIdentity, id: &str) -> Result<&'a Record, CompanionError> {
    match st.records.get(id) {
        Some(rec) if rec.client_id == client.id => Ok(rec),
        Some(_) => Err(CompanionError::request_not_found()),
        None => match st.tombstones.get(id) {
            Some(t) if t.client_id == client.id => Err(CompanionError::new(
                ErrorCode::ResultExpired,
                match t.reason {
                    TombstoneReason::RetentionExpired => "The request's record is past its retention period",
                    TombstoneReason::Unrecoverable => "The request's record could not be recovered",
                },
            )),
            _ => Err(CompanionError::request_not_found()),
        },
    }
}

/// `FORBIDDEN` for a client lacking some of `needed` (`requiredScopes`, `missingScopes`).
pub(crate) fn forbidden(needed: &[Scope], client: &ClientIdentity) -> CompanionError {
    let missing: Vec<&str> = needed.iter().filter(|s| !client.has(**s)).map(|s| s.as_str()).collect();
    CompanionError::new(ErrorCode::Forbidden, format!("Missing scope: {}", missing.join(", ")))
        .with("requiredScopes", needed.iter().map(|s| s.as_str()).collect::<Vec<_>>())
        .with("missingScopes", missing)
}

fn check_scopes(client: &ClientIdentity, cap: &CapabilitySpec) -> Result<(), CompanionError> {
    if cap.required_scopes().iter().all(|s| client.has(*s)) {
        Ok(())
    } else {
        Err(forbidden(cap.required_scopes(), client))
    }
}

fn unsupported_capability(id: &str) -> CompanionError {
    CompanionError::new(
        ErrorCode::UnsupportedCapability,
        format!("Unknown capability `{}`; see capabilities.list", crate::model::quote::clip(id)),
    )
}

fn store_failed() -> CompanionError {
    CompanionError::new(ErrorCode::InternalError, "The change could not be recorded and was not applied")
}

fn prefixed(prefix: &str, problems: Vec<FieldProblem>) -> Vec<FieldProblem> {
    problems.into_iter().map(|p| FieldProblem { path: format!("{prefix}{}", p.path), message: p.message }).collect()
}

fn current_character<'a>(cat: &'a Catalog, settings: &RuntimeSettings) -> Option<&'a Arc<CharacterSpec>> {
    settings.current_character.as_deref().and_then(|id| cat.character(id)).or_else(|| cat.characters().first())
}

fn validate_config(c: &EngineConfig) -> Result<(), EngineError> {
    let bad = |m: &str| Err(EngineError::Config(m.to_owned()));
    if c.result_retention_ms < MIN_RESULT_RETENTION_MS {
        return bad("result_retention_ms must be at least 24 hours (CP-4-16)");
    }
    if c.max_active_per_client == 0
        || c.max_active_total == 0
        || c.max_records == 0
        || c.max_records_per_client == 0
        || c.max_creates_per_minute == 0
    {
        return bad("capacity limits must be positive");
    }
    if c.max_active_per_client > c.max_active_total || c.max_active_total > c.max_records {
        return bad("limits must satisfy max_active_per_client <= max_active_total <= max_records");
    }
    if c.max_active_per_client > c.records_share() {
        return bad("limits must satisfy max_active_per_client <= max_records_per_client");
    }
    if c.max_pending_presentations < 2 {
        return bad("max_pending_presentations must be at least 2 (a view shown and its removal)");
    }
    if c.max_wait_ms == 0 || c.default_wait_ms > c.max_wait_ms {
        return bad("wait limits must satisfy 0 < default_wait_ms <= max_wait_ms");
    }
    Ok(())
}

/// Cross-entry checks of the companion registry (the builder checked each entry alone).
fn validate_catalog(cat: &Catalog, settings: &RuntimeSettings) -> Result<(), EngineError> {
    let mut problems = Vec::new();
    for cap in cat.capabilities() {
        if let Some(fb) = cap.fallback() {
            match cat.capability(&fb.capability) {
                None => problems.push(format!("`{}` falls back to unknown `{}`", cap.id(), fb.capability)),
                Some(t) if t.interaction() != cap.interaction() => problems.push(format!(
                    "`{}` falls back to `{}`, which has another interaction type (CP-2-30)",
                    cap.id(),
                    fb.capability
                )),
                Some(_) => {}
            }
        }
    }
    for ch in cat.characters() {
        for id in &ch.capabilities {
            if cat.capability(id).is_none() {
                problems.push(format!("character `{}` lists unknown capability `{id}`", ch.id));
            }
        }
    }
    for s in cat.styles() {
        for id in &s.capabilities {
            if cat.capability(id).is_none() {
                problems.push(format!("style `{}` lists unknown capability `{id}`", s.id));
            }
        }
        if let Some(fb) = &s.fallback
            && cat.style(fb).is_none()
        {
            problems.push(format!("style `{}` falls back to unknown style `{fb}`", s.id));
        }
    }
    if let Some(id) = &settings.current_character
        && cat.character(id).is_none()
    {
        problems.push(format!("current character `{id}` is not registered"));
    }
    if problems.is_empty() { Ok(()) } else { Err(EngineError::Catalog(problems.join("; "))) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::ser::Error as _;

    fn snapshot() -> RequestSnapshot {
        RequestSnapshot {
            request_id: "req_0123456789abcdef0123456789abcdef".into(),
            runtime_instance_id: "rt_1".into(),
            capability: "notice.show".into(),
            character: "robot".into(),
            task_id: None,
            state: RequestState::Queued,
            revision: 1,
            created_at: 0,
            deadline_at: 30_000,
            displayed_at: None,
            resolved_capability: "notice.show".into(),
            resolved_style: None,
            fallback_reason: None,
            terminal_reason: None,
            result: None,
        }
    }

    fn unencodable<T>(_: &T) -> Result<Value, serde_json::Error> {
        Err(serde_json::Error::custom("a value beyond JSON"))
    }

    // CP-4-20, CP-3-11, CP-6-16: a call that took effect and whose result cannot be encoded is
    // never answered as if it had not run: not retryable, says it took effect, names the
    // request to read instead. (Before: `INTERNAL_ERROR` "The result could not be encoded",
    // retryable, no request id: a client repeated the create and it was accepted twice.)
    #[test]
    fn a_change_whose_result_cannot_be_encoded_says_it_took_effect() {
        let s = snapshot();
        for method in [Method::RequestsCreate, Method::RequestsUpdate, Method::RequestsCancel] {
            let e = encoded(method, &s, unencodable).unwrap_err();
            assert_eq!(e.code, ErrorCode::InternalError, "{method}");
            assert!(!e.retryable(), "{method}: repeating it would apply it twice");
            let data = e.data();
            assert_eq!(data["retryable"], false);
            assert_eq!(data["requestId"], s.request_id.as_str());
            assert_eq!(data["state"], "queued");
            assert_eq!(data["revision"], 1);
            assert!(e.message.contains("took effect"), "{}", e.message);
            assert!(e.message.contains(Method::RequestsGet.as_str()), "{}", e.message);
            assert_eq!(e.to_jsonrpc()["data"]["retryable"], false);
        }
        // Reads changed nothing: retryable, and they say so.
        for method in [Method::RequestsGet, Method::RequestsWait] {
            let e = encoded(method, &s, unencodable).unwrap_err();
            assert!(e.retryable(), "{method}");
            assert!(e.message.contains("nothing was changed"), "{}", e.message);
        }
        // The real encoder, on the same value, is what every method answers.
        let ok = encoded(Method::RequestsCreate, &s, |v| serde_json::to_value(v)).unwrap();
        assert_eq!(ok["requestId"], s.request_id.as_str());
    }
}
