//! A typed client of the companion's Unix socket (feature `companion`, Unix): [`Client`] (async,
//! tokio) and [`BlockingClient`], which the `companion` CLI is built on. What it checks and
//! how to call it: [`Client`].

mod blocking;
pub(crate) mod profile;

pub use blocking::BlockingClient;
pub use profile::{CredentialProfile, ProfileError};

use crate::catalog::Scope;
use crate::companion::error::ErrorCode;
use crate::companion::jsonrpc::{self, Line};
use crate::companion::model::RequestSnapshot;
use crate::companion::protocol::params::{
    PROTOCOL_VERSION, PairingParams, RequestRef, RuntimeDescribeParams, SessionParams, WaitParams,
};
use crate::companion::protocol::results::{Pairing, RuntimeDescription, Session, Unchanged, WaitResult};
use crate::companion::protocol::{CompanionMethod, Lane, method};
use crate::companion::unix::{check_socket_path, default_socket_path, ensure_private_dir, euid};
use serde_json::{Value, json};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::time::Instant;

/// How long a call waits for its answer unless [`Client::set_timeout`] says otherwise: 30 s.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long [`Client::pair`] waits for the user to decide: 15 min (the runtime bounds it too).
pub(crate) const PAIR_TIMEOUT: Duration = Duration::from_secs(15 * 60);
/// Largest answer accepted, bytes.
const MAX_ANSWER_BYTES: usize = 64 << 20;

/// Why a call of a [`Client`] did not give its result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The socket, its directory or the process listening on it is not this user's own (see
    /// the module docs): nothing was sent.
    #[error("{0}")]
    Untrusted(String),
    /// No connection (no socket there, nothing listening), or it failed, closed or timed out.
    #[error("{0}")]
    Connection(String),
    /// The runtime answered with an error.
    #[error("{0}")]
    Rpc(RpcError),
    /// The answer is not a JSON-RPC 2.0 response.
    #[error("{0}")]
    Protocol(String),
    /// The result does not fit the method's result type.
    #[error("{0}")]
    Mismatch(String),
    /// No usable credential profile.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// A call the client does not make this way (e.g. `session.authenticate` through
    /// [`Client::call`]: use [`Client::authenticate`]), or a [`BlockingClient`] used inside an
    /// async runtime.
    #[error("{0}")]
    Usage(String),
}

impl ClientError {
    /// The protocol's error code of an error the runtime answered with (`INVALID_PARAMS`,
    /// `QUEUE_FULL`, …, OQ-CP-12); `None` for the other kinds.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            ClientError::Rpc(e) => e.error_code(),
            _ => None,
        }
    }
}

/// A JSON-RPC error as the runtime answered it (OQ-CP-12): `{"code": int, "message", "data":
/// {"code": string, "retryable": bool, ...details}}`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {message}", self.code_str().unwrap_or("ERROR"))]
pub struct RpcError {
    /// `error.code`, the JSON-RPC integer.
    pub code: i64,
    /// `error.message`.
    pub message: String,
    /// `error.data`; `null` if absent.
    pub data: Value,
}

impl RpcError {
    /// `error.data.code`, the stable string code, if present.
    pub fn code_str(&self) -> Option<&str> {
        self.data.get("code").and_then(Value::as_str)
    }

    /// The protocol's code, when `error.data.code` is one this build knows.
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.code_str().and_then(|c| serde_json::from_value(Value::from(c)).ok())
    }

    /// `error.data.retryable`: whether the same call may succeed later (false if absent).
    pub fn retryable(&self) -> bool {
        self.data.get("retryable").and_then(Value::as_bool).unwrap_or(false)
    }
}

/// A decoded result and the JSON it came from (the CLI prints it as received: a newer runtime
/// may add keys, CP-7-4).
#[derive(Debug)]
pub(crate) struct Reply<T> {
    pub(crate) value: T,
    pub(crate) raw: Value,
}

