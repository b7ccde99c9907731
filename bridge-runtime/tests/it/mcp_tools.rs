//! MCP adapter: tools/call results and errors, dynamic tool visibility, and the ordering of a
//! call's notifications before its response (GB §5, §6, §7, §12.3).

use crate::support::mcp as mcp_support;

use futures::FutureExt;
use mcp_support::*;
use rmcp::model::{ServerNotification, SubscribeRequestParams, SubscriptionFilter};
use serde_json::{Value, json};

async fn subscribed_legacy(bridge: &bridge_runtime::Bridge) -> (Client, Recorder, WireLog) {
    let (client_io, server_io, log) = tapped_duplex();
    serve(bridge, server_io);
    let rec = Recorder::default();
    let client = rmcp::ServiceExt::serve(rec.clone(), client_io).await.unwrap();
    #[allow(deprecated)]
    client.subscribe(SubscribeRequestParams::new("app://windows")).await.unwrap();
    (client, rec, log)
}

// GB-5.1-4/5 (visibility), GB-5.1-6 + GB-6-2/4 (notifications on hide/restore), GB-6-1 (after
// the effect), OQ-GB-25 (the Appendix A trace), and beyond the spec: the caller receives its
// call's notifications before the call's response.
#[tokio::test]
async fn modal_hides_owner_tools_and_notifications_precede_the_response() {
    let bridge = bridge();
    let (client, rec, log) = subscribed_legacy(&bridge).await;
    assert_eq!(
        tool_names(&client).await,
        ["app__new_editor", "w-1__load_rows", "w-1__set_amount", "w-1__set_recipient"]
    );

    // Filling the recipient changes the window (updated) and makes `submit` available
    // (tools/list_changed, GB-6-4).
    let r = call(&client, "w-1__set_recipient", Some(json!({"recipient": "Alice"}))).await;
    assert_eq!(r.is_error, Some(false));
    // Recorded by the client handler before call_tool returned.
    assert_eq!(rec.events(), [UPDATED, TOOLS_CHANGED]);
    // And on the wire: both notifications, then the response.
    assert_eq!(
        after_last_call(&log),
        ["notifications/resources/updated", "notifications/tools/list_changed", "response"]
    );
    assert!(tool_names(&client).await.contains(&"w-1__submit".to_owned()));

    // Submitting opens a window-level modal: the owner's tools vanish, the dialog's appear.
    rec.clear();
    let r = call(&client, "w-1__submit", Some(json!({}))).await;
    assert_eq!(r.is_error, Some(false));
    let ok = structured(&r);
    assert_eq!(ok["openedWindowIds"], json!(["w-2"])); // GB-5.4-5
    assert_eq!(ok["message"], "Submitted; confirmation dialog w-2 popped up");
    // GB-12.3-3: the message, then the other keys (not the message twice).
    assert_eq!(
        r.content[0].as_text().unwrap().text,
        "Submitted; confirmation dialog w-2 popped up\n{\"openedWindowIds\":[\"w-2\"]}"
    );
    assert_eq!(rec.events(), [UPDATED, TOOLS_CHANGED]);
    assert_eq!(
        after_last_call(&log),
        ["notifications/resources/updated", "notifications/tools/list_changed", "response"]
    );
    assert_eq!(tool_names(&client).await, ["app__new_editor", "w-2__cancel", "w-2__ok"]);
    let snap = snapshot(&client).await;
    assert_eq!(snap["operableWindowIds"], json!(["w-2"]));
    let dialog = snap["windows"].as_array().unwrap().iter().find(|w| w["id"] == "w-2").unwrap().clone();
    assert_eq!(dialog["modal"], true);
    assert_eq!(dialog["ownerId"], "w-1");

    // Closing the dialog restores the owner's tools.
    rec.clear();
    let r = call(&client, "w-2__ok", None).await;
    assert_eq!(r.is_error, Some(false));
    assert_eq!(rec.events(), [UPDATED, TOOLS_CHANGED]);
    assert!(tool_names(&client).await.contains(&"w-1__set_amount".to_owned()));

    // A call that changes nothing sends nothing (notifications are derived from state).
    rec.clear();
    let r = call(&client, "w-1__load_rows", None).await;
    assert_eq!(r.is_error, Some(false));
    assert_eq!(after_last_call(&log), ["response"]);
    assert!(rec.events().is_empty());
    client.cancel().await.unwrap();
}

