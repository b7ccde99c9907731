//! The five request methods (CP-2-7 … CP-2-11, CP §3, CP §4): create with its validation chain,
//! get, wait, cancel, update.

use super::{Admitted, Engine, check_scopes, current_character, owned, prefixed, store_failed, unsupported_capability};
use crate::catalog::{CapabilityKind, Completion, FallbackReason, FieldProblem};
use crate::companion::error::{CompanionError, ErrorCode};
use crate::companion::model::{ClientIdentity, RequestSnapshot, RequestState, TerminalReason};
use crate::companion::protocol::params::{CreateParams, RequestRef, UpdateParams, WaitParams};
use crate::companion::protocol::results::{Unchanged, WaitResult};
use crate::companion::state::{Effect, Record, empty_result};
use serde_json::Value;

impl Engine {
    /// `requests.create` (CP-2-7, CP-3-1 … CP-3-7): validates and accepts a request, returning its
    /// snapshot (state `queued` or `running`, OQ-CP-2). See [`CreateParams`].
    ///
    /// Order of checks, first failure wins and nothing is recorded (CP-3-5, CP-3-7):
    /// params shape → `INVALID_PARAMS` (checked by the entry); idempotency key already used by this client: same
    /// canonical params → the original snapshot, different → `IDEMPOTENCY_CONFLICT` (CP-4-1 …
    /// CP-4-3, OQ-CP-16); hidden/paused → `RUNTIME_UNAVAILABLE` (CP-4-15); unknown capability →
    /// `UNSUPPORTED_CAPABILITY`; missing scope → `FORBIDDEN`; capability params → `INVALID_PARAMS`;
    /// unknown character → `INVALID_PARAMS`; character support and reduced motion → fallback
    /// only if allowed and declared, else `UNSUPPORTED_CAPABILITY` (CP-2-28, CP-2-29); style →
    /// `UNSUPPORTED_STYLE`; `timeoutMs` outside the limits → `INVALID_PARAMS`; rate →
    /// `RATE_LIMITED`; all records (`maxRecords`), then the client's share of them
    /// (`maxRecordsPerClient`) → `QUEUE_FULL`; capacity → `QUEUE_FULL` unless an own queued evictable request can be
    /// evicted (CP-4-9, CP-4-10, CP-4-19); store write fails → `INTERNAL_ERROR` (CP-4-20).
    pub(super) async fn requests_create(
        &self,
        call: Admitted<'_>,
        p: CreateParams,
    ) -> Result<RequestSnapshot, CompanionError> {
        let client = call.client()?;
        let canonical = call.digest()?.to_owned();
        let mut seen = 0;
        let result = self.create(client, p, canonical, &mut seen);
        if result.is_ok() {
            self.inner.changed();
        }
        // The acceptance is confirmed once it is durable (CP-4-20).
        self.inner.report(seen, result).await
    }

