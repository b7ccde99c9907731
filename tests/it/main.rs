//! The root package's integration tests, linked as one binary (`cargo test -p bridge --test it`;
//! one area: `cargo test -p bridge --test it schema_rules::`). One module per area; the examples'
//! own code and the companion test fixture are included below, not copied.

mod capability_macros;
mod desk_companion_e2e;
mod export_desk_companion;
mod export_order_editor;
mod log_redaction;
mod macros;
mod schema_rules;
mod stdio_wire;
mod test_kit;
mod token_budget;

/// The companion tests' capabilities, characters and styles (shared with bridge-runtime's tests).
#[path = "../../bridge-runtime/tests/it/support/companion.rs"]
mod companion_support;

/// The Order Editor example's app (`examples/order_editor/app.rs`).
#[path = "../../examples/order_editor/app.rs"]
#[allow(dead_code)]
mod order_editor;

/// The desk companion example's capabilities (`examples/desk_companion/caps.rs`).
#[path = "../../examples/desk_companion/caps.rs"]
#[allow(dead_code)]
mod desk_companion;

// The schema zoo example's modules, at the crate root where its `crate::…` paths expect them.
#[path = "../../examples/schema_zoo/outline.rs"]
mod outline;
#[path = "../../examples/schema_zoo/types.rs"]
mod types;
#[path = "../../examples/schema_zoo/zoo.rs"]
mod zoo;
#[path = "../../examples/schema_zoo/app.rs"]
mod zoo_app;