// Same ordering for a 2026-07-28 client over one stream: the listen stream's notifications
// reach the client before the call's response.
#[tokio::test]
async fn modern_listen_notifications_precede_the_response() {
    let bridge = bridge();
    let (client_io, server_io, log) = tapped_duplex();
    serve(&bridge, server_io);
    let (client, _) = modern_client_on(client_io).await;
    let filter = SubscriptionFilter::builder().tools_list_changed().resource_subscription("app://windows").build();
    let mut sub = client.listen(filter).await.unwrap();
    assert_eq!(sub.acknowledged().tools_list_changed, Some(true));
    assert_eq!(sub.acknowledged().resource_subscriptions.as_deref(), Some(&["app://windows".to_owned()][..]));

    let r = call(&client, "w-1__set_recipient", Some(json!({"recipient": "Bob"}))).await;
    assert_eq!(r.is_error, Some(false));
    assert_eq!(
        after_last_call(&log),
        ["notifications/resources/updated", "notifications/tools/list_changed", "response"]
    );
    // Already queued on the subscription when call_tool returned.
    let first = sub.next().now_or_never().expect("queued before the response").unwrap().unwrap();
    assert!(matches!(first, ServerNotification::ResourceUpdatedNotification(ref n) if n.params.uri == "app://windows"));
    let second = sub.next().now_or_never().expect("queued before the response").unwrap().unwrap();
    assert!(matches!(second, ServerNotification::ToolListChangedNotification(_)));
    sub.cancel().await.unwrap();
    client.cancel().await.unwrap();
}

// GB-5.4-3 (no ok flag), GB-12.3-1 (structuredContent = ToolResult), GB-12.3-3 (one text
// item), and a call without `arguments` is `{}`.
#[tokio::test]
async fn success_result_shape() {
    let bridge = bridge();
    let (client, _) = legacy_client(&bridge).await;
    let r = call(&client, "w-1__load_rows", None).await;
    assert_eq!(r.is_error, Some(false));
    assert_eq!(structured(&r), json!({"result": ["widget", "gadget"]}));
    assert_eq!(r.content.len(), 1);
    assert_eq!(
        r.content[0].as_text().unwrap().text,
        "Done; see the structured result\n{\"result\":[\"widget\",\"gadget\"]}"
    );
    let wire = serde_json::to_value(&r).unwrap();
    assert!(wire["structuredContent"].get("ok").is_none());

    let r = call(&client, "w-1__set_amount", Some(json!({"amount": 12.5}))).await;
    assert_eq!(structured(&r), json!({}));
    assert_eq!(r.content[0].as_text().unwrap().text, "Done", "nothing but a line to mirror");
}

