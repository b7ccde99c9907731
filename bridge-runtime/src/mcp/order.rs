//! Per-connection call order: `tools/call` requests of one connection take effect in the order
//! they arrived (GB-10.1-3), and one cancelled before its turn never runs.
//!
//! rmcp spawns a task per request, so handlers start in scheduling order, not arrival order.
//! The stdio pre-layer ([`super::stdio`]) takes a *ticket* for every `tools/call` it forwards,
//! in the order it reads them; the handler ([`GuiBridgeServer::call_tool`](super::GuiBridgeServer))
//! claims its ticket by request id and waits until every earlier ticket is gone before it
//! touches a window.
//!
//! Nothing can wedge the queue:
//! - a handler that finishes, fails or is cancelled drops its [`Turn`] or leaves the wait, and
//!   its ticket goes;
//! - a ticket whose handler never comes (rmcp answered the request itself, e.g. a call before
//!   the handshake) goes when that answer passes the writer ([`CallOrder::observe_outgoing`]);
//! - a second call with the id of a call still queued is refused at the door ([`Admit::Duplicate`]),
//!   so every ticket's id is unique;
//! - at most [`MAX_QUEUED_CALLS`] tickets per connection; beyond that the call is refused as busy.

use rmcp::model::RequestId;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Most `tools/call` requests of one connection waiting or running at once; the next one is
/// refused with a busy error until some are answered.
pub(crate) const MAX_QUEUED_CALLS: usize = 256;

/// Whether a call read from the wire got a ticket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admit {
    /// Queued behind every call read before it.
    Queued,
    /// [`MAX_QUEUED_CALLS`] calls are already waiting or running.
    Busy,
    /// A call with the same id is still waiting or running.
    Duplicate,
}

struct Ticket {
    id: RequestId,
    /// Its handler has arrived and waits or runs.
    claimed: bool,
    /// Woken when this ticket may have reached the front.
    wake: Arc<Notify>,
}

/// The call tickets of one connection, in arrival order.
#[derive(Default)]
pub(crate) struct CallOrder {
    tickets: Mutex<VecDeque<Ticket>>,
    /// Tickets no handler has claimed yet; the writer looks at answers only while some exist.
    unclaimed: AtomicUsize,
}

impl std::fmt::Debug for CallOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOrder").field("queued", &self.lock().len()).finish()
    }
}

/// The right to run: held by a call's handler while it runs; dropping it lets the next call go.
#[must_use]
pub(crate) struct Turn<'a> {
    order: &'a CallOrder,
    id: RequestId,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.order.release(&self.id);
    }
}

impl CallOrder {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Ticket>> {
        // A panic while holding this lock leaves the queue consistent (no step is half done).
        self.tickets.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes a ticket for the call `id`, read from the wire just now.
    pub(crate) fn admit(&self, id: &RequestId) -> Admit {
        let mut tickets = self.lock();
        if tickets.iter().any(|t| &t.id == id) {
            return Admit::Duplicate;
        }
        if tickets.len() >= MAX_QUEUED_CALLS {
            return Admit::Busy;
        }
        tickets.push_back(Ticket { id: id.clone(), claimed: false, wake: Arc::new(Notify::new()) });
        self.unclaimed.fetch_add(1, Ordering::Relaxed);
        Admit::Queued
    }

    /// Waits for the turn of call `id`: until every call that arrived before it has finished or
    /// was abandoned. `None` when `ct` fired first (the call was cancelled before it started,
    /// and must not run). A call without a ticket (one that did not come through the pre-layer)
    /// runs at once.
    pub(crate) async fn turn(&self, id: &RequestId, ct: &CancellationToken) -> Option<Turn<'_>> {
        let wake = {
            let mut tickets = self.lock();
            let Some(ticket) = tickets.iter_mut().find(|t| &t.id == id && !t.claimed) else {
                return (!ct.is_cancelled()).then(|| Turn { order: self, id: id.clone() });
            };
            ticket.claimed = true;
            self.unclaimed.fetch_sub(1, Ordering::Relaxed);
            ticket.wake.clone()
        };
        loop {
            if ct.is_cancelled() {
                self.release(id);
                return None;
            }
            if self.lock().front().is_some_and(|t| &t.id == id) {
                return Some(Turn { order: self, id: id.clone() });
            }
            tokio::select! {
                _ = wake.notified() => {}
                _ = ct.cancelled() => {}
            }
        }
    }

    /// Removes the ticket of `id` (if still there) and wakes the call now at the front.
    fn release(&self, id: &RequestId) {
        let mut tickets = self.lock();
        if let Some(i) = tickets.iter().position(|t| &t.id == id) {
            let gone = tickets.remove(i).expect("position is in range");
            if !gone.claimed {
                self.unclaimed.fetch_sub(1, Ordering::Relaxed);
            }
        }
        if let Some(front) = tickets.front() {
            // A stored permit: the front call wakes even if it is not waiting yet.
            front.wake.notify_one();
        }
    }

