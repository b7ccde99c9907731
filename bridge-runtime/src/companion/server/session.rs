//! The session protocol of one connection: line framing with size and time limits, every call
//! routed by the protocol table ([`route`]): the connection's own methods
//! (`session.authenticate`, `pairing.request`) in order in the read loop, the others run
//! concurrently up to the per-connection limit, by the engine or by the transport. Who may call
//! what is decided by the engine's admission, for the transport's own method too.

use super::Shared;
use crate::catalog::FieldProblem;
use crate::companion::auth::Registration;
use crate::companion::engine::Caller;
use crate::companion::error::{CompanionError, ErrorCode};
use crate::companion::jsonrpc::{self, Call, Entry, Incoming, Line};
use crate::companion::model::ClientIdentity;
use crate::companion::openrpc;
use crate::companion::protocol::params::{NoParams, parse};
use crate::companion::protocol::results::Session as SessionResult;
use crate::companion::protocol::{Lane, Method, Route, route};
use serde_json::Value;
use std::os::fd::RawFd;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// `v` as one message line.
pub(super) fn line_of(v: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec(v).unwrap_or_else(|_| b"null".to_vec());
    out.push(b'\n');
    out
}

/// Per-connection authentication state; only the connection's read loop changes it.
struct Session {
    conn_id: u64,
    peer_pid: Option<i32>,
    peer_uid: Option<u32>,
    /// The socket, to notice a peer that went away while its pairing waits for the user.
    peer_fd: Option<RawFd>,
    identity: Option<Arc<ClientIdentity>>,
    failures: u32,
    /// Until authenticated: when the connection must have authenticated (`authDeadlineMs`).
    auth_deadline: Instant,
    /// Until authenticated: the connection's place among the unauthenticated ones.
    unauthenticated: Option<OwnedSemaphorePermit>,
    /// Cancelled when the client's key is revoked (CP-4-22): the connection says so, then closes.
    revoked: CancellationToken,
    _registration: Option<Registration>,
    /// Once authenticated: the connection's place in its client's share.
    _client_slot: Option<super::ClientSlot>,
}

/// The peer and its unauthenticated slot, as the server accepted it.
pub(super) struct Peer {
    pub(super) pid: Option<i32>,
    pub(super) uid: Option<u32>,
    pub(super) fd: Option<RawFd>,
    pub(super) unauthenticated: Option<OwnedSemaphorePermit>,
}

/// What the read loop does after a message.
enum Next {
    Continue,
    Close,
}

/// The requests of one connection whose answers have not been written yet, in arrival order,
/// by id: a request with the id of one of them is refused without running (`-32600`, "id
/// already in flight"), and its error is written right after the original's answer, so the
/// client reads the answers in the order it sent the requests. At most
/// `max_in_flight_per_connection + 1` entries (the read loop waits for a slot before it reads
/// on); duplicates are a count, not lines.
#[derive(Default)]
struct InFlight(std::sync::Mutex<Vec<Flight>>);

struct Flight {
    /// The id as compact JSON (`1` and `"1"` are different ids).
    key: String,
    id: Value,
    /// Its answer has been handed to the writer; only held duplicate errors remain.
    answered: bool,
    /// Requests with this id refused while it was in flight whose errors are not written yet.
    duplicates: usize,
}

