//! The engine's mutable state: request records, the display slot and the scheduler. Every
//! change is written to the [`Store`] first and applied in memory only when the write succeeded
//! (CP-4-20), all under the engine's one lock, so exactly one transition wins any race (CP-3-24).
//!
//! Each write gets a number ([`Durability`]); a record remembers the number of the write that
//! made its current version ([`Record::lsn`]), and the engine reports a record's state only once
//! that write is durable (group commit: the sync runs outside the lock, shared by every request
//! waiting on it). Timers are indexed by due time, so a tick costs O(log n) plus the work that
//! is due, however many records are retained.

use super::model::{Presentation, RequestSnapshot, RequestState, Source, TerminalReason};
use super::presenter::HideReason;
use super::store::{Durability, Store, StoreError, StoredRequest, Tombstone, TombstoneReason};
use crate::catalog::{CapabilityKind, Catalog, Completion, FallbackReason, QueueMode, Scope};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use tokio::sync::mpsc;

/// How long a failed timer-driven write waits before it is retried, ms.
pub(crate) const RETRY_MS: i64 = 1_000;

/// User-controlled runtime settings (CP-4-15, CP-7-8 "accessibility/reduced motion").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeSettings {
    /// Whether the sprite is visible. Hidden: every request is rejected with
    /// `RUNTIME_UNAVAILABLE` and accepted ones end `cancelled`/`runtime_unavailable`.
    pub visible: bool,
    /// Whether external interaction is paused: like hidden, for external clients only.
    pub external_paused: bool,
    /// The user prefers reduced motion: animations take their declared `reduced_motion`
    /// fallback (if the caller allowed it) or are rejected with `UNSUPPORTED_CAPABILITY`;
    /// animations accepted earlier but still queued get the same treatment when they reach the
    /// display slot, or end `cancelled`/`reduced_motion`.
    pub reduced_motion: bool,
    /// The user's current character (`None` = the first registered one).
    pub current_character: Option<String>,
}

impl Default for RuntimeSettings {
    fn default() -> Self {
        Self { visible: true, external_paused: false, reduced_motion: false, current_character: None }
    }
}

/// A presenter call, queued in order for the presenter task.
#[derive(Debug)]
pub(crate) enum Effect {
    Show(Presentation),
    Update(Presentation),
    Hide(String, HideReason),
}

/// One request as the engine keeps and persists it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Record {
    pub snapshot: RequestSnapshot,
    pub client_id: String,
    pub client_label: String,
    pub internal: bool,
    /// Params as the caller sent them (for the requested capability); purged on revocation.
    pub params: Option<Value>,
    /// Params for the resolved capability; purged on revocation.
    pub resolved_params: Option<Value>,
    pub idempotency_key: Option<String>,
    /// SHA-256 of the canonical JSON of the create params (OQ-CP-16).
    pub canonical: Option<String>,
    /// When a `displayed` completion is due.
    pub display_until: Option<i64>,
    pub terminal_at: Option<i64>,
    /// Acceptance order.
    pub seq: u64,
    /// The caller set `allowFallback` (CP-2-29): a reduced-motion downgrade decided later, when
    /// the request reaches the display slot, may use the declared fallback.
    #[serde(default)]
    pub allow_fallback: bool,
    /// The client's scopes at acceptance: a later fallback needs them just as a create does.
    #[serde(default)]
    pub scopes: BTreeSet<Scope>,
    /// The number of the store write that recorded this version (not persisted: whatever was
    /// loaded at start is durable, 0).
    #[serde(skip)]
    pub lsn: u64,
}

impl Record {
    pub(super) fn id(&self) -> &str {
        &self.snapshot.request_id
    }

    pub(super) fn state(&self) -> RequestState {
        self.snapshot.state
    }

    pub(super) fn to_row(&self) -> Result<StoredRequest, StoreError> {
        Ok(StoredRequest {
            request_id: self.snapshot.request_id.clone(),
            client_id: self.client_id.clone(),
            idempotency_key: self.idempotency_key.clone(),
            terminal_at: self.terminal_at,
            body: serde_json::to_string(self).map_err(|e| StoreError(e.to_string()))?,
        })
    }

