//! JSON-RPC 2.0 over a Unix domain socket (CP-1-4, CP-8-1): the companion methods for external
//! clients. No TCP listener exists anywhere (CP-5-15). Two parts: the socket's security
//! (`socket`: private directory and file modes, peer credentials) and the session protocol
//! (`session`: framing, authentication, routing by the protocol table,
//! [`super::protocol::route`]).
//!
//! **Socket (CP-5-12).** [`bind_private`] creates the socket's parent directory with mode `0700`
//! (refusing an existing one that is not a directory, belongs to another user, or is
//! accessible to group or others), removes a stale socket file only if nothing listens on it
//! (never a non-socket file), binds, and sets the socket to `0600`. Peers running as another
//! user are disconnected at once.
//!
//! **Framing.** One JSON-RPC message per line (`\n`, UTF-8). Single calls and batches (answered
//! in order, in one array; an empty batch → one `-32600`; only notifications → no answer).
//! Notifications are executed and never answered. Malformed JSON → `-32700` with `id: null`;
//! valid JSON nested more than 127 levels deep → `-32600` with `id: null`, a message naming the
//! cap and `error.data.maxNestingDepth`; a non-request → `-32600`; unknown method → `-32601`. A line longer than the limit
//! (`limits.maxMessageBytes`, 1 MiB by default; `limits.maxUnauthenticatedMessageBytes`, 8 KiB,
//! before authentication) is answered with `-32600` and the connection is closed, after at most
//! that many bytes were buffered. None of this affects other connections or the server. The
//! server keeps answering after the client half-closes its write side, then closes.
//!
//! **Methods.** Every method of the protocol table, routed by its lane
//! ([`super::protocol::route`]): `pairing.request` and `session.authenticate` by the connection
//! (see [`super::auth`]), `rpc.discover` (the OpenRPC document) by the transport, and the ten
//! CP-2-1 methods by the engine with the connection as the caller; any other name →
//! `METHOD_NOT_FOUND`. Who may call what is the engine's admission, read from the table:
//! `runtime.describe` needs neither authentication nor a scope (so the protocol version can
//! always be negotiated; over the socket its result gains `authorization.authenticated`, the
//! transport limits and `authentication`), every other method an authenticated connection
//! (else `UNAUTHENTICATED`) and the method's scope. Coded errors travel as `error.code` integer +
//! `error.data = {"code", "retryable", ...}` (OQ-CP-12).
//!
//! Calls on one connection run concurrently (up to
//! [`ServerConfig::max_in_flight_per_connection`]), except `session.authenticate`,
//! `pairing.request` and batches, which run in order before the next line is read. Responses to
//! concurrent calls are written as they finish; match them by `id`. A request whose `id` is the
//! `id` of one still in flight on the connection does not run: it gets `-32600` ("id already in
//! flight"), written right after the original's answer (in a batch, in the batch's answer).
//!
//! **Revocation (CP-4-22).** When the client's key is revoked, every request in flight on its
//! connections is answered `UNAUTHENTICATED` under its own `id` (a connection with nothing in
//! flight gets one `UNAUTHENTICATED` error with `id: null`), then the connection closes.
//!
//! **Fair shares (CP-5-13).** Unauthenticated connections have their own cap below the total
//! ([`ServerConfig::max_unauthenticated_connections`]) and a deadline to authenticate
//! ([`ServerConfig::auth_deadline`]) besides the time per message, so peers that never
//! authenticate cannot hold every slot; every `session.authenticate` attempt counts toward
//! [`ServerConfig::max_auth_failures`], those in a batch too; a pairing is withdrawn when its
//! connection closes (no denial), a client the user denied waits before it may ask again
//! ([`super::auth::AuthConfig::pairing_backoff`], per client name and peer uid), and prompts
//! that did not end in a pairing are capped per interval whoever asks
//! ([`super::auth::AuthConfig::max_pairing_prompts`]).

