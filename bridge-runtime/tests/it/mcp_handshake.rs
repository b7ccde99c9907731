//! MCP adapter: handshake, the single resource, the tool list (GB §3, §4.1, §5.2, §5.6, §12).

use crate::support::mcp as mcp_support;

use bridge_runtime::gui::GB_INSTRUCTIONS;
use mcp_support::*;
use rmcp::model::{ErrorCode, ReadResourceRequestParams, ResourceContents};
use rmcp::{ServiceError, ServiceExt};
use serde_json::{Value, json};

fn capabilities_json(caps: &rmcp::model::ServerCapabilities) -> Value {
    serde_json::to_value(caps).unwrap()
}

// GB-3-2: capabilities are exactly resources.subscribe + tools.listChanged (no
// resources.listChanged, GB-12.1-2), plus the MCP Apps extension (MA-3-1, MA-2-2). GB-3-3 / GB-8.1-1..3: instructions start with the
// recommended text, app notes appended. serverInfo from the builder.
#[tokio::test]
async fn initialize_declares_capabilities_instructions_and_server_info() {
    let bridge = bridge();
    let (client, _) = legacy_client(&bridge).await;
    let info = client.peer_info().expect("initialize result");
    assert_eq!(
        capabilities_json(&info.capabilities),
        json!({"resources": {"subscribe": true}, "tools": {"listChanged": true}, "extensions": {"io.modelcontextprotocol/ui": {}}})
    );
    let instructions = info.instructions.as_deref().expect("instructions");
    assert!(instructions.starts_with(GB_INSTRUCTIONS));
    assert!(instructions.ends_with("App notes: amounts are in euros."));
    let server_info = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(server_info.name, "test-app");
    assert_eq!(server_info.version, "1.2.3");
    assert_eq!(info.protocol_version.as_str(), "2025-11-25");
    client.cancel().await.unwrap();
}

// The same through `server/discover` (2026-07-28, OQ-X-1).
#[tokio::test]
async fn discover_declares_the_same() {
    let bridge = bridge();
    let (client, _) = modern_client(&bridge).await;
    let info = client.peer_info().expect("discover result");
    assert_eq!(info.protocol_version.as_str(), "2026-07-28");
    assert_eq!(
        capabilities_json(&info.capabilities),
        json!({"resources": {"subscribe": true}, "tools": {"listChanged": true}, "extensions": {"io.modelcontextprotocol/ui": {}}})
    );
    assert!(info.instructions.as_deref().expect("instructions").starts_with(GB_INSTRUCTIONS));
    let server_info = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(server_info.name, "test-app");
    assert_eq!(server_info.version, "1.2.3");
    client.cancel().await.unwrap();
}

// GB-4.1-1, GB-12.1-1: exactly one resource, app://windows.
// GB-12.2-1, GB-4.2-1: read returns one application/json text content holding the snapshot.
#[tokio::test]
async fn single_resource_read_as_one_json_text() {
    let bridge = bridge();
    for modern in [false, true] {
        let (client, _) = if modern { modern_client(&bridge).await } else { legacy_client(&bridge).await };
        let resources = client.list_all_resources().await.unwrap();
        assert_eq!(resources.len(), 1);
        let r = &resources[0];
        assert_eq!(r.uri, "app://windows");
        assert_eq!(r.name, "windows");
        assert!(r.title.is_some() && r.description.is_some());
        assert_eq!(r.mime_type.as_deref(), Some("application/json"));

        let read = client.read_resource(ReadResourceRequestParams::new("app://windows")).await.unwrap();
        assert_eq!(read.contents.len(), 1);
        let ResourceContents::TextResourceContents { uri, mime_type, text, .. } = &read.contents[0] else {
            panic!("expected a text content");
        };
        assert_eq!(uri, "app://windows");
        assert_eq!(mime_type.as_deref(), Some("application/json"));
        let snap: Value = serde_json::from_str(text).unwrap();
        assert_eq!(snap["operableWindowIds"], json!(["w-1"]));
        let w = &snap["windows"][0];
        assert_eq!(w["id"], "w-1");
        assert_eq!(w["title"], "Order Editor");
        assert_eq!(w["modal"], false);
        assert_eq!(w["ownerId"], Value::Null); // GB-4.2-7: present even when null
        assert_eq!(w["version"], 1);
        assert_eq!(w["blocks"][0]["type"], "fields");
        assert_eq!(text.as_str(), &*bridge.published().snapshot_json());
        client.cancel().await.unwrap();
    }
}

// OQ-GB-22: another URI is MCP's resource-not-found error, -32002 (rmcp turns it into
// -32602 for 2026-07-28 peers, as that revision requires).
#[tokio::test]
async fn unknown_resource_is_not_found() {
    let bridge = bridge();
    let (legacy, _) = legacy_client(&bridge).await;
    let err = legacy.read_resource(ReadResourceRequestParams::new("app://nope")).await.unwrap_err();
    let ServiceError::McpError(e) = err else { panic!("expected a JSON-RPC error, got {err:?}") };
    assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND);
    assert_eq!(e.code.0, -32002);

    let (modern, _) = modern_client(&bridge).await;
    let err = modern.read_resource(ReadResourceRequestParams::new("app://nope")).await.unwrap_err();
    let ServiceError::McpError(e) = err else { panic!("expected a JSON-RPC error, got {err:?}") };
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
}

