//! Streamable HTTP at `/mcp` (feature `http`): loopback only unless allowed, `Host` and
//! `Origin` allowlists, strict 2026-07-28 wire rules in a thin layer in front of rmcp
//! (MA-8-1 to MA-8-4, legacy `DELETE` answered 204), and caps on legacy sessions and
//! `subscriptions/listen` streams.

mod sessions;
mod strict;

use super::{GuiBridgeServer, ServeError};
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
/// | [`allow_non_loopback`](HttpOptions::allow_non_loopback) | `false` |
/// | [`max_sessions`](HttpOptions::max_sessions) | [`HttpOptions::DEFAULT_MAX_SESSIONS`] = 32 |
/// | [`max_listen_streams`](HttpOptions::max_listen_streams) | [`HttpOptions::DEFAULT_MAX_LISTEN_STREAMS`] = 64 |
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
    /// server then refuses non-loopback addresses, and rmcp rejects `Host` headers other than
    /// `localhost`, `127.0.0.1` and `::1` (DNS-rebinding protection). GB 0.1.0 has no
    /// authorisation (GB-10.6-1), so whoever reaches the port operates the UI.
    pub allow_non_loopback: bool,
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
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            allow_non_loopback: false,
            max_sessions: Self::DEFAULT_MAX_SESSIONS,
            max_listen_streams: Self::DEFAULT_MAX_LISTEN_STREAMS,
        }
    }
}

impl HttpOptions {
    /// Default [`HttpOptions::max_sessions`]: 32 legacy sessions (about 2 MiB live, +9 MiB
    /// under a flood of `initialize`s).
    pub const DEFAULT_MAX_SESSIONS: usize = 32;
    /// Default [`HttpOptions::max_listen_streams`]: 64 open `subscriptions/listen` streams.
    pub const DEFAULT_MAX_LISTEN_STREAMS: usize = 64;

    /// Sets [`HttpOptions::allow_non_loopback`].
    pub fn allow_non_loopback(mut self, allow: bool) -> Self {
        self.allow_non_loopback = allow;
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
}

/// Browser origins accepted by [`http_router`]: pages served from loopback, any port.
pub const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// An axum router serving streamable HTTP MCP at `/mcp`: a clone of `server` (the composed
/// surfaces, sharing its view table; a [`Bridge`](crate::gui::Bridge) alone converts into one)
/// per legacy session, and per `POST` for 2026-07-28 clients (rmcp's [`StreamableHttpService`]
/// with a [`LocalSessionManager`] bounded by [`HttpOptions::max_sessions`]). Mount it in an
/// app's own server, or use [`serve_http`].
///
/// A thin layer in front of rmcp makes the wire strict: a POST body of at most 4 MiB (413
/// beyond), checked as one JSON-RPC message before rmcp compares routing headers (MA-8-1:
/// invalid JSON → 400 `-32700`, a bad envelope → 400 `-32600`, a malformed request `_meta` →
/// 400 `-32602`); no body ever answers a notification (MA-8-2 to MA-8-4); errors on requests
/// are JSON-RPC error objects; a legacy session's `DELETE` answers 204 (404 for an unknown
/// session). The 2026-07-28 endpoint answers `GET` and `DELETE` with 405 (MA-1-6). Past
/// [`HttpOptions::max_sessions`] active sessions an `initialize`, and past
/// [`HttpOptions::max_listen_streams`] a `subscriptions/listen`, gets HTTP 503 with a JSON-RPC
/// error.
pub fn http_router(server: impl Into<GuiBridgeServer>, options: &HttpOptions) -> axum::Router {
    let server = server.into();
    // Browsers send `Origin`; only pages served from this machine may talk to the app (MCP's
    // DNS-rebinding rule). Clients that send no `Origin` (SDKs, CLIs) are unaffected.
    let mut config = StreamableHttpServerConfig::default().with_allowed_origins(LOOPBACK_ORIGINS);
    if options.allow_non_loopback {
        config = config.disable_allowed_hosts();
    }
    let sessions = Arc::new(sessions::BoundedSessions::new(LocalSessionManager::default(), options.max_sessions));
    let strict = strict::Strict {
        sessions: sessions.clone(),
        max_body_bytes: config.max_request_body_bytes,
        listens: strict::Listens::new(options.max_listen_streams),
    };
    let service = StreamableHttpService::new(move || Ok(server.clone()), sessions, config);
    // `route_layer`: only requests routed to `/mcp` pass the layer, not an app's fallback.
    axum::Router::new()
        .nest_service("/mcp", service)
        .route_layer(axum::middleware::from_fn_with_state(strict, strict::strict_wire))
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

/// Serves `server` at `http://ADDR/mcp` on `listener` with `options`; refuses a non-loopback
/// listener unless [`HttpOptions::allow_non_loopback`] is set.
pub async fn serve_http_on_with(
    server: impl Into<GuiBridgeServer>,
    listener: TcpListener,
    options: HttpOptions,
) -> Result<(), ServeError> {
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() && !options.allow_non_loopback {
        return Err(ServeError::NonLoopback(addr));
    }
    tracing::info!(%addr, "serving MCP over streamable HTTP at /mcp");
    axum::serve(listener, http_router(server, &options)).await?;
    Ok(())
}
