//! The zoo app as one value: the MCP server of the bridge with the `zoo` window open and the
//! companion tools on, shared by `main.rs` and the rules test (`tests/it/schema_rules.rs`).

use crate::{outline, zoo};
use bridge_runtime::catalog::{CharacterSpec, Scope};
use bridge_runtime::companion::{ClientIdentity, Engine};
use bridge_runtime::mcp::{CompanionTools, GuiBridgeServer};
use bridge_runtime::prelude::*;

/// The running zoo, served over MCP: window `zoo` (tools `zoo__*`) and
/// `companion__outline_sort`, which MCP clients may use with the scopes `discover` and
/// `interact`. Needs a Tokio runtime.
pub fn server() -> Result<GuiBridgeServer, Box<dyn std::error::Error>> {
    let bridge = bridge_runtime::Bridge::builder("schema-zoo", env!("CARGO_PKG_VERSION"))
        // The outline is a recursive argument: trees as deep as the stdio transport reads (124
        // levels) are served, on the zoo's tools and the companion's alike (the default, 64,
        // would refuse a tree of more than 31 nodes deep with validation_failed).
        .max_argument_depth(124)
        .window::<zoo::Zoo>()
        .spawn_headless(|ui| {
            ui.open(zoo::Zoo::default(), OpenOptions::window().with_id("zoo"));
        });
    let engine = companion(&bridge)?;
    let identity = ClientIdentity::external("mcp", "MCP host", [Scope::Discover, Scope::Interact]);
    Ok(GuiBridgeServer::new(bridge).with_companion(CompanionTools::new(engine, identity)))
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