    /// Looks at one line the server writes: an answer to a call whose handler never came
    /// (rmcp answered the request itself) releases that call's ticket. Costs nothing while
    /// every ticket is claimed; otherwise reads only the `id` that rmcp writes second in every
    /// answer (`{"jsonrpc":"2.0","id":…`).
    pub(crate) fn observe_outgoing(&self, line: &[u8]) {
        if self.unclaimed.load(Ordering::Relaxed) == 0 {
            return;
        }
        let Some(id) = answer_id(line) else { return };
        let unclaimed = self.lock().iter().any(|t| t.id == id && !t.claimed);
        if unclaimed {
            self.release(&id);
        }
    }

    /// Tickets waiting or running (for tests and the debug output).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

/// The `id` of an answer line as rmcp writes it (`{"jsonrpc":"2.0","id":<id>,"result"|"error":…}`);
/// `None` for a notification, a request or any other layout.
fn answer_id(line: &[u8]) -> Option<RequestId> {
    const PREFIX: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    let rest = line.strip_prefix(PREFIX)?;
    let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<RequestId>();
    let id = values.next()?.ok()?;
    let after = rest.get(values.byte_offset()..)?;
    (after.starts_with(br#","result""#) || after.starts_with(br#","error""#)).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn id(n: i64) -> RequestId {
        RequestId::Number(n)
    }

    // GB-10.1-3: calls run in ticket order, whatever order their handlers arrive in.
    #[tokio::test]
    async fn handlers_run_in_ticket_order_gb_10_1_3() {
        let order = Arc::new(CallOrder::default());
        for n in 1..=5 {
            assert_eq!(order.admit(&id(n)), Admit::Queued);
        }
        let ran = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for n in (1..=5).rev() {
            let (order, ran) = (order.clone(), ran.clone());
            tasks.push(tokio::spawn(async move {
                let ct = CancellationToken::new();
                let _turn = order.turn(&id(n), &ct).await.expect("not cancelled");
                tokio::task::yield_now().await;
                ran.lock().unwrap().push(n);
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(*ran.lock().unwrap(), vec![1, 2, 3, 4, 5]);
        assert_eq!(order.len(), 0);
    }

    // A call cancelled while it waits never gets its turn, and the calls after it still run.
    #[tokio::test]
    async fn cancelled_before_its_turn_never_runs() {
        let order = Arc::new(CallOrder::default());
        for n in 1..=3 {
            order.admit(&id(n));
        }
        let ct1 = CancellationToken::new();
        let first = order.turn(&id(1), &ct1).await.expect("front");
        let ct2 = CancellationToken::new();
        let second = tokio::spawn({
            let (order, ct2) = (order.clone(), ct2.clone());
            async move { order.turn(&id(2), &ct2).await.is_some() }
        });
        let third = tokio::spawn({
            let order = order.clone();
            async move { order.turn(&id(3), &CancellationToken::new()).await.is_some() }
        });
        tokio::task::yield_now().await;
        ct2.cancel();
        assert!(!second.await.unwrap(), "the cancelled call must not run");
        drop(first);
        assert!(third.await.unwrap());
        assert_eq!(order.len(), 0);
    }

    // A ticket whose handler never comes goes when rmcp's own answer to it is written.
    #[tokio::test]
    async fn an_answer_without_a_handler_releases_its_ticket() {
        let order = Arc::new(CallOrder::default());
        order.admit(&id(1));
        order.admit(&RequestId::String("b".into()));
        let waiter = tokio::spawn({
            let order = order.clone();
            async move { order.turn(&RequestId::String("b".into()), &CancellationToken::new()).await.is_some() }
        });
        // A notification or another layout releases nothing.
        order.observe_outgoing(br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":1}}"#);
        order.observe_outgoing(br#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished());
        order.observe_outgoing(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"x"}}"#);
        assert!(waiter.await.unwrap());
        assert_eq!(order.len(), 0);
    }

    // A hostile peer cannot wedge or flood the queue: duplicate ids and calls beyond the cap are
    // refused at the door.
    #[test]
    fn duplicates_and_calls_beyond_the_cap_are_refused() {
        let order = CallOrder::default();
        assert_eq!(order.admit(&id(7)), Admit::Queued);
        assert_eq!(order.admit(&id(7)), Admit::Duplicate);
        for n in 0..(MAX_QUEUED_CALLS as i64 - 1) {
            assert_eq!(order.admit(&id(1000 + n)), Admit::Queued);
        }
        assert_eq!(order.admit(&id(1)), Admit::Busy);
    }
}
