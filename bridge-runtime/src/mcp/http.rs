//! Streamable HTTP at `/mcp` (feature `http`): loopback only unless allowed, `Host` and
//! `Origin` checked before a body is read, header-read and body timeouts, a connection cap,
//! strict 2026-07-28 wire rules in a thin layer in front of rmcp
//! (MA-8-1 to MA-8-4, legacy `DELETE` answered 204), and caps on legacy sessions and
//! `subscriptions/listen` streams.

mod access;
mod admission;
#[cfg(feature = "fuzzing")]
pub(crate) mod fuzz;
mod sessions;
mod strict;
mod token;

pub use token::{TOKEN_ENV, TokenLabel, token_dir};

use super::{GuiBridgeServer, ServeError};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Options of the streamable HTTP transport. Build from [`HttpOptions::default`] with the
/// builder methods: `HttpOptions::default().max_sessions(64).max_listen_streams(16)`.
///
/// | option | default |
/// | --- | --- |
/// | access token ([`token`](HttpOptions::token), [`named_token`](HttpOptions::named_token), [`token_file`](HttpOptions::token_file), [`no_token`](HttpOptions::no_token)) | [`TOKEN_ENV`] when set, else generated at start |
/// | [`allow_non_loopback`](HttpOptions::allow_non_loopback) | `false` |
/// | [`trusted_origins`](HttpOptions::trusted_origins) | none beyond the server's own |
/// | [`max_sessions`](HttpOptions::max_sessions) | [`HttpOptions::DEFAULT_MAX_SESSIONS`] = 32 |
/// | [`max_listen_streams`](HttpOptions::max_listen_streams) | [`HttpOptions::DEFAULT_MAX_LISTEN_STREAMS`] = 64 |
/// | [`max_connections`](HttpOptions::max_connections) | `max_sessions + max_listen_streams +` [`HttpOptions::CONNECTION_HEADROOM`] (= 128) |
/// | [`max_pending_connections`](HttpOptions::max_pending_connections) | [`HttpOptions::DEFAULT_MAX_PENDING_CONNECTIONS`] = 64 |
/// | [`header_read_timeout`](HttpOptions::header_read_timeout) | [`HttpOptions::DEFAULT_HEADER_READ_TIMEOUT`] = 30 s |
/// | [`body_timeout`](HttpOptions::body_timeout) | [`HttpOptions::DEFAULT_BODY_TIMEOUT`] = 30 s |
///
/// The caps keep the server's memory bounded whatever clients do. A legacy
/// session costs about 58 KiB of server memory, most of it rmcp's per-session channels, and
/// under churn (sessions evicted and replaced) about 110 KiB per slot of the cap (measured:
/// BENCHMARKS.md, "Bounded under load"). The default cap keeps a flood of `initialize`s near 2×
/// the idle server's ~8 MiB; a desktop app serves a few agents, and agents that keep their `GET`
/// stream open are never evicted. Raise the cap for more (128 slots ≈ +20 MiB, 1,024 ≈
/// +110 MiB under churn). A `subscriptions/listen` stream holds one open HTTP response and its
/// handler.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Serve on a non-loopback address and accept any `Host` header. Off by default: the
    /// server then refuses non-loopback addresses, and answers a `Host` header other than
    /// `localhost`, `127.0.0.1` and `[::1]` (any port) with HTTP 403 (DNS-rebinding
    /// protection). GB 0.1.0 has no authorisation (GB-10.6-1), so whoever reaches the port
    /// operates the UI.
    pub allow_non_loopback: bool,
    /// Browser origins trusted besides the server's own, each `scheme://host:port` (compared
    /// as origins: scheme and host case-insensitively, a missing port read as the scheme's
    /// default). The server's own origin is always trusted: `http://HOST:PORT` where `PORT` is
    /// the bound port (for [`http_router`] mounted in an app's own server: the port of the
    /// request's `Host` header) and `HOST` is `localhost`, `127.0.0.1`, `[::1]` or the bound
    /// address. An `Origin` header must be an origin's exact serialization (`scheme://host[:port]`,
    /// nothing after it, not even `/`). A request with any other `Origin` (a page on another
    /// `localhost` port, `null`, a malformed value, a trailing slash) gets HTTP 403 before its body
    /// is read; a request without
    /// `Origin` (SDKs and CLIs send none) passes.
    pub trusted_origins: Vec<String>,
    /// Most legacy (2025-11-25 and older, `Mcp-Session-Id`) sessions alive at once, default
    /// [`HttpOptions::DEFAULT_MAX_SESSIONS`]. A new session past the cap evicts the least
    /// recently used *idle* session (no `GET` SSE stream open, no request in flight); the
    /// evicted session's next request gets HTTP 404, as for any unknown session, and its client
    /// starts a new one. When every session is active, the `initialize` is refused with HTTP 503
    /// and a JSON-RPC error (`-32603`, `id` echoed). Evictions are logged at `info`, refusals
    /// at `warn` (`tracing`). `0` admits no legacy session; 2026-07-28 clients need none.
    pub max_sessions: usize,
    /// Most 2026-07-28 `subscriptions/listen` streams open at once (both eras' POSTs of that
    /// method count), default [`HttpOptions::DEFAULT_MAX_LISTEN_STREAMS`]. One more is refused
    /// with HTTP 503 and a JSON-RPC error (`-32603`, `id` echoed), logged at `warn`; a stream
    /// stops counting when its response ends (the client cancelled it or went away). `0` refuses
    /// every listen.
    pub max_listen_streams: usize,
    /// Most admitted TCP connections [`serve_http_on_with`] serves at once; `None` (the
    /// default) means `max_sessions + max_listen_streams +`
    /// [`HttpOptions::CONNECTION_HEADROOM`], and a value below `max_sessions +
    /// max_listen_streams` is raised to it (every session's `GET` stream and every listen stream
    /// holds a connection). A connection counts against the cap once one of its requests has a
    /// complete head whose `Host`, `Origin` and token are accepted, and until it closes; while
    /// it is still sending its first head it counts against
    /// [`HttpOptions::max_pending_connections`] instead. Past the cap such a request gets HTTP 503
    /// with no body and the connection is closed; admitted connections keep working. Not applied
    /// by [`http_router`] (the app's own server owns its connections).
    pub max_connections: Option<usize>,
    /// Most connections [`serve_http_on_with`] holds that have not had a request admitted yet
    /// (still sending their first head, or refused and closing), default
    /// [`HttpOptions::DEFAULT_MAX_PENDING_CONNECTIONS`] (`0` is read as 1). When it is full, a
    /// new connection evicts the oldest pending one, which is closed without an answer. So
    /// connections that dribble their heads (a slowloris) never hold the slots of
    /// [`HttpOptions::max_connections`]: a client that sends a complete head with the token is
    /// served while such a flood goes on, unless the flood opens this many new connections
    /// before that head has arrived. Not applied by [`http_router`].
    pub max_pending_connections: usize,
    /// Longest a client may take to send a request's head (request line and headers), default
    /// [`HttpOptions::DEFAULT_HEADER_READ_TIMEOUT`]; the connection is then closed without an
    /// answer (a slowloris client holds nothing longer). It is also the idle timeout of a
    /// keep-alive connection between requests: the clock starts when the server waits for the
    /// next request. A connection with a response in flight — a `GET` SSE stream, a
    /// `subscriptions/listen` stream — is never timed out, however long it stays quiet. Applied
    /// by [`serve_http_on_with`] (hyper's `header_read_timeout`), not by [`http_router`].
    pub header_read_timeout: std::time::Duration,
    /// Longest a client may take to send a POST body once its head is in, default
    /// [`HttpOptions::DEFAULT_BODY_TIMEOUT`]; past it the request gets HTTP 408 with no body and
    /// the connection is closed.
    pub body_timeout: std::time::Duration,
    /// The address [`serve_http_on_with`] bound, for the server's own origin.
    bound: Option<SocketAddr>,
    /// Where the access token comes from.
    token_source: TokenSource,
}

