//! JSON-RPC 2.0 over a Unix domain socket (CP-1-4, CP-8-1): the companion methods for external
//! clients. No TCP listener exists anywhere (CP-5-15).
//!
//! **Socket (CP-5-12).** [`bind_private`] creates the socket's parent directory with mode `0700`
//! (refusing an existing one that is not a directory, belongs to another user, or is
//! accessible to group or others), removes a stale socket file only if nothing listens on it
//! (never a non-socket file), binds, and sets the socket to `0600`. Peers running as another
//! user are disconnected at once.
//!
//! **Framing.** One JSON-RPC message per line (`\n`, UTF-8). Single calls and batches (answered
//! in order, in one array; an empty batch → one `-32600`; only notifications → no answer).
//! Notifications are executed and never answered. Malformed JSON → `-32700` with `id: null`; a
//! non-request → `-32600`; unknown method → `-32601`. A line longer than the limit
//! (`limits.maxMessageBytes`, 1 MiB by default; `limits.maxUnauthenticatedMessageBytes`, 8 KiB,
//! before authentication) is answered with `-32600` and the connection is closed, after at most
//! that many bytes were buffered. None of this affects other connections or the server. The
//! server keeps answering after the client half-closes its write side, then closes.
//!
//! **Methods.** `runtime.describe` (no authentication or scope needed, so the protocol version
//! can always be negotiated; the result gains `authorization.authenticated` and the transport
//! limits), `pairing.request` and
//! `session.authenticate` (see [`super::auth`]), `rpc.discover` (the OpenRPC document; needs
//! `discover`), and the other nine CP-2-1 methods through [`Engine::call`] with the
//! connection's identity (unauthenticated → `UNAUTHENTICATED`). Coded errors travel as
//! `error.code` integer + `error.data = {"code", "retryable", ...}` (OQ-CP-12).
//!
//! Calls on one connection run concurrently (up to
//! [`ServerConfig::max_in_flight_per_connection`]), except `session.authenticate`,
//! `pairing.request` and batches, which run in order before the next line is read. Responses to
//! concurrent calls may therefore arrive in any order (match them by `id`).

use super::auth::{AUTHENTICATE_METHOD, Auth, PAIRING_METHOD, Registration};
use super::engine::Engine;
use super::error::{CompanionError, ErrorCode};
use super::jsonrpc::{self, Call, Entry, Incoming, Line};
use super::model::ClientIdentity;
use super::params::METHODS;
use crate::catalog::Scope;
use serde_json::{Value, json};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// Default largest message of an authenticated connection: 1 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 1 << 20;
/// Default largest message before authentication: 8 KiB (CP-5-13).
pub const DEFAULT_MAX_UNAUTHENTICATED_MESSAGE_BYTES: usize = 8 << 10;

