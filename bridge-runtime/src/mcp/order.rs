//! Per-connection request order: the requests of one connection that read or change state
//! (`tools/call`, `tools/list`, `resources/read`, `resources/list`, `resources/templates/list`,
//! `resources/subscribe`, `resources/unsubscribe`) take effect in the order they arrived
//! (GB-10.1-3), and one cancelled before its turn never runs.
//!
//! rmcp spawns a task per request, so handlers start in scheduling order, not arrival order.
//! The stdio pre-layer ([`super::stdio`]) takes a *ticket* for every such request it forwards,
//! in the order it reads them; the handler (in [`GuiBridgeServer`](super::GuiBridgeServer))
//! claims its ticket by request id and waits until every earlier ticket's handler has finished
//! before it reads or touches anything.
//!
//! A ticket lives until the request's answer has been written (so a second request with the
//! same id is recognised for as long as the client could confuse the two answers), but it
//! stops holding later requests back as soon as its handler has finished. Nothing can wedge
//! the queue:
//! - a handler that finishes, fails or is cancelled drops its [`Turn`] or leaves the wait:
//!   its ticket no longer holds anyone back, and goes when its answer passes the writer
//!   ([`CallOrder::observe_outgoing`]), or at once when no answer will come (the peer
//!   cancelled the request: rmcp drops the answer of a cancelled request; or its handler
//!   panicked);
//! - a ticket whose handler never comes (rmcp answered the request itself, e.g. a request
//!   with incomplete inline `_meta` before the session started) goes when that answer passes
//!   the writer;
//! - a request with the id of one still in flight is refused at the door
//!   ([`Admit::Duplicate`]): its `-32600` error waits on the original's ticket and is written
//!   right after the original's answer, so the client reads the answers in the order it sent
//!   the requests; the ticket keeps a count, not the lines;
//! - at most [`MAX_QUEUED_CALLS`] tickets per connection; beyond that the request is refused
//!   as busy.
//!
//! The pre-layer's own answer to a request (a `tools/call` too deep to read, a second
//! `initialize`) takes a ticket too ([`CallOrder::hold`]): it holds no one back, and is written
//! once no ticket read before it remains, i.e. after the answers to the requests that arrived
//! before it. An `initialize` takes a ticket that holds no one back ([`CallOrder::admit_done`])
//! so that such an answer waits for its result.

use rmcp::model::RequestId;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Most ordered requests of one connection waiting, running or not yet answered at once; the
/// next one is refused with a busy error until some are answered.
pub(crate) const MAX_QUEUED_CALLS: usize = 256;

/// Whether a request read from the wire got a ticket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admit {
    /// Queued behind every ordered request read before it.
    Queued,
    /// [`MAX_QUEUED_CALLS`] requests are already in flight.
    Busy,
    /// A request with the same id is still in flight: this one's error is held until that
    /// one's answer has been written (the writer gets it from
    /// [`CallOrder::observe_outgoing`] or [`CallOrder::take_freed`]).
    Duplicate,
}

/// What [`CallOrder::hold`] did with an answer of the pre-layer's.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Hold {
    /// No earlier request awaits its answer: write this line now.
    Now(Vec<u8>),
    /// Queued: the writer gets it once the answers before it are written.
    Held,
    /// [`MAX_QUEUED_CALLS`] requests are in flight.
    Busy,
    /// A request with the same id is in flight (see [`Admit::Duplicate`]); the line is dropped.
    Duplicate,
}

/// Something the writer must write after the answer it just wrote, or on its own.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Release {
    /// The `-32600` errors of this many requests that reused `id` while it was in flight.
    Duplicates(RequestId, usize),
    /// A held answer of the pre-layer's whose turn has come.
    Line(Vec<u8>),
}

/// Where a ticket's request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Read from the wire; its handler has not arrived yet.
    Unclaimed,
    /// Its handler waits for its turn or runs.
    Claimed,
    /// Its handler has finished; its answer has not been written yet.
    Done,
}