/// Where the access token comes from (see [`HttpOptions::token`]).
#[derive(Clone, Default)]
enum TokenSource {
    /// [`TOKEN_ENV`] when set, else generated.
    #[default]
    Default,
    /// [`TOKEN_ENV`] when set, else this file.
    File(std::path::PathBuf),
    /// The app's tokens, `(label, secret)`.
    Tokens(Vec<(String, String)>),
    /// No token: [`HttpOptions::no_token`].
    Disabled,
}

impl std::fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Default => f.write_str("Default"),
            Self::File(path) => f.debug_tuple("File").field(path).finish(),
            // Labels only, never a secret.
            Self::Tokens(tokens) => {
                f.debug_tuple("Tokens").field(&tokens.iter().map(|(l, _)| l).collect::<Vec<_>>()).finish()
            }
            Self::Disabled => f.write_str("Disabled"),
        }
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            allow_non_loopback: false,
            trusted_origins: Vec::new(),
            max_sessions: Self::DEFAULT_MAX_SESSIONS,
            max_listen_streams: Self::DEFAULT_MAX_LISTEN_STREAMS,
            max_connections: None,
            max_pending_connections: Self::DEFAULT_MAX_PENDING_CONNECTIONS,
            header_read_timeout: Self::DEFAULT_HEADER_READ_TIMEOUT,
            body_timeout: Self::DEFAULT_BODY_TIMEOUT,
            bound: None,
            token_source: TokenSource::Default,
        }
    }
}

