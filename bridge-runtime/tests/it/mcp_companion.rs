//! The companion's capabilities as MCP tools (CP-1-4): one registry shared with the GUI
//! Bridge, every call through the same engine (CP-1-6, CP-2-13), driven by an rmcp client.

use crate::support::companion as companion_support;
use crate::support::mcp::Editor;

use bridge_runtime::catalog::{CharacterSpec, Scope};
use bridge_runtime::companion::{ClientIdentity, Engine, PresenterEvent, ScriptedPresenter, SqliteStore};
use bridge_runtime::gui::{Bridge, OpenOptions};
use bridge_runtime::mcp::{CompanionTools, GuiBridgeServer};
use companion_support as support;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

struct Setup {
    client: rmcp::service::RunningService<rmcp::RoleClient, ()>,
    engine: Engine,
    events: tokio::sync::mpsc::UnboundedReceiver<PresenterEvent>,
}

async fn setup() -> Setup {
    setup_with(Bridge::builder("desk", "1.0").spawn_headless(|_| {})).await
}

/// The companion tools on `bridge`'s MCP server.
async fn setup_with(bridge: Bridge) -> Setup {
    // One registry: the companion's capabilities live in the bridge's own catalog.
    {
        let catalog = bridge.catalog_handle();
        let mut c = catalog.write().unwrap();
        for spec in [support::notice_show(), support::interaction_choose(), support::animation_celebrate()] {
            c.register_capability(spec).unwrap();
        }
        c.register_character(CharacterSpec::new("robot", "Robot").supports([
            "notice.show",
            "interaction.choose",
            "animation.celebrate",
        ]))
        .unwrap();
    }
    let (presenter, events) = ScriptedPresenter::new();
    let engine = Engine::builder(bridge.catalog_handle())
        .store(SqliteStore::in_memory().unwrap())
        .presenter(presenter)
        .start()
        .unwrap();
    // MCP clients act as one identity the app chose: no `animate` scope here.
    let identity = ClientIdentity::external("mcp", "MCP host", [Scope::Discover, Scope::Notify, Scope::Interact]);
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let server = GuiBridgeServer::new(bridge).with_companion(CompanionTools::new(engine.clone(), identity));
    tokio::spawn(async move {
        if let Ok(s) = server.serve(server_io).await {
            let _ = s.waiting().await;
        }
    });
    let client = ().serve(client_io).await.unwrap();
    Setup { client, engine, events }
}

fn call(name: &str, args: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned()).with_arguments(args.as_object().cloned().unwrap())
}

/// Plays the user: waits for the request to be shown, marks it displayed, then `answer`s.
fn user(mut s: tokio::sync::mpsc::UnboundedReceiver<PresenterEvent>, engine: Engine, answer: Option<Value>) {
    tokio::spawn(async move {
        while let Some(ev) = s.recv().await {
            if let PresenterEvent::Show(p) = ev {
                engine.displayed(&p.request_id).unwrap();
                match &answer {
                    Some(a) => engine.user_responded(&p.request_id, a.clone()).unwrap(),
                    None => engine.view_closed(&p.request_id).unwrap(),
                }
            }
        }
    });
}

// CP-1-4, CP-2-4, CP-5-6: capabilities appear as name-safe MCP tools, filtered by the scopes the
// app granted to MCP clients; their schemas come from the registry.
#[tokio::test]
async fn capabilities_are_listed_as_tools() {
    let s = setup().await;
    let tools = s.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["companion__notice_show", "companion__interaction_choose"], "no animate scope, no celebrate");
    let choose = tools.iter().find(|t| t.name == "companion__interaction_choose").unwrap();
    assert_eq!(Value::Object((*choose.input_schema).clone())["properties"]["params"], support::choose_input_schema());
    // The result is the capability's outputSchema, or null for a request that ended otherwise
    // (CP-3-16, GB-12.3-4: every result, success or error, matches the declared outputSchema).
    let out = Value::Object((*choose.output_schema.clone().unwrap()).clone());
    assert_eq!(out["properties"]["result"]["anyOf"], json!([support::choose_output_schema(), {"type": "null"}]));
    assert_eq!(out["properties"]["terminalReason"]["anyOf"][1], json!({"type": "null"}));
    assert!(out.get("required").is_none(), "an error object has none of the snapshot keys");
}

