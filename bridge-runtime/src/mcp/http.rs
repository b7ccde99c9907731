//! Streamable HTTP at `/mcp` (feature `http`): loopback only unless allowed, `Host` and
//! `Origin` allowlists, and strict 2026-07-28 wire rules in a thin layer in front of rmcp
//! (MA-8-1 to MA-8-4, legacy `DELETE` answered 204).

mod strict;

use super::{GuiBridgeServer, ServeError};
use crate::gui::Bridge;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Options of the streamable HTTP transport.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Serve on a non-loopback address and accept any `Host` header. Off by default: the
    /// server then refuses non-loopback addresses, and rmcp rejects `Host` headers other than
    /// `localhost`, `127.0.0.1` and `::1` (DNS-rebinding protection). GB 0.1.0 has no
    /// authorisation (GB-10.6-1), so whoever reaches the port operates the UI.
    pub allow_non_loopback: bool,
}

impl HttpOptions {
    /// Sets [`HttpOptions::allow_non_loopback`].
    pub fn allow_non_loopback(mut self, allow: bool) -> Self {
        self.allow_non_loopback = allow;
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

/// An axum router serving streamable HTTP MCP at `/mcp`: one [`GuiBridgeServer`] per legacy
/// session, and per `POST` for 2026-07-28 clients (rmcp's [`StreamableHttpService`] with a
/// [`LocalSessionManager`]). Mount it in an app's own server, or use [`serve_http`].
///
/// A thin layer in front of rmcp makes the wire strict: a POST body of at most 4 MiB (413
/// beyond), checked as one JSON-RPC message before rmcp compares routing headers (MA-8-1:
/// invalid JSON → 400 `-32700`, a bad envelope → 400 `-32600`, a malformed request `_meta` →
/// 400 `-32602`); no body ever answers a notification (MA-8-2 to MA-8-4); errors on requests
/// are JSON-RPC error objects; a legacy session's `DELETE` answers 204 (404 for an unknown
/// session). The 2026-07-28 endpoint answers `GET` and `DELETE` with 405 (MA-1-6).
pub fn http_router(bridge: Bridge, options: &HttpOptions) -> axum::Router {
    // Browsers send `Origin`; only pages served from this machine may talk to the app (MCP's
    // DNS-rebinding rule). Clients that send no `Origin` (SDKs, CLIs) are unaffected.
    let mut config = StreamableHttpServerConfig::default().with_allowed_origins(LOOPBACK_ORIGINS);
    if options.allow_non_loopback {
        config = config.disable_allowed_hosts();
    }
    let sessions = Arc::new(LocalSessionManager::default());
    let strict = strict::Strict { sessions: sessions.clone(), max_body_bytes: config.max_request_body_bytes };
    let service = StreamableHttpService::new(move || Ok(GuiBridgeServer::new(bridge.clone())), sessions, config);
    // `route_layer`: only requests routed to `/mcp` pass the layer, not an app's fallback.
    axum::Router::new()
        .nest_service("/mcp", service)
        .route_layer(axum::middleware::from_fn_with_state(strict, strict::strict_wire))
}

/// Binds `addr` and serves `http://ADDR/mcp` until the listener fails. `addr` must be a
/// loopback address (see [`serve_http_on_with`] to allow others).
pub async fn serve_http(bridge: Bridge, addr: SocketAddr) -> Result<(), ServeError> {
    if !addr.ip().is_loopback() {
        return Err(ServeError::NonLoopback(addr));
    }
    serve_http_on(bridge, TcpListener::bind(addr).await?).await
}

/// Serves `http://ADDR/mcp` on an already bound loopback listener (bind port 0 in tests).
pub async fn serve_http_on(bridge: Bridge, listener: TcpListener) -> Result<(), ServeError> {
    serve_http_on_with(bridge, listener, HttpOptions::default()).await
}

/// Serves `http://ADDR/mcp` on `listener` with `options`; refuses a non-loopback listener
/// unless [`HttpOptions::allow_non_loopback`] is set.
pub async fn serve_http_on_with(bridge: Bridge, listener: TcpListener, options: HttpOptions) -> Result<(), ServeError> {
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() && !options.allow_non_loopback {
        return Err(ServeError::NonLoopback(addr));
    }
    tracing::info!(%addr, "serving MCP over streamable HTTP at /mcp");
    axum::serve(listener, http_router(bridge, &options)).await?;
    Ok(())
}
