//! The ready-made stdio transport (GB-3-1) and the errors of every transport.

use super::GuiBridgeServer;
use rmcp::service::ServerInitializeError;
use std::net::SocketAddr;

/// Why serving stopped or could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The HTTP address is not a loopback address and `HttpOptions::allow_non_loopback` is
    /// off (feature `http`).
    #[error(
        "refusing to serve MCP over HTTP on non-loopback address {0}; \
         set HttpOptions::allow_non_loopback to expose the UI to the network"
    )]
    NonLoopback(SocketAddr),
    /// The HTTP access token could not be set up: a configured token is too short, too long or
    /// not visible ASCII, the token file cannot be read, or a generated token cannot be written
    /// to its private file (feature `http`). The message says which.
    #[error("MCP over HTTP: {0}")]
    Token(String),
    /// [`HttpOptions::no_token`](crate::mcp::HttpOptions::no_token) on a server that carries the
    /// companion's tools: the companion's HTTP profile (CP-5-16) needs the bearer token (feature
    /// `http`).
    #[error(
        "refusing to serve the companion's tools over HTTP without an access token; \
         drop HttpOptions::no_token (the companion's HTTP profile needs the bearer token)"
    )]
    CompanionWithoutToken,
    /// Binding or serving the socket failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The MCP session could not start (e.g. the client never sent `initialize`).
    #[error("MCP session did not start: {0}")]
    Initialize(#[source] Box<ServerInitializeError>),
    /// The session task panicked or was cancelled.
    #[error("MCP session task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

impl From<ServerInitializeError> for ServeError {
    fn from(e: ServerInitializeError) -> Self {
        ServeError::Initialize(Box::new(e))
    }
}

/// Serves one MCP client on this process's stdin/stdout until it disconnects (GB-3-1), with
/// the surfaces `server` was composed of (a [`Bridge`](crate::gui::Bridge) alone: its windows
/// and app actions).
///
/// Nothing else may write to stdout meanwhile; log with `tracing` to stderr.
///
/// Every line passes the stdio pre-layer first ([`serve_stdio_on`](super::serve_stdio_on)):
/// one connection's calls take effect in the order they arrived, a call cancelled before its
/// turn never runs, and every request gets an honest answer (`-32700`, `-32600`, `-32602`,
/// behind a storm guard for answers without an id).
pub async fn serve_stdio(server: impl Into<GuiBridgeServer>) -> Result<(), ServeError> {
    let (stdin, stdout) = rmcp::transport::stdio();
    super::serve_stdio_on(server, stdin, stdout).await
}