mod session;
mod socket;

#[cfg(feature = "fuzzing")]
pub(in crate::companion) use session::read_params;

pub use super::unix::{default_socket_path, ensure_private_dir};
pub use socket::bind_private;

use super::auth::Auth;
use super::engine::Engine;
use super::error::{CompanionError, ErrorCode};
use super::jsonrpc;
use super::protocol::SOCKET_METHODS;
use super::protocol::results::TransportLimits;
use serde_json::Value;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::UnixListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// Default largest message of an authenticated connection: 1 MiB.
pub(crate) const DEFAULT_MAX_MESSAGE_BYTES: usize = 1 << 20;
/// Default largest message before authentication: 8 KiB (CP-5-13).
pub(crate) const DEFAULT_MAX_UNAUTHENTICATED_MESSAGE_BYTES: usize = 8 << 10;

/// The methods served besides the ten engine methods: `rpc.discover`, `session.authenticate`,
/// `pairing.request` (the protocol table's transport and connection lanes).
pub(crate) const EXTRA_METHODS: [&str; 3] =
    [SOCKET_METHODS[0].as_str(), SOCKET_METHODS[1].as_str(), SOCKET_METHODS[2].as_str()];

/// Transport limits. Every one is published by `runtime.describe` under `limits`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Largest line of an authenticated connection, bytes (`maxMessageBytes`).
    pub max_message_bytes: usize,
    /// Largest line before authentication, bytes (`maxUnauthenticatedMessageBytes`, CP-5-13).
    pub max_unauthenticated_message_bytes: usize,
    /// An unauthenticated connection must complete each message within this time, or it is
    /// closed (`authTimeoutMs`, CP-5-13; default 5 s). A pending `pairing.request` is bounded by
    /// [`super::auth::AuthConfig::pairing_timeout`] instead.
    pub auth_timeout: Duration,
    /// A connection must have authenticated this long after it was accepted, or it is closed
    /// with `UNAUTHENTICATED`, however busy it keeps (e.g. with `runtime.describe`); the time a
    /// `pairing.request` waits for the user does not count (`authDeadlineMs`, CP-5-13; default
    /// 30 s).
    pub auth_deadline: Duration,
    /// Failed `session.authenticate` calls before the connection is closed (default 3). Every
    /// attempt counts, those in a batch too; after the last one no key is checked.
    pub max_auth_failures: u32,
    /// Concurrent connections; beyond, a new one gets a `QUEUE_FULL` error and is closed
    /// (`maxConnections`, default 128).
    pub max_connections: usize,
    /// Concurrent connections that have not authenticated yet, a part of `max_connections`
    /// (at most `max_connections - 1`, so that unauthenticated peers never take every slot);
    /// beyond, a new one gets `QUEUE_FULL` (`limit: "maxUnauthenticatedConnections"`) and is
    /// closed (`maxUnauthenticatedConnections`, default 64: half the default total).
    pub max_unauthenticated_connections: usize,
    /// Authenticated connections one client (one `clientId`) may hold at once; beyond, its
    /// `session.authenticate` gets `QUEUE_FULL` (`limit: "maxConnectionsPerClient"`) and the
    /// connection stays unauthenticated, so one paired client cannot take every slot from the
    /// others and from new pairings (`maxConnectionsPerClient`, default 32: a quarter of the
    /// default total; at most `max_connections - max_unauthenticated_connections`, at least 1).
    pub max_connections_per_client: usize,
    /// Calls one connection may have running at once; further lines wait
    /// (`maxInFlightPerConnection`, default 16).
    pub max_in_flight_per_connection: usize,
    /// Largest batch (`maxBatchLength`, default 64); longer → `-32600`.
    pub max_batch_len: usize,
}

