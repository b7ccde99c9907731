//! The plugin's commands, event and HTTP server on Tauri's mock runtime (`tauri/test`): no
//! display, no web view. The app is the Order Editor of GB Appendix A
//! (examples/order_editor/app.rs), unchanged.

#[path = "../../../examples/order_editor/app.rs"]
#[allow(dead_code, unreachable_pub)]
mod app;

use bridge_runtime::ErrorCode;
use serde_json::{Map, Value, json};
use std::io::{Read, Write};
use std::sync::mpsc;
use std::time::Duration;
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{INVOKE_KEY, MockRuntime, mock_builder, mock_context, noop_assets};
use tauri::utils::acl::ExecutionContext;
use tauri::webview::InvokeRequest;
use tauri::{App, AppHandle, WebviewWindow, WebviewWindowBuilder};
use tauri::{Listener, Manager};
use tauri_plugin_bridge::{AGENT_CALL_EVENT, BridgeExt, CHANGED_EVENT, JOURNAL_EVENT, OnClose, Options, OwnWindow};

const TOKEN: &str = "test-token-0123456789abcdef";
const REPORT_ROWS: usize = 20;
/// Every command of the plugin.
const COMMANDS: &[&str] =
    &["windows", "scope", "call", "operable", "last_agent_call", "journal", "undo", "can_undo", "mcp_config"];

/// The Order Editor under the plugin, on the mock runtime, with a page (`main`) allowed to run
/// `allowed` of the plugin's commands.
fn app_allowing(allowed: &[&str]) -> (App<MockRuntime>, WebviewWindow<MockRuntime>) {
    app_with(allowed, Options::default())
}

/// [`app_allowing`] with `options` (the token and the initial windows are set here).
fn app_with(allowed: &[&str], options: Options) -> (App<MockRuntime>, WebviewWindow<MockRuntime>) {
    let mut context = mock_context(noop_assets());
    for command in allowed {
        context.runtime_authority_mut().__allow_command(format!("plugin:bridge|{command}"), ExecutionContext::Local);
    }
    let options = options.token(TOKEN).setup_ui(|ui| app::open_initial(ui, REPORT_ROWS));
    let app = mock_builder()
        .plugin(tauri_plugin_bridge::init(app::build(REPORT_ROWS), options))
        .build(context)
        .expect("the app builds");
    let page = WebviewWindowBuilder::new(&app, "main", Default::default()).build().expect("the page opens");
    (app, page)
}

fn app() -> (App<MockRuntime>, WebviewWindow<MockRuntime>) {
    app_allowing(COMMANDS)
}

/// `invoke('plugin:bridge|COMMAND', args)` from the page: the resolved value or the rejection.
fn invoke(page: &WebviewWindow<MockRuntime>, command: &str, args: Value) -> Result<Value, Value> {
    let request = InvokeRequest {
        cmd: format!("plugin:bridge|{command}"),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        url: "tauri://localhost".parse().expect("a URL"),
        body: InvokeBody::Json(args),
        headers: Default::default(),
        invoke_key: INVOKE_KEY.to_owned(),
    };
    tauri::test::get_ipc_response(page, request).map(|body| body.deserialize::<Value>().expect("JSON"))
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().expect("an object")
}

fn version(page: &WebviewWindow<MockRuntime>, id: &str) -> i64 {
    let windows = invoke(page, "windows", json!({})).expect("windows");
    windows["windows"].as_array().expect("windows[]").iter().find(|w| w["id"] == id).expect("the window")["version"]
        .as_i64()
        .expect("a version")
}

/// GB-4.5-2: the page reads exactly what agents read, the password masked.
#[test]
fn windows_is_the_masked_snapshot_agents_read() {
    let (app, page) = app();
    let read = invoke(&page, "windows", json!({})).expect("windows");
    let agents: Value = serde_json::from_str(&app.bridge().published().snapshot_json()).expect("JSON");
    assert_eq!(read, agents);
    let text = read.to_string();
    assert!(text.contains("••••••"), "the password is masked: {text}");
    assert!(!text.contains("hunter2-s3cret"), "the password never reaches the page");
    assert_eq!(read["operableWindowIds"], json!(["w-A", "w-C"]));
    assert_eq!(invoke(&page, "operable", json!({})).expect("operable"), json!(["w-A", "w-C"]));
}

