//! MCP Apps (spec MA, extension `io.modelcontextprotocol/ui`): negotiation per request, the
//! window view resource, fallback for hosts without the extension, identity `_meta`. Both
//! protocol eras: session-based 2025-11-25 (capabilities from `initialize`) and 2026-07-28
//! (capabilities in every request's `_meta`).

use crate::support::mcp as mcp_support;

use bridge_runtime::catalog::{DescribeActions, DescribeWindow, ViewCsp, WindowMeta, WindowView};
use bridge_runtime::mcp::apps::{
    SERVER_INFO_META_KEY, UI_EXTENSION_ID, UI_MIME, WINDOW_ID_META_KEY, WINDOW_STATE_META_KEY, WINDOW_TOOLS_META_KEY,
};
use bridge_runtime::{
    ActionContext, ActionError, ActionSpec, Bridge, BridgeActions, BridgeWindow, OpenOptions, Rendered,
};
use mcp_support::*;
use rmcp::ServiceError;
use rmcp::model::{ErrorCode, ReadResourceRequestParams, ResourceContents};
use serde_json::{Map, Value, json};

const ERAS: [bool; 2] = [false, true];

fn ui() -> Recorder {
    Recorder { ui: true, ..Recorder::default() }
}

async fn tools_json(client: &Client) -> Vec<Value> {
    let tools = client.list_tools(None).await.expect("tools/list");
    tools.tools.iter().map(|t| serde_json::to_value(t).unwrap()).collect()
}

fn resource_uri(tool: &Value) -> Option<&str> {
    tool["_meta"]["ui"]["resourceUri"].as_str()
}

async fn read_err(client: &Client, uri: &str) -> rmcp::ErrorData {
    match client.read_resource(ReadResourceRequestParams::new(uri)).await {
        Err(ServiceError::McpError(e)) => e,
        other => panic!("expected a JSON-RPC error reading {uri}, got {other:?}"),
    }
}

async fn read_view(client: &Client, uri: &str) -> Value {
    let read = client.read_resource(ReadResourceRequestParams::new(uri)).await.expect("resources/read ui://");
    serde_json::to_value(read).unwrap()
}

// MA-4-1, MA-4-4, MA-13-6: with the extension, every window tool carries the nested
// `_meta.ui.resourceUri` (a ui:// URI) and the window it acts on; app-level tools carry no view.
#[tokio::test]
async fn with_the_extension_window_tools_carry_their_view() {
    let bridge = bridge();
    for modern in ERAS {
        let client = client_with(&bridge, modern, ui()).await;
        let tools = tools_json(&client).await;
        assert!(tools.len() >= 3);
        for t in &tools {
            let name = t["name"].as_str().unwrap();
            if name.starts_with("app__") {
                assert_eq!(t.get("_meta"), None, "{name}");
                continue;
            }
            let uri = resource_uri(t).unwrap_or_else(|| panic!("{name} has no _meta.ui.resourceUri: {t:#}"));
            assert!(uri.starts_with("ui://test-app/window-") && uri.ends_with(".html"), "{uri}");
            assert_eq!(t["_meta"][WINDOW_ID_META_KEY], "w-1", "{name}");
            // MA-4-3/4: only the nested form, no flat legacy key.
            assert_eq!(t["_meta"].get("ui/resourceUri"), None);
        }
        client.cancel().await.unwrap();
    }
}

// MA-12-1, MA-12-2, MA-13-8: without the extension (no extensions map, or one without the UI
// id), the same tools, byte for byte except for `_meta.ui`.
#[tokio::test]
async fn without_the_extension_the_same_tools_without_ui() {
    let bridge = bridge();
    for modern in ERAS {
        let with = client_with(&bridge, modern, ui()).await;
        let without = client_with(&bridge, modern, Recorder::default()).await;
        let mut expected = tools_json(&with).await;
        for t in &mut expected {
            if let Some(meta) = t.get_mut("_meta").and_then(Value::as_object_mut) {
                meta.remove("ui");
            }
        }
        let got = tools_json(&without).await;
        assert_eq!(got, expected);
        assert!(got.iter().all(|t| resource_uri(t).is_none()));
        with.cancel().await.unwrap();
        without.cancel().await.unwrap();
    }
}

