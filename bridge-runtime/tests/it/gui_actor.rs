//! Who made each operation: the actor the dispatcher hands an action, for every way an
//! operation arrives — a stdio connection, a legacy HTTP session, a named HTTP token (either
//! era), the user through the test kit, the app's own code (GB-10.1-2: agents and the user
//! share one UI; MA-1-2: no session in the 2026-07-28 era; MA-2-5: `clientInfo` is recorded,
//! never identity; MA-11-4: a call over MCP is never the user's).

use bridge_runtime::gui::{Actor, AgentActor, ClientInfo, Transport};
use bridge_runtime::mcp::{HttpOptions, serve_http_on_with};
use bridge_runtime::prelude::*;
use bridge_runtime::testing::TestApp;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// A window whose action reports who called it.
#[bridge_window(title = "Probe", summary = "Touched {touches} times")]
pub struct Probe {
    #[bridge(text)]
    touches: u32,
    /// The actor of the last edit, as JSON.
    #[bridge(skip)]
    last: String,
}

#[bridge_actions]
impl Probe {
    /// Report who is calling, as JSON text.
    #[bridge_action(read_only)]
    pub fn whoami(&self, cx: &mut ActionContext) -> String {
        serde_json::to_string(cx.actor()).unwrap_or_default()
    }
}

fn builder() -> bridge_runtime::BridgeBuilder {
    Bridge::builder("probe", "1.0").window::<Probe>()
}

fn open(ui: &mut Ui) {
    ui.open(Probe { touches: 0, last: String::new() }, OpenOptions::window());
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// The actor an MCP client's `w-1__whoami` reached the dispatcher with.
async fn whoami(client: &rmcp::service::RunningService<rmcp::RoleClient, impl rmcp::ClientHandler>) -> Value {
    let result = client.call_tool(CallToolRequestParams::new("w-1__whoami")).await.expect("tools/call");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let text = result.structured_content.as_ref().and_then(|s| s["result"].as_str()).unwrap_or_default().to_owned();
    parse(&text)
}

/// A client info handler announcing `name`.
#[derive(Clone)]
struct Named(&'static str);

impl rmcp::ClientHandler for Named {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut info = rmcp::model::ClientConfig::default();
        info.client_info = rmcp::model::Implementation::new(self.0, "2.0");
        info
    }
}

// The test kit: `call` is the in-process agent, `user_call` the user, `call_as(App)` and
// `edit_as(App)` the app's own code, and `Ui::edit` the user (GB-10.1-2).
#[test]
fn the_test_kit_names_the_agent_the_user_and_the_app() {
    let mut app = TestApp::new(builder(), open);
    let agent = app.call("w-1__whoami", Value::Null).expect_ok();
    assert_eq!(
        parse(agent.result.as_ref().and_then(Value::as_str).unwrap_or_default()),
        json!({"kind": "agent", "transport": "inProcess", "connection": null, "token": null, "clientInfo": null})
    );
    let user = app.user_call("w-1__whoami", Value::Null).expect_ok();
    assert_eq!(parse(user.result.as_ref().and_then(Value::as_str).unwrap_or_default()), json!({"kind": "user"}));
    let by_app = app.call_as(Actor::App, "w-1__whoami", Value::Null).expect_ok();
    assert_eq!(parse(by_app.result.as_ref().and_then(Value::as_str).unwrap_or_default()), json!({"kind": "app"}));

    let seen = app.user::<Probe, _>("w-1", |p, cx| {
        p.touches += 1;
        cx.actor().clone()
    });
    assert_eq!(seen, Actor::User);
    let seen = app.edit_as::<Probe, _>(Actor::App, "w-1", |p, cx| {
        p.touches += 1;
        p.last = serde_json::to_string(cx.actor()).unwrap_or_default();
        (cx.actor().clone(), cx.is_user())
    });
    assert_eq!(seen, (Actor::App, true), "the app is not an agent");
    let agent = Actor::Agent(AgentActor::in_process().with_connection("x").with_token("t"));
    let seen = app.edit_as::<Probe, _>(agent.clone(), "w-1", |_, cx| (cx.actor().clone(), cx.is_user()));
    assert_eq!(seen, (agent, false));
}

// An agent is held to what agents may do; the user and the app are not: a window marked
// failed refuses only the agent.
#[test]
fn only_an_agent_is_refused_by_a_failed_window() {
    let mut app = TestApp::new(builder(), open);
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        app.ui().edit::<Probe, _>("w-1", |_, _| panic!("boom"));
    }));
    app.check();
    assert!(app.ui().failure("w-1").is_some());
    app.call("w-1__whoami", Value::Null).expect_err(bridge_runtime::model::ErrorCode::ActionNotAvailable);
    app.user_call("w-1__whoami", Value::Null).expect_ok();
    app.call_as(Actor::App, "w-1__whoami", Value::Null).expect_ok();
}

