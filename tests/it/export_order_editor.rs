//! The Order Editor example's exported descriptions (`examples/order_editor/catalog/`) are up to
//! date with its code (CP-2-12, CP-2-13: generated from the one registry, never kept by hand).
//! After changing the example's annotations, refresh them with
//! `BRIDGE_EXPORT=1 cargo test -p bridge --test it export_order_editor` and commit the diff.
//!
//! Another example plugs in the same way: build its catalog, call `assert_up_to_date` with its
//! own `catalog/` directory, and list its `openrpc.json` in `test.sh` for the Node validator.

use crate::order_editor as app;

use bridge_runtime::export;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/order_editor/catalog");

#[test]
fn order_editor_export_is_up_to_date() {
    let (bridge, _owner) = app::build(10_000).build();
    export::assert_up_to_date(&bridge.catalog(), DIR);
}

// The committed files describe what the example serves: four window types and the app actions,
// no companion capabilities (a valid, empty-capabilities companion API document).
#[test]
fn order_editor_export_content() {
    let (bridge, _owner) = app::build(10_000).build();
    let files = export::render_all(&bridge.catalog()).expect("render");
    let get = |name: &str| -> serde_json::Value {
        serde_json::from_str(&files.iter().find(|(n, _)| *n == name).expect(name).1).expect("json")
    };
    let tools = get(export::MCP_TOOLS_JSON);
    let types: Vec<&str> =
        tools["windows"].as_array().unwrap().iter().map(|w| w["typeName"].as_str().unwrap()).collect();
    assert_eq!(types, ["OrderEditor", "ConfirmOrder", "ReportDetails", "SessionLocked"]);
    assert_eq!(tools["windows"][0]["tools"][0]["name"], "{winId}__edit_field");
    assert_eq!(tools["app"]["tools"][0]["name"], "app__new_report");
    let capabilities = get(export::CAPABILITIES_JSON);
    assert_eq!(capabilities["capabilities"], serde_json::json!([]));
    let openrpc = get(export::OPENRPC_JSON);
    assert_eq!(openrpc["openrpc"], "1.3.2");
    assert_eq!(openrpc["methods"].as_array().unwrap().len(), 13); // 10 CP-2-1 + rpc.discover + 2 auth
}