/// How a wait ended ([`Client::wait_raw`]).
pub(crate) enum Waited {
    /// The request ended (or, with `after_revision`, changed): its snapshot.
    Done(Reply<RequestSnapshot>),
    /// The time ran out while it runs: its latest full snapshot.
    Pending(Reply<RequestSnapshot>),
    /// The time ran out on the `unchanged` marker and the snapshot could not be fetched: the
    /// marker (which the CLI shows), and why.
    Marker(#[cfg_attr(not(feature = "cli"), allow(dead_code))] Reply<Unchanged>, ClientError),
}

/// A connection to the companion runtime over its Unix socket (feature `companion`, Unix): one
/// call at a time, each answer awaited.
///
/// - **Who it talks to (CP-5-12, CP-5-14).** Before it sends anything — a key above all — a
///   client checks that the socket and its directory are this user's own and not writable by
///   group or others (symlinks refused), and that the process listening runs as this user
///   (the peer's credentials: `SO_PEERCRED` on Linux, `getpeereid` on the other Unix systems).
///   The default socket's directory ([`crate::companion::default_socket_path`]) is created and
///   checked as the server does it: mode `0700`, refused when it belongs to someone else.
///   Anything else → [`ClientError::Untrusted`], and nothing was sent.
/// - **Versions (CP-7-2).** [`Client::connect`] negotiates the protocol version first
///   (`runtime.describe` with `protocolVersions`); no common version → [`ClientError::Rpc`]
///   `INVALID_PARAMS`.
/// - **Credentials (CP-5-9, CP-5-10).** Only from a [`CredentialProfile`]: a program never holds
///   the key in its source or arguments. [`Client::pair`] asks the user to pair (they confirm in
///   the app, CP-5-11) and returns the new credentials once, to be saved as a profile.
/// - **Methods.** [`Client::call`] calls any method of the protocol table with its params type
///   and decodes its result type (`client.call::<method::RequestsCreate>(params)`);
///   [`Client::wait`] follows a request until it ends, handling `requests.wait`'s `unchanged`
///   marker.
///
/// ```no_run
/// # async fn demo() -> Result<(), bridge_runtime::companion::ClientError> {
/// use bridge_runtime::companion::protocol::{method, params::NoParams};
/// use bridge_runtime::companion::{Client, CredentialProfile};
/// let profile = CredentialProfile::load("build-bot")?;
/// let mut client = Client::connect_with(&profile).await?;
/// let characters = client.call::<method::CharactersList>(NoParams {}).await?;
/// println!("{:?}", characters.current);
/// # Ok(()) }
/// ```
pub struct Client {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    socket: PathBuf,
    next_id: u64,
    timeout: Duration,
    runtime: Option<RuntimeDescription>,
    session: Option<Session>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("socket", &self.socket)
            .field("client_id", &self.session.as_ref().map(|s| &s.client_id))
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects to the socket at `path` once it is checked (see the module docs) and negotiates
    /// the protocol version (CP-7-2). Errors: [`ClientError::Untrusted`] (nothing was sent),
    /// [`ClientError::Connection`], or the runtime's answer to `runtime.describe`.
    pub async fn connect(path: impl AsRef<Path>) -> Result<Self, ClientError> {
        let mut client = Self::open(path.as_ref(), false).await?;
        client.negotiate().await?;
        Ok(client)
    }

    /// [`Client::connect`] to the default socket ([`crate::companion::default_socket_path`]),
    /// whose directory is created (mode `0700`) and checked as the server does it.
    pub async fn connect_default() -> Result<Self, ClientError> {
        let mut client = Self::open(&default_socket_path(), true).await?;
        client.negotiate().await?;
        Ok(client)
    }

    /// [`Client::connect`] to the socket `profile` was paired on (the default socket if it
    /// names none), then [`Client::authenticate`] with it.
    pub async fn connect_with(profile: &CredentialProfile) -> Result<Self, ClientError> {
        let mut client = match profile.socket() {
            Some(path) => Self::connect(path).await?,
            None => Self::connect_default().await?,
        };
        client.authenticate(profile).await?;
        Ok(client)
    }