impl HttpOptions {
    /// Default [`HttpOptions::max_sessions`]: 32 legacy sessions (about 2 MiB live, +9 MiB
    /// under a flood of `initialize`s).
    pub const DEFAULT_MAX_SESSIONS: usize = 32;
    /// Default [`HttpOptions::max_listen_streams`]: 64 open `subscriptions/listen` streams.
    pub const DEFAULT_MAX_LISTEN_STREAMS: usize = 64;
    /// Connections allowed beyond `max_sessions + max_listen_streams` by default (short
    /// requests of 2026-07-28 clients, a legacy client's POSTs): 32.
    pub const CONNECTION_HEADROOM: usize = 32;
    /// Default [`HttpOptions::max_pending_connections`]: 64 connections still sending their
    /// first request head.
    pub const DEFAULT_MAX_PENDING_CONNECTIONS: usize = 64;
    /// Default [`HttpOptions::header_read_timeout`]: 30 seconds.
    pub const DEFAULT_HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
    /// Default [`HttpOptions::body_timeout`]: 30 seconds (4 MiB, the body cap, at 140 KB/s).
    pub const DEFAULT_BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

    /// Requires `Authorization: Bearer SECRET` on every request, labelled `"default"` (see
    /// [`TokenLabel`]); replaces any token set before. `SECRET` must be 16 to 1,024 visible ASCII
    /// characters, checked at start-up ([`ServeError::Token`]).
    ///
    /// Without this, [`HttpOptions::named_token`] or [`HttpOptions::no_token`], the token is
    /// read from the environment variable [`TOKEN_ENV`] (`BRIDGE_MCP_TOKEN`) when it is set,
    /// else from the file of [`HttpOptions::token_file`] when named, else generated at start
    /// (32 random bytes, 64 hex digits), printed to stderr and written to a file readable by
    /// this user only (`mcp-PID-PORT.token` in [`token_dir`], a `0700` directory) whose path is
    /// printed with it. That file is deleted when the server stops — [`serve_http_on_with`]'s
    /// future ends or is dropped, or the last clone of [`http_router`]'s router is dropped — if
    /// it still holds this token (a file named with [`HttpOptions::token_file`] is never
    /// deleted). A process killed by a signal it does not handle leaves it behind: stop the
    /// server on Ctrl-C (`tokio::signal::ctrl_c`) instead. A request without the token gets
    /// HTTP 401 with
    /// `WWW-Authenticate: Bearer realm="bridge"` and no body, before its body is read.
    pub fn token(mut self, secret: impl Into<String>) -> Self {
        self.token_source = TokenSource::Tokens(vec![("default".to_owned(), secret.into())]);
        self
    }

