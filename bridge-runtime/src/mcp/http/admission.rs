//! Which TCP connections [`serve_http_on_with`](super::serve_http_on_with) holds, decided
//! without waiting for a complete request head.
//!
//! A connection is *pending* from its accept until one of its requests is admitted: its head
//! complete, its `Host`, `Origin` and token accepted (`strict.rs`). Pending connections have
//! their own budget ([`HttpOptions::max_pending_connections`](super::HttpOptions)); when it is
//! full, a new connection evicts the oldest pending one, which is closed without an answer.
//! Only an admitted connection takes one of the [`HttpOptions::max_connections`] slots, and it
//! keeps it until it closes; when none is free its request gets 503 and the connection is
//! closed. So a flood of connections that dribble their heads (a slowloris) only ever evicts
//! its own oldest connections, and a client that sends a complete, valid head promptly — within
//! the time the flood takes to open `max_pending_connections` more connections — is served.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

/// The connection table of one listener.
#[derive(Debug)]
pub(super) struct Admission {
    /// One permit per admitted connection.
    slots: Arc<Semaphore>,
    /// Most pending connections.
    max_pending: usize,
    /// Pending connections by accept order (oldest first), each with its eviction signal.
    pending: Mutex<BTreeMap<u64, Arc<Notify>>>,
    next_id: AtomicU64,
}

impl Admission {
    /// At most `max_connections` admitted and `max_pending` (at least 1) pending connections.
    pub(super) fn new(max_connections: usize, max_pending: usize) -> Arc<Self> {
        Arc::new(Self {
            slots: Arc::new(Semaphore::new(max_connections.min(Semaphore::MAX_PERMITS))),
            max_pending: max_pending.max(1),
            pending: Mutex::new(BTreeMap::new()),
            next_id: AtomicU64::new(0),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<Notify>>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a just-accepted connection as pending, evicting the oldest pending connections
    /// beyond the budget (their [`Evicted`] futures complete). Returns the connection's handle
    /// (to attach to its requests) and its eviction signal.
    pub(super) fn accept(self: &Arc<Self>) -> (Connection, Evicted) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let notify = Arc::new(Notify::new());
        let mut evicted = 0usize;
        {
            let mut pending = self.lock();
            while pending.len() >= self.max_pending {
                let Some((_, oldest)) = pending.pop_first() else { break };
                // `notify_one` stores the signal when the task is not waiting yet.
                oldest.notify_one();
                evicted += 1;
            }
            pending.insert(id, notify.clone());
        }
        if evicted > 0 {
            tracing::debug!(
                evicted,
                max_pending = self.max_pending,
                "closed the oldest HTTP connections still sending their first request head"
            );
        }
        let state = ConnectionState { id, admission: self.clone(), slot: Mutex::new(None) };
        (Connection(Arc::new(state)), Evicted(notify))
    }
}

/// Completes when the connection is evicted from the pending set.
pub(super) struct Evicted(Arc<Notify>);

impl Evicted {
    pub(super) async fn wait(&self) {
        self.0.notified().await;
    }
}

/// One connection of [`Admission`], attached to each of its requests; cheap to clone.
#[derive(Debug, Clone)]
pub(super) struct Connection(Arc<ConnectionState>);

#[derive(Debug)]
struct ConnectionState {
    id: u64,
    admission: Arc<Admission>,
    /// The connection's slot, once a request of it was admitted.
    slot: Mutex<Option<OwnedSemaphorePermit>>,
}

impl Connection {
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<OwnedSemaphorePermit>> {
        self.0.slot.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A request of this connection passed `Host`, `Origin` and the token: the connection takes
    /// a slot (if it holds none yet) and stops being pending. `false` when every slot is taken,
    /// or when the connection was evicted meanwhile (it is being closed).
    pub(super) fn admit(&self) -> bool {
        let mut slot = self.slot();
        if slot.is_some() {
            return true;
        }
        let mut pending = self.0.admission.lock();
        if !pending.contains_key(&self.0.id) {
            return false;
        }
        match self.0.admission.slots.clone().try_acquire_owned() {
            Ok(permit) => {
                *slot = Some(permit);
                pending.remove(&self.0.id);
                true
            }
            Err(_) => false,
        }
    }

    /// The connection ended: its slot and its pending entry are released.
    fn close(&self) {
        self.slot().take();
        self.0.admission.lock().remove(&self.0.id);
    }
}

/// Releases its connection's slot and pending entry when dropped: when the connection's task
/// ends or is aborted (the request extensions that clone [`Connection`] may live longer).
pub(super) struct CloseOnDrop(pub(super) Connection);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(admission: &Admission) -> Vec<u64> {
        admission.lock().keys().copied().collect()
    }

    #[tokio::test]
    async fn the_oldest_pending_connection_is_evicted_and_admitted_ones_never() {
        let admission = Admission::new(1, 2);
        let (a, _) = admission.accept();
        let (_b, evicted_b) = admission.accept();
        assert!(a.admit(), "a takes the only slot");
        assert_eq!(pending(&admission), [1], "an admitted connection is no longer pending");
        let (c, _) = admission.accept();
        // Pending: b, c. A fourth evicts b, the oldest pending; a, admitted, is not a candidate.
        let (_d, _) = admission.accept();
        evicted_b.wait().await;
        assert_eq!(pending(&admission), [2, 3]);
        assert!(!c.admit(), "no slot left: c is refused and stays pending");
        assert_eq!(pending(&admission), [2, 3]);
        drop(CloseOnDrop(a));
        assert!(c.admit(), "a's slot is free again");
        assert_eq!(pending(&admission), [3]);
    }
}