/// GB-7.1-2: the page's call is the user's; it bumps the version, and an agent holding the old
/// `expectedVersion` gets `stale_state` with `currentVersion`.
#[test]
fn a_user_call_makes_the_agents_version_stale() {
    let (app, page) = app();
    let before = version(&page, "w-A");
    let done = invoke(
        &page,
        "call",
        json!({"name": "w-A__edit_field", "arguments": {"field": "amount", "value": "42", "expectedVersion": before}}),
    )
    .expect("the user's edit");
    assert_eq!(done["message"], "Set amount");
    let after = version(&page, "w-A");
    assert!(after > before, "the user's edit bumps the version ({before} → {after})");

    let agent =
        tauri::async_runtime::block_on(app.bridge().call_tool(
            "w-A__edit_field",
            args(json!({"field": "recipient", "value": "Bob", "expectedVersion": before})),
        ));
    let err = agent.result.expect_err("the agent's old version is stale");
    assert_eq!(err.code, ErrorCode::StaleState);
    assert_eq!(err.current_version, Some(after));

    // The journal names the user, then the refused agent, in that order.
    let journal = invoke(&page, "journal", json!({})).expect("journal");
    let kinds: Vec<(&str, &str)> = journal
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["operation"]["kind"] == "tool")
        .map(|e| (e["actor"]["kind"].as_str().unwrap_or("?"), e["outcome"]["status"].as_str().unwrap_or("?")))
        .collect();
    assert_eq!(kinds, [("user", "ok"), ("agent", "error")]);
    let last_seq = journal.as_array().and_then(|a| a.last()).and_then(|e| e["seq"].as_u64()).expect("a seq");
    assert_eq!(invoke(&page, "journal", json!({"since": last_seq})).expect("journal"), json!([]));
}

/// A refused call rejects with the GB error object, its code first.
#[test]
fn a_refused_call_rejects_with_the_coded_error() {
    let (_app, page) = app();
    let err = invoke(&page, "call", json!({"name": "w-Z__edit_field", "arguments": {}})).expect_err("no such window");
    assert_eq!(err["code"], "window_not_found");
    let err = invoke(&page, "call", json!({"name": "w-A__edit_field", "arguments": {"field": "amount"}}))
        .expect_err("a missing parameter");
    assert_eq!(err["code"], "validation_failed");
    assert_eq!(err["fields"][0]["field"], "value");
}

/// A user-only action is no agent's tool, but the page's `call` runs it: the page is the user,
/// which is why it must be trusted. What it sets stays masked (GB-4.5-2), in the journal too.
#[test]
fn a_user_only_action_runs_through_the_pages_call() {
    let (app, page) = app();
    let agent = tauri::async_runtime::block_on(
        app.bridge().call_tool("w-A__set_payment_password", args(json!({"password": "agent-pw-123"}))),
    );
    assert_eq!(agent.result.expect_err("not the agent's").code, ErrorCode::ActionNotAvailable);

    invoke(&page, "call", json!({"name": "w-A__set_payment_password", "arguments": {"password": "user-pw-456"}}))
        .expect("the user sets the password");
    let windows = invoke(&page, "windows", json!({})).expect("windows").to_string();
    assert!(!windows.contains("user-pw-456") && windows.contains("••••••"));
    let journal = invoke(&page, "journal", json!({})).expect("journal").to_string();
    assert!(!journal.contains("user-pw-456") && !journal.contains("agent-pw-123"), "{journal}");
}