    /// The create under the lock; `seen` gets the write number of the record it reports.
    fn create(
        &self,
        client: &ClientIdentity,
        p: CreateParams,
        canonical: String,
        seen: &mut u64,
    ) -> Result<RequestSnapshot, CompanionError> {
        let cat = self.inner.catalog();
        let mut st = self.inner.lock();
        let now = self.inner.clock.now_ms();

        if let Some(key) = &p.idempotency_key
            && let Some(id) = st.idempotency.get(&(client.id.clone(), key.clone()))
            && let Some(rec) = st.records.get(id)
        {
            *seen = rec.lsn;
            if rec.canonical.as_deref() == Some(canonical.as_str()) {
                return Ok(rec.snapshot.clone());
            }
            return Err(CompanionError::new(
                ErrorCode::IdempotencyConflict,
                "This idempotencyKey was already used with different parameters",
            )
            .with("requestId", rec.id()));
        }

        if !st.settings.visible {
            return Err(CompanionError::new(ErrorCode::RuntimeUnavailable, "The user has hidden the companion"));
        }
        if st.settings.external_paused && !client.internal {
            return Err(CompanionError::new(ErrorCode::RuntimeUnavailable, "The user has paused external requests"));
        }

        let requested = cat.capability(&p.capability).cloned().ok_or_else(|| unsupported_capability(&p.capability))?;
        check_scopes(client, &requested)?;
        let mut params = Value::Object(p.params.clone());
        requested.validate_params(&mut params).map_err(|problems| {
            CompanionError::invalid_params("The capability params are invalid", prefixed("/params", problems))
        })?;

        let character = match &p.character {
            Some(id) => cat.character(id).cloned().ok_or_else(|| {
                CompanionError::invalid_params(
                    "Unknown character",
                    vec![FieldProblem::new("/character", "no such character; see characters.list")],
                )
            })?,
            None => current_character(&cat, &st.settings)
                .cloned()
                .ok_or_else(|| CompanionError::new(ErrorCode::UnsupportedCapability, "No character is installed"))?,
        };

        let need = if !character.supports_capability(requested.id()) {
            Some(FallbackReason::CharacterUnsupported)
        } else if st.settings.reduced_motion && requested.kind() == CapabilityKind::Animation {
            Some(FallbackReason::ReducedMotion)
        } else {
            None
        };
        let (resolved, resolved_params, mut fallback_reason) = match need {
            None => (requested.clone(), params.clone(), None),
            Some(reason) => {
                let (cap, mapped) = crate::companion::fallback::resolve_fallback(
                    &cat,
                    &requested,
                    reason,
                    p.allow_fallback,
                    &character,
                    st.settings.reduced_motion,
                    &params,
                )?;
                (cap, mapped, Some(reason))
            }
        };
        if resolved.id() != requested.id() {
            check_scopes(client, &resolved)?;
        }

        let resolved_style = match &p.style {
            None => None,
            Some(id) => {
                let style = cat.style(id).ok_or_else(|| {
                    CompanionError::new(
                        ErrorCode::UnsupportedStyle,
                        format!("Unknown style `{}`; see styles.list", crate::model::quote::clip(id)),
                    )
                })?;
                if style.applies(resolved.id()) {
                    Some(id.clone())
                } else if let Some(fb) = style.fallback.as_ref().filter(|_| p.allow_fallback)
                    && cat.style(fb).is_some_and(|s| s.applies(resolved.id()))
                {
                    fallback_reason = fallback_reason.or(Some(FallbackReason::StyleUnsupported));
                    Some(fb.clone())
                } else {
                    return Err(CompanionError::new(
                        ErrorCode::UnsupportedStyle,
                        format!("Style `{id}` does not apply to capability `{}`", resolved.id()),
                    ));
                }
            }
        };

        for cap in [&requested, &resolved] {
            let l = cap.limits();
            if p.timeout_ms < l.min_timeout_ms || p.timeout_ms > l.max_timeout_ms {
                return Err(CompanionError::invalid_params(
                    format!("timeoutMs must lie within {}..={} for `{}`", l.min_timeout_ms, l.max_timeout_ms, cap.id()),
                    vec![FieldProblem::new("/timeoutMs", "outside the capability's limits")],
                ));
            }
        }

        let c = &self.inner.config;
        let window = st.creates.entry(client.id.clone()).or_default();
        while window.front().is_some_and(|t| *t <= now - 60_000) {
            window.pop_front();
        }
        if window.len() >= c.max_creates_per_minute {
            let retry_after = window.front().map_or(0, |t| t + 60_000 - now);
            return Err(CompanionError::new(ErrorCode::RateLimited, "Too many requests from this client")
                .with("limit", "maxCreatesPerMinute")
                .with("retryAfterMs", retry_after));
        }

        if st.records.len() >= c.max_records {
            return Err(queue_full("maxRecords", "The runtime holds as many records as it keeps"));
        }
        if st.records_of(&client.id) >= c.records_share() {
            return Err(queue_full("maxRecordsPerClient", "This client holds as many records as one client may keep"));
        }
        let per_client_full = st.active_for(&client.id) >= c.max_active_per_client;
        let total_full = st.live.len() >= c.max_active_total;
        let evict = if per_client_full || total_full {
            match st.oldest_evictable(&client.id, &cat) {
                Some(id) => Some(id),
                None if per_client_full => {
                    return Err(queue_full("maxActivePerClient", "This client has too many open requests"));
                }
                None => return Err(queue_full("maxActiveTotal", "The runtime has too many open requests")),
            }
        } else {
            None
        };

        let seq = st.next_seq;
        let snapshot = RequestSnapshot {
            request_id: format!("req_{}", uuid::Uuid::new_v4().simple()),
            runtime_instance_id: self.inner.instance_id.clone(),
            capability: requested.id().to_owned(),
            character: character.id.clone(),
            task_id: p.task_id.clone(),
            state: RequestState::Queued,
            revision: 1,
            created_at: now,
            deadline_at: now.saturating_add(i64::try_from(p.timeout_ms).unwrap_or(i64::MAX)),
            displayed_at: None,
            resolved_capability: resolved.id().to_owned(),
            resolved_style,
            fallback_reason,
            terminal_reason: None,
            result: None,
        };
        let rec = Record {
            snapshot,
            client_id: client.id.clone(),
            client_label: client.label.clone(),
            internal: client.internal,
            params: Some(params),
            resolved_params: Some(resolved_params),
            idempotency_key: p.idempotency_key.clone(),
            canonical: Some(canonical),
            display_until: None,
            terminal_at: None,
            seq,
            allow_fallback: p.allow_fallback,
            scopes: client.scopes.clone(),
            lsn: 0,
        };
        let id = rec.id().to_owned();
        let mut batch = vec![rec];
        if let Some(victim) = evict.and_then(|v| st.records.get(&v).cloned()) {
            let mut victim = victim;
            victim.terminate(RequestState::Cancelled, Some(TerminalReason::QueueEvicted), None, now);
            batch.push(victim);
        }
        st.commit(batch).map_err(|e| {
            tracing::error!(error = %e, "companion: could not record a new request; not accepted");
            CompanionError::new(ErrorCode::InternalError, "The request could not be recorded and was not accepted")
        })?;
        st.next_seq = seq + 1;
        st.creates.entry(client.id.clone()).or_default().push_back(now);
        tracing::debug!(request_id = %id, capability = %requested.id(), "companion: request accepted");
        st.schedule(&cat, now);
        let rec = &st.records[&id];
        *seen = rec.lsn;
        Ok(rec.snapshot.clone())
    }