// CP-3-13, CP-3-16, CP-1-6: a choice completes only with the user's selection, returned as the
// result, through the same engine lifecycle as socket clients.
#[tokio::test]
async fn choose_round_trip_over_mcp() {
    let s = setup().await;
    user(s.events, s.engine.clone(), Some(json!({"selectedId": "no"})));
    let r = s
        .client
        .call_tool(call(
            "companion__interaction_choose",
            json!({"params": support::choose_params(), "timeoutMs": 60_000}),
        ))
        .await
        .unwrap();
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let body = r.structured_content.clone().unwrap();
    // The text mirror: one line, then the structured content as JSON.
    assert_eq!(only_text(&r), format!("interaction.choose completed\n{body}"));
    assert_eq!(body["state"], "completed");
    assert_eq!(body["result"], json!({"selectedId": "no"}));
    let id = body["requestId"].as_str().unwrap();
    // Same record as the engine's own view of the MCP identity.
    let mcp = ClientIdentity::external("mcp", "MCP host", [Scope::Discover, Scope::Notify, Scope::Interact]);
    assert_eq!(support::get(&s.engine, &mcp, id).await.unwrap()["state"], "completed");
}

// CP-3-12: closing the view cancels; no default answer is invented. CP-2-23/25: semantic checks
// run for MCP calls too. CP-5-6: a capability outside the granted scopes is not callable.
#[tokio::test]
async fn cancellation_and_errors_are_is_error_results() {
    let s = setup().await;
    user(s.events, s.engine.clone(), None);
    let r = s
        .client
        .call_tool(call(
            "companion__interaction_choose",
            json!({"params": support::choose_params(), "timeoutMs": 60_000}),
        ))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    let body = r.structured_content.clone().unwrap();
    assert_eq!(only_text(&r), format!("interaction.choose ended cancelled ({})\n{body}", body["terminalReason"]));
    assert_eq!(body["state"], "cancelled");
    assert!(body["result"].is_null(), "{body}");

    let dup = json!({"title": "Pick", "options": [{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]});
    let r = s
        .client
        .call_tool(call("companion__interaction_choose", json!({"params": dup, "timeoutMs": 60_000})))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    let body = r.structured_content.clone().unwrap();
    assert_eq!(body["code"], "INVALID_PARAMS");
    // CP-6-20: the problems travel with the code, as over the socket.
    assert!(body["problems"].as_array().is_some_and(|p| !p.is_empty()), "INVALID_PARAMS names its problems: {body}");
    // The message, then every other key (GB-12.3-3).
    let mut rest = body.clone();
    let message = rest.as_object_mut().and_then(|m| m.remove("message")).unwrap_or_default();
    assert_eq!(only_text(&r), format!("{}\n{rest}", message.as_str().unwrap_or_default()));

    let r = s
        .client
        .call_tool(call("companion__animation_celebrate", json!({"params": {}, "timeoutMs": 5_000})))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert_eq!(r.structured_content.unwrap()["code"], "UNSUPPORTED_CAPABILITY", "not listed = not callable");

    // CP-2-28: an unknown capability is rejected explicitly, never mistaken for a window.
    let r = s.client.call_tool(call("companion__nope", json!({"params": {}, "timeoutMs": 5_000}))).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    assert_eq!(r.structured_content.unwrap()["code"], "UNSUPPORTED_CAPABILITY");
}

// GB-5.1-4, GB-12.4-3, OQ-GB-13: `companion` is reserved as `app` is, so a window the app
// opens with that id gets a `w-N` handle, and every listed tool reaches what it names: the
// window's tools its window, the companion's tools the engine.
#[tokio::test]
async fn a_window_named_companion_gets_a_handle_and_every_listed_tool_is_callable() {
    let bridge = Bridge::builder("desk", "1.0").window::<Editor>().spawn_headless(|ui| {
        let id = ui.open(Editor { recipient: String::new(), amount: 1.0 }, OpenOptions::window().with_id("companion"));
        assert!(id.starts_with("w-"), "{id}");
    });
    let s = setup_with(bridge).await;
    let tools = s.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "w-1__set_recipient",
            "w-1__set_amount",
            "w-1__load_rows",
            "companion__notice_show",
            "companion__interaction_choose"
        ]
    );
    for name in names {
        let args = match name {
            "w-1__set_recipient" => json!({"recipient": "Ada"}),
            "w-1__set_amount" => json!({"amount": 2.5}),
            "w-1__load_rows" => json!({}),
            // Empty params: the capability's own check answers, so the call reached it.
            _ => json!({"params": {}, "timeoutMs": 5_000}),
        };
        let r = s.client.call_tool(call(name, args)).await.unwrap();
        let body = r.structured_content.unwrap();
        if name.starts_with("w-1__") {
            assert_ne!(r.is_error, Some(true), "{name}: {body}");
        } else {
            assert_eq!(body["code"], "INVALID_PARAMS", "{name}: {body}");
        }
    }
}