// MA-2-5: clientInfo is never used to decide; a client named like an Apps host but without the
// capability gets no view.
#[tokio::test]
async fn client_info_decides_nothing() {
    let bridge = bridge();
    for modern in ERAS {
        let rec = Recorder { name: Some("io.modelcontextprotocol/ui mcp-apps host".into()), ..Recorder::default() };
        let client = client_with(&bridge, modern, rec).await;
        assert!(tools_json(&client).await.iter().all(|t| resource_uri(t).is_none()));
        let uri = view_uri(&bridge, modern).await;
        assert_eq!(read_err(&client, &uri).await.code, ErrorCode(-32021));
        client.cancel().await.unwrap();
    }
}

async fn view_uri(bridge: &Bridge, modern: bool) -> String {
    let client = client_with(bridge, modern, ui()).await;
    let tools = tools_json(&client).await;
    client.cancel().await.unwrap();
    tools.iter().find_map(|t| resource_uri(t).map(str::to_owned)).expect("a tool with a view")
}

// MA-6-5, MA-6-6, MA-6-7, MA-9-2, MA-13-10: the view is a ui:// resource, exactly
// `text/html;profile=mcp-app`, with the four CSP lists empty and no permissions, cacheable by
// everyone (the same for every user), with the server identity (MA-13-4).
#[tokio::test]
async fn the_view_resource() {
    let bridge = bridge();
    for modern in ERAS {
        let uri = view_uri(&bridge, modern).await;
        let client = client_with(&bridge, modern, ui()).await;
        let read = read_view(&client, &uri).await;
        let contents = read["contents"].as_array().unwrap();
        assert_eq!(contents.len(), 1);
        let c = &contents[0];
        assert_eq!(c["uri"], uri);
        assert_eq!(c["mimeType"], UI_MIME);
        let html = c["text"].as_str().unwrap();
        assert!(html.trim_start().to_ascii_lowercase().starts_with("<!doctype html"), "{}", &html[..40]);
        assert!(!html.contains("__BRIDGE_VIEW_CONFIG__"));
        assert!(html.contains("\"windowIdMetaKey\":\"bridge/windowId\""));
        assert_eq!(
            c["_meta"]["ui"],
            json!({"csp": {"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []},
                   "permissions": {}})
        );
        assert_eq!(read["cacheScope"], "public");
        assert!(read["ttlMs"].as_u64().unwrap() > 0);
        assert_eq!(read["_meta"][SERVER_INFO_META_KEY], json!({"name": "test-app", "version": "1.2.3"}));
        if modern {
            assert_eq!(read["resultType"], "complete"); // MA-1-5
        }
        client.cancel().await.unwrap();
    }
}

// MA-12-4, OQ-MA-4: reading a view without the extension is refused with -32021 and the
// capability that is missing; an unknown ui:// URI is resource-not-found.
#[tokio::test]
async fn reading_a_view_without_the_extension_is_32021() {
    let bridge = bridge();
    for modern in ERAS {
        let uri = view_uri(&bridge, modern).await;
        let client = client_with(&bridge, modern, Recorder::default()).await;
        let err = read_err(&client, &uri).await;
        assert_eq!(err.code, ErrorCode(-32021), "{err:?}");
        let data = err.data.unwrap_or_default();
        assert_eq!(data["requiredCapabilities"]["extensions"][UI_EXTENSION_ID], json!({"mimeTypes": [UI_MIME]}));
        client.cancel().await.unwrap();

        let client = client_with(&bridge, modern, ui()).await;
        let err = read_err(&client, "ui://test-app/window-0000000000000000.html").await;
        // -32002 for legacy peers; rmcp reports it as -32602 to 2026-07-28 peers.
        assert!([ErrorCode(-32002), ErrorCode(-32602)].contains(&err.code), "{err:?}");
        client.cancel().await.unwrap();
    }
}

// GB-12.1-1 with MA-6: the resource list stays exactly app://windows, extension or not (the
// view is found through the tools' _meta); MA-13-3: a stable descriptor; MA-13-4: identity.
#[tokio::test]
async fn resources_list_is_still_exactly_app_windows() {
    let bridge = bridge();
    for modern in ERAS {
        for rec in [ui(), Recorder::default()] {
            let client = client_with(&bridge, modern, rec).await;
            let list = client.list_resources(None).await.unwrap();
            let uris: Vec<&str> = list.resources.iter().map(|r| r.uri.as_str()).collect();
            assert_eq!(uris, ["app://windows"]);
            let list = serde_json::to_value(&list).unwrap();
            assert_eq!(list["_meta"][SERVER_INFO_META_KEY]["name"], "test-app");
            client.cancel().await.unwrap();
        }
    }
}

// MA-5-1, MA-12-3, MA-13-4: a call returns the same content and structuredContent with or
// without the extension; the result names the window it acted on and the server.
#[tokio::test]
async fn call_results_are_the_same_text_and_carry_identity() {
    for modern in ERAS {
        let mut results = Vec::new();
        for rec in [ui(), Recorder::default()] {
            let bridge = bridge();
            let client = client_with(&bridge, modern, rec).await;
            let r = call(&client, "w-1__set_amount", Some(json!({"amount": 12.5}))).await;
            let v = serde_json::to_value(&r).unwrap();
            assert_eq!(v["_meta"][WINDOW_ID_META_KEY], "w-1");
            assert_eq!(v["_meta"][SERVER_INFO_META_KEY]["version"], "1.2.3");
            results.push((v["content"].clone(), v["structuredContent"].clone(), v["isError"].clone()));
            let tools = tools_json(&client).await;
            let listed = serde_json::to_value(client.list_tools(None).await.unwrap()).unwrap();
            assert_eq!(listed["_meta"][SERVER_INFO_META_KEY]["name"], "test-app");
            assert!(!tools.is_empty());
            client.cancel().await.unwrap();
        }
        assert_eq!(results[0], results[1]);
        assert_eq!(results[0].2, json!(false));
    }
}

// MA-4-5, MA-4-6, OQ-MA-7: the tool list depends on the client's capabilities, so it is never
// publicly cached.
#[tokio::test]
async fn tools_list_is_private_and_uncached() {
    let bridge = bridge();
    let client = client_with(&bridge, true, ui()).await;
    let listed = serde_json::to_value(client.list_tools(None).await.unwrap()).unwrap();
    assert_eq!(listed["cacheScope"], "private");
    assert_eq!(listed["ttlMs"], 0);
    client.cancel().await.unwrap();
}

/// A window type with its own view and CSP (what `#[bridge_window(view(…))]` generates).
struct Chart;

impl DescribeWindow for Chart {
    fn window_meta() -> WindowMeta {
        WindowMeta { type_name: "Chart".into(), title: "Chart".into(), blocks: vec![] }
    }
    fn window_view() -> Option<WindowView> {
        let csp = ViewCsp { resource_domains: vec!["https://cdn.example.com".into()], ..ViewCsp::default() };
        WindowView::html("<!doctype html><title>chart</title><p>my chart</p>").with_csp(csp).ok()
    }
}

impl BridgeWindow for Chart {
    fn render(&self) -> Rendered {
        Rendered { title: "Chart".into(), summary: Some("A chart".into()), blocks: vec![] }
    }
}

impl DescribeActions for Chart {
    fn action_specs_for(window_level: bool) -> Vec<ActionSpec> {
        vec![ActionSpec::new("zoom").description("Zoom in").finish(window_level)]
    }
}

impl BridgeActions for Chart {
    fn action_available(&self, _action: &str) -> bool {
        true
    }
    fn invoke_action(
        &mut self,
        _action: &str,
        _args: Map<String, Value>,
        _cx: &mut ActionContext<'_>,
    ) -> Result<Option<Value>, ActionError> {
        Ok(None)
    }
}

// Issue #8 item 4, MA-9-2, MA-9-14: an author's view replaces the built-in one for its window
// type only, with its declared CSP (resource and connect lists kept apart); the URI changes when
// a window type joins the catalog (MA-7-4).
#[tokio::test]
async fn an_authors_view_replaces_the_built_in_one_for_its_type() {
    let bridge = Bridge::builder("chart-app", "0.1.0").window::<Chart>().window::<Editor>().spawn_headless(|ui| {
        ui.open(Chart, OpenOptions::window());
        ui.open(Editor { recipient: String::new(), amount: 1.0 }, OpenOptions::window());
    });
    let client = client_with(&bridge, true, ui()).await;
    let tools = tools_json(&client).await;
    let chart = tools.iter().find(|t| t["name"].as_str().unwrap().ends_with("__zoom")).unwrap();
    let editor = tools.iter().find(|t| t["name"].as_str().unwrap().ends_with("__set_amount")).unwrap();
    let chart_uri = resource_uri(chart).unwrap().to_owned();
    let editor_uri = resource_uri(editor).unwrap().to_owned();
    assert!(chart_uri.starts_with("ui://chart-app/chart-"), "{chart_uri}");
    assert!(editor_uri.starts_with("ui://chart-app/window-"), "{editor_uri}");
    let read = read_view(&client, &chart_uri).await;
    assert_eq!(read["contents"][0]["text"], "<!doctype html><title>chart</title><p>my chart</p>");
    assert_eq!(read["contents"][0]["_meta"]["ui"]["csp"]["resourceDomains"], json!(["https://cdn.example.com"]));
    assert_eq!(read["contents"][0]["_meta"]["ui"]["csp"]["connectDomains"], json!([]));
    client.cancel().await.unwrap();
}

// Issue #8 item 4: a CSP entry that is not an https:// origin is refused when the view is built.
#[test]
fn view_csp_entries_must_be_https_origins() {
    let bad = ViewCsp { connect_domains: vec!["http://api.example.com".into()], ..ViewCsp::default() };
    let err = WindowView::html("<!doctype html>").with_csp(bad.clone()).unwrap_err().to_string();
    assert!(err.starts_with("connectDomains: `http://api.example.com` must be an https:// origin"), "{err}");
    // The builder call checks the same rule for a view whose fields were set directly.
    let view = WindowView { csp: bad, ..WindowView::html("<!doctype html>") };
    let err = Bridge::builder("x", "1").window_view::<Editor>(view).err().expect("refused");
    assert_eq!(err.domain, "http://api.example.com");
    assert_eq!(err.list, "connectDomains");
}

// Issue #8 item 4: `Bridge::builder(..).window_view::<W>(..)` gives a window type a view built in
// code (a bundler's output, say), replacing the built-in one, or the one its attribute declared.
#[tokio::test]
async fn a_view_given_to_the_builder_replaces_the_declared_one() {
    let html = "<!doctype html><title>bundled</title><p>bundled chart</p>";
    let bridge = Bridge::builder("chart-app", "0.1.0")
        .window::<Chart>()
        .window_view::<Chart>(WindowView::html(html))
        .and_then(|b| b.window_view::<Editor>(WindowView::html("<!doctype html><p>editor</p>")))
        .expect("https-only CSP")
        .spawn_headless(|ui| {
            ui.open(Chart, OpenOptions::window());
            ui.open(Editor { recipient: String::new(), amount: 1.0 }, OpenOptions::window());
        });
    assert_eq!(bridge.catalog().windows().len(), 2, "registered once each");
    let client = client_with(&bridge, false, ui()).await;
    let tools = tools_json(&client).await;
    let uri_of = |suffix: &str| {
        let t = tools.iter().find(|t| t["name"].as_str().unwrap().ends_with(suffix)).unwrap();
        resource_uri(t).unwrap().to_owned()
    };
    let chart = read_view(&client, &uri_of("__zoom")).await;
    assert_eq!(chart["contents"][0]["text"], html);
    assert_eq!(chart["contents"][0]["_meta"]["ui"]["csp"]["resourceDomains"], json!([]), "the new view's CSP");
    let editor = read_view(&client, &uri_of("__set_amount")).await;
    assert_eq!(editor["contents"][0]["text"], "<!doctype html><p>editor</p>");
    assert!(uri_of("__set_amount").starts_with("ui://chart-app/editor-"));
    client.cancel().await.unwrap();
}

// Contents of the app://windows read are unchanged by the extension (MA-12-3 for resources).
#[tokio::test]
async fn the_snapshot_is_the_same_with_the_extension() {
    let bridge = bridge();
    for modern in ERAS {
        let a = client_with(&bridge, modern, ui()).await;
        let b = client_with(&bridge, modern, Recorder::default()).await;
        assert_eq!(snapshot(&a).await, snapshot(&b).await);
        let read = a.read_resource(ReadResourceRequestParams::new("app://windows")).await.unwrap();
        assert!(matches!(&read.contents[0], ResourceContents::TextResourceContents { .. }));
        a.cancel().await.unwrap();
        b.cancel().await.unwrap();
    }
}

async fn read_windows(client: &Client) -> Value {
    let r = client.read_resource(ReadResourceRequestParams::new("app://windows")).await.expect("read");
    serde_json::to_value(r).unwrap()
}

// Issue #8 item 3: a view cannot list the server's tools through the Apps bridge, so an
// app://windows read by a client with the extension names each window's listed tools in
// `_meta["bridge/windowTools"]`, exactly as tools/list groups them (GB-5.1-4); a client
// without the extension gets no such key (MA-12-1: nothing changes for it).
#[tokio::test]
async fn windows_reads_name_each_windows_tools_for_apps_clients() {
    let bridge = bridge();
    for modern in ERAS {
        let a = client_with(&bridge, modern, ui()).await;
        let b = client_with(&bridge, modern, Recorder::default()).await;
        let with = read_windows(&a).await;
        let without = read_windows(&b).await;
        assert_eq!(without["_meta"].get(WINDOW_TOOLS_META_KEY), None, "{without:#}");
        assert_eq!(without["_meta"][SERVER_INFO_META_KEY]["name"], "test-app");

        let mut expected = Map::new();
        for t in tools_json(&a).await {
            let Some(id) = t["_meta"][WINDOW_ID_META_KEY].as_str() else { continue };
            let name = t["name"].as_str().unwrap();
            let action = name.strip_prefix(&format!("{id}__")).unwrap();
            let entry = expected.entry(id).or_insert_with(|| json!({"type": "Editor", "tools": {}}));
            entry["tools"][action] = json!(name);
        }
        assert!(!expected.is_empty());
        assert_eq!(with["_meta"][WINDOW_TOOLS_META_KEY], Value::Object(expected), "{with:#}");
        a.cancel().await.unwrap();
        b.cancel().await.unwrap();
    }
}

// Issue #8 item 3: the built-in view carries the catalog's window types — titles, block
// labels, and every action with the exact inputSchema the tools list — so it can build
// forms; the config cannot close its <script> element (MA-9-6).
#[tokio::test]
async fn the_built_in_view_carries_the_catalogs_actions() {
    let bridge = bridge();
    let uri = view_uri(&bridge, false).await;
    let client = client_with(&bridge, false, ui()).await;
    let read = read_view(&client, &uri).await;
    let html = read["contents"][0]["text"].as_str().unwrap();
    let start = html.find(r#"<script type="application/json" id="bridge-config">"#).unwrap();
    let rest = &html[start..];
    let body = &rest[rest.find('>').unwrap() + 1..rest.find("</script>").unwrap()];
    assert!(!body.contains('<'), "the config escapes `<`");
    let config: Value = serde_json::from_str(body).unwrap();
    assert_eq!(config["windowsUri"], "app://windows");
    assert_eq!(config["windowToolsMetaKey"], WINDOW_TOOLS_META_KEY);
    let windows = bridge.catalog().windows().to_vec();
    assert_eq!(config["types"].as_object().unwrap().len(), windows.len());
    for w in &windows {
        let t = &config["types"][&w.meta.type_name];
        assert_eq!(t["title"], w.meta.title.as_str());
        let names: Vec<&str> = t["actions"].as_array().unwrap().iter().map(|a| a["action"].as_str().unwrap()).collect();
        let declared: Vec<&str> = w.actions.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, declared, "declaration order");
        for (a, spec) in t["actions"].as_array().unwrap().iter().zip(&w.actions) {
            assert_eq!(a["inputSchema"], Value::Object(spec.input_schema.as_ref().clone()));
            assert_eq!(a["hints"]["destructive"], spec.hints.destructive);
        }
    }
    // The built-in view pins the host origin and checks every message's source and origin
    // (MA-9-5, MA-13-7), never posts to "*", and never writes app data as markup (MA-9-6).
    assert!(html.contains("postMessage(message, hostOrigin)"));
    assert!(html.contains("event.source !== window.parent || event.origin !== hostOrigin"));
    assert!(!html.contains("'*'") && !html.contains("\"*\""));
    assert!(!html.contains("innerHTML") && !html.contains("insertAdjacentHTML") && !html.contains("document.write"));
    // Self-contained (MA-9-3): no external script, style, image or font.
    for needle in ["<script src", "<link", "@import", "url(http", "src=\"http"] {
        assert!(!html.contains(needle), "{needle}");
    }
    client.cancel().await.unwrap();
}

// Issue #8 item 3: a window tool's result names the window's state right after the call and its
// tools, for a client with the extension (a view in a host that does not proxy resources/read
// still shows it); a client without the extension gets neither (MA-12-1). A call that closes
// its window leaves the state out.
#[tokio::test]
async fn call_results_carry_the_windows_state_for_apps_clients() {
    for modern in ERAS {
        let bridge = bridge();
        let a = client_with(&bridge, modern, ui()).await;
        let b = client_with(&bridge, modern, Recorder::default()).await;
        let r = serde_json::to_value(call(&a, "w-1__set_amount", Some(json!({"amount": 7.5}))).await).unwrap();
        let window = snapshot(&a).await["windows"].as_array().unwrap().iter().find(|w| w["id"] == "w-1").cloned();
        assert_eq!(r["_meta"][WINDOW_STATE_META_KEY], window.unwrap(), "{r:#}");
        let tools = &r["_meta"][WINDOW_TOOLS_META_KEY];
        assert_eq!(tools.as_object().unwrap().keys().collect::<Vec<_>>(), ["w-1"], "only its own window");
        assert_eq!(tools["w-1"]["tools"]["set_amount"], "w-1__set_amount");

        let r = serde_json::to_value(call(&b, "w-1__set_amount", Some(json!({"amount": 8.5}))).await).unwrap();
        assert_eq!(r["_meta"].get(WINDOW_STATE_META_KEY), None, "{r:#}");
        assert_eq!(r["_meta"].get(WINDOW_TOOLS_META_KEY), None, "{r:#}");

        // Submit opens the dialog w-2; its confirm closes it: no state of a closed window.
        call(&a, "w-1__set_recipient", Some(json!({"recipient": "Ann"}))).await;
        let r = serde_json::to_value(call(&a, "w-1__submit", None).await).unwrap();
        assert_eq!(r["_meta"][WINDOW_STATE_META_KEY]["id"], "w-1");
        assert_eq!(r["_meta"][WINDOW_TOOLS_META_KEY], json!({}), "blocked by its dialog: no tools");
        let dialog = r["structuredContent"]["openedWindowIds"][0].as_str().unwrap().to_owned();
        let confirm = tools_json(&a).await.into_iter().find(|t| t["_meta"][WINDOW_ID_META_KEY] == dialog.as_str());
        let name = confirm.unwrap()["name"].as_str().unwrap().to_owned();
        let r = serde_json::to_value(call(&a, &name, None).await).unwrap();
        assert_eq!(r["_meta"][WINDOW_ID_META_KEY], dialog.as_str());
        assert_eq!(r["_meta"].get(WINDOW_STATE_META_KEY), None, "{r:#}");
        a.cancel().await.unwrap();
        b.cancel().await.unwrap();
    }
}