impl ServerConfig {
    /// What `runtime.describe` publishes of these limits over the socket, every member present
    /// (CP-5-13): the shares as the server applies them (see
    /// [`ServerConfig::max_unauthenticated_connections`],
    /// [`ServerConfig::max_connections_per_client`]) and `pairing_timeout`, the time a
    /// `pairing.request` waits for the user. The one place these limits are mapped to the wire.
    pub(crate) fn transport_limits(&self, pairing_timeout: Duration) -> TransportLimits {
        let ms = |d: Duration| Some(u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let count = |n: usize| Some(u64::try_from(n).unwrap_or(u64::MAX));
        TransportLimits {
            max_message_bytes: count(self.max_message_bytes),
            max_unauthenticated_message_bytes: count(self.max_unauthenticated_message_bytes),
            auth_timeout_ms: ms(self.auth_timeout),
            auth_deadline_ms: ms(self.auth_deadline),
            max_unauthenticated_connections: count(unauthenticated_share(self)),
            max_batch_length: count(self.max_batch_len),
            max_connections: count(self.max_connections),
            max_connections_per_client: count(per_client_share(self)),
            max_in_flight_per_connection: count(self.max_in_flight_per_connection),
            pairing_timeout_ms: ms(pairing_timeout),
        }
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_unauthenticated_message_bytes: DEFAULT_MAX_UNAUTHENTICATED_MESSAGE_BYTES,
            auth_timeout: Duration::from_secs(5),
            auth_deadline: Duration::from_secs(30),
            max_auth_failures: 3,
            max_connections: 128,
            max_unauthenticated_connections: 64,
            max_connections_per_client: 32,
            max_in_flight_per_connection: 16,
            max_batch_len: 64,
        }
    }
}

/// The socket server: an [`Engine`], an [`Auth`] and the transport limits.
#[derive(Debug, Clone)]
pub struct Server {
    engine: Engine,
    auth: Auth,
    config: ServerConfig,
}

/// Binds `path` privately ([`bind_private`]) and serves until the future is dropped; then the
/// socket file is removed and every connection closed. Errors: the socket cannot be set up.
pub async fn serve_unix(engine: Engine, auth: Auth, path: impl AsRef<Path>) -> io::Result<()> {
    Server::new(engine, auth).serve_unix(path).await
}

/// Serves on an already bound listener until the future is dropped (tests, or a listener
/// handed over by the system).
pub async fn serve_listener(engine: Engine, auth: Auth, listener: UnixListener) {
    Server::new(engine, auth).serve(listener).await
}

impl Server {
    /// A server with [`ServerConfig::default`].
    pub fn new(engine: Engine, auth: Auth) -> Self {
        Self { engine, auth, config: ServerConfig::default() }
    }

    /// Sets the transport limits.
    pub fn config(mut self, config: ServerConfig) -> Self {
        self.config = config;
        self
    }

    /// Binds `path` privately ([`bind_private`]) and serves until the future is dropped; then
    /// the socket file is removed. Errors: the socket cannot be set up.
    pub async fn serve_unix(self, path: impl AsRef<Path>) -> io::Result<()> {
        let path = path.as_ref();
        let listener = bind_private(path)?;
        let _cleanup = socket::SocketFile::new(path);
        tracing::info!(socket = %path.display(), "companion: listening");
        self.serve(listener).await;
        Ok(())
    }