/// The change event names the windows whose version changed, the windows closed, and whether
/// the tool list and the operable set changed.
#[test]
fn the_change_event_names_what_changed() {
    let (app, page) = app();
    let (tx, rx) = mpsc::channel::<Value>();
    app.listen(CHANGED_EVENT, move |event| {
        let _ = tx.send(serde_json::from_str(event.payload()).expect("a JSON payload"));
    });
    let next = || rx.recv_timeout(Duration::from_secs(30)).expect("an event");

    invoke(&page, "call", json!({"name": "w-A__edit_field", "arguments": {"field": "recipient", "value": "Ann"}}))
        .expect("an edit");
    let edited = next();
    assert_eq!(edited["changed"], json!(["w-A"]));
    assert_eq!(edited["closed"], json!([]));
    assert_eq!(edited["toolsChanged"], false);
    assert_eq!(edited["operableChanged"], false);

    invoke(&page, "call", json!({"name": "w-A__edit_field", "arguments": {"field": "amount", "value": "10"}}))
        .expect("an edit");
    assert_eq!(next()["changed"], json!(["w-A"]));
    invoke(&page, "call", json!({"name": "w-A__submit", "arguments": {}})).expect("a valid order submits");
    let opened = next();
    let changed = opened["changed"].as_array().expect("changed");
    let dialog = changed.iter().filter_map(Value::as_str).find(|id| *id != "w-A").expect("the dialog").to_owned();
    assert_eq!(opened["toolsChanged"], true);
    assert_eq!(opened["operableChanged"], true);
    assert_eq!(invoke(&page, "operable", json!({})).expect("operable"), json!([dialog.clone(), "w-C"]));

    invoke(&page, "call", json!({"name": format!("{dialog}__cancel"), "arguments": {}})).expect("cancel");
    let closed = next();
    assert_eq!(closed["closed"], json!([dialog]));
    assert_eq!(closed["toolsChanged"], true);
}

/// The agent's last call, for the highlight, and undo of it as the user.
#[test]
fn last_agent_call_and_undo() {
    let (app, page) = app();
    assert_eq!(invoke(&page, "last_agent_call", json!({})).expect("none yet"), Value::Null);
    let err = invoke(&page, "can_undo", json!({"windowId": "w-A"})).expect_err("nothing to undo");
    assert_eq!(err["code"], "nothing_to_undo");

    let agent = tauri::async_runtime::block_on(
        app.bridge().call_tool("w-A__edit_field", args(json!({"field": "recipient", "value": "Mallory"}))),
    );
    let agent_version = agent.published.window("w-A").expect("w-A").version;
    assert!(agent.result.is_ok());
    let last = invoke(&page, "last_agent_call", json!({})).expect("the agent's call");
    assert_eq!(last["tool"], "w-A__edit_field");
    assert_eq!(last["windowId"], "w-A");
    assert_eq!(last["ok"], true);

    let point = invoke(&page, "can_undo", json!({"windowId": "w-A"})).expect("undoable");
    assert_eq!(point["tool"], "w-A__edit_field");
    assert_eq!(point["versionAfter"], agent_version);
    let undone = invoke(&page, "undo", json!({"windowId": "w-A"})).expect("undone");
    assert_eq!(undone["tool"], "w-A__edit_field");
    assert!(undone["version"].as_i64().expect("a version") > agent_version);
    assert!(!invoke(&page, "windows", json!({})).expect("windows").to_string().contains("Mallory"));
    let err = invoke(&page, "undo", json!({"windowId": "w-C"})).expect_err("reports keep no copies");
    assert_eq!(err["code"], "not_undoable");
    let err = invoke(&page, "undo", json!({"windowId": "w-Z"})).expect_err("no such window");
    assert_eq!(err["code"], "window_not_found");
}

/// A page without the plugin's permission is refused; `mcp_config` needs its own.
#[test]
fn a_page_without_the_permission_is_refused() {
    let (_app, page) = app_allowing(&["windows"]);
    assert!(invoke(&page, "windows", json!({})).is_ok());
    assert!(invoke(&page, "call", json!({"name": "w-A__focus", "arguments": {}})).is_err());
    assert!(invoke(&page, "mcp_config", json!({})).is_err());
}

