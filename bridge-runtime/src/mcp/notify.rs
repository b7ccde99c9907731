//! Per-connection notification state and fan-out (GB §6, GB-10.1-4, GB-10.1-5, OQ-GB-14,
//! OQ-GB-16).
//!
//! Notifications are derived from published state, never from events: a connection's channel
//! remembers the last `(windows_rev, tools_rev)` it delivered and, when the published state is
//! newer, sends `notifications/resources/updated` (if the channel subscribed to
//! `app://windows`) and/or `notifications/tools/list_changed`. Since published state is what
//! took effect, notifications always follow the effect (GB-6-1); a burst of changes coalesces
//! into one notification of each kind, and nothing is sent twice.
//!
//! A connection has at most one legacy channel (its `Peer`, captured at `initialize` /
//! `notifications/initialized`, fed by a forwarding task) and any number of 2026-07-28
//! `subscriptions/listen` streams (each fed by its own `listen` future). Every flush of a
//! connection, from its forwarder, its listen streams or its own `tools/call`, runs under one
//! async mutex, so the caller's notifications are written before its response.

use super::WINDOWS_URI;
use crate::gui::{Bridge, Published};
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, RoleServer, SubscriptionSendError, SubscriptionSink};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex as StdMutex, Weak};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// The revisions a notification is derived from. Both counters only grow, so revisions taken at
/// different times are ordered the same way componentwise and lexicographically.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Revs {
    windows: u64,
    tools: u64,
}

impl Revs {
    pub(crate) fn of(p: &Published) -> Self {
        Self { windows: p.windows_rev, tools: p.tools_rev }
    }

    /// Which notifications a channel that last delivered `seen` is due now:
    /// `(resources/updated, tools/list_changed)`.
    pub(crate) fn due_since(self, seen: Revs) -> (bool, bool) {
        (self.windows > seen.windows, self.tools > seen.tools)
    }
}

/// Session-based (2025-11-25 and older) channel: the peer itself.
struct Legacy {
    /// Set once the client sent `notifications/initialized` (or subscribed without it).
    peer: Option<Peer<RoleServer>>,
    /// `resources/subscribe app://windows` is in force (GB-10.1-5).
    subscribed: bool,
    seen: Revs,
}

/// One 2026-07-28 `subscriptions/listen` stream.
struct Listen {
    key: u64,
    sink: SubscriptionSink,
    windows: bool,
    tools: bool,
    seen: Revs,
}

#[derive(Default)]
struct Channels {
    legacy: Option<Legacy>,
    listens: Vec<Listen>,
    next_key: u64,
}

/// Most pending listen baselines a connection keeps (a listen whose acknowledgment failed never
/// takes its baseline back).
const MAX_PENDING_BASELINES: usize = 64;