/// The methods served besides the ten engine methods.
pub const EXTRA_METHODS: [&str; 3] = [super::openrpc::DISCOVER_METHOD, AUTHENTICATE_METHOD, PAIRING_METHOD];

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
    /// Failed `session.authenticate` calls before the connection is closed (default 3).
    pub max_auth_failures: u32,
    /// Concurrent connections; beyond, a new one gets a `QUEUE_FULL` error and is closed
    /// (`maxConnections`, default 128).
    pub max_connections: usize,
    /// Calls one connection may have running at once; further lines wait
    /// (`maxInFlightPerConnection`, default 16).
    pub max_in_flight_per_connection: usize,
    /// Largest batch (`maxBatchLength`, default 64); longer → `-32600`.
    pub max_batch_len: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_unauthenticated_message_bytes: DEFAULT_MAX_UNAUTHENTICATED_MESSAGE_BYTES,
            auth_timeout: Duration::from_secs(5),
            max_auth_failures: 3,
            max_connections: 128,
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
        let _cleanup = SocketFile::new(path);
        tracing::info!(socket = %path.display(), "companion: listening");
        self.serve(listener).await;
        Ok(())
    }

    /// Accepts connections on `listener` until the future is dropped, which also closes every
    /// connection. Accept errors (e.g. out of file descriptors) are logged and retried.
    pub async fn serve(self, listener: UnixListener) {
        let shutdown = CancellationToken::new();
        let _guard = shutdown.clone().drop_guard();
        let shared = Arc::new(Shared {
            slots: Arc::new(Semaphore::new(self.config.max_connections)),
            engine: self.engine,
            auth: self.auth,
            config: self.config,
            next_conn: AtomicU64::new(1),
        });
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    let shared = shared.clone();
                    let kill = shutdown.child_token();
                    tokio::spawn(async move {
                        let Ok(slot) = shared.slots.clone().try_acquire_owned() else {
                            tracing::warn!("companion: connection refused, too many connections");
                            let err = CompanionError::new(ErrorCode::QueueFull, "Too many connections")
                                .with("limit", "maxConnections");
                            let mut stream = stream;
                            let line = line_of(&jsonrpc::failure(Value::Null, err.to_jsonrpc()));
                            let _ = tokio::time::timeout(Duration::from_secs(1), stream.write_all(&line)).await;
                            return;
                        };
                        connection(shared, stream, kill).await;
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

struct Shared {
    engine: Engine,
    auth: Auth,
    config: ServerConfig,
    slots: Arc<Semaphore>,
    next_conn: AtomicU64,
}

/// Removes the socket file we bound when the server stops, unless it was replaced since.
struct SocketFile {
    path: PathBuf,
    ino: Option<(u64, u64)>,
}

impl SocketFile {
    fn new(path: &Path) -> Self {
        let ino = std::fs::symlink_metadata(path).ok().map(|m| (m.dev(), m.ino()));
        Self { path: path.to_owned(), ino }
    }
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        let now = std::fs::symlink_metadata(&self.path).ok().map(|m| (m.dev(), m.ino()));
        if now.is_some() && now == self.ino {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The default socket path: `$XDG_RUNTIME_DIR/bridge-companion/companion.sock`, or
/// `<temp dir>/bridge-companion-<uid>/companion.sock` without it.
pub fn default_socket_path() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir.join("bridge-companion").join("companion.sock"),
        _ => std::env::temp_dir().join(format!("bridge-companion-{}", euid())).join("companion.sock"),
    }
}

/// Makes sure `dir` is a private directory of the current user (CP-5-12): creates it (and
/// missing parents) with mode `0700`, or checks an existing one. Errors
/// (`PermissionDenied`): it is a symlink or not a directory, belongs to another user, or grants
/// any access to group or others — it is never changed, only refused.
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        }
        Err(e) => return Err(e),
        Ok(_) => {}
    }
    let md = std::fs::symlink_metadata(dir)?;
    let refuse = |why: String| Err(io::Error::new(io::ErrorKind::PermissionDenied, why));
    if !md.file_type().is_dir() {
        return refuse(format!("{} is not a directory (symlinks are refused)", dir.display()));
    }
    if md.uid() != euid() {
        return refuse(format!("{} belongs to another user", dir.display()));
    }
    if md.mode() & 0o077 != 0 {
        return refuse(format!(
            "{} is accessible to group or others (mode {:o}); the socket needs a private directory (0700)",
            dir.display(),
            md.mode() & 0o777
        ));
    }
    Ok(())
}

/// Binds a Unix socket at `path` in a private directory (CP-5-12): [`ensure_private_dir`] on
/// the parent, removal of a stale socket (one nothing listens on; a live one → `AddrInUse`, a
/// non-socket file → `AlreadyExists`, both left alone), bind, mode `0600`. Must be called
/// inside a tokio runtime.
pub fn bind_private(path: &Path) -> io::Result<UnixListener> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the socket path needs a parent directory"))?;
    ensure_private_dir(parent)?;
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
        Ok(md) if md.file_type().is_socket() => match std::os::unix::net::UnixStream::connect(path) {
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("another server is listening on {}", path.display()),
                ));
            }
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                tracing::info!(socket = %path.display(), "companion: removing a stale socket file");
                std::fs::remove_file(path)?;
            }
            Err(e) => return Err(e),
        },
        Ok(_) => {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists and is not a socket; refusing to replace it", path.display()),
            ));
        }
    }
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

fn line_of(v: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec(v).unwrap_or_else(|_| b"null".to_vec());
    out.push(b'\n');
    out
}

/// Per-connection authentication state; only the connection's read loop changes it.
struct Session {
    conn_id: u64,
    peer_pid: Option<i32>,
    identity: Option<Arc<ClientIdentity>>,
    failures: u32,
    kill: CancellationToken,
    _registration: Option<Registration>,
}

/// What the read loop does after a message.
enum Next {
    Continue,
    Close,
}