    /// `requests.get` (CP-2-8): the caller's request snapshot. Someone else's or unknown →
    /// `NOT_FOUND` (CP-4-6, CP-6-18); own but past retention or unrecoverable → `RESULT_EXPIRED`
    /// (CP-6-19, CP-4-23). Ownership only, whatever the scopes (CP-5-7).
    pub(super) async fn requests_get(
        &self,
        call: Admitted<'_>,
        p: RequestRef,
    ) -> Result<RequestSnapshot, CompanionError> {
        let client = call.client()?;
        let (result, lsn) = {
            let st = self.inner.lock();
            (owned(&st, client, &p.request_id).map(|r| r.snapshot.clone()), st.lsn_of(&p.request_id))
        };
        self.inner.report(lsn, result).await
    }

    /// `requests.wait` (CP-2-9, CP-3-20, OQ-CP-7): waits at most `waitMs` (default/maximum in
    /// `runtime.describe` limits; above the maximum → `INVALID_PARAMS`) until the revision exceeds
    /// `afterRevision` (default: the current one) or the request is terminal. Returns the snapshot,
    /// or `{"unchanged": true, "requestId", "revision", "state"}` on timeout. Never cancels or
    /// creates anything (CP-3-21).
    pub(super) async fn requests_wait(&self, call: Admitted<'_>, p: WaitParams) -> Result<WaitResult, CompanionError> {
        let client = call.client()?;
        let c = &self.inner.config;
        let wait_ms = p.wait_ms.unwrap_or(c.default_wait_ms);
        if wait_ms > c.max_wait_ms {
            return Err(CompanionError::invalid_params(
                format!("waitMs must be at most {}", c.max_wait_ms),
                vec![FieldProblem::new("/waitMs", "above maxWaitMs")],
            ));
        }
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(wait_ms);
        let mut changes = self.inner.changes.subscribe();
        let id = p.request_id.as_str();
        // What is returned is reported only once durable; so are `RESULT_EXPIRED` answers.
        let after = {
            let st = self.inner.lock();
            owned(&st, client, id)
                .map(|rec| p.after_revision.unwrap_or(rec.snapshot.revision))
                .map_err(|e| (e, st.lsn_of(id)))
        };
        let after = match after {
            Ok(after) => after,
            Err((e, lsn)) => return self.inner.report(lsn, Err(e)).await,
        };
        loop {
            let found = {
                let st = self.inner.lock();
                let lsn = st.lsn_of(id);
                match owned(&st, client, id) {
                    Ok(rec) if rec.state().is_terminal() || rec.snapshot.revision > after => {
                        Some((Ok(WaitResult::Changed(Box::new(rec.snapshot.clone()))), lsn))
                    }
                    Ok(_) => None,
                    Err(e) => Some((Err(e), lsn)),
                }
            };
            if let Some((result, lsn)) = found {
                return self.inner.report(lsn, result).await;
            }
            match tokio::time::timeout_at(deadline, changes.changed()).await {
                Ok(Ok(())) => continue,
                Ok(Err(_)) | Err(_) => {
                    let (result, lsn) = {
                        let st = self.inner.lock();
                        let result = owned(&st, client, id).map(|rec| {
                            WaitResult::Unchanged(Unchanged {
                                unchanged: true,
                                request_id: rec.id().to_owned(),
                                revision: rec.snapshot.revision,
                                state: rec.state(),
                            })
                        });
                        (result, st.lsn_of(id))
                    };
                    return self.inner.report(lsn, result).await;
                }
            }
        }
    }