// The host's `Bridge::call_tool` is the in-process agent; `call_tool_as` passes the actor given.
#[tokio::test]
async fn bridge_call_tool_is_the_in_process_agent() {
    let bridge = builder().spawn_headless(open);
    let out = bridge.call_tool("w-1__whoami", Default::default()).await.result.expect("ok");
    assert_eq!(parse(out.result.as_ref().and_then(Value::as_str).unwrap_or_default())["transport"], "inProcess");
    let out = bridge.call_tool_as(Actor::User, "w-1__whoami", Default::default()).await.result.expect("ok");
    assert_eq!(parse(out.result.as_ref().and_then(Value::as_str).unwrap_or_default()), json!({"kind": "user"}));
}

// Stdio: one connection id per served connection, the same for every call on it; clientInfo
// recorded as sent (MA-2-5).
#[tokio::test]
async fn each_stdio_connection_is_its_own_agent() {
    let bridge = builder().spawn_headless(open);
    let mut clients = Vec::new();
    for name in ["agent-a", "agent-b"] {
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(server_io);
        tokio::spawn(bridge_runtime::mcp::serve_stdio_on(bridge.clone(), read, write));
        clients.push(Named(name).serve(client_io).await.expect("initialize"));
    }
    let a = whoami(&clients[0]).await;
    let b = whoami(&clients[1]).await;
    for (seen, name) in [(&a, "agent-a"), (&b, "agent-b")] {
        assert_eq!(seen["kind"], "agent");
        assert_eq!(seen["transport"], "stdio");
        assert!(seen["connection"].as_str().is_some_and(|c| c.starts_with("stdio-")), "{seen}");
        assert_eq!(seen["token"], Value::Null);
        assert_eq!(seen["clientInfo"], json!({"name": name, "version": "2.0"}));
    }
    assert_ne!(a["connection"], b["connection"], "two connections, two agents");
    assert_eq!(whoami(&clients[0]).await["connection"], a["connection"], "stable on one connection");
    // The journal tells the two connections' calls apart.
    let journaled: Vec<Value> = bridge
        .journal()
        .entries()
        .iter()
        .filter(|e| e.actor.is_agent())
        .map(|e| serde_json::to_value(&e.actor).unwrap()["connection"].clone())
        .collect();
    assert_eq!(journaled, [a["connection"].clone(), b["connection"].clone(), a["connection"].clone()]);
}

async fn start_http(bridge: &Bridge) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let options = HttpOptions::default()
        .named_token("planner", "planner-secret-0123456789")
        .named_token("reviewer", "reviewer-secret-0123456789");
    tokio::spawn(serve_http_on_with(bridge.clone(), listener, options));
    format!("http://{addr}/mcp")
}

fn config(url: &str, secret: &str) -> StreamableHttpClientTransportConfig {
    StreamableHttpClientTransportConfig::with_uri(url).auth_header(secret)
}

