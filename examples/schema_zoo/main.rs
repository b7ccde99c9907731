//! The schema zoo: a fixture app whose actions take and return the ordinary Rust types app
//! authors write (optional and defaulted fields, documented and undocumented unit enums, the
//! three serde enum representations, recursive structs, `serde_json::Value`, maps, integers
//! of every width, a tuple struct, flatten, `Uuid`), plus a companion capability with recursive
//! params and result. Real MCP clients (tests/ts, tests/python/test_schema_zoo.py) list and
//! call every tool with the cases in tests/schema_zoo_cases.json, validating each result
//! against the tool's `outputSchema`.
//!
//! ```text
//! cargo run --example schema_zoo      # MCP over stdio; the window is "zoo", tools zoo__*
//! ```

mod app;
mod outline;
mod types;
mod zoo;

#[tokio::main]
async fn main() {
    // Logs go to stderr: stdout carries the MCP stream.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .init();
    let bridge = app::bridge().unwrap_or_else(|e| {
        eprintln!("schema_zoo: {e}");
        std::process::exit(1);
    });
    if let Err(e) = bridge_runtime::mcp::serve_stdio(bridge).await {
        eprintln!("schema_zoo: {e}");
        std::process::exit(1);
    }
}