    /// Checks the socket at `path` and the process listening on it, and connects; nothing is
    /// sent. `default_dir`: `path` is the default socket, whose directory is created and held
    /// to the server's rule (`0700`, this user's).
    pub(crate) async fn open(path: &Path, default_dir: bool) -> Result<Self, ClientError> {
        let cannot_connect =
            |e: io::Error| ClientError::Connection(format!("cannot connect to {}: {e}", path.display()));
        let refuse =
            |why: String| ClientError::Untrusted(format!("refusing {}: {why}; nothing was sent", path.display()));
        let checked = |e: io::Error| match e.kind() {
            io::ErrorKind::PermissionDenied => refuse(e.to_string()),
            _ => cannot_connect(e),
        };
        if default_dir && let Some(dir) = path.parent() {
            ensure_private_dir(dir).map_err(checked)?;
        }
        check_socket_path(path).map_err(checked)?;
        let stream = UnixStream::connect(path).await.map_err(cannot_connect)?;
        // The path's owner is not enough: the socket may have been bound by another user's process.
        match stream.peer_cred() {
            Ok(peer) if peer.uid() == euid() => {}
            Ok(peer) => return Err(refuse(format!("the process listening runs as another user (uid {})", peer.uid()))),
            Err(e) => return Err(refuse(format!("cannot tell which user listens on it ({e})"))),
        }
        let (rd, wr) = stream.into_split();
        Ok(Self {
            reader: BufReader::with_capacity(64 << 10, rd),
            writer: wr,
            socket: path.to_owned(),
            next_id: 1,
            timeout: DEFAULT_TIMEOUT,
            runtime: None,
            session: None,
        })
    }

    /// `runtime.describe` with this client's protocol version (CP-7-2).
    async fn negotiate(&mut self) -> Result<&RuntimeDescription, ClientError> {
        let params = RuntimeDescribeParams { protocol_versions: Some(vec![PROTOCOL_VERSION.to_owned()]) };
        let described = self.call::<method::RuntimeDescribe>(params).await?;
        Ok(self.runtime.insert(described))
    }

    /// The socket this client is connected to.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The runtime as it described itself when the version was negotiated (its limits, its
    /// `runtimeInstanceId`; the authorization of that moment).
    pub fn runtime(&self) -> Option<&RuntimeDescription> {
        self.runtime.as_ref()
    }

    /// Who this connection is, once [`Client::authenticate`] succeeded.
    pub fn session(&self) -> Option<&Session> {
        self.session.as_ref()
    }

    /// How long each call waits for its answer (default 30 s; at least 1 ms).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout.max(Duration::from_millis(1));
    }

    /// Asks the runtime to pair a new client named `name` with `scopes` (`pairing.request`,
    /// CP-5-2): the user confirms in the app, choosing the scopes granted (CP-5-11). Waits up to
    /// 15 minutes. The result holds the new key, returned this once: store it with
    /// [`CredentialProfile::from_pairing`] and [`CredentialProfile::save`] (CP-5-5). Errors:
    /// another pairing waiting → `RATE_LIMITED`; denied, unanswered or nothing granted →
    /// `FORBIDDEN` ([`ClientError::Rpc`]).
    pub async fn pair(&mut self, name: &str, scopes: &[Scope]) -> Result<Pairing, ClientError> {
        let params = PairingParams { name: name.to_owned(), scopes: scopes.to_vec() };
        let params = encode(params)?;
        Ok(self.request::<method::PairingRequest>(params, PAIR_TIMEOUT).await?.value)
    }

    /// Authenticates this connection with `profile`'s credentials (`session.authenticate`;
    /// once per connection). Errors: unknown client or wrong key → `UNAUTHENTICATED`
    /// ([`ClientError::Rpc`]).
    pub async fn authenticate(&mut self, profile: &CredentialProfile) -> Result<&Session, ClientError> {
        let params = SessionParams { client_id: profile.client_id().to_owned(), key: profile.key().to_owned() };
        let session = self.request::<method::SessionAuthenticate>(encode(params)?, self.timeout).await?.value;
        Ok(self.session.insert(session))
    }

