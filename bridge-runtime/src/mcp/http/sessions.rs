//! A bounded legacy-session table around rmcp's [`LocalSessionManager`]: the cap of
//! [`HttpOptions::max_sessions`](super::HttpOptions::max_sessions).
//!
//! rmcp keeps every legacy (2025-11-25, `Mcp-Session-Id`) session until the client sends
//! `DELETE` or the session's worker has seen no message for `SessionConfig::keep_alive` (300 s
//! by default); nothing caps how many exist at once, so a client that only ever sends
//! `initialize` grows the server without bound. [`BoundedSessions`] delegates every operation to
//! a [`LocalSessionManager`] and keeps, per session, how many of its HTTP streams are open (a
//! `POST`'s response stream while the request is in flight, a `GET` SSE stream, a resumed
//! stream) and when it was last used. When a new session would exceed the cap, the least
//! recently used *idle* session (no open stream, not in its `initialize`) is closed; its next
//! request gets 404 like any unknown session (the MCP rule: the client starts a new session).
//! When every session is active, [`BoundedSessions::has_room`] is `false` and the HTTP layer
//! refuses the `initialize` with 503 (see `strict.rs`).

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, LocalSessionManagerError};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId, SessionManager};
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

/// What the table knows about one live session.
#[derive(Debug)]
struct Entry {
    /// Open HTTP streams of this session (requests in flight, `GET` streams).
    active: AtomicUsize,
    /// Microseconds since the manager was created, at the last request or stream end.
    last_use: AtomicU64,
    /// Created, `initialize` not yet answered: never evicted.
    initializing: AtomicBool,
}

impl Entry {
    fn idle(&self) -> bool {
        self.active.load(Ordering::SeqCst) == 0 && !self.initializing.load(Ordering::SeqCst)
    }
}

/// rmcp's [`LocalSessionManager`] with a cap on live sessions; see the module docs.
#[derive(Debug)]
pub(super) struct BoundedSessions {
    inner: LocalSessionManager,
    max: usize,
    started: Instant,
    table: Mutex<HashMap<SessionId, Arc<Entry>>>,
}

/// Keeps its session counted as active while alive (an open stream).
struct Active {
    entry: Arc<Entry>,
    started: Instant,
}

impl Drop for Active {
    fn drop(&mut self) {
        self.entry.last_use.store(micros_since(self.started), Ordering::SeqCst);
        self.entry.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A session's stream, counted as activity until dropped (the response ended or the client
/// went away).
struct Tracked<S> {
    inner: Pin<Box<S>>,
    _active: Option<Active>,
}

impl<S: Stream> Stream for Tracked<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().inner.as_mut().poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

fn micros_since(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX)
}

impl BoundedSessions {
    /// At most `max` live sessions (0: none), over `inner`.
    pub(super) fn new(inner: LocalSessionManager, max: usize) -> Self {
        Self { inner, max, started: Instant::now(), table: Mutex::new(HashMap::new()) }
    }

    /// The cap.
    pub(super) fn max(&self) -> usize {
        self.max
    }

    /// Live sessions now.
    pub(super) fn len(&self) -> usize {
        self.lock().len()
    }

    /// A new session can be admitted: below the cap, or some session is idle (it will be
    /// evicted when the new one is created).
    pub(super) fn has_room(&self) -> bool {
        let table = self.lock();
        self.max > 0 && (table.len() < self.max || table.values().any(|e| e.idle()))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Arc<Entry>>> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn now(&self) -> u64 {
        micros_since(self.started)
    }

    /// Marks `id` used now; its entry, if it is live.
    fn touch(&self, id: &SessionId) -> Option<Arc<Entry>> {
        let entry = self.lock().get(id).cloned()?;
        entry.last_use.store(self.now(), Ordering::SeqCst);
        Some(entry)
    }

    /// Counts a stream of `id` as open until the returned guard drops.
    fn activity(&self, id: &SessionId) -> Option<Active> {
        let entry = self.touch(id)?;
        entry.active.fetch_add(1, Ordering::SeqCst);
        Some(Active { entry, started: self.started })
    }

    /// Takes the least recently used idle sessions out of the table until it is within the cap;
    /// returns them to be closed. When every session is active it keeps the excess (only
    /// concurrent `initialize`s that all passed [`BoundedSessions::has_room`] get here) and
    /// says so.
    fn over_cap(&self) -> Vec<(SessionId, u64)> {
        let now = self.now();
        let mut table = self.lock();
        let mut victims = Vec::new();
        while table.len() > self.max {
            let oldest = table
                .iter()
                .filter(|(_, e)| e.idle())
                .min_by_key(|(_, e)| e.last_use.load(Ordering::SeqCst))
                .map(|(id, e)| (id.clone(), e.last_use.load(Ordering::SeqCst)));
            let Some((id, last_use)) = oldest else {
                tracing::warn!(
                    sessions = table.len(),
                    max_sessions = self.max,
                    "HTTP session cap exceeded: every session is active"
                );
                break;
            };
            table.remove(&id);
            victims.push((id, now.saturating_sub(last_use)));
        }
        victims
    }

    async fn evict(&self, victims: Vec<(SessionId, u64)>) {
        for (id, idle_us) in victims {
            tracing::info!(
                session = %id,
                idle_ms = idle_us / 1000,
                max_sessions = self.max,
                "evicted the least recently used idle HTTP session to admit a new one"
            );
            if let Err(e) = self.inner.close_session(&id).await {
                tracing::debug!(session = %id, error = %e, "evicted session did not close cleanly");
            }
        }
    }
}

impl SessionManager for BoundedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        let entry = Entry {
            active: AtomicUsize::new(0),
            last_use: AtomicU64::new(self.now()),
            initializing: AtomicBool::new(true),
        };
        self.lock().insert(id.clone(), Arc::new(entry));
        let victims = self.over_cap();
        self.evict(victims).await;
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let result = self.inner.initialize_session(id, message).await;
        if let Some(entry) = self.touch(id) {
            entry.initializing.store(false, Ordering::SeqCst);
        }
        result
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        // Every request of a session starts here: it is the most recent use.
        if self.touch(id).is_none() {
            return Ok(false);
        }
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.lock().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let active = self.activity(id);
        let stream = self.inner.create_stream(id, message).await?;
        Ok(Tracked { inner: Box::pin(stream), _active: active })
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let active = self.activity(id);
        let stream = self.inner.create_standalone_stream(id).await?;
        Ok(Tracked { inner: Box::pin(stream), _active: active })
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let active = self.activity(id);
        let stream = self.inner.resume(id, last_event_id).await?;
        Ok(Tracked { inner: Box::pin(stream), _active: active })
    }

    // `restore_session` keeps the default (not supported): no session store is configured, and
    // rmcp's local restore would create sessions outside the cap.

    fn event_store(&self) -> Option<Arc<dyn rmcp::transport::streamable_http_server::session::EventStore>> {
        self.inner.event_store()
    }
}