    /// Ends the request: state, reason, result; one revision bump.
    pub(super) fn terminate(
        &mut self,
        state: RequestState,
        reason: Option<TerminalReason>,
        result: Option<Value>,
        now: i64,
    ) {
        debug_assert!(state.is_terminal());
        self.snapshot.state = state;
        self.snapshot.terminal_reason = reason;
        self.snapshot.result = result;
        self.snapshot.revision += 1;
        self.terminal_at = Some(now);
        self.display_until = None;
    }

    pub(super) fn presentation(&self) -> Presentation {
        Presentation {
            request_id: self.snapshot.request_id.clone(),
            revision: self.snapshot.revision,
            capability: self.snapshot.resolved_capability.clone(),
            character: self.snapshot.character.clone(),
            style: self.snapshot.resolved_style.clone(),
            params: self.resolved_params.clone().unwrap_or(Value::Object(Map::new())),
            source: Source {
                client_id: self.client_id.clone(),
                label: self.client_label.clone(),
                internal: self.internal,
            },
        }
    }
}

/// `{}`: the result of a completed request without business output.
pub(crate) fn empty_result() -> Value {
    Value::Object(Map::new())
}

pub(crate) struct State {
    pub store: Box<dyn Store>,
    /// Which writes are durable.
    pub durability: Arc<Durability>,
    /// The number of the last write that buried records (a `RESULT_EXPIRED` is reported only
    /// once it is durable).
    pub tomb_lsn: u64,
    pub records: HashMap<String, Record>,
    /// Stored records per client id, terminal ones included (its share of `maxRecords`).
    records_per_client: HashMap<String, usize>,
    /// Non-terminal requests by acceptance order.
    pub live: BTreeMap<u64, String>,
    pub idempotency: HashMap<(String, String), String>,
    pub tombstones: HashMap<String, Tombstone>,
    /// The request holding the display slot.
    pub slot: Option<String>,
    pub next_seq: u64,
    grants: u64,
    last_grant: HashMap<String, u64>,
    /// Accepted-create times per client within the last minute.
    pub creates: HashMap<String, VecDeque<i64>>,
    pub settings: RuntimeSettings,
    pub revoked: HashSet<String>,
    /// When a failed timer-driven write is retried.
    pub retry_at: Option<i64>,
    /// Set when a setting or a revocation may cancel live requests or purge records: the next
    /// tick checks every live request (and, after a revocation, every record) once.
    pub policy_dirty: bool,
    /// Live requests by deadline: `(deadlineAt, seq)`.
    deadlines: BTreeSet<(i64, u64)>,
    /// Live requests by display end: `(display_until, seq)`.
    display_ends: BTreeSet<(i64, u64)>,
    /// Ended records by end time, for retention: `(terminal_at, requestId)`.
    ended: BTreeSet<(i64, String)>,
    /// Tombstones by burial time: `(at, requestId)`.
    buried: BTreeSet<(i64, String)>,
    /// The presenter's queue, bounded by `maxPendingPresentations`. Only this state sends on
    /// it, under the engine's lock, so its free room only grows behind the lock's back.
    effects: mpsc::Sender<Effect>,
    /// The display slot was free but the presenter's queue had no room to show the next request:
    /// the presenter task wakes the timer task once it has taken a change.
    pub show_deferred: bool,
}

impl State {
    pub(super) fn new(
        store: Box<dyn Store>,
        durability: Arc<Durability>,
        settings: RuntimeSettings,
        effects: mpsc::Sender<Effect>,
    ) -> Self {
        Self {
            store,
            durability,
            tomb_lsn: 0,
            records: HashMap::new(),
            records_per_client: HashMap::new(),
            live: BTreeMap::new(),
            idempotency: HashMap::new(),
            tombstones: HashMap::new(),
            slot: None,
            next_seq: 1,
            grants: 0,
            last_grant: HashMap::new(),
            creates: HashMap::new(),
            settings,
            revoked: HashSet::new(),
            retry_at: None,
            policy_dirty: true,
            deadlines: BTreeSet::new(),
            display_ends: BTreeSet::new(),
            ended: BTreeSet::new(),
            buried: BTreeSet::new(),
            effects,
            show_deferred: false,
        }
    }