    /// `requests.cancel` (CP-2-10): cancels the caller's own request (`cancelled`/
    /// `client_cancelled`) and returns the snapshot. An already terminal request is returned as
    /// it is (the first transition won, CP-3-24). A non-cancelable capability →
    /// `INVALID_PARAMS`; not found → `NOT_FOUND`/`RESULT_EXPIRED`; store failure →
    /// `INTERNAL_ERROR` with the request unchanged.
    pub(super) async fn requests_cancel(
        &self,
        call: Admitted<'_>,
        p: RequestRef,
    ) -> Result<RequestSnapshot, CompanionError> {
        let client = call.client()?;
        let mut seen = 0;
        let result = self.cancel(client, &p, &mut seen);
        self.inner.report(seen, result).await
    }

    /// The cancel under the lock; `seen` gets the write number of the record it reports.
    fn cancel(
        &self,
        client: &ClientIdentity,
        p: &RequestRef,
        seen: &mut u64,
    ) -> Result<RequestSnapshot, CompanionError> {
        let cat = self.inner.catalog();
        let mut st = self.inner.lock();
        let now = self.inner.clock.now_ms();
        *seen = st.lsn_of(&p.request_id);
        let rec = owned(&st, client, &p.request_id)?;
        if rec.state().is_terminal() {
            return Ok(rec.snapshot.clone());
        }
        if cat.capability(&rec.snapshot.capability).is_some_and(|c| !c.cancelable()) {
            return Err(CompanionError::invalid_params(
                "This capability's requests cannot be cancelled by the caller",
                vec![FieldProblem::new("/requestId", "capability is not cancelable")],
            ));
        }
        let mut rec = rec.clone();
        rec.terminate(RequestState::Cancelled, Some(TerminalReason::ClientCancelled), None, now);
        let id = rec.id().to_owned();
        st.commit(vec![rec]).map_err(|_| store_failed())?;
        st.schedule(&cat, now);
        let rec = &st.records[&id];
        *seen = rec.lsn;
        let snap = rec.snapshot.clone();
        drop(st);
        drop(cat);
        self.inner.changed();
        Ok(snap)
    }

    /// `requests.update` (CP-2-11, CP-3-25 … CP-3-27): changes `updatableFields` of the caller's
    /// non-terminal request and/or completes a `caller_completes` request (`"complete": true`),
    /// keeping the same `requestId` (CP-3-26). Errors: `NOT_FOUND`/`RESULT_EXPIRED`;
    /// `REVISION_CONFLICT` with `currentRevision` when `expectedRevision` is stale; `INVALID_PARAMS`
    /// for a terminal request, a field that is not updatable, a displayed interaction (CP-3-27,
    /// OQ-CP-17), invalid merged params, `complete` on another completion, or nothing to do.
    /// The deadline never moves (CP-3-18). A change to the request on screen while the presenter
    /// has `maxPendingPresentations` changes still to take → `QUEUE_FULL` with `limit`, nothing
    /// changed (CP-4-8, CP-4-9). Store failure → `INTERNAL_ERROR`, nothing changed.
    pub(super) async fn requests_update(
        &self,
        call: Admitted<'_>,
        p: UpdateParams,
    ) -> Result<RequestSnapshot, CompanionError> {
        let client = call.client()?;
        let mut seen = 0;
        let result = self.update(client, p, &mut seen);
        self.inner.report(seen, result).await
    }