    /// Calls method `M` with its typed params and returns its typed result, e.g.
    /// `client.call::<method::RequestsCreate>(params)` → [`RequestSnapshot`]. Errors: the
    /// runtime's answer ([`ClientError::Rpc`]: the method's codes, [`crate::companion::protocol::Method::errors`]),
    /// a failed connection, an answer that does not fit `M::Result`; `session.authenticate` and
    /// `pairing.request` → [`ClientError::Usage`] (use [`Client::authenticate`],
    /// [`Client::pair`]).
    pub async fn call<M: CompanionMethod>(&mut self, params: M::Params) -> Result<M::Result, ClientError> {
        if M::METHOD.lane() == Lane::Connection {
            return Err(ClientError::Usage(format!(
                "{} is not called this way; see Client::pair and Client::authenticate",
                M::METHOD
            )));
        }
        let params = encode(params)?;
        Ok(self.request::<M>(params, self.timeout).await?.value)
    }

    /// Waits until request `request_id` ends, for at most `within` in total, and returns its
    /// snapshot: terminal, or the latest one if the time ran out first (its `state` says which).
    /// Loops over `requests.wait`, each call within the runtime's `maxWaitMs` (CP-3-22); when
    /// the last answer is the `unchanged` marker, fetches the full snapshot (`requests.get`).
    pub async fn wait(&mut self, request_id: &str, within: Duration) -> Result<RequestSnapshot, ClientError> {
        let max_wait_ms = match &self.runtime {
            Some(r) => r.limits.max_wait_ms,
            None => self.negotiate().await?.limits.max_wait_ms,
        };
        let budget = u64::try_from(within.as_millis()).unwrap_or(u64::MAX);
        match self.wait_raw(request_id, budget, None, Some(max_wait_ms)).await? {
            Waited::Done(r) | Waited::Pending(r) => Ok(r.value),
            Waited::Marker(_, e) => Err(e),
        }
    }

    /// Follows request `id` over `requests.wait` for at most `budget_ms` in total: until it is
    /// terminal, or with `after_revision` until its revision exceeds that. Each call asks for
    /// all the time left (at most `cap_ms`). On the `unchanged` marker with no time left, the
    /// full snapshot comes from `requests.get` (CP-6-15).
    pub(crate) async fn wait_raw(
        &mut self,
        id: &str,
        budget_ms: u64,
        after_revision: Option<u64>,
        cap_ms: Option<u64>,
    ) -> Result<Waited, ClientError> {
        let start = Instant::now();
        let next_change_only = after_revision.is_some();
        let mut after = after_revision;
        loop {
            let elapsed = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
            let remaining = budget_ms.saturating_sub(elapsed);
            let wait_ms = cap_ms.map_or(remaining, |cap| remaining.min(cap));
            let params = WaitParams { request_id: id.to_owned(), after_revision: after, wait_ms: Some(wait_ms) };
            let timeout = Duration::from_millis(wait_ms) + self.timeout;
            let reply = self.request::<method::RequestsWait>(encode(params)?, timeout).await?;
            let snapshot = match reply.value {
                WaitResult::Unchanged(_) if wait_ms < remaining => continue,
                WaitResult::Unchanged(unchanged) => {
                    let marker = Reply { value: unchanged, raw: reply.raw };
                    return self.latest(id, marker, after_revision).await;
                }
                WaitResult::Changed(snapshot) => *snapshot,
            };
            let reply = Reply { value: snapshot, raw: reply.raw };
            if reply.value.state.is_terminal() || next_change_only {
                return Ok(Waited::Done(reply));
            }
            after = Some(reply.value.revision);
            if remaining == 0 {
                return Ok(Waited::Pending(reply));
            }
        }
    }