async fn connection(shared: Arc<Shared>, stream: UnixStream, kill: CancellationToken) {
    let conn_id = shared.next_conn.fetch_add(1, Ordering::Relaxed);
    let peer = stream.peer_cred().ok();
    if let Some(cred) = &peer
        && cred.uid() != euid()
    {
        tracing::warn!(conn_id, "companion: refused a connection from another user");
        return;
    }
    let (rd, mut wr) = stream.into_split();
    let mut reader = BufReader::with_capacity(16 << 10, rd);
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(64);
    let writer_kill = kill.clone();
    let writer = tokio::spawn(async move {
        while let Some(bytes) = rx.recv().await {
            tokio::select! {
                _ = writer_kill.cancelled() => return,
                r = wr.write_all(&bytes) => if r.is_err() { return },
            }
        }
        let _ = wr.shutdown().await;
    });
    let mut session = Session {
        conn_id,
        peer_pid: peer.and_then(|c| c.pid()),
        identity: None,
        failures: 0,
        kill: kill.clone(),
        _registration: None,
    };
    let in_flight = Arc::new(Semaphore::new(shared.config.max_in_flight_per_connection.max(1)));
    let mut tasks = JoinSet::new();
    let mut buf = Vec::new();
    tracing::debug!(conn_id, "companion: connection opened");
    loop {
        while tasks.try_join_next().is_some() {}
        let authenticated = session.identity.is_some();
        let limit = if authenticated {
            shared.config.max_message_bytes
        } else {
            shared.config.max_unauthenticated_message_bytes
        };
        let read = jsonrpc::read_line(&mut reader, &mut buf, limit);
        let line = tokio::select! {
            _ = kill.cancelled() => break,
            r = async {
                if authenticated { Ok(read.await) } else { tokio::time::timeout(shared.config.auth_timeout, read).await }
            } => r,
        };
        let bytes = match line {
            Err(_) => {
                let err = CompanionError::new(ErrorCode::Unauthenticated, "Authentication timed out")
                    .with("authTimeoutMs", shared.config.auth_timeout.as_millis() as u64);
                let _ = tx.send(line_of(&jsonrpc::failure(Value::Null, err.to_jsonrpc()))).await;
                break;
            }
            Ok(Err(_)) | Ok(Ok(Line::Eof)) => break,
            Ok(Ok(Line::TooLong)) => {
                let msg = format!("Invalid Request: the message exceeds {limit} bytes");
                let _ = tx.send(line_of(&jsonrpc::invalid_request(Value::Null, &msg))).await;
                break;
            }
            Ok(Ok(Line::Message(bytes))) => bytes,
        };
        if jsonrpc::is_blank(&bytes) {
            continue;
        }
        let next = tokio::select! {
            _ = kill.cancelled() => break,
            n = handle(&shared, &mut session, &bytes, &tx, &in_flight, &mut tasks) => n,
        };
        if let Next::Close = next {
            break;
        }
    }
    if kill.is_cancelled() {
        tasks.abort_all();
        writer.abort();
        tracing::debug!(conn_id, "companion: connection closed by the server");
        return;
    }
    // End of input (or a final error): finish what is running, answer it, then close.
    tokio::select! {
        _ = kill.cancelled() => { tasks.abort_all(); writer.abort(); return; }
        _ = async { while tasks.join_next().await.is_some() {} } => {}
    }
    drop(tx);
    let _ = writer.await;
    tracing::debug!(conn_id, "companion: connection closed");
}

async fn handle(
    shared: &Arc<Shared>,
    session: &mut Session,
    bytes: &[u8],
    tx: &mpsc::Sender<Vec<u8>>,
    in_flight: &Arc<Semaphore>,
    tasks: &mut JoinSet<()>,
) -> Next {
    match jsonrpc::parse(bytes, shared.config.max_batch_len) {
        Err(response) => {
            let _ = tx.send(line_of(&response)).await;
            Next::Continue
        }
        Ok(Incoming::One(Entry::Invalid(response))) => {
            let _ = tx.send(line_of(&response)).await;
            Next::Continue
        }
        Ok(Incoming::One(Entry::Call(call))) if is_session_method(&call.method) => {
            let (response, next) = session_call(shared, session, call).await;
            if let Some(r) = response {
                let _ = tx.send(line_of(&r)).await;
            }
            next
        }
        Ok(Incoming::One(Entry::Call(call))) => {
            let Ok(permit) = in_flight.clone().acquire_owned().await else { return Next::Close };
            let shared = shared.clone();
            let identity = session.identity.clone();
            let tx = tx.clone();
            tasks.spawn(async move {
                let _permit = permit;
                if let Some(r) = call_response(&shared, identity.as_deref(), call).await {
                    let _ = tx.send(line_of(&r)).await;
                }
            });
            Next::Continue
        }
        Ok(Incoming::Batch(entries)) => {
            let mut responses = Vec::new();
            let mut next = Next::Continue;
            for entry in entries {
                let response = match entry {
                    Entry::Invalid(r) => Some(r),
                    Entry::Call(call) if is_session_method(&call.method) => {
                        let (r, n) = session_call(shared, session, call).await;
                        if let Next::Close = n {
                            next = Next::Close;
                        }
                        r
                    }
                    Entry::Call(call) => call_response(shared, session.identity.as_deref(), call).await,
                };
                responses.extend(response);
            }
            if !responses.is_empty() {
                let _ = tx.send(line_of(&Value::Array(responses))).await;
            }
            next
        }
    }
}

