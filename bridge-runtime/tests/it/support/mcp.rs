//! Shared fixtures for the MCP adapter tests: a small hand-written app (no proc macros), an
//! rmcp client that records the notifications it receives, and a wire tap.
#![allow(dead_code)]

use bridge_runtime::catalog::{DescribeActions, DescribeWindow, WindowMeta};
use bridge_runtime::mcp::GuiBridgeServer;
use bridge_runtime::model::FieldItem;
use bridge_runtime::{
    ActionContext, ActionError, ActionHints, ActionSpec, Block, Bridge, BridgeActions, BridgeWindow, OpenOptions,
    Rendered,
};
use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion, ResourceUpdatedNotificationParam};
use rmcp::service::{ClientLifecycleMode, NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ClientServiceExt, ServiceExt};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

// ---------------------------------------------------------------------------------------------
// HTTP access: every HTTP test server requires this token, and every client sends it.

/// The access token of the tests' HTTP servers.
pub const HTTP_TOKEN: &str = "test-token-0123456789abcdef";
/// `Authorization` header value carrying [`HTTP_TOKEN`].
pub const HTTP_AUTH: &str = "Bearer test-token-0123456789abcdef";

/// HTTP options requiring [`HTTP_TOKEN`].
pub fn http_options() -> bridge_runtime::mcp::HttpOptions {
    bridge_runtime::mcp::HttpOptions::default().token(HTTP_TOKEN)
}

/// An rmcp streamable HTTP client configuration for `url` that sends [`HTTP_TOKEN`].
pub fn authed(url: impl Into<String>) -> rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig {
    rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url.into())
        .auth_header(HTTP_TOKEN)
}

// ---------------------------------------------------------------------------------------------
// The app: an order editor (top-level window) that opens a confirmation dialog (window-level
// modal), and app-level actions.