// GB-10.1-5: legacy subscriptions exist only for app://windows.
#[tokio::test]
#[allow(deprecated)]
async fn subscribing_to_another_uri_is_invalid_params() {
    let bridge = bridge();
    let (client, _) = legacy_client(&bridge).await;
    let err = client.subscribe(rmcp::model::SubscribeRequestParams::new("app://other")).await.unwrap_err();
    let ServiceError::McpError(e) = err else { panic!("expected a JSON-RPC error, got {err:?}") };
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    client.subscribe(rmcp::model::SubscribeRequestParams::new("app://windows")).await.unwrap();
}

// GB-5.1-4 (only available actions of operable windows), GB-5.2-1 (names), GB-5.2-3 (title,
// description), GB-5.5-1 (expectedVersion on writes only, not required, one line), GB-5.6-1,
// GB-5.6-2 (all four hints explicit on every tool that is not read-only), GB-12.3-4
// (outputSchema = ToolResult envelope), OQ-GB-12 (app__ tools take no expectedVersion).
#[tokio::test]
async fn tools_list_maps_every_field() {
    let bridge = bridge();
    let (client, _) = legacy_client(&bridge).await;
    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    // `submit` is unavailable while the recipient is empty (GB-5.1-5 (2)).
    assert_eq!(names, ["app__new_editor", "w-1__load_rows", "w-1__set_amount", "w-1__set_recipient"]);

    let wire = serde_json::to_value(tools.iter().find(|t| t.name == "w-1__set_recipient").unwrap()).unwrap();
    assert_eq!(wire["title"], "Set recipient · Order Editor (window w-1)");
    assert!(wire["description"].as_str().unwrap().starts_with("Set the order's recipient"));
    // No `annotations.title`: the tool's `title` says it.
    assert_eq!(
        wire["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
    );
    assert_eq!(
        wire["inputSchema"]["properties"]["expectedVersion"],
        json!({"type": "integer", "description": "The window version this call is based on"})
    );
    assert_eq!(wire["inputSchema"]["type"], "object");
    assert_eq!(wire["inputSchema"]["properties"]["expectedVersion"]["type"], "integer");
    // Any int64 other than the current version is stale_state, so the schema sets no bounds.
    let expected_version = wire["inputSchema"]["properties"]["expectedVersion"].as_object().unwrap();
    assert!(!expected_version.contains_key("minimum") && !expected_version.contains_key("maximum"));
    assert_eq!(wire["inputSchema"]["required"], json!(["recipient"]));
    assert_eq!(wire["outputSchema"]["type"], "object");
    assert!(wire["outputSchema"]["properties"]["openedWindowIds"].is_object());

    let load = serde_json::to_value(tools.iter().find(|t| t.name == "w-1__load_rows").unwrap()).unwrap();
    // MCP defines destructiveHint and idempotentHint only when readOnlyHint is false.
    assert_eq!(load["annotations"], json!({"readOnlyHint": true, "openWorldHint": false}));
    assert!(load["inputSchema"]["properties"].get("expectedVersion").is_none());
    assert_eq!(load["outputSchema"]["properties"]["result"]["type"], "array");

    let app = serde_json::to_value(tools.iter().find(|t| t.name == "app__new_editor").unwrap()).unwrap();
    assert!(app["inputSchema"]["properties"].get("expectedVersion").is_none());
    // Every tool that is not read-only states all four hints: hosts read a missing
    // destructiveHint as false and would not ask before a destructive call.
    for t in &tools {
        let a = serde_json::to_value(t.annotations.as_ref().unwrap()).unwrap();
        assert!(a["readOnlyHint"].is_boolean() && a["openWorldHint"].is_boolean(), "{}: {a}", t.name);
        if a["readOnlyHint"] == false {
            for hint in ["destructiveHint", "idempotentHint"] {
                assert!(a[hint].is_boolean(), "{} lacks {hint}", t.name);
            }
        }
    }
}

// `get_tool` (used by rmcp's HTTP header validation) agrees with tools/list.
#[tokio::test]
async fn get_tool_finds_listed_tools_only() {
    use rmcp::ServerHandler;
    let server = bridge_runtime::mcp::GuiBridgeServer::new(bridge());
    assert_eq!(server.get_tool("w-1__set_amount").unwrap().name, "w-1__set_amount");
    assert!(server.get_tool("w-1__submit").is_none());
    assert!(server.get_tool("nope").is_none());
    // A server can be served on any rmcp transport by anyone.
    let (c, s) = tokio::io::duplex(4096);
    tokio::spawn(async move {
        let running = server.serve(s).await.unwrap();
        running.waiting().await
    });
    let client = ().serve(c).await.unwrap();
    assert_eq!(client.list_all_tools().await.unwrap().len(), 4);
}