    /// The update under the lock; `seen` gets the write number of the record it reports on.
    fn update(
        &self,
        client: &ClientIdentity,
        p: UpdateParams,
        seen: &mut u64,
    ) -> Result<RequestSnapshot, CompanionError> {
        let cat = self.inner.catalog();
        let mut st = self.inner.lock();
        let now = self.inner.clock.now_ms();
        *seen = st.lsn_of(&p.request_id);
        let rec = owned(&st, client, &p.request_id)?;
        if rec.snapshot.revision != p.expected_revision {
            return Err(CompanionError::new(
                ErrorCode::RevisionConflict,
                format!("The request is at revision {}, not {}", rec.snapshot.revision, p.expected_revision),
            )
            .with("currentRevision", rec.snapshot.revision));
        }
        let invalid = |msg: &str, path: &str, problem: &str| {
            CompanionError::invalid_params(msg.to_owned(), vec![FieldProblem::new(path, problem)])
        };
        if rec.state().is_terminal() {
            return Err(invalid("The request has ended and cannot change", "/requestId", "request is terminal"));
        }
        let complete = p.complete == Some(true);
        let changes = p.params.unwrap_or_default();
        if changes.is_empty() && !complete {
            return Err(invalid("Nothing to update", "/params", "give params to change or complete: true"));
        }
        let requested = cat
            .capability(&rec.snapshot.capability)
            .cloned()
            .ok_or_else(|| unsupported_capability(&rec.snapshot.capability))?;
        let resolved = cat
            .capability(&rec.snapshot.resolved_capability)
            .cloned()
            .ok_or_else(|| unsupported_capability(&rec.snapshot.resolved_capability))?;
        let mut rec = rec.clone();
        if !changes.is_empty() {
            let not_updatable: Vec<FieldProblem> = changes
                .keys()
                .filter(|k| !requested.updatable_fields().iter().any(|f| f == *k))
                .map(|k| FieldProblem::new(format!("/params/{k}"), "not an updatable field of this capability"))
                .collect();
            if !not_updatable.is_empty() {
                return Err(CompanionError::invalid_params("Only updatableFields can change", not_updatable));
            }
            if requested.kind() == CapabilityKind::Interaction && rec.snapshot.displayed_at.is_some() {
                return Err(CompanionError::invalid_params(
                    "A displayed interaction cannot change its question or options",
                    vec![FieldProblem::new("/params", "interaction already displayed")],
                ));
            }
            let Some(Value::Object(mut merged)) = rec.params.clone() else {
                return Err(invalid("The request's params are no longer available", "/params", "purged"));
            };
            merged.extend(changes);
            let mut merged = Value::Object(merged);
            requested.validate_params(&mut merged).map_err(|problems| {
                CompanionError::invalid_params("The updated params are invalid", prefixed("/params", problems))
            })?;
            let resolved_params = if resolved.id() == requested.id() {
                merged.clone()
            } else {
                let mut mapped = match requested.fallback().and_then(|f| f.map.as_ref()) {
                    Some(map) => map(&merged),
                    None => merged.clone(),
                };
                resolved.validate_params(&mut mapped).map_err(|problems| {
                    CompanionError::invalid_params(
                        "The updated params cannot be presented by the fallback capability",
                        prefixed("/params", problems),
                    )
                })?;
                mapped
            };
            rec.params = Some(merged);
            rec.resolved_params = Some(resolved_params);
        }
        if complete {
            if resolved.completion() != Completion::CallerCompletes {
                return Err(invalid(
                    "Only caller_completes capabilities are completed by the caller",
                    "/complete",
                    "not a caller_completes capability",
                ));
            }
            rec.terminate(RequestState::Completed, None, Some(empty_result()), now);
        } else {
            rec.snapshot.revision += 1;
        }
        let id = rec.id().to_owned();
        let show_update = !complete && st.slot.as_deref() == Some(id.as_str());
        if show_update && !st.room_to_present() {
            return Err(queue_full(
                "maxPendingPresentations",
                "The app has not yet drawn the earlier changes to this request; try again shortly",
            ));
        }
        let presentation = rec.presentation();
        st.commit(vec![rec]).map_err(|_| store_failed())?;
        if show_update {
            st.emit(Effect::Update(presentation));
        }
        st.schedule(&cat, now);
        let rec = &st.records[&id];
        *seen = rec.lsn;
        let snap = rec.snapshot.clone();
        drop(st);
        drop(cat);
        self.inner.changed();
        Ok(snap)
    }
}

fn queue_full(limit: &str, message: &str) -> CompanionError {
    CompanionError::new(ErrorCode::QueueFull, message).with("limit", limit)
}