/// Order editor window.
pub struct Editor {
    pub recipient: String,
    pub amount: f64,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct SetRecipient {
    /// Who receives the order.
    pub recipient: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct SetAmount {
    /// Order amount.
    #[schemars(range(min = 0.01))]
    pub amount: f64,
}

impl DescribeWindow for Editor {
    fn window_meta() -> WindowMeta {
        WindowMeta { type_name: "Editor".into(), title: "Order Editor".into(), blocks: vec![] }
    }
}

impl BridgeWindow for Editor {
    fn render(&self) -> Rendered {
        Rendered {
            title: "Order Editor".into(),
            summary: Some(format!("Editing an order of {:.2} for '{}'", self.amount, self.recipient)),
            blocks: vec![Block::Fields {
                id: Some("b1".into()),
                items: vec![
                    FieldItem::new("Recipient", json!(self.recipient)),
                    FieldItem::new("Amount", json!(self.amount)),
                ],
            }],
        }
    }
}

fn hints(read_only: bool, destructive: bool, idempotent: bool, open_world: bool) -> ActionHints {
    ActionHints { read_only, destructive, idempotent, open_world }
}

impl DescribeActions for Editor {
    fn action_specs_for(window_level: bool) -> Vec<ActionSpec> {
        vec![
            ActionSpec::new("set_recipient")
                .description("Set the order's recipient")
                .hints(hints(false, false, true, false))
                .params::<SetRecipient>()
                .finish(window_level),
            ActionSpec::new("set_amount")
                .description("Set the order's amount")
                .hints(hints(false, false, true, false))
                .params::<SetAmount>()
                .finish(window_level),
            ActionSpec::new("submit")
                .description("Submit the order; a confirmation dialog pops up")
                .hints(hints(false, true, false, true))
                .conditional(true)
                .finish(window_level),
            ActionSpec::new("load_rows")
                .description("Fetch the order lines")
                .hints(hints(true, false, true, false))
                .returns::<Vec<String>>()
                .finish(window_level),
        ]
    }
}

impl BridgeActions for Editor {
    fn action_available(&self, action: &str) -> bool {
        action != "submit" || !self.recipient.is_empty()
    }
    fn invoke_action(
        &mut self,
        action: &str,
        args: Map<String, Value>,
        cx: &mut ActionContext<'_>,
    ) -> Result<Option<Value>, ActionError> {
        match action {
            "set_recipient" => {
                let p: SetRecipient =
                    serde_json::from_value(Value::Object(args)).map_err(ActionError::from_deserialize)?;
                if p.recipient.trim().is_empty() {
                    return Err(ActionError::field("recipient", "Cannot be empty"));
                }
                self.recipient = p.recipient;
                Ok(None)
            }
            "set_amount" => {
                let p: SetAmount =
                    serde_json::from_value(Value::Object(args)).map_err(ActionError::from_deserialize)?;
                self.amount = p.amount;
                Ok(None)
            }
            "submit" => {
                let id = cx.open_modal(Confirm);
                cx.set_message(format!("Submitted; confirmation dialog {id} popped up"));
                Ok(None)
            }
            "load_rows" => Ok(Some(json!(["widget", "gadget"]))),
            other => Err(ActionError::not_available(format!("no action {other}"))),
        }
    }
}

/// Confirmation dialog.
pub struct Confirm;

impl DescribeWindow for Confirm {
    fn window_meta() -> WindowMeta {
        WindowMeta { type_name: "Confirm".into(), title: "Confirm order".into(), blocks: vec![] }
    }
}

impl BridgeWindow for Confirm {
    fn render(&self) -> Rendered {
        Rendered {
            title: "Confirm order".into(),
            summary: Some("Asks whether to place the order".into()),
            blocks: vec![Block::Text { id: Some("q".into()), text: "Place the order?".into() }],
        }
    }
}

impl DescribeActions for Confirm {
    fn action_specs_for(window_level: bool) -> Vec<ActionSpec> {
        vec![
            ActionSpec::new("ok")
                .description("Place the order")
                .hints(hints(false, true, false, false))
                .finish(window_level),
            ActionSpec::new("cancel")
                .description("Close the dialog")
                .hints(hints(false, false, true, false))
                .finish(window_level),
        ]
    }
}

impl BridgeActions for Confirm {
    fn action_available(&self, _action: &str) -> bool {
        true
    }
    fn invoke_action(
        &mut self,
        _action: &str,
        _args: Map<String, Value>,
        cx: &mut ActionContext<'_>,
    ) -> Result<Option<Value>, ActionError> {
        cx.close();
        Ok(None)
    }
}

/// App-level actions.
pub struct App;

impl DescribeActions for App {
    fn action_specs_for(window_level: bool) -> Vec<ActionSpec> {
        vec![
            ActionSpec::new("new_editor")
                .description("Open a new order editor")
                .hints(hints(false, false, false, false))
                .finish(window_level),
        ]
    }
}

impl BridgeActions for App {
    fn action_available(&self, _action: &str) -> bool {
        true
    }
    fn invoke_action(
        &mut self,
        _action: &str,
        _args: Map<String, Value>,
        cx: &mut ActionContext<'_>,
    ) -> Result<Option<Value>, ActionError> {
        cx.open(Editor { recipient: String::new(), amount: 1.0 });
        Ok(None)
    }
}

/// A bridge with one editor open as `w-1`, recipient empty (so `submit` is unavailable).
pub fn bridge() -> Bridge {
    Bridge::builder("test-app", "1.2.3")
        .app(App)
        .window::<Editor>()
        .window::<Confirm>()
        .instructions("App notes: amounts are in euros.")
        .spawn_headless(|ui| {
            ui.open(Editor { recipient: String::new(), amount: 10.0 }, OpenOptions::window());
        })
}

// ---------------------------------------------------------------------------------------------
// The client.

/// An rmcp client handler that records the notifications it receives, in arrival order.
#[derive(Clone, Default)]
pub struct Recorder {
    pub events: Arc<Mutex<Vec<String>>>,
    /// Declare the MCP Apps extension (`io.modelcontextprotocol/ui`) in the client capabilities.
    pub ui: bool,
    /// `clientInfo.name` to announce (default rmcp's).
    pub name: Option<String>,
}

pub const UPDATED: &str = "updated app://windows";
pub const TOOLS_CHANGED: &str = "tools/list_changed";

impl Recorder {
    pub fn events(&self) -> Vec<String> {
        self.events.lock().unwrap().clone()
    }

    pub fn count(&self, what: &str) -> usize {
        self.events().iter().filter(|e| *e == what).count()
    }

    pub fn clear(&self) {
        self.events.lock().unwrap().clear();
    }

    /// Waits until `what` has been received at least `n` times (HTTP delivery is asynchronous).
    pub async fn wait_for(&self, what: &str, n: usize) -> bool {
        for _ in 0..200 {
            if self.count(what) >= n {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        false
    }
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut capabilities = rmcp::model::ClientCapabilities::default();
        if self.ui {
            let mut ext = rmcp::model::ExtensionCapabilities::new();
            let settings = json!({"mimeTypes": ["text/html;profile=mcp-app"]});
            ext.insert("io.modelcontextprotocol/ui".into(), settings.as_object().cloned().unwrap_or_default());
            capabilities.extensions = Some(ext);
        }
        let mut info = rmcp::model::ClientConfig::default();
        info.capabilities = capabilities;
        if let Some(name) = &self.name {
            info.client_info = rmcp::model::Implementation::new(name.clone(), "9.9.9");
        }
        info
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        self.events.lock().unwrap().push(format!("updated {}", params.uri));
    }

    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        self.events.lock().unwrap().push(TOOLS_CHANGED.to_owned());
    }
}

pub type Client = RunningService<RoleClient, Recorder>;

/// A legacy (`initialize`, 2025-11-25) client connected to a fresh server over `duplex`.
pub async fn legacy_client(bridge: &Bridge) -> (Client, Recorder) {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    serve(bridge, server_io);
    let rec = Recorder::default();
    let client = rec.clone().serve(client_io).await.expect("initialize");
    (client, rec)
}

/// A client of either era (`modern` = 2026-07-28) whose capabilities come from `rec`.
pub async fn client_with(bridge: &Bridge, modern: bool, rec: Recorder) -> Client {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    serve(bridge, server_io);
    if modern {
        rec.serve_with_lifecycle(
            client_io,
            ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
        )
        .await
        .expect("discover")
    } else {
        rec.serve(client_io).await.expect("initialize")
    }
}

/// A 2026-07-28 (`server/discover`) client connected to a fresh server over `duplex`.
pub async fn modern_client(bridge: &Bridge) -> (Client, Recorder) {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    serve(bridge, server_io);
    modern_client_on(client_io).await
}

pub async fn modern_client_on(client_io: DuplexStream) -> (Client, Recorder) {
    let rec = Recorder::default();
    let client = rec
        .clone()
        .serve_with_lifecycle(
            client_io,
            ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
        )
        .await
        .expect("discover");
    (client, rec)
}

/// Serves a new [`GuiBridgeServer`] for `bridge` on `io` in the background.
pub fn serve(bridge: &Bridge, io: DuplexStream) {
    let server = GuiBridgeServer::new(bridge.clone());
    tokio::spawn(async move {
        if let Ok(running) = server.serve(io).await {
            let _ = running.waiting().await;
        }
    });
}

/// Calls `name` with `args` (a JSON object, or `None` for no `arguments` at all).
pub async fn call(client: &Client, name: &str, args: Option<Value>) -> CallToolResult {
    let mut params = CallToolRequestParams::new(name.to_owned());
    if let Some(Value::Object(m)) = args {
        params = params.with_arguments(m);
    }
    client.call_tool(params).await.expect("tools/call is never a JSON-RPC error")
}

/// The `structuredContent` of a result.
pub fn structured(r: &CallToolResult) -> Value {
    r.structured_content.clone().expect("structuredContent")
}

/// The error code of an `isError` result.
pub fn error_code(r: &CallToolResult) -> String {
    assert_eq!(r.is_error, Some(true), "expected an isError result, got {r:?}");
    structured(r)["code"].as_str().expect("code").to_owned()
}

/// The tool names listed right now.
pub async fn tool_names(client: &Client) -> Vec<String> {
    let mut names: Vec<String> =
        client.list_all_tools().await.expect("tools/list").into_iter().map(|t| t.name.into_owned()).collect();
    names.sort();
    names
}

/// The parsed `app://windows` snapshot.
pub async fn snapshot(client: &Client) -> Value {
    let r = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new("app://windows"))
        .await
        .expect("resources/read");
    let text = match &r.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("expected text contents, got {other:?}"),
    };
    serde_json::from_str(&text).expect("snapshot JSON")
}

