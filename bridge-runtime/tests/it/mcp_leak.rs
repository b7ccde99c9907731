//! MCP adapter: a closed connection leaves no notification task behind (GB-10.1-4's peer
//! registry must not grow with dead sessions). The counter is global to the process, so the test
//! runs alone in a child process (rusty-fork) while the other tests of this binary run on.

use crate::support::mcp as mcp_support;

use bridge_runtime::__internals::live_forwarders;
use bridge_runtime::mcp::serve_http_on_with;
use mcp_support::*;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rusty_fork::rusty_fork_test;
use std::time::Duration;

async fn wait_forwarders(n: usize) -> bool {
    for _ in 0..200 {
        if live_forwarders() == n {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    false
}

rusty_fork_test! {
    #[test]
    fn closed_sessions_stop_their_forwarders() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(closed_sessions_stop_their_forwarders_alone());
    }
}

async fn closed_sessions_stop_their_forwarders_alone() {
    let bridge = bridge();

    // stdio-like connections.
    let mut clients = Vec::new();
    for _ in 0..3 {
        clients.push(legacy_client(&bridge).await.0);
    }
    assert!(wait_forwarders(3).await, "{} forwarders", live_forwarders());
    for c in clients {
        c.cancel().await.unwrap();
    }
    assert!(wait_forwarders(0).await, "{} forwarders left after closing", live_forwarders());

    // Legacy HTTP sessions (the client ends its session with DELETE).
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(serve_http_on_with(bridge.clone(), listener, http_options()));
    let mut clients = Vec::new();
    for _ in 0..2 {
        clients.push(().serve(StreamableHttpClientTransport::from_config(authed(url.clone()))).await.unwrap());
    }
    assert!(wait_forwarders(2).await, "{} forwarders", live_forwarders());
    for c in clients {
        c.cancel().await.unwrap();
    }
    assert!(wait_forwarders(0).await, "{} forwarders left after closing", live_forwarders());

    // The bridge still works, and nothing is sent to the dead peers.
    let (c, rec) = legacy_client(&bridge).await;
    call(&c, "app__new_editor", None).await;
    assert_eq!(rec.events(), [TOOLS_CHANGED]);
}