// GB-7.4-1..8, GB-7.2-2, OQ-GB-21: every failure is an isError result with a coded error
// object in structuredContent and the message as the text item; never a JSON-RPC error.
#[tokio::test]
async fn failures_are_coded_is_error_results() {
    let bridge = bridge();
    let (client, _) = legacy_client(&bridge).await;

    // window_not_found: never existed / not a {winId}__{action} name (GB-7.4-5, OQ-GB-21).
    let r = call(&client, "w-9__set_amount", Some(json!({"amount": 1}))).await;
    assert_eq!(error_code(&r), "window_not_found");
    let text = &r.content[0].as_text().unwrap().text;
    let (line, json) = text.split_once('\n').unwrap();
    let mut rest = structured(&r);
    assert_eq!(line, rest.as_object_mut().unwrap().remove("message").unwrap());
    assert_eq!(serde_json::from_str::<serde_json::Value>(json).unwrap(), rest);
    assert_eq!(rest["code"], "window_not_found");
    assert_eq!(error_code(&call(&client, "nonsense", None).await), "window_not_found");

    // action_not_available: unknown action on an existing window, and an unavailable one
    // (GB-7.4-6, OQ-GB-21).
    assert_eq!(error_code(&call(&client, "w-1__fly", None).await), "action_not_available");
    assert_eq!(error_code(&call(&client, "w-1__submit", None).await), "action_not_available");

    // stale_state with currentVersion; the write did not run (GB-7.1-2, GB-7.4-2).
    let v = version_of(&client, "w-1").await;
    let r = call(&client, "w-1__set_amount", Some(json!({"amount": 99, "expectedVersion": v + 1}))).await;
    assert_eq!(error_code(&r), "stale_state");
    assert_eq!(structured(&r)["currentVersion"], v);
    assert_eq!(version_of(&client, "w-1").await, v);
    // With the right version it runs and bumps the version (GB-7.1-1).
    let r = call(&client, "w-1__set_amount", Some(json!({"amount": 99, "expectedVersion": v}))).await;
    assert_eq!(r.is_error, Some(false));
    assert_eq!(version_of(&client, "w-1").await, v + 1);

    // validation_failed with fields[] named after the parameters (GB-7.3-1, GB-7.4-3), from
    // the inputSchema (jsonschema) ...
    let r = call(&client, "w-1__set_amount", Some(json!({"amount": "lots"}))).await;
    assert_eq!(error_code(&r), "validation_failed");
    assert_eq!(field_names(&structured(&r)), ["amount"]);
    let r = call(&client, "w-1__set_amount", Some(json!({"amount": 0}))).await;
    assert_eq!(error_code(&r), "validation_failed");
    assert_eq!(field_names(&structured(&r)), ["amount"]);
    let r = call(&client, "w-1__set_amount", None).await;
    assert_eq!(error_code(&r), "validation_failed");
    assert_eq!(structured(&r)["fields"], json!([{"field": "amount", "error": "Required"}]));
    let r = call(&client, "w-1__set_amount", Some(json!({"amount": 5, "expectedVersion": "x"}))).await;
    assert_eq!(error_code(&r), "validation_failed");
    assert_eq!(field_names(&structured(&r)), ["expectedVersion"]);
    // ... and from the action itself.
    let r = call(&client, "w-1__set_recipient", Some(json!({"recipient": "  "}))).await;
    assert_eq!(error_code(&r), "validation_failed");
    assert_eq!(structured(&r)["fields"], json!([{"field": "recipient", "error": "Cannot be empty"}]));

    // blocked_by_modal (GB-7.4-4): open the dialog, then write to its owner.
    call(&client, "w-1__set_recipient", Some(json!({"recipient": "Carol"}))).await;
    call(&client, "w-1__submit", None).await;
    let r = call(&client, "w-1__set_amount", Some(json!({"amount": 3}))).await;
    assert_eq!(error_code(&r), "blocked_by_modal");
    assert!(structured(&r).get("currentVersion").is_none() && structured(&r).get("fields").is_none());

    // window_not_found for a closed window ("was closed").
    call(&client, "w-2__cancel", None).await;
    let r = call(&client, "w-2__ok", None).await;
    assert_eq!(error_code(&r), "window_not_found");
    assert!(structured(&r)["message"].as_str().unwrap().contains("closed"));
}

fn field_names(err: &Value) -> Vec<String> {
    err["fields"].as_array().expect("fields").iter().map(|f| f["field"].as_str().unwrap().to_owned()).collect()
}

// GB-10.2-2, OQ-GB-12: app-level tools work and open windows whose tools then appear.
#[tokio::test]
async fn app_level_tool_opens_a_window() {
    let bridge = bridge();
    let (client, rec) = legacy_client(&bridge).await;
    let r = call(&client, "app__new_editor", None).await;
    assert_eq!(structured(&r)["openedWindowIds"], json!(["w-2"]));
    // Not subscribed to the resource: only tools/list_changed (OQ-GB-14).
    assert_eq!(rec.events(), [TOOLS_CHANGED]);
    let names = tool_names(&client).await;
    assert!(names.contains(&"w-2__set_recipient".to_owned()) && names.contains(&"w-1__set_recipient".to_owned()));
}