fn is_session_method(method: &str) -> bool {
    method == AUTHENTICATE_METHOD || method == PAIRING_METHOD
}

fn respond(id: Option<Value>, outcome: Result<Value, CompanionError>) -> Option<Value> {
    let id = id?;
    Some(match outcome {
        Ok(v) => jsonrpc::success(id, v),
        Err(e) => jsonrpc::failure(id, e.to_jsonrpc()),
    })
}

/// `session.authenticate` and `pairing.request`: they change or create credentials, so they
/// run in the read loop, in order.
async fn session_call(shared: &Arc<Shared>, session: &mut Session, call: Call) -> (Option<Value>, Next) {
    match call.method.as_str() {
        AUTHENTICATE_METHOD => {
            let outcome = authenticate(shared, session, &call.params);
            let mut next = Next::Continue;
            if outcome.is_err() {
                session.failures += 1;
                if session.failures >= shared.config.max_auth_failures {
                    tracing::info!(conn_id = session.conn_id, "companion: too many failed authentications");
                    next = Next::Close;
                }
            }
            (respond(call.id, outcome), next)
        }
        _ => {
            // A key sent to nobody would pair a client no one can use.
            if call.is_notification() {
                return (None, Next::Continue);
            }
            let outcome = shared.auth.pair(call.params, session.peer_pid).await;
            (respond(call.id, outcome), Next::Continue)
        }
    }
}

fn authenticate(shared: &Shared, session: &mut Session, params: &Value) -> Result<Value, CompanionError> {
    if session.identity.is_some() {
        return Err(CompanionError::invalid_params(
            "This connection is already authenticated; open another connection for another client",
            vec![crate::catalog::FieldProblem::new("", "already authenticated")],
        ));
    }
    let text = |key: &str, max: usize| match params.get(key) {
        Some(Value::String(s)) if !s.is_empty() && s.len() <= max => Ok(s.as_str()),
        _ => Err(CompanionError::invalid_params(
            "session.authenticate takes {\"clientId\", \"key\"}",
            vec![crate::catalog::FieldProblem::new(format!("/{key}"), format!("required string of 1..{max} bytes"))],
        )),
    };
    let Some(obj) = params.as_object() else {
        return Err(CompanionError::invalid_params(
            "session.authenticate takes {\"clientId\", \"key\"}",
            vec![crate::catalog::FieldProblem::new("", "expected an object")],
        ));
    };
    if obj.keys().any(|k| k != "clientId" && k != "key") {
        return Err(CompanionError::invalid_params(
            "session.authenticate takes only clientId and key",
            vec![crate::catalog::FieldProblem::new("", "unknown member")],
        ));
    }
    let client_id = text("clientId", super::auth::MAX_CLIENT_ID_BYTES)?;
    let key = text("key", super::auth::MAX_KEY_BYTES)?;
    let (identity, registration) =
        shared.auth.authenticate_connection(client_id, key, session.conn_id, session.kill.clone())?;
    tracing::debug!(conn_id = session.conn_id, client_id = %identity.id, "companion: connection authenticated");
    let result = json!({
        "clientId": identity.id,
        "label": identity.label,
        "scopes": identity.scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    });
    session.identity = Some(Arc::new(identity));
    session._registration = Some(registration);
    Ok(result)
}