    /// Adds a token labelled `label` (one per agent, say); a request that presents it carries
    /// [`TokenLabel`]`(label)`, which the dispatcher and the request's `tracing` span see.
    /// Replaces a token from [`HttpOptions::token_file`], the environment or generation; any
    /// number of named tokens may be configured.
    pub fn named_token(mut self, label: impl Into<String>, secret: impl Into<String>) -> Self {
        let entry = (label.into(), secret.into());
        match &mut self.token_source {
            TokenSource::Tokens(tokens) => tokens.push(entry),
            other => *other = TokenSource::Tokens(vec![entry]),
        }
        self
    }

    /// Reads the token from the file at `path` at start-up (surrounding whitespace trimmed), unless
    /// [`TOKEN_ENV`] is set; a missing or unreadable file stops the start ([`ServeError::Token`]).
    pub fn token_file(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.token_source = TokenSource::File(path.into());
        self
    }

    /// Serves without an access token: whoever can reach the port (every local user and
    /// process, on loopback) can list and call every tool. An explicit opt-out for test rigs and
    /// single-user machines; refused at start-up ([`ServeError::CompanionWithoutToken`]) when the
    /// server also carries the companion's tools, whose HTTP profile needs the token.
    pub fn no_token(mut self) -> Self {
        self.token_source = TokenSource::Disabled;
        self
    }

    /// Sets [`HttpOptions::allow_non_loopback`].
    pub fn allow_non_loopback(mut self, allow: bool) -> Self {
        self.allow_non_loopback = allow;
        self
    }

    /// Adds `origin` (`scheme://host:port`, e.g. `http://localhost:5173` for a dev server's
    /// page) to [`HttpOptions::trusted_origins`].
    pub fn trust_origin(mut self, origin: impl Into<String>) -> Self {
        self.trusted_origins.push(origin.into());
        self
    }

    /// Sets [`HttpOptions::max_sessions`] (a count of sessions; `0` admits none).
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max;
        self
    }

    /// Sets [`HttpOptions::max_listen_streams`] (a count of open streams; `0` admits none).
    pub fn max_listen_streams(mut self, max: usize) -> Self {
        self.max_listen_streams = max;
        self
    }

    /// Sets [`HttpOptions::max_connections`] (a count of TCP connections, raised to at least
    /// `max_sessions + max_listen_streams`).
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = Some(max);
        self
    }

    /// Sets [`HttpOptions::max_pending_connections`] (a count of TCP connections; `0` is read
    /// as 1).
    pub fn max_pending_connections(mut self, max: usize) -> Self {
        self.max_pending_connections = max;
        self
    }

    /// Sets [`HttpOptions::header_read_timeout`] (also the keep-alive idle timeout).
    pub fn header_read_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// Sets [`HttpOptions::body_timeout`].
    pub fn body_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// The connection cap in force: [`HttpOptions::max_connections`] or its default, at least
    /// `max_sessions + max_listen_streams`.
    pub fn effective_max_connections(&self) -> usize {
        let streams = self.max_sessions.saturating_add(self.max_listen_streams);
        self.max_connections.unwrap_or(streams.saturating_add(Self::CONNECTION_HEADROOM)).max(streams)
    }
}

