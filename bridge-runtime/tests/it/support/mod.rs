//! The fixtures the integration tests share (and the benches include by `#[path]`): the companion
//! capabilities and engine helpers, a real companion socket server with a line client, the MCP
//! test app with a recording client, and the OpenRPC document checks.

pub mod companion;
pub mod companion_socket;
pub mod mcp;
pub mod openrpc;