/// The notification state of one MCP connection (one stdio stream, one legacy HTTP session, or
/// one 2026-07-28 HTTP `POST`).
pub(crate) struct Connection {
    channels: Mutex<Channels>,
    /// Baselines taken in `accepted_subscription_filter`, before rmcp acknowledges a listen,
    /// waiting for their `listen` call.
    baselines: StdMutex<Vec<Revs>>,
    forwarder_started: AtomicBool,
    /// Cancelled when the connection state is dropped: stops the forwarding task.
    closed: CancellationToken,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

static LIVE_FORWARDERS: AtomicUsize = AtomicUsize::new(0);

/// How many legacy forwarding tasks are running in this process (for leak tests).
pub fn live_forwarders() -> usize {
    LIVE_FORWARDERS.load(Ordering::SeqCst)
}

struct ForwarderGuard;

impl ForwarderGuard {
    fn new() -> Self {
        LIVE_FORWARDERS.fetch_add(1, Ordering::SeqCst);
        ForwarderGuard
    }
}

impl Drop for ForwarderGuard {
    fn drop(&mut self) {
        LIVE_FORWARDERS.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Connection {
    pub(crate) fn new() -> Self {
        Self {
            channels: Mutex::new(Channels::default()),
            baselines: StdMutex::new(Vec::new()),
            forwarder_started: AtomicBool::new(false),
            closed: CancellationToken::new(),
        }
    }

    /// `initialize`: open the legacy channel with `now` as baseline, so a change between the
    /// handshake and `notifications/initialized` is still announced.
    pub(crate) async fn legacy_begin(&self, now: Revs) {
        let mut ch = self.channels.lock().await;
        ch.legacy.get_or_insert(Legacy { peer: None, subscribed: false, seen: now });
    }

    /// `notifications/initialized` (or a first `resources/subscribe`): remember the peer, start
    /// the forwarding task, and announce anything newer than the baseline.
    pub(crate) async fn legacy_attach(self: &Arc<Self>, bridge: &Bridge, peer: Peer<RoleServer>) {
        {
            let now = Revs::of(&bridge.published());
            let mut ch = self.channels.lock().await;
            let legacy = ch.legacy.get_or_insert(Legacy { peer: None, subscribed: false, seen: now });
            if legacy.peer.is_none() {
                legacy.peer = Some(peer.clone());
            }
        }
        self.spawn_forwarder(bridge, peer);
        self.flush(Revs::of(&bridge.published())).await;
    }

    /// `resources/subscribe app://windows`: later window changes are announced to this peer.
    pub(crate) async fn legacy_subscribe(&self, now: Revs) {
        let mut ch = self.channels.lock().await;
        let legacy = ch.legacy.get_or_insert(Legacy { peer: None, subscribed: false, seen: now });
        legacy.subscribed = true;
        legacy.seen.windows = legacy.seen.windows.max(now.windows);
    }

    /// `resources/unsubscribe app://windows`.
    pub(crate) async fn legacy_unsubscribe(&self) {
        if let Some(legacy) = self.channels.lock().await.legacy.as_mut() {
            legacy.subscribed = false;
        }
    }

    /// Whether the legacy peer is known.
    pub(crate) async fn legacy_attached(&self) -> bool {
        self.channels.lock().await.legacy.as_ref().is_some_and(|l| l.peer.is_some())
    }

    /// Records the revisions current before rmcp acknowledges a listen (it sends the
    /// acknowledgment before calling `listen`, and a client may change the UI as soon as it
    /// has it).
    pub(crate) fn push_baseline(&self, now: Revs) {
        let mut b = self.baselines.lock().unwrap_or_else(|e| e.into_inner());
        if b.len() >= MAX_PENDING_BASELINES {
            remove_max(&mut b);
        }
        b.push(now);
    }

    /// The baseline for a listen that is starting. With several listens pending on one
    /// connection it cannot tell which baseline is its own, so it takes the oldest and drops the
    /// newest: every pending listen still finds one no newer than its own, at worst repeating a
    /// notification, never missing one.
    pub(crate) fn take_baseline(&self) -> Option<Revs> {
        let mut b = self.baselines.lock().unwrap_or_else(|e| e.into_inner());
        let oldest = b.iter().min().copied()?;
        remove_max(&mut b);
        Some(oldest)
    }

    /// Registers a listen stream; returns its key for [`Connection::remove_listen`].
    pub(crate) async fn add_listen(&self, sink: SubscriptionSink, windows: bool, tools: bool, seen: Revs) -> u64 {
        let mut ch = self.channels.lock().await;
        ch.next_key += 1;
        let key = ch.next_key;
        ch.listens.push(Listen { key, sink, windows, tools, seen });
        key
    }

    pub(crate) async fn remove_listen(&self, key: u64) {
        self.channels.lock().await.listens.retain(|l| l.key != key);
    }

    /// Sends every channel of this connection what it has not yet been told about `now`.
    pub(crate) async fn flush(&self, now: Revs) {
        let mut ch = self.channels.lock().await;
        let Channels { legacy, listens, .. } = &mut *ch;
        if let Some(l) = legacy.as_mut()
            && let Some(peer) = l.peer.as_ref()
        {
            let (updated, tools_changed) = now.due_since(l.seen);
            if updated {
                l.seen.windows = now.windows;
                if l.subscribed
                    && let Err(e) =
                        peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(WINDOWS_URI)).await
                {
                    tracing::debug!(error = %e, "resources/updated not delivered");
                }
            }
            if tools_changed {
                l.seen.tools = now.tools;
                if let Err(e) = peer.notify_tool_list_changed().await {
                    tracing::debug!(error = %e, "tools/list_changed not delivered");
                }
            }
        }
        let mut dead = Vec::new();
        for l in listens.iter_mut() {
            let mut result = Ok(());
            let (updated, tools_changed) = now.due_since(l.seen);
            if updated {
                l.seen.windows = now.windows;
                if l.windows {
                    result = l.sink.notify_resource_updated(WINDOWS_URI).await;
                }
            }
            if result.is_ok() && tools_changed {
                l.seen.tools = now.tools;
                if l.tools {
                    result = l.sink.notify_tool_list_changed().await;
                }
            }
            match result {
                Ok(()) => {}
                Err(SubscriptionSendError::SubscriptionClosed) => dead.push(l.key),
                Err(e) => {
                    tracing::debug!(error = %e, "listen notification not delivered");
                    dead.push(l.key);
                }
            }
        }
        if !dead.is_empty() {
            listens.retain(|l| !dead.contains(&l.key));
        }
    }

    /// One task per legacy connection: re-flushes on every published change until the
    /// connection state is dropped or the peer's transport closes.
    fn spawn_forwarder(self: &Arc<Self>, bridge: &Bridge, peer: Peer<RoleServer>) {
        if self.forwarder_started.swap(true, Ordering::SeqCst) {
            return;
        }
        let conn: Weak<Self> = Arc::downgrade(self);
        let closed = self.closed.clone();
        let mut rx = bridge.watch();
        let guard = ForwarderGuard::new();
        tokio::spawn(async move {
            let _guard = guard;
            loop {
                tokio::select! {
                    _ = closed.cancelled() => break,
                    changed = rx.changed() => {
                        if changed.is_err() || peer.is_transport_closed() {
                            break;
                        }
                        let now = Revs::of(&rx.borrow_and_update());
                        let Some(conn) = conn.upgrade() else { break };
                        conn.flush(now).await;
                    }
                }
            }
            tracing::debug!("legacy notification forwarder stopped");
        });
    }
}

fn remove_max(b: &mut Vec<Revs>) {
    if let Some((i, _)) = b.iter().enumerate().max_by_key(|(_, r)| **r) {
        b.swap_remove(i);
    }
}