/// The `version` of window `id` in the snapshot.
pub async fn version_of(client: &Client, id: &str) -> i64 {
    let snap = snapshot(client).await;
    snap["windows"].as_array().unwrap().iter().find(|w| w["id"] == id).expect("window")["version"].as_i64().unwrap()
}

// ---------------------------------------------------------------------------------------------
// Wire tap: every JSON-RPC line between client and server, in the order it crossed the wire.

/// One line on the wire: `true` = client → server.
pub type WireLog = Arc<Mutex<Vec<(bool, Value)>>>;

/// Two duplex ends (client side, server side) joined by a relay that logs every line before
/// passing it on.
pub fn tapped_duplex() -> (DuplexStream, DuplexStream, WireLog) {
    let (client_io, tap_client) = tokio::io::duplex(1 << 20);
    let (tap_server, server_io) = tokio::io::duplex(1 << 20);
    let log: WireLog = Arc::default();
    let (c_read, c_write) = tokio::io::split(tap_client);
    let (s_read, s_write) = tokio::io::split(tap_server);
    tokio::spawn(relay(c_read, s_write, true, log.clone()));
    tokio::spawn(relay(s_read, c_write, false, log.clone()));
    (client_io, server_io, log)
}

async fn relay(
    from: impl tokio::io::AsyncRead + Unpin,
    mut to: impl tokio::io::AsyncWrite + Unpin,
    to_server: bool,
    log: WireLog,
) {
    let mut lines = BufReader::new(from).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Ok(v) = serde_json::from_str::<Value>(&line) {
            log.lock().unwrap().push((to_server, v));
        }
        if to.write_all(line.as_bytes()).await.is_err() || to.write_all(b"\n").await.is_err() {
            break;
        }
    }
}

/// Server → client messages, in wire order, after the client's last `tools/call` request:
/// returns (`method` or `"response"`) labels up to and including that call's response.
pub fn after_last_call(log: &WireLog) -> Vec<String> {
    let log = log.lock().unwrap();
    let (pos, id) = log
        .iter()
        .enumerate()
        .rev()
        .find(|(_, (up, v))| *up && v["method"] == "tools/call")
        .map(|(i, (_, v))| (i, v["id"].clone()))
        .expect("a tools/call request");
    let mut out = Vec::new();
    for (up, v) in &log[pos + 1..] {
        if *up {
            continue;
        }
        if v.get("id") == Some(&id) && v.get("method").is_none() {
            out.push("response".to_owned());
            break;
        }
        if let Some(m) = v["method"].as_str() {
            out.push(m.to_owned());
        }
    }
    out
}
