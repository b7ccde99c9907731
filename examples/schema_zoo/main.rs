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

mod outline;
mod types;
mod zoo;

use bridge_runtime::catalog::{CharacterSpec, Scope};
use bridge_runtime::companion::{ClientIdentity, Engine};
use bridge_runtime::prelude::*;

#[tokio::main]
async fn main() {
    // Logs go to stderr: stdout carries the MCP stream.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .init();

    let bridge = bridge_runtime::Bridge::builder("schema-zoo", env!("CARGO_PKG_VERSION"))
        .window::<zoo::Zoo>()
        .spawn_headless(|ui| {
            ui.open(zoo::Zoo::default(), OpenOptions::window().with_id("zoo"));
        });

    // MCP clients may ask the zoo's user questions (scope `interact`) through companion__ tools.
    let engine = companion(&bridge).unwrap_or_else(|e| {
        eprintln!("schema_zoo: {e}");
        std::process::exit(1);
    });
    bridge.enable_companion_tools(
        engine,
        ClientIdentity::external("mcp", "MCP host", [Scope::Discover, Scope::Interact]),
    );

    if let Err(e) = bridge_runtime::mcp::serve_stdio(bridge).await {
        eprintln!("schema_zoo: {e}");
        std::process::exit(1);
    }
}

/// A companion engine on the bridge's own registry: the `outline.sort` capability, one
/// character, and the zoo's instant user as the presenter.
fn companion(bridge: &Bridge) -> Result<Engine, Box<dyn std::error::Error>> {
    let catalog = bridge.catalog_handle();
    {
        let mut c = catalog.write().unwrap_or_else(|e| e.into_inner());
        c.register_capabilities::<outline::Outlines>()?;
        c.register_character(CharacterSpec::new("owl", "Owl").supports(["outline.sort"]))?;
    }
    let engine = Engine::builder(catalog).presenter(outline::InstantUser).start()?;
    engine.set_current_character("owl");
    Ok(engine)
}