/// The one text content of a companion tool's result.
fn only_text(r: &rmcp::model::CallToolResult) -> String {
    assert_eq!(r.content.len(), 1, "{r:?}");
    r.content[0].as_text().map(|t| t.text.clone()).unwrap_or_default()
}

// GB-7.3-1, CP-1-6: the companion's tools take the same caps on their arguments as the GUI
// tools on the same server (bytes, keys, depth, problems listed), checked before any work: 160,000
// unknown keys are answered `validation_failed` naming the cap and 20 of the keys, and no request
// is created or shown; a call within the caps still runs. The app's own caps apply
// (`max_argument_keys`). (Before: the flood went to the engine's validator unbounded, and the
// reply listed every key.)
#[tokio::test]
async fn companion_tools_take_the_argument_caps() {
    let mut s = setup().await;
    let mut args = serde_json::Map::new();
    args.insert("params".into(), json!({"text": "hi"}));
    args.insert("timeoutMs".into(), json!(5_000));
    for i in 0..160_000 {
        args.insert(format!("k{i:06}"), json!(1));
    }
    let r = s.client.call_tool(call("companion__notice_show", Value::Object(args))).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    let body = r.structured_content.clone().unwrap();
    assert_eq!(body["code"], "validation_failed", "{}", body["message"]);
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("at most 10000 are accepted"), "{message}");
    assert!(message.contains("159980 more problems left out (at most 20 are listed)"), "{message}");
    let fields = body["fields"].as_array().unwrap();
    assert_eq!(fields.len(), 20);
    assert_eq!(fields[0], json!({"field": "k000000", "error": "Unknown parameter"}));
    assert!(s.events.try_recv().is_err(), "nothing was shown");

    // The app's caps, not only the defaults: 4 keys at most (`params` holds one).
    let bridge = Bridge::builder("desk", "1.0").max_argument_keys(4).spawn_headless(|_| {});
    let s = setup_with(bridge).await;
    let over = json!({"params": {"text": "hi"}, "timeoutMs": 5_000, "style": "plain", "character": "robot"});
    let r = s.client.call_tool(call("companion__notice_show", over)).await.unwrap();
    assert_eq!(r.structured_content.clone().unwrap()["code"], "validation_failed", "{r:?}");
    user(s.events, s.engine.clone(), None);
    let r = s
        .client
        .call_tool(call("companion__notice_show", json!({"params": {"text": "hi"}, "timeoutMs": 5_000})))
        .await
        .unwrap();
    assert_ne!(r.structured_content.unwrap()["code"], "validation_failed");
}