struct Ticket {
    id: RequestId,
    state: State,
    /// The peer cancelled it (`notifications/cancelled` read): no answer may come.
    cancelled: bool,
    /// Requests with this id refused while this one is in flight, whose errors wait for its
    /// answer.
    duplicates: usize,
    /// Woken when this ticket may have reached its turn.
    wake: Arc<Notify>,
    /// The pre-layer's answer, written when no earlier ticket remains (such a ticket is
    /// [`State::Done`] from the start and never matches an outgoing answer).
    held: Option<Vec<u8>>,
    /// Tracks the id of a request in no order (`ping`, `server/discover`, a long-lived
    /// `subscriptions/listen`): [`State::Done`] from the start, it holds back neither requests
    /// nor the pre-layer's answers, and goes when its answer passes the writer.
    unordered: bool,
}

/// The request tickets of one connection, in arrival order.
#[derive(Default)]
pub(crate) struct CallOrder {
    tickets: Mutex<VecDeque<Ticket>>,
    /// Tickets in the queue; the writer looks at answers only while some exist.
    tracked: AtomicUsize,
    /// What the writer must write that no outgoing answer of rmcp's brought along: duplicate
    /// errors whose original will never be answered, held answers whose turn came.
    freed: Mutex<Vec<Release>>,
    /// Woken when `freed` gets an entry.
    freed_ready: Notify,
}

impl std::fmt::Debug for CallOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOrder").field("queued", &self.lock().len()).finish()
    }
}

/// The right to run: held by a request's handler while it runs; dropping it lets the next
/// request go.
#[must_use]
pub(crate) struct Turn<'a> {
    order: &'a CallOrder,
    id: RequestId,
    ct: CancellationToken,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        // A handler that panics (or is cancelled) sends no answer: its ticket goes now.
        self.order.finish(&self.id, self.ct.is_cancelled() || std::thread::panicking());
    }
}

impl CallOrder {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Ticket>> {
        // A panic while holding this lock leaves the queue consistent (no step is half done).
        self.tickets.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes a ticket for the request `id`, read from the wire just now.
    pub(crate) fn admit(&self, id: &RequestId) -> Admit {
        self.push(id, State::Unclaimed, false)
    }

    /// Takes a ticket for the request `id` that holds no later request back (an `initialize`,
    /// which rmcp answers itself before any handler runs): it only keeps the pre-layer's
    /// answers read after it waiting for its answer.
    pub(crate) fn admit_done(&self, id: &RequestId) -> Admit {
        self.push(id, State::Done, false)
    }

    /// Takes a ticket for the request `id` that is in no order (a `ping`): it only keeps its id
    /// from being reused while the request is in flight, so that its answer and another
    /// request's never share an id.
    pub(crate) fn admit_unordered(&self, id: &RequestId) -> Admit {
        self.push(id, State::Done, true)
    }

    fn push(&self, id: &RequestId, state: State, unordered: bool) -> Admit {
        let mut tickets = self.lock();
        if let Some(original) = tickets.iter_mut().find(|t| &t.id == id) {
            original.duplicates = original.duplicates.saturating_add(1);
            return Admit::Duplicate;
        }
        if tickets.len() >= MAX_QUEUED_CALLS {
            return Admit::Busy;
        }
        tickets.push_back(Ticket {
            id: id.clone(),
            state,
            cancelled: false,
            duplicates: 0,
            wake: Arc::new(Notify::new()),
            held: None,
            unordered,
        });
        self.tracked.store(tickets.len(), Ordering::Relaxed);
        Admit::Queued
    }