    /// Accepts connections on `listener` until the future is dropped, which also closes every
    /// connection. Accept errors (e.g. out of file descriptors) are logged and retried.
    pub async fn serve(self, listener: UnixListener) {
        let shutdown = CancellationToken::new();
        let _guard = shutdown.clone().drop_guard();
        let transport = self.config.transport_limits(self.auth.config().pairing_timeout);
        let shared = Arc::new(Shared {
            slots: Arc::new(Semaphore::new(self.config.max_connections)),
            unauthenticated: Arc::new(Semaphore::new(unauthenticated_share(&self.config))),
            transport,
            engine: self.engine,
            auth: self.auth,
            config: self.config,
            next_conn: AtomicU64::new(1),
            per_client: Arc::new(std::sync::Mutex::new(std::collections::HashMap::new())),
        });
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    let shared = shared.clone();
                    let kill = shutdown.child_token();
                    tokio::spawn(async move {
                        let Ok(slot) = shared.slots.clone().try_acquire_owned() else {
                            tracing::warn!("companion: connection refused, too many connections");
                            refuse(stream, "Too many connections", "maxConnections").await;
                            return;
                        };
                        let Ok(unauthenticated) = shared.unauthenticated.clone().try_acquire_owned() else {
                            tracing::warn!("companion: connection refused, too many unauthenticated connections");
                            refuse(
                                stream,
                                "Too many connections waiting to authenticate",
                                "maxUnauthenticatedConnections",
                            )
                            .await;
                            return;
                        };
                        let conn_id = shared.next_conn.fetch_add(1, Ordering::Relaxed);
                        let Ok((pid, uid)) = socket::same_user_peer(&stream) else {
                            tracing::warn!(conn_id, "companion: refused a connection from another user");
                            return;
                        };
                        let fd = Some(std::os::fd::AsRawFd::as_raw_fd(&stream));
                        let peer = session::Peer { pid, uid, fd, unauthenticated: Some(unauthenticated) };
                        let (rd, wr) = stream.into_split();
                        session::connection(shared, conn_id, rd, wr, peer, kill).await;
                        drop(slot);
                    });
                }
                Err(e) => {
                    tracing::warn!(error = %e, "companion: accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }
}

/// Answers a connection that gets no slot with `QUEUE_FULL` naming `limit`, then closes it.
async fn refuse(mut stream: tokio::net::UnixStream, message: &str, limit: &str) {
    let err = CompanionError::new(ErrorCode::QueueFull, message).with("limit", limit);
    let line = session::line_of(&jsonrpc::failure(Value::Null, err.to_jsonrpc()));
    let _ = tokio::time::timeout(Duration::from_secs(1), stream.write_all(&line)).await;
}

/// The unauthenticated connections allowed at once: the configured number, below the total.
fn unauthenticated_share(c: &ServerConfig) -> usize {
    c.max_unauthenticated_connections.min(c.max_connections.saturating_sub(1)).max(1)
}

struct Shared {
    engine: Engine,
    auth: Auth,
    config: ServerConfig,
    /// What `runtime.describe` publishes of `config` (and of the pairing timeout).
    transport: TransportLimits,
    slots: Arc<Semaphore>,
    /// Slots of connections that have not authenticated yet (within `slots`).
    unauthenticated: Arc<Semaphore>,
    next_conn: AtomicU64,
    /// Authenticated connections per client id (`max_connections_per_client`).
    per_client: Arc<std::sync::Mutex<std::collections::HashMap<String, usize>>>,
}

/// The connections one client may hold at once: the configured number, at least 1, and never
/// more than the slots unauthenticated connections leave.
fn per_client_share(c: &ServerConfig) -> usize {
    c.max_connections_per_client.min(c.max_connections.saturating_sub(unauthenticated_share(c))).max(1)
}

/// One authenticated connection's place in its client's share; given back when dropped.
pub(super) struct ClientSlot {
    counts: Arc<std::sync::Mutex<std::collections::HashMap<String, usize>>>,
    client_id: String,
}

impl ClientSlot {
    /// Takes a place for `client_id`, or `None` when the client holds `max` already.
    fn take(shared: &Shared, client_id: &str) -> Option<Self> {
        let max = per_client_share(&shared.config);
        let mut counts = shared.per_client.lock().unwrap_or_else(|e| e.into_inner());
        let n = counts.entry(client_id.to_owned()).or_insert(0);
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(Self { counts: shared.per_client.clone(), client_id: client_id.to_owned() })
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = counts.get_mut(&self.client_id) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                counts.remove(&self.client_id);
            }
        }
    }
}
