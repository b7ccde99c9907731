//! What the examples share about serving: their logging, the `--http ADDR` value and the
//! signals that stop the server. Included with `#[path]` by each example (not an example itself).

use std::io::IsTerminal;
use std::net::{Ipv4Addr, SocketAddr};
use tracing_subscriber::prelude::*;

/// Logs to stderr (stdout may carry the MCP stream), at `$RUST_LOG` (default `warn`). rmcp's
/// debug and trace events print whole messages, tool arguments and secrets included:
/// `mcp::loggable` keeps them out whatever `RUST_LOG` says.
pub fn init_logging() {
    tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(std::io::stderr().is_terminal()))
        .with(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .with(tracing_subscriber::filter::filter_fn(bridge_runtime::mcp::loggable))
        .init();
}

/// Parses `--http`'s value: an IP literal with a port (`127.0.0.1:8765`, `[::1]:8765`), or
/// `localhost:PORT`, which binds the IPv4 loopback address `127.0.0.1:PORT` (the resolver is
/// not asked, so `localhost` always means the same address; clients may still call the server
/// `http://localhost:PORT/mcp`, a loopback `Host` it accepts).
pub fn parse_http_addr(text: &str) -> Result<SocketAddr, String> {
    let expected = "expected 127.0.0.1:PORT, [::1]:PORT or localhost:PORT";
    if let Some(port) = text.get(..10).filter(|p| p.eq_ignore_ascii_case("localhost:")).map(|_| &text[10..]) {
        let port: u16 = port.parse().map_err(|e| format!("{text}: bad port ({e}); {expected}"))?;
        return Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    }
    text.parse().map_err(|e| format!("{text}: {e}; {expected}"))
}

/// Completes on Ctrl-C (SIGINT) or, on Unix, SIGTERM: the example then drops its server, which
/// closes its connections and deletes a generated token's file. If the handlers cannot be
/// installed it never completes (the signals then end the process as usual).
pub async fn stop_signal() {
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        interrupted = tokio::signal::ctrl_c() => {
            if interrupted.is_err() {
                std::future::pending::<()>().await;
            }
        }
        () = terminate => {}
    }
}
