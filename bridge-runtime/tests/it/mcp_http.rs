//! MCP adapter over streamable HTTP at `/mcp` (GB-3-1, GB §10.1): legacy sessions and
//! 2026-07-28 stateless requests on one bridge.

use crate::support::mcp as mcp_support;

use bridge_runtime::Bridge;
use bridge_runtime::mcp::{HttpOptions, ServeError, serve_http, serve_http_on, serve_http_on_with};
use mcp_support::*;
use rmcp::model::{ProtocolVersion, ServerNotification, SubscribeRequestParams, SubscriptionFilter};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::json;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpListener;

async fn start(bridge: &Bridge) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve_http_on(bridge.clone(), listener));
    format!("http://{addr}/mcp")
}

async fn http_legacy(url: &str) -> (Client, Recorder) {
    let rec = Recorder::default();
    let client = rec.clone().serve(StreamableHttpClientTransport::from_uri(url.to_owned())).await.expect("initialize");
    (client, rec)
}

async fn http_modern(url: &str) -> (Client, Recorder) {
    let rec = Recorder::default();
    let client = rec
        .clone()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(url.to_owned()),
            ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
        )
        .await
        .expect("discover");
    (client, rec)
}

// GB-10.1-1/2 (one shared UI, optimistic concurrency between agents), GB-7.1-2 (stale_state
// with currentVersion), GB-10.1-4 (both connections are told), over two legacy HTTP sessions.
#[tokio::test]
#[allow(deprecated)]
async fn two_http_clients_share_one_ui() {
    let bridge = bridge();
    let url = start(&bridge).await;
    let (a, rec_a) = http_legacy(&url).await;
    let (b, rec_b) = http_legacy(&url).await;
    assert_eq!(a.peer_info().unwrap().server_info.as_ref().unwrap().name, "test-app");
    a.subscribe(SubscribeRequestParams::new("app://windows")).await.unwrap();
    b.subscribe(SubscribeRequestParams::new("app://windows")).await.unwrap();

    let v = version_of(&b, "w-1").await;
    let r = call(&a, "w-1__set_amount", Some(json!({"amount": 5, "expectedVersion": v}))).await;
    assert_eq!(r.is_error, Some(false));

    let r = call(&b, "w-1__set_amount", Some(json!({"amount": 6, "expectedVersion": v}))).await;
    assert_eq!(error_code(&r), "stale_state");
    assert_eq!(structured(&r)["currentVersion"], v + 1);

    assert!(rec_a.wait_for(UPDATED, 1).await, "A got {:?}", rec_a.events());
    assert!(rec_b.wait_for(UPDATED, 1).await, "B got {:?}", rec_b.events());

    // A tool-list change reaches both sessions (OQ-GB-14).
    call(&b, "w-1__set_recipient", Some(json!({"recipient": "Hal"}))).await;
    assert!(rec_a.wait_for(TOOLS_CHANGED, 1).await, "A got {:?}", rec_a.events());
    assert!(rec_b.wait_for(TOOLS_CHANGED, 1).await, "B got {:?}", rec_b.events());
    assert!(rec_a.wait_for(UPDATED, 2).await && rec_b.wait_for(UPDATED, 2).await);
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
}

// 2026-07-28 over HTTP: discover, list, read and call on per-POST handlers, and a listen stream
// told about a legacy session's write (mixed eras on one bridge).
#[tokio::test]
async fn modern_http_client_listens_across_eras() {
    let bridge = bridge();
    let url = start(&bridge).await;
    let (modern, _) = http_modern(&url).await;
    assert_eq!(modern.peer_info().unwrap().protocol_version.as_str(), "2026-07-28");
    assert_eq!(
        tool_names(&modern).await,
        ["app__new_editor", "w-1__load_rows", "w-1__set_amount", "w-1__set_recipient"]
    );
    assert_eq!(snapshot(&modern).await["operableWindowIds"], json!(["w-1"]));

    let filter = SubscriptionFilter::builder().tools_list_changed().resource_subscription("app://windows").build();
    let mut sub = modern.listen(filter).await.unwrap();
    let (legacy, _) = http_legacy(&url).await;
    call(&legacy, "w-1__set_recipient", Some(json!({"recipient": "Ivy"}))).await;
    let mut got = Vec::new();
    while got.len() < 2 {
        let n = tokio::time::timeout(Duration::from_secs(5), sub.next()).await.expect("notification").unwrap().unwrap();
        got.push(match n {
            ServerNotification::ResourceUpdatedNotification(_) => UPDATED,
            ServerNotification::ToolListChangedNotification(_) => TOOLS_CHANGED,
            other => panic!("unexpected {other:?}"),
        });
    }
    assert_eq!(got, [UPDATED, TOOLS_CHANGED]);

    // The modern client's own write over HTTP reaches its listen stream too.
    let r = call(&modern, "w-1__submit", None).await;
    assert_eq!(structured(&r)["openedWindowIds"], json!(["w-2"]));
    let n = tokio::time::timeout(Duration::from_secs(5), sub.next()).await.expect("notification").unwrap().unwrap();
    assert!(matches!(n, ServerNotification::ResourceUpdatedNotification(_)));
    sub.cancel().await.unwrap();
    legacy.cancel().await.unwrap();
}

// Loopback only by default.
#[tokio::test]
async fn non_loopback_is_refused_unless_allowed() {
    let bridge = bridge();
    let addr: SocketAddr = "0.0.0.0:0".parse().unwrap();
    assert!(matches!(serve_http(bridge.clone(), addr).await, Err(ServeError::NonLoopback(_))));
    let listener = TcpListener::bind("0.0.0.0:0").await.unwrap();
    assert!(matches!(serve_http_on(bridge.clone(), listener).await, Err(ServeError::NonLoopback(_))));

    // Explicitly allowed: it serves (reach it through loopback here).
    let listener = TcpListener::bind("0.0.0.0:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(serve_http_on_with(bridge.clone(), listener, HttpOptions::default().allow_non_loopback(true)));
    let (client, _) = http_legacy(&format!("http://127.0.0.1:{port}/mcp")).await;
    assert_eq!(tool_names(&client).await.len(), 4);
    client.cancel().await.unwrap();
}
