//! The host's side: presentation reports (CP-3-12 … CP-3-14), user settings (CP-4-15) and key
//! revocation (CP-4-22). All of them go through the same state machine as client calls.

use super::{Engine, HostError};
use crate::catalog::{Catalog, Completion, FieldProblem};
use crate::companion::model::{RequestState, TerminalReason};
use crate::companion::state::{Record, RuntimeSettings, empty_result};
use serde_json::Value;

impl Engine {
    /// Applies `f` to request `id` and records it; returns the write's number (that of the
    /// current version if `f` changed nothing). It does not wait for durability: the presenter's
    /// reports (`displayed`, `finished`) keep the one display slot moving while the disk syncs,
    /// and clients are told only once the write is durable.
    fn host_transition(
        &self,
        id: &str,
        f: impl FnOnce(&Catalog, &mut Record, i64) -> Result<(), HostError>,
    ) -> Result<u64, HostError> {
        let cat = self.inner.catalog();
        let mut st = self.inner.lock();
        let now = self.inner.clock.now_ms();
        let mut rec = st.records.get(id).cloned().ok_or_else(|| HostError::NotFound(id.to_owned()))?;
        let before = rec.snapshot.revision;
        f(&cat, &mut rec, now)?;
        if rec.snapshot.revision == before {
            return Ok(rec.lsn);
        }
        st.commit(vec![rec])?;
        let lsn = st.lsn_of(id);
        st.schedule(&cat, now);
        drop(st);
        drop(cat);
        self.inner.changed();
        Ok(lsn)
    }

    /// [`Engine::host_transition`], confirmed only once durable: for the user's own actions
    /// (CP-4-20). Blocks the calling thread for at most one shared disk sync.
    fn user_transition(
        &self,
        id: &str,
        f: impl FnOnce(&Catalog, &mut Record, i64) -> Result<(), HostError>,
    ) -> Result<(), HostError> {
        let lsn = self.host_transition(id, f)?;
        self.inner.durability.wait(lsn)?;
        Ok(())
    }

    /// The host reports that request `id` actually appeared (CP-3-14): records `displayedAt`
    /// once; an interaction moves to `awaiting_user`; a `displayed` completion starts its display
    /// timer. Repeated reports are ignored. Errors: unknown id, a request not `running`, or a
    /// store failure (nothing changes).
    pub fn displayed(&self, id: &str) -> Result<(), HostError> {
        self.host_transition(id, |cat, rec, now| {
            if rec.snapshot.displayed_at.is_some() && !rec.state().is_terminal() {
                return Ok(());
            }
            if rec.state() != RequestState::Running {
                return Err(HostError::WrongState { state: rec.state() });
            }
            rec.snapshot.displayed_at = Some(now);
            rec.snapshot.revision += 1;
            let cap = cat.capability(&rec.snapshot.resolved_capability);
            match cap.map(|c| (c.completion(), c.limits().display_ms)) {
                Some((Completion::UserResponse, _)) => rec.snapshot.state = RequestState::AwaitingUser,
                Some((Completion::Displayed, Some(ms))) => {
                    rec.display_until = Some(now.saturating_add(i64::try_from(ms).unwrap_or(i64::MAX)));
                }
                _ => {}
            }
            Ok(())
        })
        .map(drop)
    }

    /// The user answered request `id` (CP-3-13, CP-3-16): the result is checked against the
    /// resolved capability's `outputSchema` and result check (CP-2-23), persisted, and only then
    /// the request is `completed` (CP-4-20): this call returns `Ok` only once the answer is
    /// durable (it blocks the calling thread for one disk sync, shared with concurrent ones).
    /// Errors: unknown id; not `awaiting_user` (e.g. it was cancelled or expired first: the click
    /// lost, CP-3-24); invalid result; store failure (the answer is not confirmed and the
    /// request stays `awaiting_user`; after a failed sync, nothing is confirmed until restart).
    pub fn user_responded(&self, id: &str, result: Value) -> Result<(), HostError> {
        self.user_transition(id, |cat, rec, now| {
            if rec.state() != RequestState::AwaitingUser {
                return Err(HostError::WrongState { state: rec.state() });
            }
            let cap = cat.capability(&rec.snapshot.resolved_capability).ok_or_else(|| {
                HostError::InvalidResult(vec![FieldProblem::new("", "capability no longer registered")])
            })?;
            let params = rec.resolved_params.clone().unwrap_or(Value::Null);
            cap.validate_result(&params, &result).map_err(HostError::InvalidResult)?;
            rec.terminate(RequestState::Completed, None, Some(result), now);
            Ok(())
        })
    }