impl InFlight {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Flight>> {
        // Every change under this lock is one step: a panic cannot leave it half done.
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records request `id`; `false` when a request with that id is in flight (the duplicate is
    /// counted on it and must not run).
    fn admit(&self, key: &str, id: &Value) -> bool {
        let mut flights = self.lock();
        if let Some(original) = flights.iter_mut().find(|f| f.key == key) {
            original.duplicates = original.duplicates.saturating_add(1);
            return false;
        }
        flights.push(Flight { key: key.to_owned(), id: id.clone(), answered: false, duplicates: 0 });
        true
    }

    /// Marks `key` answered: `None` when the connection already answered it (revocation), else
    /// whether duplicate errors are held on it. Without any, `key` is free again at once, before
    /// its answer reaches the client.
    fn claim(&self, key: &str) -> Option<bool> {
        let mut flights = self.lock();
        let i = flights.iter().position(|f| f.key == key && !f.answered)?;
        if flights[i].duplicates == 0 {
            flights.remove(i);
            return Some(false);
        }
        flights[i].answered = true;
        Some(true)
    }

    /// Takes one held duplicate error of answered `key`: `None` when none is left, else whether
    /// more are held (after the last one `key` is free again).
    fn take_duplicate(&self, key: &str) -> Option<bool> {
        let mut flights = self.lock();
        let i = flights.iter().position(|f| f.key == key && f.answered)?;
        flights[i].duplicates = flights[i].duplicates.saturating_sub(1);
        if flights[i].duplicates == 0 {
            flights.remove(i);
            return Some(false);
        }
        Some(true)
    }

    /// Everything not yet written, in arrival order, leaving nothing: `(id, answered,
    /// duplicates)`.
    fn drain(&self) -> Vec<(Value, bool, usize)> {
        self.lock().drain(..).map(|f| (f.id, f.answered, f.duplicates)).collect()
    }

    /// Whether a request with `key` is in flight.
    fn contains(&self, key: &str) -> bool {
        self.lock().iter().any(|f| f.key == key)
    }

    /// Counts a duplicate on the request `key` in flight and returns `true`; `false` (nothing
    /// recorded) when none is.
    fn hold(&self, key: &str) -> bool {
        match self.lock().iter_mut().find(|f| f.key == key) {
            Some(original) => {
                original.duplicates = original.duplicates.saturating_add(1);
                true
            }
            None => false,
        }
    }
}

/// The key of request id `id` in [`InFlight`].
fn id_key(id: &Value) -> String {
    id.to_string()
}

/// The error of a request whose id is the id of one in flight on the same connection.
fn duplicate_error(id: Value) -> Value {
    jsonrpc::invalid_request(
        id,
        "Invalid Request: id already in flight on this connection; the first request with it was answered first",
    )
}

/// Writes the answer of in-flight request `key` (`response`, `None` for a notification) and then
/// the errors of the duplicates held on it. A slot in the writer's queue is taken before each
/// step is recorded, so a task stopped at any await (revocation) leaves in [`InFlight`] exactly
/// what was not written, for the connection to answer.
async fn answer_in_flight(
    tx: &mpsc::Sender<Vec<u8>>,
    ids: &InFlight,
    key: Option<&str>,
    id: Value,
    response: Option<Value>,
) {
    let Some(key) = key else {
        if let Some(r) = response {
            let _ = tx.send(line_of(&r)).await;
        }
        return;
    };
    let Ok(slot) = tx.reserve().await else { return };
    let Some(mut more) = ids.claim(key) else { return };
    if let Some(r) = response {
        slot.send(line_of(&r));
    }
    while more {
        let Ok(slot) = tx.reserve().await else { return };
        let Some(m) = ids.take_duplicate(key) else { return };
        slot.send(line_of(&duplicate_error(id.clone())));
        more = m;
    }
}

/// Serves one connection (`rd`/`wr`: its two halves) until the peer is done, the server stops
/// (`kill`) or the session protocol closes it.
pub(super) async fn connection<R, W>(
    shared: Arc<Shared>,
    conn_id: u64,
    rd: R,
    mut wr: W,
    peer: Peer,
    kill: CancellationToken,
) where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
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
        peer_pid: peer.pid,
        peer_uid: peer.uid,
        peer_fd: peer.fd,
        identity: None,
        failures: 0,
        auth_deadline: Instant::now() + shared.config.auth_deadline,
        unauthenticated: peer.unauthenticated,
        revoked: CancellationToken::new(),
        _registration: None,
        _client_slot: None,
    };
    let revoked = session.revoked.clone();
    let in_flight = Arc::new(Semaphore::new(shared.config.max_in_flight_per_connection.max(1)));
    let ids = Arc::new(InFlight::default());
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
        // Before authentication, each message has `auth_timeout`, and the connection as a whole
        // until its deadline, however busy it keeps (CP-5-13).
        let deadline = (Instant::now() + shared.config.auth_timeout).min(session.auth_deadline);
        let line = tokio::select! {
            _ = kill.cancelled() => break,
            _ = revoked.cancelled() => break,
            r = async {
                if authenticated { Ok(read.await) } else { tokio::time::timeout_at(deadline, read).await }
            } => r,
        };
        let line = match line {
            Ok(line) if authenticated || Instant::now() < session.auth_deadline => Ok(line),
            Ok(_) | Err(_) => Err(()),
        };
        let bytes = match line {
            Err(()) => {
                let err = if Instant::now() >= session.auth_deadline {
                    CompanionError::new(ErrorCode::Unauthenticated, "The connection did not authenticate in time")
                        .with("authDeadlineMs", shared.config.auth_deadline.as_millis() as u64)
                } else {
                    CompanionError::new(ErrorCode::Unauthenticated, "Authentication timed out")
                        .with("authTimeoutMs", shared.config.auth_timeout.as_millis() as u64)
                };
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
            _ = revoked.cancelled() => break,
            n = handle(&shared, &mut session, &bytes, &tx, (&in_flight, &ids), &mut tasks) => n,
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
    if revoked.is_cancelled() {
        // Every request in flight gets an answer to its own id, `UNAUTHENTICATED` (CP-4-22,
        // CP-6-20), in the order they arrived, each followed by the errors of the duplicates
        // held on it; with none in flight the client still learns why the connection ends (a
        // connection-level error, `id: null`), not merely that it broke. The calls are stopped
        // first, so nothing is answered twice.
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
        let revoked = || CompanionError::new(ErrorCode::Unauthenticated, "The client's key was revoked").to_jsonrpc();
        let open = ids.drain();
        if open.is_empty() {
            let _ = tx.send(line_of(&jsonrpc::failure(Value::Null, revoked()))).await;
        }
        for (id, answered, duplicates) in open {
            if !answered {
                let _ = tx.send(line_of(&jsonrpc::failure(id.clone(), revoked()))).await;
            }
            for _ in 0..duplicates {
                let _ = tx.send(line_of(&duplicate_error(id.clone()))).await;
            }
        }
        drop(tx);
        let _ = tokio::time::timeout(std::time::Duration::from_secs(1), writer).await;
        tracing::debug!(conn_id, "companion: connection closed: key revoked");
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
    (in_flight, ids): (&Arc<Semaphore>, &Arc<InFlight>),
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
        Ok(Incoming::One(Entry::Call(call))) => match route(&call.method) {
            // An id in flight: refused without running; its error follows the original's answer.
            _ if call.id.as_ref().is_some_and(|id| ids.hold(&id_key(id))) => Next::Continue,
            Some(Route { method, lane: Lane::Connection }) => {
                let (response, next) = session_call(shared, session, method, call).await;
                if let Some(r) = response {
                    let _ = tx.send(line_of(&r)).await;
                }
                next
            }
            route => {
                // Recorded before it waits for a slot, so a revocation meanwhile answers it too.
                let key = call.id.as_ref().map(id_key);
                if let (Some(key), Some(id)) = (&key, &call.id)
                    && !ids.admit(key, id)
                {
                    return Next::Continue;
                }
                let Ok(permit) = in_flight.clone().acquire_owned().await else { return Next::Close };
                let shared = shared.clone();
                let identity = session.identity.clone();
                let (tx, ids) = (tx.clone(), ids.clone());
                tasks.spawn(async move {
                    let _permit = permit;
                    let id = call.id.clone().unwrap_or(Value::Null);
                    let response = call_response(&shared, identity.as_deref(), route, call).await;
                    answer_in_flight(&tx, &ids, key.as_deref(), id, response).await;
                });
                Next::Continue
            }
        },
        Ok(Incoming::Batch(entries)) => {
            let mut responses = Vec::new();
            let mut next = Next::Continue;
            for entry in entries {
                if let (Next::Close, Entry::Call(call)) = (&next, &entry) {
                    // The batch made the connection close (too many failed authentications):
                    // nothing after that runs.
                    responses.extend(respond(call.id.clone(), Err(too_many_failures())));
                    continue;
                }
                let response = match entry {
                    Entry::Invalid(r) => Some(r),
                    // A batch is answered as one line: a call whose id is in flight is refused in
                    // it without running (its error cannot wait for the original's answer).
                    Entry::Call(Call { id: Some(id), .. }) if ids.contains(&id_key(&id)) => Some(duplicate_error(id)),
                    Entry::Call(call) => match route(&call.method) {
                        Some(Route { method, lane: Lane::Connection }) => {
                            let (r, n) = session_call(shared, session, method, call).await;
                            if let Next::Close = n {
                                next = Next::Close;
                            }
                            r
                        }
                        route => call_response(shared, session.identity.as_deref(), route, call).await,
                    },
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

fn respond(id: Option<Value>, outcome: Result<Value, CompanionError>) -> Option<Value> {
    let id = id?;
    Some(match outcome {
        Ok(v) => jsonrpc::success(id, v),
        Err(e) => jsonrpc::failure(id, e.to_jsonrpc()),
    })
}

/// `session.authenticate` and `pairing.request`: they change or create credentials, so they
/// run in the read loop, in order.
async fn session_call(
    shared: &Arc<Shared>,
    session: &mut Session,
    method: Method,
    call: Call,
) -> (Option<Value>, Next) {
    match method {
        Method::SessionAuthenticate => {
            // Every attempt counts, one per line or many in a batch: once the limit is reached no
            // key is checked any more on this connection.
            if session.failures >= shared.config.max_auth_failures {
                return (respond(call.id, Err(too_many_failures())), Next::Close);
            }
            let outcome = authenticate(shared, session, &call.params).and_then(|r| wire(method, r));
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
            // The prompt is withdrawn when the requesting connection goes away.
            let outcome = tokio::select! {
                r = shared.auth.pair_from(call.params, session.peer_pid, session.peer_uid) => r.and_then(|r| wire(method, r)),
                () = peer_gone(session.peer_fd) => {
                    tracing::info!(conn_id = session.conn_id, "companion: pairing withdrawn, the connection closed");
                    return (None, Next::Close);
                }
            };
            // The time the user took does not count against the connection's deadline.
            session.auth_deadline = Instant::now() + shared.config.auth_deadline;
            (respond(call.id, outcome), Next::Continue)
        }
    }
}

fn too_many_failures() -> CompanionError {
    CompanionError::new(ErrorCode::Unauthenticated, "Too many failed authentications on this connection")
        .with("limit", "maxAuthFailures")
}

/// Completes when the peer of `fd` has closed the connection (checked a few times a second;
/// never for a connection without a socket).
async fn peer_gone(fd: Option<RawFd>) {
    let Some(fd) = fd else { return std::future::pending().await };
    loop {
        if crate::companion::unix::peer_hung_up(fd) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// The result of the connection method `method`, which already took effect (a pairing stored,
/// the connection authenticated), as its wire JSON. An answer that cannot be encoded is never
/// reported as if the call had not run (as the engine's, [`crate::companion::engine`]'s
/// `encoded`): `INTERNAL_ERROR` with `retryable: false` and a message saying it took effect.
fn wire<T: serde::Serialize>(method: Method, value: T) -> Result<Value, CompanionError> {
    serde_json::to_value(value).map_err(|e| {
        tracing::error!(error = %e, method = %method, "companion: a call took effect, but its result could not be encoded");
        let what = match method {
            Method::PairingRequest => {
                "the client was paired, but its key could not be sent; ask the user to revoke the new pairing, then pair \
                 again"
            }
            _ => "the connection is authenticated, but the answer could not be sent",
        };
        CompanionError::new(ErrorCode::InternalError, format!("{method} took effect and is not undone: {what}"))
            .with("retryable", false)
    })
}

/// `session.authenticate` params, `{"clientId": 1..64 bytes, "key": 1..128 bytes}` and nothing
/// else, as `(clientId, key)`. Errors: `INVALID_PARAMS` with `problems`.
fn session_params(params: &Value) -> Result<(&str, &str), CompanionError> {
    let method = Method::SessionAuthenticate;
    let text = |key: &str, max: usize| match params.get(key) {
        Some(Value::String(s)) if !s.is_empty() && s.len() <= max => Ok(s.as_str()),
        _ => Err(CompanionError::invalid_params(
            format!("{method} takes {{\"clientId\", \"key\"}}"),
            vec![FieldProblem::new(format!("/{key}"), format!("required string of 1..{max} bytes"))],
        )),
    };
    let Some(obj) = params.as_object() else {
        return Err(CompanionError::invalid_params(
            format!("{method} takes {{\"clientId\", \"key\"}}"),
            vec![FieldProblem::new("", "expected an object")],
        ));
    };
    if obj.keys().any(|k| k != "clientId" && k != "key") {
        return Err(CompanionError::invalid_params(
            format!("{method} takes only clientId and key"),
            vec![FieldProblem::new("", "unknown member")],
        ));
    }
    let client_id = text("clientId", crate::companion::auth::MAX_CLIENT_ID_BYTES)?;
    let key = text("key", crate::companion::auth::MAX_KEY_BYTES)?;
    Ok((client_id, key))
}

fn authenticate(shared: &Shared, session: &mut Session, params: &Value) -> Result<SessionResult, CompanionError> {
    if session.identity.is_some() {
        return Err(CompanionError::invalid_params(
            "This connection is already authenticated; open another connection for another client",
            vec![FieldProblem::new("", "already authenticated")],
        ));
    }
    let (client_id, key) = session_params(params)?;
    // The share is taken before the key is checked (and given back if it fails), so two
    // connections authenticating at once cannot both pass a full share; a peer without the key
    // can only be refused itself.
    let Some(slot) = super::ClientSlot::take(shared, client_id) else {
        return Err(CompanionError::new(ErrorCode::QueueFull, "Too many connections for this client; close one first")
            .with("limit", "maxConnectionsPerClient"));
    };
    let (identity, registration) =
        shared.auth.authenticate_connection(client_id, key, session.conn_id, session.revoked.clone())?;
    tracing::debug!(conn_id = session.conn_id, client_id = %identity.id, "companion: connection authenticated");
    let result = SessionResult {
        client_id: identity.id.clone(),
        label: identity.label.clone(),
        scopes: identity.scopes.iter().copied().collect(),
    };
    session.identity = Some(Arc::new(identity));
    session._registration = Some(registration);
    session._client_slot = Some(slot);
    // Authenticated: its place among the unauthenticated connections goes to the next one.
    session.unauthenticated = None;
    Ok(result)
}

/// Runs one call the engine or the transport answers (or an unknown one) in its own task, so a
/// panic becomes `INTERNAL_ERROR` for this call only.
async fn call_response(
    shared: &Arc<Shared>,
    identity: Option<&ClientIdentity>,
    route: Option<Route>,
    call: Call,
) -> Option<Value> {
    let Call { id, params, .. } = call;
    let task = {
        let shared = shared.clone();
        let identity = identity.cloned();
        AbortOnDrop(tokio::spawn(async move { dispatch(&shared, identity.as_ref(), route, params).await }))
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
    route: Option<Route>,
    params: Value,
) -> Result<Value, CompanionError> {
    let Some(Route { method, lane }) = route else {
        return Err(CompanionError::new(ErrorCode::MethodNotFound, "Method not found"));
    };
    let caller = Caller::Connection { identity, transport: &shared.transport };
    match lane {
        Lane::Engine => shared.engine.serve(method, caller, params).await,
        Lane::Transport => {
            shared.engine.admit(method, caller)?;
            transport_call(shared, method, params)
        }
        // Answered in the read loop ([`session_call`]): routing never sends them here.
        Lane::Connection => {
            Err(CompanionError::new(ErrorCode::InternalError, "Connection methods run in order on the connection"))
        }
    }
}

/// A method the transport answers, once admitted.
fn transport_call(shared: &Shared, method: Method, params: Value) -> Result<Value, CompanionError> {
    match method {
        Method::Discover => {
            let _: NoParams = parse(discover_params(params))?;
            Ok(openrpc::document(&shared.engine.catalog()))
        }
        other => Err(CompanionError::new(ErrorCode::MethodNotFound, format!("Unknown method `{other}`"))),
    }
}

/// `rpc.discover` takes no params: `null`, `{}` or `[]` (by position, as OpenRPC tools send it).
fn discover_params(params: Value) -> Value {
    if params.as_array().is_some_and(|a| a.is_empty()) { Value::Null } else { params }
}

/// The params of a call on `route`, read the way the server reads them before it runs anything,
/// as JSON: the connection's own checks (`session.authenticate`, `pairing.request`; `None` for
/// a pairing sent as a notification, which is dropped unread), `rpc.discover`'s, or the method's
/// params type ([`Method::decode_params`]). For the fuzz target, which runs no engine.
#[cfg(feature = "fuzzing")]
pub(in crate::companion) fn read_params(
    route: Route,
    notification: bool,
    params: &Value,
) -> Option<Result<Value, CompanionError>> {
    use serde_json::json;
    Some(match route.lane {
        Lane::Connection if route.method == Method::SessionAuthenticate => {
            session_params(params).map(|(id, key)| json!({"clientId": id, "key": key}))
        }
        Lane::Connection if notification => return None,
        Lane::Connection => crate::companion::auth::parse_pairing(params).map(
            |(name, scopes)| json!({"name": name, "scopes": scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>()}),
        ),
        Lane::Transport => route.method.decode_params(discover_params(params.clone())),
        Lane::Engine => route.method.decode_params(params.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value serde cannot encode.
    struct Unencodable;

    impl serde::Serialize for Unencodable {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("a value beyond JSON"))
        }
    }

    // CP-8-1: the in-flight ids of a connection. A duplicate is counted on its original and
    // never recorded itself; an answered request with no duplicate frees its id at once (before
    // the client can read the answer and reuse the id); held duplicates are taken one by one,
    // and the last one frees the id; a revocation drains what was not written, in order.
    #[test]
    fn in_flight_ids_hold_duplicates_behind_their_original() {
        let ids = InFlight::default();
        let (one, two) = (serde_json::json!(1), serde_json::json!("1"));
        let (k1, k2) = (id_key(&one), id_key(&two));
        assert_ne!(k1, k2, "1 and \"1\" are different ids");
        assert!(!ids.hold(&k1), "nothing in flight yet");
        assert!(ids.admit(&k1, &one));
        assert!(ids.admit(&k2, &two));
        assert!(ids.hold(&k1) && ids.hold(&k1));
        assert!(!ids.admit(&k1, &one), "a duplicate");
        assert_eq!(ids.claim(&k2), Some(false));
        assert!(!ids.contains(&k2), "answered without duplicates: free at once");
        assert_eq!(ids.claim(&k1), Some(true));
        assert_eq!(ids.claim(&k1), None, "answered once only");
        assert_eq!((ids.take_duplicate(&k1), ids.take_duplicate(&k1)), (Some(true), Some(true)));
        assert_eq!(ids.take_duplicate(&k1), Some(false));
        assert_eq!(ids.take_duplicate(&k1), None);
        assert!(!ids.contains(&k1));

        assert!(ids.admit(&k1, &one) && ids.admit(&k2, &two) && ids.hold(&k2));
        assert_eq!(ids.drain(), vec![(one.clone(), false, 0), (two, false, 1)]);
        assert_eq!(ids.claim(&k1), None, "drained: the connection answers it");
        assert!(ids.drain().is_empty());
    }

    // CP-6-16, CP-4-20: the connection's own methods change state before they answer (a
    // pairing is stored, a connection authenticated), so an answer that cannot be encoded is
    // `INTERNAL_ERROR` with `retryable: false`, saying it took effect, like the engine's
    // encode-after-run case. (Before: retryable "could not be encoded": a retried pairing would
    // ask the user again for a client already paired.)
    #[test]
    fn an_unencodable_answer_of_a_connection_method_is_not_retryable() {
        for method in [Method::PairingRequest, Method::SessionAuthenticate] {
            let e = wire(method, Unencodable).unwrap_err();
            assert_eq!(e.code, ErrorCode::InternalError);
            assert!(!e.retryable(), "{method}");
            assert_eq!(e.to_jsonrpc()["data"]["retryable"], false);
            assert!(e.message.contains("took effect"), "{}", e.message);
        }
        assert_eq!(wire(Method::SessionAuthenticate, 5).unwrap(), 5);
    }
}