/// `bridge:default` grants every command but `mcp_config`; the generated permission files are
/// those of every command.
#[test]
fn the_default_set_grants_every_command_but_mcp_config() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("permissions");
    let default = std::fs::read_to_string(dir.join("default.toml")).expect("permissions/default.toml");
    for command in COMMANDS {
        let permission = format!("\"allow-{}\"", command.replace('_', "-"));
        assert_eq!(default.contains(&permission), *command != "mcp_config", "{permission} in bridge:default");
        let generated = dir.join("autogenerated/commands").join(format!("{command}.toml"));
        assert!(generated.is_file(), "{} is generated", generated.display());
    }
}

/// The MCP server answers on loopback at the URL it reports: 401 without the token, the
/// `initialize` with it.
#[test]
fn the_mcp_server_refuses_a_request_without_the_token() {
    let (app, page) = app();
    let config = invoke(&page, "mcp_config", json!({})).expect("mcp_config");
    assert_eq!(config["token"], TOKEN);
    assert_eq!(config["tokenSource"], "options");
    assert_eq!(config["transport"], "http");
    assert_eq!(config, serde_json::to_value(app.mcp_config()).expect("JSON"));
    let url = config["url"].as_str().expect("a URL");
    let authority = url.strip_prefix("http://").and_then(|u| u.strip_suffix("/mcp")).expect("http://ADDR/mcp");
    let server = &config["mcpServers"]["order-editor"];
    assert_eq!(server["headers"]["Authorization"], format!("Bearer {TOKEN}"));

    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    assert_eq!(status(authority, initialize, None), 401);
    assert_eq!(status(authority, initialize, Some(TOKEN)), 200);
}

/// GB-7.1-2 with a real MCP client as the agent (rmcp, over the plugin's HTTP server with the
/// token): the user's call through the page makes the agent's `expectedVersion` stale, and the
/// agent reads the password masked (GB-4.5-2).
#[test]
fn an_mcp_agent_gets_stale_state_after_the_users_call() {
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams, ResourceContents};
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    let (app, page) = app();
    let url = app.mcp_config().url.expect("served over HTTP");
    tauri::async_runtime::block_on(async move {
        let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(TOKEN);
        let agent = ().serve(StreamableHttpClientTransport::from_config(config)).await.expect("initialize");
        let read = agent.read_resource(ReadResourceRequestParams::new("app://windows")).await.expect("resources/read");
        let text = match &read.contents[0] {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            other => panic!("a text resource, not {other:?}"),
        };
        let windows: Value = serde_json::from_str(&text).expect("JSON");
        assert!(text.contains("••••••") && !text.contains("hunter2-s3cret"));
        let seen = windows["windows"][0]["version"].as_i64().expect("w-A's version");

        invoke(&page, "call", json!({"name": "w-A__edit_field", "arguments": {"field": "amount", "value": "7"}}))
            .expect("the user's edit");

        let call = CallToolRequestParams::new("w-A__edit_field")
            .with_arguments(args(json!({"field": "recipient", "value": "Eve", "expectedVersion": seen})));
        let answer = agent.call_tool(call).await.expect("tools/call");
        assert_eq!(answer.is_error, Some(true));
        let error = answer.structured_content.expect("the GB error object");
        assert_eq!(error["code"], "stale_state");
        assert_eq!(error["currentVersion"], version(&page, "w-A"));
        let _ = agent.cancel().await;
    });
}