    /// Queues `line`, the pre-layer's own answer to the request `id` read just now, behind
    /// every ticket read before it: [`Hold::Now`] when there is none.
    pub(crate) fn hold(&self, id: &RequestId, line: Vec<u8>) -> Hold {
        let mut tickets = self.lock();
        if let Some(original) = tickets.iter_mut().find(|t| &t.id == id) {
            original.duplicates = original.duplicates.saturating_add(1);
            return Hold::Duplicate;
        }
        if tickets.iter().all(|t| t.unordered) {
            return Hold::Now(line);
        }
        if tickets.len() >= MAX_QUEUED_CALLS {
            return Hold::Busy;
        }
        tickets.push_back(Ticket {
            id: id.clone(),
            state: State::Done,
            cancelled: false,
            duplicates: 0,
            wake: Arc::new(Notify::new()),
            held: Some(line),
            unordered: false,
        });
        self.tracked.store(tickets.len(), Ordering::Relaxed);
        Hold::Held
    }

    /// Takes the held answers at the front of the queue (no earlier ticket remains but those
    /// of unordered requests), each with the duplicate errors held on it.
    fn release_front(&self, tickets: &mut VecDeque<Ticket>, out: &mut Vec<Release>) {
        while let Some(front) = tickets.iter().position(|t| !t.unordered)
            && tickets[front].held.is_some()
        {
            let Some(mut gone) = self.remove(tickets, front) else { break };
            if let Some(line) = gone.held.take() {
                out.push(Release::Line(line));
            }
            if gone.duplicates > 0 {
                out.push(Release::Duplicates(gone.id, gone.duplicates));
            }
        }
    }

    /// Waits for the turn of request `id`: until every ordered request that arrived before it
    /// has finished or was abandoned. `None` when `ct` fired first (the request was cancelled
    /// before it started, and must not run). A request without a ticket (one that did not come
    /// through the pre-layer) runs at once.
    pub(crate) async fn turn(&self, id: &RequestId, ct: &CancellationToken) -> Option<Turn<'_>> {
        let wake = {
            let mut tickets = self.lock();
            let Some(ticket) =
                tickets.iter_mut().find(|t| &t.id == id && t.state == State::Unclaimed && t.held.is_none())
            else {
                return (!ct.is_cancelled()).then(|| Turn { order: self, id: id.clone(), ct: ct.clone() });
            };
            ticket.state = State::Claimed;
            ticket.wake.clone()
        };
        loop {
            if ct.is_cancelled() {
                self.finish(id, true);
                return None;
            }
            if Self::running(&self.lock()).is_some_and(|t| &t.id == id) {
                return Some(Turn { order: self, id: id.clone(), ct: ct.clone() });
            }
            tokio::select! {
                _ = wake.notified() => {}
                _ = ct.cancelled() => {}
            }
        }
    }

    /// The ticket whose turn it is: the first whose handler has not finished.
    fn running(tickets: &VecDeque<Ticket>) -> Option<&Ticket> {
        tickets.iter().find(|t| t.state != State::Done)
    }

    /// The handler of `id` has finished (or given up): the next request may go. Its ticket
    /// waits for the answer, unless none will come (`cancelled`).
    fn finish(&self, id: &RequestId, cancelled: bool) {
        let mut tickets = self.lock();
        if let Some(i) = tickets.iter().position(|t| &t.id == id && t.state != State::Unclaimed && t.held.is_none()) {
            if cancelled || tickets[i].cancelled {
                self.remove_unanswered(&mut tickets, i);
            } else {
                tickets[i].state = State::Done;
            }
        }
        Self::wake_running(&tickets);
    }

    /// Removes ticket `i`, whose request will never be answered: its duplicates' errors and the
    /// held answers its removal lets go are handed to the writer.
    fn remove_unanswered(&self, tickets: &mut VecDeque<Ticket>, i: usize) {
        let mut out = Vec::new();
        if let Some(gone) = self.remove(tickets, i)
            && gone.duplicates > 0
        {
            out.push(Release::Duplicates(gone.id, gone.duplicates));
        }
        self.release_front(tickets, &mut out);
        if !out.is_empty() {
            self.freed.lock().unwrap_or_else(std::sync::PoisonError::into_inner).extend(out);
            self.freed_ready.notify_one();
        }
    }

