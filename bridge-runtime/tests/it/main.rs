//! bridge-runtime's integration tests, linked as one binary (`cargo test -p bridge-runtime --test
//! it`; one area: `cargo test -p bridge-runtime --test it companion_engine::`). One module per
//! area; the shared fixtures are in `support/`.

// The package's `unreachable_pub` lint is for the library's API; here `pub` marks what the
// fixture modules share.
#![allow(unreachable_pub)]

mod support;

mod companion_capability;
mod companion_cli;
mod companion_client;
mod companion_compat;
mod companion_crash;
mod companion_durability;
mod companion_engine;
mod companion_routing;
mod companion_socket;
mod companion_socket_logs;
mod companion_store;
mod export;
mod fuzz_corpus;
mod gui_actor;
mod gui_caps;
mod gui_failures;
mod gui_incremental;
mod gui_journal;
mod gui_model;
mod gui_owner;
mod gui_undo;
mod gui_user_only;
mod mcp_apps;
mod mcp_bounded;
mod mcp_companion;
mod mcp_handshake;
mod mcp_http;
mod mcp_http_access;
mod mcp_leak;
mod mcp_sessions;
mod mcp_stdio;
mod mcp_stress;
mod mcp_tools;
mod openrpc;
mod openrpc_socket;