/// An axum router serving streamable HTTP MCP at `/mcp`: a clone of `server` (the composed
/// surfaces, sharing its view table; a [`Bridge`](crate::gui::Bridge) alone converts into one)
/// per legacy session, and per `POST` for 2026-07-28 clients (rmcp's [`StreamableHttpService`]
/// with a [`LocalSessionManager`] bounded by [`HttpOptions::max_sessions`]). Mount it in an
/// app's own server, or use [`serve_http`].
///
/// Only the path `/mcp` itself is served (any query string allowed); every other path, `/mcp/…`
/// included, is the router's 404 (or the fallback of the app that mounts it).
///
/// Every request to `/mcp` is checked in this order, before its body is read: `Host` (loopback
/// names unless [`HttpOptions::allow_non_loopback`]), `Origin` (absent, or the server's own, or
/// one of [`HttpOptions::trusted_origins`]), the access token (one `Authorization: Bearer`, see
/// [`HttpOptions::token`]), then the connection cap ([`serve_http_on_with`] only). Such a
/// rejection is an HTTP status with no body and closes the connection: 403 for `Host` or
/// `Origin`, 401 with `WWW-Authenticate: Bearer realm="bridge"` for the token (no OAuth
/// resource metadata: the token is handed over out of band), 503 past the connection cap. rmcp
/// checks `Host` and `Origin` again.
///
/// The token is resolved here (read, or generated and printed): errors are
/// [`ServeError::Token`], and [`ServeError::CompanionWithoutToken`] when `server` carries the
/// companion's tools and [`HttpOptions::no_token`] is set. The companion's tools over HTTP are
/// the companion's HTTP profile (CP-5-16): loopback binding (unless the app opts out), the bearer
/// token, the `Origin` rule above, and the fixed `ClientIdentity` the app gave
/// `CompanionTools` (every HTTP caller acts as that client; pairing
/// is not involved).
///
/// Then a thin layer in front of rmcp makes the wire strict: a POST body of at most 4 MiB
/// (413 beyond; 408 with no body when it takes longer than [`HttpOptions::body_timeout`]),
/// checked as one JSON-RPC message before rmcp compares routing headers (MA-8-1: invalid JSON →
/// 400 `-32700`, a bad envelope → 400 `-32600`, a malformed request `_meta` → 400 `-32602`); no
/// body ever answers a notification (MA-8-2 to MA-8-4); errors on requests are JSON-RPC error
/// objects; a legacy session's `DELETE` answers 204 (404 for an unknown session). The
/// 2026-07-28 endpoint answers `GET` and `DELETE` with 405 (MA-1-6). Past
/// [`HttpOptions::max_sessions`] active sessions an `initialize`, and past
/// [`HttpOptions::max_listen_streams`] a `subscriptions/listen`, gets HTTP 503 with a JSON-RPC
/// error.
pub fn http_router(server: impl Into<GuiBridgeServer>, options: &HttpOptions) -> Result<axum::Router, ServeError> {
    router(server.into(), options).map(|(router, _token_file)| router)
}

/// [`http_router`], and the generated token's file when there is one (the router keeps it too:
/// the file is deleted when the last of them is dropped).
fn router(
    server: GuiBridgeServer,
    options: &HttpOptions,
) -> Result<(axum::Router, Option<Arc<token::TokenFile>>), ServeError> {
    let tokens = token::Tokens::resolve(options, options.bound.map(|addr| addr.port()))?;
    if tokens.is_disabled() {
        if server.carries_companion() {
            return Err(ServeError::CompanionWithoutToken);
        }
        tracing::warn!("serving MCP over HTTP without an access token (HttpOptions::no_token)");
    }
    let token_file = tokens.file();
    let access = access::Access::new(options);
    // The second line: rmcp's own DNS-rebinding checks, with the same origin list (or, when
    // the port is not known here, a looser one).
    let mut config = StreamableHttpServerConfig::default().with_allowed_origins(access.rmcp_origins());
    if options.allow_non_loopback {
        config = config.disable_allowed_hosts();
    }
    let sessions = Arc::new(sessions::BoundedSessions::new(LocalSessionManager::default(), options.max_sessions));
    let strict = strict::Strict {
        access: Arc::new(access),
        tokens: Arc::new(tokens),
        sessions: sessions.clone(),
        max_body_bytes: config.max_request_body_bytes,
        body_timeout: options.body_timeout,
        listens: strict::Listens::new(options.max_listen_streams),
        bridge: server.bridge().clone(),
        in_flight: strict::InFlight::default(),
    };
    let service = StreamableHttpService::new(move || Ok(server.clone()), sessions, config);
    // `route_service`: `/mcp` exactly (any query string), no path below it; every other path
    // is the router's 404 (or an app's fallback). `route_layer`: only requests routed to `/mcp`
    // pass the layer.
    let router = axum::Router::new()
        .route_service("/mcp", service)
        .route_layer(axum::middleware::from_fn_with_state(strict, strict::strict_wire));
    Ok((router, token_file))
}