    fn wake_running(tickets: &VecDeque<Ticket>) {
        if let Some(next) = Self::running(tickets) {
            // A stored permit: the next request wakes even if it is not waiting yet.
            next.wake.notify_one();
        }
    }

    /// Removes ticket `i`; the caller passes on the duplicates held on it.
    fn remove(&self, tickets: &mut VecDeque<Ticket>, i: usize) -> Option<Ticket> {
        let gone = tickets.remove(i)?;
        self.tracked.store(tickets.len(), Ordering::Relaxed);
        Some(gone)
    }

    /// The peer cancelled request `id` (the pre-layer read its `notifications/cancelled`):
    /// rmcp will drop its answer, so its ticket goes as soon as its handler has finished.
    pub(crate) fn peer_cancelled(&self, id: &RequestId) {
        let mut tickets = self.lock();
        let Some(i) = tickets.iter().position(|t| &t.id == id && t.held.is_none()) else { return };
        tickets[i].cancelled = true;
        if tickets[i].state == State::Done {
            self.remove_unanswered(&mut tickets, i);
            Self::wake_running(&tickets);
        }
    }

    /// What the writer must write with no answer of rmcp's to follow: duplicate errors whose
    /// original will never be answered, held answers whose turn came.
    pub(crate) fn take_freed(&self) -> Vec<Release> {
        std::mem::take(&mut *self.freed.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// Resolves when [`take_freed`](Self::take_freed) may have something.
    pub(crate) async fn freed_ready(&self) {
        self.freed_ready.notified().await
    }

    /// Looks at one line the server writes: the answer to a request with a ticket removes the
    /// ticket (its handler finished, or never came because rmcp answered the request itself),
    /// and returns what is to be written right after it: the duplicate errors held for it, then
    /// the held answers of the pre-layer's that no earlier ticket holds back any more.
    /// Costs nothing while no ticket exists; otherwise reads only the `id` that rmcp writes
    /// second in every answer (`{"jsonrpc":"2.0","id":…`).
    pub(crate) fn observe_outgoing(&self, line: &[u8]) -> Vec<Release> {
        let mut out = Vec::new();
        if self.tracked.load(Ordering::Relaxed) == 0 {
            return out;
        }
        let Some(id) = answer_id(line) else { return out };
        let mut tickets = self.lock();
        // A claimed ticket's handler still waits or runs: this answer is not its own.
        let Some(i) = tickets.iter().position(|t| t.id == id && t.state != State::Claimed && t.held.is_none()) else {
            return out;
        };
        let Some(gone) = self.remove(&mut tickets, i) else { return out };
        if gone.duplicates > 0 {
            out.push(Release::Duplicates(gone.id, gone.duplicates));
        }
        self.release_front(&mut tickets, &mut out);
        Self::wake_running(&tickets);
        out
    }

    /// Tickets in flight (for tests and the debug output).
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
        // Each ticket goes when its answer is written.
        assert_eq!(order.len(), 5);
        for n in 1..=5 {
            order.observe_outgoing(format!(r#"{{"jsonrpc":"2.0","id":{n},"result":{{}}}}"#).as_bytes());
        }
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
        // The cancelled call's ticket is gone (no answer comes); the others await theirs.
        assert_eq!(order.len(), 2);
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
        assert_eq!(order.len(), 1);
        order.observe_outgoing(br#"{"jsonrpc":"2.0","id":"b","result":{}}"#);
        assert_eq!(order.len(), 0);
    }

    // A request with the id of one in flight waits for the original's answer: its error is
    // handed to the writer right after that answer, never before.
    #[tokio::test]
    async fn a_duplicates_error_waits_for_the_originals_answer() {
        let order = CallOrder::default();
        assert_eq!(order.admit(&id(1)), Admit::Queued);
        assert_eq!(order.admit(&id(1)), Admit::Duplicate);
        assert_eq!(order.admit(&id(1)), Admit::Duplicate);
        let ct = CancellationToken::new();
        drop(order.turn(&id(1), &ct).await.expect("front"));
        // The handler finished; the answer is not written yet: still a duplicate.
        assert_eq!(order.admit(&id(1)), Admit::Duplicate);
        assert_eq!(
            order.observe_outgoing(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            vec![Release::Duplicates(id(1), 3)]
        );
        assert_eq!(order.len(), 0);
        assert!(order.take_freed().is_empty());
        assert_eq!(order.admit(&id(1)), Admit::Queued, "answered: the id is free again");
    }

    // A finished request whose answer is pending holds no one back.
    #[tokio::test]
    async fn a_finished_request_does_not_hold_the_next_back() {
        let order = CallOrder::default();
        order.admit(&id(1));
        order.admit(&id(2));
        let ct = CancellationToken::new();
        drop(order.turn(&id(1), &ct).await.expect("front"));
        assert!(order.turn(&id(2), &ct).await.is_some(), "the next request runs before the first's answer");
    }

    // A request the peer cancels gets no answer from rmcp: its ticket goes when its handler
    // has finished, and the duplicates held on it are freed for the writer.
    #[tokio::test]
    async fn a_cancelled_request_frees_its_duplicates() {
        let order = CallOrder::default();
        order.admit(&id(1));
        assert_eq!(order.admit(&id(1)), Admit::Duplicate);
        let ct = CancellationToken::new();
        let turn = order.turn(&id(1), &ct).await.expect("front");
        order.peer_cancelled(&id(1));
        assert_eq!(order.len(), 1, "still running");
        drop(turn);
        assert_eq!(order.len(), 0);
        assert_eq!(order.take_freed(), vec![Release::Duplicates(id(1), 1)]);
        // Cancelled after its handler finished: freed at once.
        order.admit(&id(2));
        order.admit(&id(2));
        drop(order.turn(&id(2), &ct).await.expect("front"));
        order.peer_cancelled(&id(2));
        assert_eq!(order.len(), 0);
        assert_eq!(order.take_freed(), vec![Release::Duplicates(id(2), 1)]);
    }

    // The pre-layer's own answer waits for the answers to the requests read before it, however
    // the handlers finish; with nothing before it, it goes at once.
    #[tokio::test]
    async fn a_held_answer_follows_the_answers_before_it_gb_10_1_3() {
        let order = CallOrder::default();
        assert_eq!(order.hold(&id(9), b"first\n".to_vec()), Hold::Now(b"first\n".to_vec()));
        order.admit_done(&RequestId::String("init".into()));
        order.admit(&id(1));
        order.admit(&id(2));
        assert_eq!(order.hold(&id(3), b"held\n".to_vec()), Hold::Held);
        assert_eq!(order.hold(&id(3), b"again\n".to_vec()), Hold::Duplicate, "its id is in flight");
        assert_eq!(order.hold(&id(1), b"dup\n".to_vec()), Hold::Duplicate);
        // A held answer holds no handler back.
        let ct = CancellationToken::new();
        drop(order.turn(&id(1), &ct).await.expect("front"));
        drop(order.turn(&id(2), &ct).await.expect("next"));
        assert!(order.observe_outgoing(br#"{"jsonrpc":"2.0","id":2,"result":{}}"#).is_empty());
        assert!(order.observe_outgoing(br#"{"jsonrpc":"2.0","id":"init","result":{}}"#).is_empty());
        assert_eq!(
            order.observe_outgoing(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            vec![Release::Duplicates(id(1), 1), Release::Line(b"held\n".to_vec()), Release::Duplicates(id(3), 1)]
        );
        assert_eq!(order.len(), 0);
        // A request cancelled before its answer lets the held answer behind it go.
        order.admit(&id(4));
        assert_eq!(order.hold(&id(5), b"five\n".to_vec()), Hold::Held);
        drop(order.turn(&id(4), &ct).await.expect("front"));
        order.peer_cancelled(&id(4));
        assert_eq!(order.take_freed(), vec![Release::Line(b"five\n".to_vec())]);
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