    /// Adds the timer entries of `rec`.
    fn index(&mut self, rec: &Record) {
        if let Some(t) = rec.terminal_at {
            self.ended.insert((t, rec.id().to_owned()));
        }
        if !rec.state().is_terminal() {
            self.deadlines.insert((rec.snapshot.deadline_at, rec.seq));
            if let Some(t) = rec.display_until {
                self.display_ends.insert((t, rec.seq));
            }
        }
    }

    /// Removes the timer entries of the stored version of request `id`, if any.
    fn unindex(&mut self, id: &str) {
        let Some(old) = self.records.get(id) else { return };
        let (deadline, seq, display, ended) = (old.snapshot.deadline_at, old.seq, old.display_until, old.terminal_at);
        self.deadlines.remove(&(deadline, seq));
        if let Some(t) = display {
            self.display_ends.remove(&(t, seq));
        }
        if let Some(t) = ended {
            self.ended.remove(&(t, id.to_owned()));
        }
    }

    /// Adds a tombstone (startup, burial).
    pub(super) fn add_tombstone(&mut self, t: Tombstone) {
        if let Some(old) = self.tombstones.remove(&t.request_id) {
            self.buried.remove(&(old.at, old.request_id));
        }
        self.buried.insert((t.at, t.request_id.clone()));
        self.tombstones.insert(t.request_id.clone(), t);
    }

    /// The durability number a report about request `id` must wait for: its record's last
    /// write, or the last burial if it has none.
    pub(super) fn lsn_of(&self, id: &str) -> u64 {
        self.records.get(id).map_or(self.tomb_lsn, |r| r.lsn)
    }

    /// Refuses writes after a failed sync (see [`Durability`]).
    fn writable(&self) -> Result<(), StoreError> {
        self.durability.failure().map_or(Ok(()), Err)
    }

    /// Adds a record read from the store (startup), indexes included.
    pub(super) fn adopt(&mut self, rec: Record) {
        self.next_seq = self.next_seq.max(rec.seq + 1);
        self.index(&rec);
        if let Some(key) = &rec.idempotency_key {
            self.idempotency.insert((rec.client_id.clone(), key.clone()), rec.id().to_owned());
        }
        if !rec.state().is_terminal() {
            self.live.insert(rec.seq, rec.id().to_owned());
        }
        self.insert_record(rec);
    }

    /// After content was removed: the store leaves no copy of it ([`Store::purged`]).
    fn purged(&mut self) {
        if let Err(e) = self.store.purged() {
            tracing::warn!(error = %e, "companion: removed content may stay in the store's log until the next purge");
        }
    }

    /// Stores `rec` in memory, counting it against its client's share when it is new.
    fn insert_record(&mut self, rec: Record) {
        let client = rec.client_id.clone();
        if self.records.insert(rec.id().to_owned(), rec).is_none() {
            *self.records_per_client.entry(client).or_default() += 1;
        }
    }

    /// Removes request `id` from memory (after its burial), and from its client's count.
    fn remove_record(&mut self, id: &str) -> Option<Record> {
        let rec = self.records.remove(id)?;
        if let Some(n) = self.records_per_client.get_mut(&rec.client_id) {
            *n -= 1;
            if *n == 0 {
                self.records_per_client.remove(&rec.client_id);
            }
        }
        Some(rec)
    }

    /// Stored records of `client_id`, terminal ones included.
    pub(super) fn records_of(&self, client_id: &str) -> usize {
        self.records_per_client.get(client_id).copied().unwrap_or(0)
    }