/// The plugin serves on loopback only, and a port it cannot bind fails the app's start rather
/// than leaving agents without a server.
#[test]
fn a_non_loopback_or_busy_address_fails_the_start() {
    let start = |addr: std::net::SocketAddr| {
        let options = Options::default().token(TOKEN).http_addr(addr);
        mock_builder()
            .plugin(tauri_plugin_bridge::init(app::build(REPORT_ROWS), options))
            .build(mock_context(noop_assets()))
    };
    let Err(refused) = start("0.0.0.0:0".parse().expect("an address")) else { panic!("a non-loopback address") };
    assert!(refused.to_string().contains("only loopback"), "{refused}");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let Err(busy) = start(taken.local_addr().expect("bound")) else { panic!("a busy port") };
    assert!(busy.to_string().contains("cannot serve MCP"), "{busy}");
}

/// POSTs `body` to `http://AUTHORITY/mcp` (with `Authorization: Bearer TOKEN` when given) and
/// returns the response's status.
fn status(authority: &str, body: &str, token: Option<&str>) -> u16 {
    let mut stream = std::net::TcpStream::connect(authority).expect("the server listens");
    stream.set_read_timeout(Some(Duration::from_secs(30))).expect("a timeout");
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, \
         text/event-stream\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("sent");
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).expect("a status line");
    std::str::from_utf8(&head[9..12]).ok().and_then(|s| s.parse().ok()).expect("a status")
}

/// A window whose title an agent can change alone.
#[bridge_runtime::bridge_window(title = title, summary = "A named box")]
pub struct NamedBox {
    #[bridge(text)]
    text: String,
    #[bridge(skip)]
    name: String,
}

impl NamedBox {
    fn title(&self) -> String {
        self.name.clone()
    }
}

#[bridge_runtime::bridge_actions]
impl NamedBox {
    /// Rename the box (its title only).
    #[bridge_runtime::bridge_action]
    pub fn rename(&mut self, name: String) {
        self.name = name;
    }
}

/// A title-only change keeps the window's version (GB-4.2-8 counts summary and blocks), and the
/// change event still names the window, so a page re-rendering what is named shows the new
/// title (a fresh-user trial saw `changed: []`).
#[test]
fn a_title_only_change_names_the_window() {
    let bridge = bridge_runtime::Bridge::builder("box", "1.0").window::<NamedBox>().spawn_headless(|ui| {
        ui.open(NamedBox { text: "t".into(), name: "Box".into() }, bridge_runtime::OpenOptions::window());
    });
    let before = bridge.published();
    let outcome = tauri::async_runtime::block_on(bridge.call_tool("w-1__rename", args(json!({"name": "Renamed"}))));
    assert!(format!("{outcome:?}").contains("Ok"), "{outcome:?}");
    let after = bridge.published();
    let (old, new) = (before.window("w-1").expect("open"), after.window("w-1").expect("open"));
    assert_eq!((old.version, new.title.as_str()), (new.version, "Renamed"), "same version, new title");
    let event = tauri_plugin_bridge::Changed::between(&before, &after).expect("an event");
    assert_eq!(event.changed, ["w-1"]);
}

/// Held by each test that runs the mock runtime's event loop (`App::run_return`): two loops in
/// one process at once can hang the test binary, so they take turns.
static EVENT_LOOP: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs the mock runtime's event loop on this thread (its windows are created there) and
/// `test` beside it on another, with the app's handle; the loop ends when `test` has destroyed
/// every window, and `test`'s panic is this thread's. Takes [`EVENT_LOOP`]'s turn.
fn with_event_loop(app: App<MockRuntime>, test: impl FnOnce(&AppHandle<MockRuntime>) + Send + 'static) {
    let _turn = EVENT_LOOP.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let handle = app.handle().clone();
    let test = std::thread::spawn(move || {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| test(&handle)));
        // The mock event loop ends when its last window is gone.
        for window in handle.webview_windows().into_values() {
            let _ = window.destroy();
        }
        outcome
    });
    app.run_return(|_, _| {});
    if let Err(panic) = test.join().expect("the test thread ends") {
        std::panic::resume_unwind(panic);
    }
}