/// Binds `addr` and serves `server` at `http://ADDR/mcp` until the listener fails. `addr` must
/// be a loopback address (see [`serve_http_on_with`] to allow others).
pub async fn serve_http(server: impl Into<GuiBridgeServer>, addr: SocketAddr) -> Result<(), ServeError> {
    if !addr.ip().is_loopback() {
        return Err(ServeError::NonLoopback(addr));
    }
    serve_http_on(server, TcpListener::bind(addr).await?).await
}

/// Serves `server` at `http://ADDR/mcp` on an already bound loopback listener (bind port 0 in
/// tests).
pub async fn serve_http_on(server: impl Into<GuiBridgeServer>, listener: TcpListener) -> Result<(), ServeError> {
    serve_http_on_with(server, listener, HttpOptions::default()).await
}

/// Serves `server` at `http://ADDR/mcp` on `listener` with `options` until accepting fails;
/// refuses a non-loopback listener unless [`HttpOptions::allow_non_loopback`] is set.
///
/// Each connection is served by hyper (HTTP/1.1) with [`HttpOptions::header_read_timeout`],
/// counted against [`HttpOptions::max_pending_connections`] until a request of it is admitted
/// and against [`HttpOptions::max_connections`] from then on; its requests pass
/// [`http_router`]'s checks.
///
/// The server stops when this future returns or is dropped (a `tokio::select!` against
/// `tokio::signal::ctrl_c()`, an aborted task): its connections are closed, and a generated
/// token's file is deleted (see [`HttpOptions::token`]).
pub async fn serve_http_on_with(
    server: impl Into<GuiBridgeServer>,
    listener: TcpListener,
    mut options: HttpOptions,
) -> Result<(), ServeError> {
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() && !options.allow_non_loopback {
        return Err(ServeError::NonLoopback(addr));
    }
    options.bound = Some(addr);
    let (router, token_file) = router(server.into(), &options)?;
    // Declared before the connections: dropped after them, and whether or not a connection
    // task still holds a clone of the router.
    let _token_file = token::RemoveOnDrop(token_file);
    let max_connections = options.effective_max_connections();
    let admission = admission::Admission::new(max_connections, options.max_pending_connections);
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1.timer(TokioTimer::new()).header_read_timeout(options.header_read_timeout);
    // Stopping the server (dropping this future) closes its connections too.
    let mut connections = tokio::task::JoinSet::new();
    tracing::info!(
        %addr,
        max_connections,
        max_pending_connections = options.max_pending_connections,
        "serving MCP over streamable HTTP at /mcp"
    );
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            // A peer that reset before being accepted, a full descriptor table: wait a little
            // rather than spin, and keep serving.
            Err(e) if is_transient(&e) => {
                tracing::warn!(error = %e, "accepting an HTTP connection failed; retrying");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        while connections.try_join_next().is_some() {}
        let (connection, evicted) = admission.accept();
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let attached = connection.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
            request.extensions_mut().insert(attached.clone());
            tower::ServiceExt::oneshot(router.clone(), request)
        });
        let served = http1.serve_connection(TokioIo::new(stream), service);
        connections.spawn(async move {
            let _closed = admission::CloseOnDrop(connection);
            tokio::select! {
                biased;
                () = evicted.wait() => {
                    tracing::debug!(%peer, "closed an HTTP connection still sending its first request head (pending budget full)");
                }
                ended = served => {
                    if let Err(e) = ended {
                        tracing::debug!(%peer, error = %e, "HTTP connection ended with an error");
                    }
                }
            }
        });
    }
}

/// An `accept` error that says nothing about the listener itself.
fn is_transient(e: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    const ENFILE: i32 = 23;
    const EMFILE: i32 = 24;
    matches!(e.kind(), ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset | ErrorKind::Interrupted)
        || e.raw_os_error().is_some_and(|code| code == ENFILE || code == EMFILE)
}
