//! MCP adapter (rmcp): the GUI Bridge protocol on the wire (GB §3, §4.1, §5, §6, §7, §10, §12).
//!
//! [`GuiBridgeServer`] is an `rmcp::ServerHandler` written by hand over a [`Bridge`]:
//!
//! | MCP | GUI Bridge |
//! | --- | --- |
//! | `initialize` / `server/discover` | capabilities `resources.subscribe` + `tools.listChanged` + the MCP Apps extension, the GB-8.1-3 `instructions`, `serverInfo` from the builder (GB-3-2, GB-3-3, MA-3-1) |
//! | `resources/list` | exactly [`WINDOWS_URI`] (GB-4.1-1, GB-12.1-1) |
//! | `resources/read` | one `application/json` text content: the whole snapshot (GB-12.2-1); a `ui://` window view for clients with the MCP Apps extension ([`apps`], MA-6) |
//! | `resources/subscribe` / `subscriptions/listen` | per connection (GB-10.1-5) |
//! | `tools/list` | the available actions of the operable windows (GB-5.1-4), with `_meta.ui.resourceUri` for clients with the MCP Apps extension (MA-4-1) |
//! | `tools/call` | ToolResult or ToolError in `structuredContent`, `isError` for failures (GB-7.4-1, GB-12.3) |
//! | `notifications/resources/updated`, `notifications/tools/list_changed` | derived from published state, so sent only after it took effect (GB-6-1) |
//!
//! The app composes one server per transport: a [`Bridge`] and, with the `companion` feature,
//! where the app wants them on that transport, the desktop companion's capabilities as
//! `companion__{id}` tools served through the companion engine
//! (`GuiBridgeServer::new(bridge).with_companion(CompanionTools::new(engine, identity))`,
//! CP-1-4). The transports below take that server (a [`Bridge`] alone converts into one).
//!
//! It serves both protocol eras rmcp speaks: session-based 2025-11-25 (`initialize`,
//! `resources/subscribe`) and 2026-07-28 (`server/discover`, `subscriptions/listen`).
//!
//! Transports: [`serve_stdio`] (GB-3-1) and [`serve_stdio_on`] (the same on any line-delimited
//! byte stream), through a pre-layer that keeps one connection's requests in arrival order
//! (GB-10.1-3) and answers every request rmcp would drop or misanswer; with the `http` feature `serve_http` /
//! `serve_http_on` / `serve_http_on_with` (streamable HTTP at `/mcp`, loopback only unless
//! `HttpOptions::allow_non_loopback`) and `http_router` to mount it in an app's own axum
//! server; or `GuiBridgeServer::new(bridge).serve(transport)` for any rmcp transport.
//!
//! # Ordering of a call's notifications
//!
//! Beyond the spec (OQ-GB-15 leaves it open), the notifications a `tools/call` causes are
//! written to the caller's connection *before* its response, wherever the caller's
//! notifications travel on the same stream as its responses: stdio (and any single-stream
//! transport such as `tokio::io::duplex`) in both eras. It cannot hold
//! - on legacy streamable HTTP: rmcp puts unsolicited notifications on the standalone `GET`
//!   SSE stream and the response on the `POST`'s stream; the server writes the notifications
//!   first, but the client reads two HTTP streams and may see them in either order;
//! - on 2026-07-28 streamable HTTP: every `POST` gets a fresh handler, so a `tools/call` has
//!   no connection state to flush; the caller's `subscriptions/listen` stream delivers the
//!   notifications on its own schedule.
//!
//! [`Bridge`]: crate::gui::Bridge

pub mod apps;
#[cfg(feature = "companion")]
mod companion;
#[cfg(feature = "fuzzing")]
pub(crate) mod fuzz;
#[cfg(feature = "http")]
pub(crate) mod http;
mod inbound;
mod log;
mod mapping;
pub(crate) mod notify;
mod order;
mod server;
mod stdio;
mod transport;

#[cfg(feature = "companion")]
#[cfg_attr(docsrs, doc(cfg(feature = "companion")))]
pub use companion::CompanionTools;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use http::{
    HttpOptions, TOKEN_ENV, TokenLabel, http_router, serve_http, serve_http_on, serve_http_on_with, token_dir,
};
pub use log::loggable;
pub use mapping::WINDOWS_URI;
#[cfg(feature = "testing")]
pub(crate) use mapping::to_call_tool_result;
pub(crate) use mapping::to_mcp_tool;
pub use server::GuiBridgeServer;
pub use stdio::serve_stdio_on;
pub use transport::{ServeError, serve_stdio};