/// Runs one ordinary call in its own task, so a panic becomes `INTERNAL_ERROR` for this call only.
async fn call_response(shared: &Arc<Shared>, identity: Option<&ClientIdentity>, call: Call) -> Option<Value> {
    let Call { id, method, params } = call;
    let task = {
        let shared = shared.clone();
        let identity = identity.cloned();
        AbortOnDrop(tokio::spawn(async move { dispatch(&shared, identity.as_ref(), &method, params).await }))
    };
    let outcome = match task.join().await {
        Ok(outcome) => outcome,
        Err(_) => {
            tracing::error!("companion: a method call panicked");
            Err(CompanionError::new(ErrorCode::InternalError, "The call failed inside the runtime"))
        }
    };
    if let Err(e) = &outcome {
        tracing::debug!(code = %e.code, "companion: call failed");
    }
    respond(id, outcome)
}

struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> AbortOnDrop<T> {
    async fn join(mut self) -> Result<T, tokio::task::JoinError> {
        (&mut self.0).await
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn dispatch(
    shared: &Shared,
    identity: Option<&ClientIdentity>,
    method: &str,
    params: Value,
) -> Result<Value, CompanionError> {
    let unauthenticated =
        || CompanionError::new(ErrorCode::Unauthenticated, "Authenticate first: call session.authenticate");
    match method {
        "runtime.describe" => {
            // Open to every client, authenticated or not and whatever its scopes, so that the
            // protocol version can always be negotiated (CP-7-2). The engine gates it on
            // `discover`, so it sees the caller with that scope added (or a discovery-only
            // anonymous identity); the published authorization shows the real scopes.
            let who = match identity {
                Some(id) => {
                    let mut id = id.clone();
                    id.scopes.insert(Scope::Discover);
                    id
                }
                None => ClientIdentity::external(ANONYMOUS, ANONYMOUS, [Scope::Discover]),
            };
            let mut result = shared.engine.call(&who, method, params).await?;
            describe_transport(&mut result, shared, identity);
            Ok(result)
        }
        "rpc.discover" => {
            let identity = identity.ok_or_else(unauthenticated)?;
            if !identity.has(Scope::Discover) {
                return Err(CompanionError::new(ErrorCode::Forbidden, "Missing scope: discover")
                    .with("requiredScopes", ["discover"])
                    .with("missingScopes", ["discover"]));
            }
            let empty = params.is_null()
                || params.as_object().is_some_and(|o| o.is_empty())
                || params.as_array().is_some_and(|a| a.is_empty());
            if !empty {
                return Err(CompanionError::invalid_params(
                    "rpc.discover takes no params",
                    vec![crate::catalog::FieldProblem::new("", "expected no params")],
                ));
            }
            Ok(super::openrpc::document(&shared.engine.catalog()))
        }
        m if METHODS.contains(&m) => {
            let identity = identity.ok_or_else(unauthenticated)?;
            shared.engine.call(identity, method, params).await
        }
        _ => Err(CompanionError::new(ErrorCode::MethodNotFound, "Method not found")),
    }
}

/// The engine-side id of unauthenticated `runtime.describe` calls; never a paired client id
/// (those start with `cl_`).
const ANONYMOUS: &str = "anonymous";

/// Adds the transport's limits and the connection's authentication state to a
/// `runtime.describe` result.
fn describe_transport(result: &mut Value, shared: &Shared, identity: Option<&ClientIdentity>) {
    let c = &shared.config;
    if let Some(limits) = result.get_mut("limits").and_then(Value::as_object_mut) {
        limits.insert("maxMessageBytes".into(), c.max_message_bytes.into());
        limits.insert("maxUnauthenticatedMessageBytes".into(), c.max_unauthenticated_message_bytes.into());
        limits.insert("authTimeoutMs".into(), (c.auth_timeout.as_millis() as u64).into());
        limits.insert("maxBatchLength".into(), c.max_batch_len.into());
        limits.insert("maxConnections".into(), c.max_connections.into());
        limits.insert("maxInFlightPerConnection".into(), c.max_in_flight_per_connection.into());
        limits.insert("pairingTimeoutMs".into(), (shared.auth.config().pairing_timeout.as_millis() as u64).into());
    }
    if let Some(obj) = result.as_object_mut() {
        let authorization = match identity {
            Some(id) => json!({
                "authenticated": true,
                "clientId": id.id,
                "scopes": id.scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
                "internal": id.internal,
            }),
            None => json!({"authenticated": false, "clientId": null, "scopes": [], "internal": false}),
        };
        obj.insert("authorization".into(), authorization);
        obj.insert(
            "authentication".into(),
            json!({"authenticateMethod": AUTHENTICATE_METHOD, "pairingMethod": PAIRING_METHOD}),
        );
    }
}