    /// The user closed request `id`'s view: `cancelled`/`user_cancelled`, never a default answer
    /// (CP-3-12), returned once durable. Errors: unknown id, a request that is not on screen,
    /// store failure.
    pub fn view_closed(&self, id: &str) -> Result<(), HostError> {
        self.user_transition(id, |_, rec, now| {
            if !matches!(rec.state(), RequestState::Running | RequestState::AwaitingUser) {
                return Err(HostError::WrongState { state: rec.state() });
            }
            rec.terminate(RequestState::Cancelled, Some(TerminalReason::UserCancelled), None, now);
            Ok(())
        })
    }

    /// The host reports that request `id`'s presentation ended: completes `animation_end`
    /// requests, and `displayed` ones whose display time the host manages itself (e.g. paused on
    /// hover, CP-3-19). Errors: unknown id, not `running`, another completion, store failure.
    pub fn finished(&self, id: &str) -> Result<(), HostError> {
        self.host_transition(id, |cat, rec, now| {
            if rec.state() != RequestState::Running {
                return Err(HostError::WrongState { state: rec.state() });
            }
            let completion = cat.capability(&rec.snapshot.resolved_capability).map(|c| c.completion());
            if !matches!(completion, Some(Completion::AnimationEnd | Completion::Displayed)) {
                return Err(HostError::WrongState { state: rec.state() });
            }
            rec.terminate(RequestState::Completed, None, Some(empty_result()), now);
            Ok(())
        })
        .map(drop)
    }

    /// The host could not present request `id`: `failed`/`presentation_failed`.
    pub fn presentation_failed(&self, id: &str) -> Result<(), HostError> {
        self.host_transition(id, |_, rec, now| {
            if rec.state().is_terminal() {
                return Err(HostError::WrongState { state: rec.state() });
            }
            rec.terminate(RequestState::Failed, Some(TerminalReason::PresentationFailed), None, now);
            Ok(())
        })
        .map(drop)
    }

    /// Whether `finished` completes request `id` (its resolved completion is `animation_end`).
    pub(crate) fn completes_on_finish(&self, id: &str) -> bool {
        let cat = self.inner.catalog();
        self.inner.lock().completes_on_finish(&cat, id)
    }

    /// The user settings now in force.
    pub fn settings(&self) -> RuntimeSettings {
        self.inner.lock().settings.clone()
    }

    /// The user shows or hides the sprite. Hidden: new requests get `RUNTIME_UNAVAILABLE` and
    /// every accepted one ends `cancelled`/`runtime_unavailable` (CP-4-15); the runtime never
    /// shows itself again until the user does.
    pub fn set_visible(&self, visible: bool) {
        {
            let mut st = self.inner.lock();
            st.settings.visible = visible;
            st.policy_dirty = true;
        }
        self.inner.tick();
    }

    /// The user pauses or resumes external interaction: like hiding, for external clients only.
    pub fn set_external_paused(&self, paused: bool) {
        {
            let mut st = self.inner.lock();
            st.settings.external_paused = paused;
            st.policy_dirty = true;
        }
        self.inner.tick();
    }

    /// The user's reduced-motion preference. Applies to new requests at `requests.create` and to
    /// accepted requests that have not been shown yet, when they reach the display slot: a queued
    /// animation takes its declared `reduced_motion` fallback if the caller allowed it, or ends
    /// `cancelled`/`reduced_motion` (CP-2-29, CP-4-15).
    pub fn set_reduced_motion(&self, on: bool) {
        self.inner.lock().settings.reduced_motion = on;
        self.inner.changed();
    }

    /// The user picks the current character. Errors: `false` if no such character exists.
    pub fn set_current_character(&self, id: &str) -> bool {
        if self.inner.catalog().character(id).is_none() {
            return false;
        }
        self.inner.lock().settings.current_character = Some(id.to_owned());
        self.inner.changed();
        true
    }

    /// The auth layer revoked `client_id`'s key (CP-4-22): its non-terminal requests end
    /// `cancelled`/`key_revoked` at once, its params and results are purged, and further calls
    /// with that id get `UNAUTHENTICATED`. A failed write is retried by the timer task.
    pub fn client_revoked(&self, client_id: &str) {
        {
            let mut st = self.inner.lock();
            st.revoked.insert(client_id.to_owned());
            st.policy_dirty = true;
        }
        self.inner.tick();
    }

    /// Applies every due deadline, display end and retention deletion now (after a manual clock
    /// moved, or after the machine woke from sleep).
    pub fn recheck_timers(&self) {
        self.inner.tick();
    }
}