    /// Writes `batch` to the store, then applies it in memory; on error nothing changes.
    pub(super) fn commit(&mut self, batch: Vec<Record>) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        self.writable()?;
        let rows = batch.iter().map(Record::to_row).collect::<Result<Vec<_>, _>>()?;
        self.store.save(&rows)?;
        let lsn = self.durability.wrote();
        for mut rec in batch {
            rec.lsn = lsn;
            self.unindex(rec.id());
            self.index(&rec);
            if !rec.state().is_terminal()
                && (self.revoked.contains(&rec.client_id)
                    || !self.settings.visible
                    || (self.settings.external_paused && !rec.internal))
            {
                // Accepted in a race with a setting or a revocation: the next tick cancels it.
                self.policy_dirty = true;
            }
            if rec.state().is_terminal() {
                self.live.remove(&rec.seq);
                if self.slot.as_deref() == Some(rec.id()) {
                    self.slot = None;
                    let why = HideReason { state: rec.state(), reason: rec.snapshot.terminal_reason };
                    self.emit(Effect::Hide(rec.id().to_owned(), why));
                }
            } else {
                self.live.insert(rec.seq, rec.id().to_owned());
            }
            if let Some(key) = &rec.idempotency_key {
                self.idempotency.insert((rec.client_id.clone(), key.clone()), rec.id().to_owned());
            }
            self.insert_record(rec);
        }
        Ok(())
    }

    /// Whether a change that puts something on screen (a show, or an update of the view shown)
    /// may be queued for the presenter: it needs room for itself and for the removal of the view
    /// shown, which is queued without asking. Every show and update asks first and keeps one
    /// place free, and there is at most one view on screen, so a removal always has room: a
    /// request never ends with its view left standing.
    pub(super) fn room_to_present(&self) -> bool {
        self.effects.capacity() >= 2
    }

    /// Queues a presenter call. Shows and updates have asked [`State::room_to_present`] first,
    /// and removals always have room; a send error only means the engine is shutting down.
    pub(super) fn emit(&self, effect: Effect) {
        if let Err(mpsc::error::TrySendError::Full(_)) = self.effects.try_send(effect) {
            tracing::error!("companion: the presenter's queue had no room for a change; it was dropped");
        }
    }

    pub(super) fn live_records(&self) -> impl Iterator<Item = &Record> {
        self.live.values().filter_map(|id| self.records.get(id))
    }

    pub(super) fn active_for(&self, client_id: &str) -> usize {
        self.live_records().filter(|r| r.client_id == client_id).count()
    }

    /// The oldest still-queued evictable request of `client_id` (CP-4-10); never an interaction
    /// (CP-4-11).
    pub(super) fn oldest_evictable(&self, client_id: &str, catalog: &Catalog) -> Option<String> {
        self.live_records()
            .filter(|r| r.client_id == client_id && r.state() == RequestState::Queued)
            .find(|r| {
                catalog.capability(&r.snapshot.resolved_capability).is_some_and(|c| {
                    c.queue_policy().mode == QueueMode::Evictable && c.kind() != CapabilityKind::Interaction
                })
            })
            .map(|r| r.id().to_owned())
    }

    /// Gives the free display slot to the next queued request: round robin across clients (the
    /// client served least recently first), FIFO within a client (CP-4-12).
    ///
    /// Reduced motion (CP-2-29, CP-4-15): a request whose resolved capability is an animation is
    /// never shown while reduced motion is on. It switches to its declared `reduced_motion`
    /// fallback if the caller allowed fallbacks (same rules as `requests.create`), persisted in the
    /// same write as the display start; otherwise it ends `cancelled`/`reduced_motion` and the
    /// next request is considered. A failed write shows nothing and is retried.
    pub(super) fn schedule(&mut self, catalog: &Catalog, now: i64) {
        loop {
            if self.slot.is_some() || !self.settings.visible {
                return;
            }
            if !self.room_to_present() {
                // The presenter is behind (`maxPendingPresentations`): nothing is shown until it
                // catches up; queued requests stay queued, their deadlines still run.
                self.show_deferred = true;
                return;
            }
            let paused = self.settings.external_paused;
            let next = self
                .live_records()
                .filter(|r| {
                    r.state() == RequestState::Queued && (r.internal || !paused) && !self.revoked.contains(&r.client_id)
                })
                .min_by_key(|r| (self.last_grant.get(&r.client_id).copied().unwrap_or(0), r.seq))
                .cloned();
            let Some(mut rec) = next else { return };
            let animation = catalog
                .capability(&rec.snapshot.resolved_capability)
                .is_some_and(|c| c.kind() == CapabilityKind::Animation);
            if self.settings.reduced_motion && animation {
                match super::fallback::reduced_motion_downgrade(
                    catalog,
                    &rec.snapshot,
                    rec.resolved_params.as_ref(),
                    rec.allow_fallback,
                    &rec.scopes,
                ) {
                    Some(down) => {
                        rec.snapshot.resolved_capability = down.capability;
                        rec.snapshot.resolved_style = down.style;
                        rec.snapshot.fallback_reason = Some(FallbackReason::ReducedMotion);
                        rec.resolved_params = Some(down.params);
                        rec.snapshot.revision += 1;
                    }
                    None => {
                        rec.terminate(RequestState::Cancelled, Some(TerminalReason::ReducedMotion), None, now);
                        let id = rec.id().to_owned();
                        if let Err(e) = self.commit(vec![rec]) {
                            tracing::warn!(error = %e, "companion: could not record a reduced-motion cancel; will retry");
                            self.retry_at = Some(now + RETRY_MS);
                            return;
                        }
                        tracing::debug!(request_id = %id, "companion: queued animation cancelled for reduced motion");
                        continue;
                    }
                }
            }
            rec.snapshot.state = RequestState::Running;
            rec.snapshot.revision += 1;
            let presentation = rec.presentation();
            let client = rec.client_id.clone();
            let id = rec.id().to_owned();
            match self.commit(vec![rec]) {
                Ok(()) => {
                    self.slot = Some(id);
                    self.grants += 1;
                    self.last_grant.insert(client, self.grants);
                    self.emit(Effect::Show(presentation));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "companion: could not record a display start; will retry");
                    self.retry_at = Some(now + RETRY_MS);
                }
            }
            return;
        }
    }

    /// Applies every time- and policy-driven transition due at `now`: hidden/paused runtime and
    /// revoked keys cancel (CP-4-15, CP-4-22), display durations complete, deadlines expire
    /// (CP-3-17), retention buries (CP-4-16); then schedules. Returns when it next needs to run.
    pub(super) fn tick(
        &mut self,
        catalog: &Catalog,
        now: i64,
        retention_ms: i64,
        tombstone_retention_ms: i64,
    ) -> Option<i64> {
        if self.retry_at.is_some_and(|t| t <= now) {
            self.retry_at = None;
        }
        // Which live requests may have a transition due: those whose deadline or display end
        // has come (the indexes), or every live one when a setting or a revocation changed.
        let policy = std::mem::take(&mut self.policy_dirty);
        let due: Vec<u64> = if policy {
            self.live.keys().copied().collect()
        } else {
            let mut due: BTreeSet<u64> = BTreeSet::new();
            due.extend(self.deadlines.range(..=(now, u64::MAX)).map(|(_, seq)| *seq));
            due.extend(self.display_ends.range(..=(now, u64::MAX)).map(|(_, seq)| *seq));
            due.into_iter().collect()
        };
        let mut batch = Vec::new();
        for seq in due {
            let Some(rec) = self.live.get(&seq).and_then(|id| self.records.get(id)) else { continue };
            let policy_cancel = if self.revoked.contains(&rec.client_id) {
                Some(TerminalReason::KeyRevoked)
            } else if !self.settings.visible || (self.settings.external_paused && !rec.internal) {
                Some(TerminalReason::RuntimeUnavailable)
            } else {
                None
            };
            let deadline = rec.snapshot.deadline_at;
            let display_due = rec.display_until.filter(|t| *t <= now && *t <= deadline);
            if policy_cancel.is_none() && display_due.is_none() && deadline > now {
                continue;
            }
            let mut rec = rec.clone();
            if let Some(reason) = policy_cancel {
                rec.terminate(RequestState::Cancelled, Some(reason), None, now);
            } else if display_due.is_some() {
                rec.terminate(RequestState::Completed, None, Some(empty_result()), now);
            } else {
                rec.terminate(RequestState::Expired, Some(TerminalReason::Timeout), None, now);
            }
            batch.push(rec);
        }
        // A revoked key's business results and params are purged (CP-4-22): every record is
        // looked at once, after the revocation.
        if policy && !self.revoked.is_empty() {
            for rec in self.records.values() {
                if self.revoked.contains(&rec.client_id)
                    && rec.state().is_terminal()
                    && (rec.params.is_some() || rec.resolved_params.is_some() || rec.snapshot.result.is_some())
                    && !batch.iter().any(|b: &Record| b.id() == rec.id())
                {
                    batch.push(rec.clone());
                }
            }
        }
        let mut purge = false;
        for rec in &mut batch {
            if self.revoked.contains(&rec.client_id) {
                rec.params = None;
                rec.resolved_params = None;
                rec.snapshot.result = None;
                purge = true;
            }
        }
        match self.commit(batch) {
            Ok(()) if purge => self.purged(),
            Ok(()) => {}
            Err(e) => {
                tracing::warn!(error = %e, "companion: could not record timer transitions; will retry");
                self.retry_at = Some(now + RETRY_MS);
                self.policy_dirty |= policy;
            }
        }

        // Retention (CP-4-16): terminal records older than the retention period are deleted,
        // leaving a tombstone so that their owner gets RESULT_EXPIRED (CP-6-19).
        let expired: Vec<Tombstone> = self
            .ended
            .iter()
            .take_while(|(t, _)| t.saturating_add(retention_ms) <= now)
            .filter_map(|(_, id)| self.records.get(id))
            .map(|r| Tombstone {
                request_id: r.id().to_owned(),
                client_id: r.client_id.clone(),
                reason: TombstoneReason::RetentionExpired,
                at: now,
            })
            .collect();
        if !expired.is_empty() {
            match self.writable().and_then(|()| self.store.bury(&expired)) {
                Ok(()) => {
                    self.tomb_lsn = self.durability.wrote();
                    for t in expired {
                        self.unindex(&t.request_id);
                        if let Some(rec) = self.remove_record(&t.request_id)
                            && let Some(key) = rec.idempotency_key
                        {
                            self.idempotency.remove(&(rec.client_id, key));
                        }
                        self.add_tombstone(t);
                    }
                    self.purged();
                }
                Err(e) => {
                    tracing::warn!(error = %e, "companion: could not delete expired records; will retry");
                    self.retry_at = Some(now + RETRY_MS);
                }
            }
        }
        let tomb_cutoff = now.saturating_sub(tombstone_retention_ms);
        if self.buried.first().is_some_and(|(at, _)| *at < tomb_cutoff) {
            match self.writable().and_then(|()| self.store.forget_tombstones_before(tomb_cutoff)) {
                Ok(()) => {
                    self.durability.wrote();
                    while let Some((at, id)) = self.buried.first().cloned()
                        && at < tomb_cutoff
                    {
                        self.buried.pop_first();
                        self.tombstones.remove(&id);
                    }
                }
                Err(_) => self.retry_at = Some(now + RETRY_MS),
            }
        }

        self.schedule(catalog, now);

        [
            self.retry_at,
            self.deadlines.first().map(|(t, _)| *t),
            self.display_ends.first().map(|(t, _)| *t),
            self.ended.first().map(|(t, _)| t.saturating_add(retention_ms)),
            self.buried.first().map(|(t, _)| t.saturating_add(tombstone_retention_ms).saturating_add(1)),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Whether the request's resolved capability completes on the host's `finished` report.
    pub(super) fn completes_on_finish(&self, catalog: &Catalog, id: &str) -> bool {
        self.records
            .get(id)
            .and_then(|r| catalog.capability(&r.snapshot.resolved_capability))
            .is_some_and(|c| c.completion() == Completion::AnimationEnd)
    }
}