// Legacy HTTP: the session id is the connection, the named token's label is recorded; two
// sessions are two agents, each stable across its calls.
#[tokio::test]
async fn each_legacy_http_session_is_its_own_agent_with_its_token() {
    let bridge = builder().spawn_headless(open);
    let url = start_http(&bridge).await;
    let a = Named("legacy-a")
        .serve(StreamableHttpClientTransport::from_config(config(&url, "planner-secret-0123456789")))
        .await
        .expect("initialize");
    let b = Named("legacy-b")
        .serve(StreamableHttpClientTransport::from_config(config(&url, "reviewer-secret-0123456789")))
        .await
        .expect("initialize");
    let seen_a = whoami(&a).await;
    let seen_b = whoami(&b).await;
    for (seen, token, name) in [(&seen_a, "planner", "legacy-a"), (&seen_b, "reviewer", "legacy-b")] {
        assert_eq!(seen["transport"], "http", "{seen}");
        assert_eq!(seen["token"], token, "{seen}");
        assert_eq!(seen["clientInfo"]["name"], name, "{seen}");
        let session = seen["connection"].as_str().unwrap_or_default();
        assert!(!session.is_empty() && !session.starts_with("conn-"), "the session id: {seen}");
    }
    assert_ne!(seen_a["connection"], seen_b["connection"], "two sessions, two agents");
    assert_eq!(whoami(&a).await["connection"], seen_a["connection"], "stable within the session");
    // The journal tells the two sessions' calls apart, by session and by token.
    let journaled: Vec<(Value, Value)> =
        agent_entries(&bridge).into_iter().map(|a| (a["connection"].clone(), a["token"].clone())).collect();
    assert_eq!(
        journaled,
        [
            (seen_a["connection"].clone(), json!("planner")),
            (seen_b["connection"].clone(), json!("reviewer")),
            (seen_a["connection"].clone(), json!("planner")),
        ]
    );
}

/// The actors of the journal's agent entries, as JSON, oldest first.
fn agent_entries(bridge: &Bridge) -> Vec<Value> {
    bridge
        .journal()
        .entries()
        .iter()
        .filter(|e| e.actor.is_agent())
        .map(|e| serde_json::to_value(&e.actor).unwrap_or(Value::Null))
        .collect()
}

// 2026-07-28 HTTP: no session anywhere (MA-1-2), so the named token tells agents apart;
// clientInfo comes from the request's `_meta` and is only recorded (MA-2-5).
#[tokio::test]
async fn modern_http_agents_are_told_apart_by_their_token_alone() {
    let bridge = builder().spawn_headless(open);
    let url = start_http(&bridge).await;
    let modern = || ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let a = Named("modern-a")
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config(&url, "planner-secret-0123456789")),
            modern(),
        )
        .await
        .expect("discover");
    let b = Named("modern-b")
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config(&url, "reviewer-secret-0123456789")),
            modern(),
        )
        .await
        .expect("discover");
    let seen_a = whoami(&a).await;
    let seen_b = whoami(&b).await;
    assert_eq!(
        seen_a,
        json!({"kind": "agent", "transport": "http", "connection": null, "token": "planner",
               "clientInfo": {"name": "modern-a", "version": "2.0"}})
    );
    assert_eq!(seen_b["token"], "reviewer");
    assert_eq!(seen_b["connection"], Value::Null);
    // The journal tells them apart by token alone.
    let tokens: Vec<Value> = agent_entries(&bridge).into_iter().map(|a| a["token"].clone()).collect();
    assert_eq!(tokens, [json!("planner"), json!("reviewer")]);
}

// The public shapes: an agent built by hand, and the transports' names.
#[test]
fn actor_shapes() {
    let agent = AgentActor::new(Transport::Other)
        .with_connection("conn-7")
        .with_client_info(ClientInfo::new("x", "1"))
        .with_token("default");
    let actor: Actor = agent.clone().into();
    assert!(actor.is_agent() && !actor.is_user() && !actor.is_app());
    assert_eq!(actor.agent(), Some(&agent));
    assert_eq!(
        serde_json::to_value(&actor).unwrap(),
        json!({"kind": "agent", "transport": "other", "connection": "conn-7", "token": "default",
               "clientInfo": {"name": "x", "version": "1"}})
    );
    assert!(Actor::User.is_user() && Actor::App.is_app());
}