    /// The end of a wait on the `unchanged` marker: the request's full snapshot. Should it have
    /// ended (or, with `after_revision`, changed) in between, that is the outcome.
    async fn latest(
        &mut self,
        id: &str,
        marker: Reply<Unchanged>,
        after_revision: Option<u64>,
    ) -> Result<Waited, ClientError> {
        let params = encode(RequestRef { request_id: id.to_owned() })?;
        let reply = match self.request::<method::RequestsGet>(params, self.timeout).await {
            Ok(reply) => reply,
            Err(e) => return Ok(Waited::Marker(marker, e)),
        };
        let changed = after_revision.is_some_and(|after| reply.value.revision > after);
        Ok(if reply.value.state.is_terminal() || changed { Waited::Done(reply) } else { Waited::Pending(reply) })
    }

    /// Sends `M` with `params` as given and waits at most `timeout` for its answer, decoded and
    /// as received.
    pub(crate) async fn request<M: CompanionMethod>(
        &mut self,
        params: Value,
        timeout: Duration,
    ) -> Result<Reply<M::Result>, ClientError> {
        let raw = self.exchange(M::METHOD.as_str(), params, timeout).await?;
        let value = serde_json::from_value(raw.clone()).map_err(|e| {
            ClientError::Mismatch(format!("the runtime's {} answer does not fit the protocol: {e}", M::METHOD))
        })?;
        Ok(Reply { value, raw })
    }

    /// One request line out, its response in: the result, or the error it carries.
    async fn exchange(&mut self, method: &str, params: Value, timeout: Duration) -> Result<Value, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut line = serde_json::to_vec(&request).map_err(|e| ClientError::Protocol(e.to_string()))?;
        line.push(b'\n');
        self.writer.write_all(&line).await.map_err(|e| ClientError::Connection(format!("cannot send: {e}")))?;
        let deadline = Instant::now() + timeout.max(Duration::from_millis(1));
        let mut buf = Vec::new();
        loop {
            let read = jsonrpc::read_line(&mut self.reader, &mut buf, MAX_ANSWER_BYTES);
            let line = match tokio::time::timeout_at(deadline, read).await {
                Err(_) => return Err(ClientError::Connection("no answer from the runtime: timed out".into())),
                Ok(Err(e)) => return Err(ClientError::Connection(format!("no answer from the runtime: {e}"))),
                Ok(Ok(Line::Eof)) => return Err(ClientError::Connection("the runtime closed the connection".into())),
                Ok(Ok(Line::TooLong)) => return Err(ClientError::Protocol("the response is too large".into())),
                Ok(Ok(Line::Message(bytes))) => bytes,
            };
            let value: Value =
                serde_json::from_slice(&line).map_err(|_| ClientError::Protocol("the response is not JSON".into()))?;
            let Some((rid, outcome)) = parse_response(value) else {
                return Err(ClientError::Protocol("the response is not a JSON-RPC 2.0 response".into()));
            };
            // A `null` id is a connection-level error (timeout, size, too many connections).
            if rid == id || rid.is_null() {
                return outcome.map_err(ClientError::Rpc);
            }
        }
    }
}

/// Typed params as JSON (the params types always encode).
fn encode<P: serde::Serialize>(params: P) -> Result<Value, ClientError> {
    serde_json::to_value(params).map_err(|e| ClientError::Usage(format!("the params cannot be encoded: {e}")))
}

/// Splits a response into its `id` and outcome. `None` if `value` is not a JSON-RPC 2.0
/// response object.
fn parse_response(value: Value) -> Option<(Value, Result<Value, RpcError>)> {
    let Value::Object(mut obj) = value else { return None };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return None;
    }
    let id = obj.remove("id")?;
    match (obj.remove("result"), obj.remove("error")) {
        (Some(result), None) => Some((id, Ok(result))),
        (None, Some(Value::Object(mut err))) => {
            let code = err.get("code").and_then(Value::as_i64)?;
            let message = match err.remove("message") {
                Some(Value::String(m)) => m,
                _ => String::new(),
            };
            let data = err.remove("data").unwrap_or(Value::Null);
            Some((id, Err(RpcError { code, message, data })))
        }
        _ => None,
    }
}