/// Waits (up to 30 s) until `f` holds; the plugin's event task works beside the test.
fn eventually(what: &str, f: impl Fn() -> bool) {
    for _ in 0..3000 {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("never happened: {what}");
}

/// Issue 21: a bridge window type the app names opens in a Tauri window of its own, labelled
/// with the window id, whose page is scoped to that window; the window manager's close runs
/// the action the app named (as the user), and the Tauri window closes when (and because) the
/// bridge window does. The mock runtime's event loop runs on this thread, the test beside it.
#[test]
fn an_own_window_opens_scoped_and_closes_with_its_bridge_window() {
    let options = Options::default().own_window::<app::ConfirmOrder>(
        OwnWindow::new("dialog.html").size(420.0, 260.0).on_close(OnClose::Call("cancel".into())),
    );
    let (app, page) = app_with(COMMANDS, options);
    with_event_loop(app, move |handle| {
        assert_eq!(invoke(&page, "scope", json!({})).expect("scope"), Value::Null, "the main page is not scoped");
        for (field, value) in [("recipient", "Ann"), ("amount", "10")] {
            invoke(&page, "call", json!({"name": "w-A__edit_field", "arguments": {"field": field, "value": value}}))
                .expect("an edit");
        }
        let submit = || -> String {
            let submitted = invoke(&page, "call", json!({"name": "w-A__submit", "arguments": {}})).expect("submits");
            let dialog = submitted["openedWindowIds"][0].as_str().expect("the dialog's id").to_owned();
            eventually("the dialog's Tauri window opens", || handle.get_webview_window(&dialog).is_some());
            dialog
        };
        let dialog = submit();
        let window = handle.get_webview_window(&dialog).expect("open");
        // (The mock runtime keeps no titles: the WebDriver test under Xvfb sees the real one.)
        assert!(handle.get_webview_window("w-C").is_none(), "reports were not asked for");

        assert_eq!(invoke(&window, "scope", json!({})).expect("scope"), json!({"windowId": dialog}));
        let err = invoke(
            &window,
            "call",
            json!({"name": "w-A__edit_field", "arguments": {"field": "amount", "value": "99"}}),
        )
        .expect_err("another window's tool");
        assert_eq!(err["code"], "action_not_available");
        let err = invoke(&window, "undo", json!({"windowId": "w-A"})).expect_err("another window");
        assert_eq!(err["code"], "out_of_scope");

        invoke(&window, "call", json!({"name": format!("{dialog}__cancel"), "arguments": {}})).expect("its own tool");
        assert!(handle.bridge().published().window(&dialog).is_none());
        // The plugin closes (destroys) the Tauri window; the mock runtime never tells Tauri's
        // window list, so its page's scope is what shows it: the plugin let go of it.
        eventually("the plugin closes the Tauri window", || invoke(&window, "scope", json!({})) == Ok(Value::Null));

        // The window manager's close: the user's `cancel` runs, then the window closes.
        let dialog = submit();
        let window = handle.get_webview_window(&dialog).expect("open");
        window.close().expect("a close request");
        eventually("the WM close cancels the dialog", || handle.bridge().published().window(&dialog).is_none());
        eventually("and the plugin closes its Tauri window", || invoke(&window, "scope", json!({})) == Ok(Value::Null));
        let last = handle.bridge().journal().last().expect("journaled");
        assert_eq!(serde_json::to_value(&last.actor).expect("JSON")["kind"], "user", "{last:?}");
        assert_eq!(serde_json::to_value(&last.operation).expect("JSON")["name"], format!("{dialog}__cancel"));
    });
}

/// Issue 21: every agent call is an event for the page's highlight, a `focus` that changes
/// nothing included (it emitted nothing before).
#[test]
fn every_agent_call_is_an_event() {
    let (app, _page) = app();
    let (tx, rx) = mpsc::channel::<Value>();
    app.listen(AGENT_CALL_EVENT, move |event| {
        let _ = tx.send(serde_json::from_str(event.payload()).expect("a JSON payload"));
    });
    let before = app.bridge().published().generation;
    let focus = tauri::async_runtime::block_on(app.bridge().call_tool("w-A__focus", Map::new()));
    assert!(focus.result.is_ok());
    assert_eq!(app.bridge().published().generation, before, "a focus changes no window");
    let call = rx.recv_timeout(Duration::from_secs(30)).expect("an event");
    assert_eq!(
        (call["tool"].as_str(), call["windowId"].as_str(), call["ok"].as_bool()),
        (Some("w-A__focus"), Some("w-A"), Some(true))
    );
    let refused =
        tauri::async_runtime::block_on(app.bridge().call_tool("w-A__edit_field", args(json!({"field": "nope"}))));
    assert!(refused.result.is_err());
    let call = rx.recv_timeout(Duration::from_secs(30)).expect("an event");
    assert_eq!((call["action"].as_str(), call["ok"].as_bool()), (Some("edit_field"), Some(false)));
}

/// Issue 21 trial: arguments of the wrong type get the documented coded error, not Tauri's
/// deserialization text, and a huge window id is quoted clipped.
#[test]
fn bad_arguments_get_coded_errors() {
    let (_app, page) = app();
    let err = invoke(&page, "call", json!({"name": 5})).expect_err("not a string");
    assert_eq!(err["code"], "validation_failed");
    let err = invoke(&page, "call", json!({"name": "w-A__focus", "arguments": [1]})).expect_err("not an object");
    assert_eq!(err["code"], "validation_failed");
    let err = invoke(&page, "journal", json!({"since": "x"})).expect_err("not a number");
    assert_eq!(err["code"], "invalid_arguments");
    let err = invoke(&page, "undo", json!({})).expect_err("no window id");
    assert_eq!(err["code"], "invalid_arguments");
    let long = "w".repeat(100_000);
    let err = invoke(&page, "can_undo", json!({"windowId": long})).expect_err("no such window");
    assert_eq!(err["code"], "window_not_found");
    assert!(err["message"].as_str().expect("a message").len() < 300, "{err}");
}

/// Issue 21: a bridge window of an own-window type that is already open when the plugin starts
/// (opened by `Options::setup_ui`, like the Order Editor's first report `w-C`) gets its Tauri
/// window too, not only the windows opened later; and it closes with its bridge window.
#[test]
fn a_window_open_at_start_gets_its_own_window() {
    let options = Options::default().own_window::<app::ReportDetails>(OwnWindow::new("report.html"));
    let (app, page) = app_with(COMMANDS, options);
    with_event_loop(app, move |handle| {
        eventually("w-C's Tauri window opens", || handle.get_webview_window("w-C").is_some());
        assert!(handle.get_webview_window("w-A").is_none(), "the editor stays in the main page");
        let window = handle.get_webview_window("w-C").expect("open");
        eventually("its page is scoped", || invoke(&window, "scope", json!({})) == Ok(json!({"windowId": "w-C"})));
        invoke(&page, "call", json!({"name": "w-C__close", "arguments": {}})).expect("the user closes it");
        eventually("the plugin closes the Tauri window", || invoke(&window, "scope", json!({})) == Ok(Value::Null));
    });
}

/// Issue 21: every journal append is an event, the user's refused call that changes nothing
/// included, so the page's journal panel needs no timer.
#[test]
fn every_journal_append_is_an_event() {
    let (app, page) = app();
    let (tx, rx) = mpsc::channel::<Value>();
    app.listen(JOURNAL_EVENT, move |event| {
        let _ = tx.send(serde_json::from_str(event.payload()).expect("a JSON payload"));
    });
    let err = invoke(&page, "call", json!({"name": "w-A__edit_field", "arguments": {"field": "nope", "value": "1"}}))
        .expect_err("no such field");
    assert_eq!(err["code"], "validation_failed");
    let event = rx.recv_timeout(Duration::from_secs(30)).expect("an event");
    let newest = app.bridge().journal().last().expect("journaled");
    assert_eq!(event, json!({"seq": newest.seq}));
}
