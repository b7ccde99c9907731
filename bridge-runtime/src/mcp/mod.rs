//! MCP adapter (rmcp).
