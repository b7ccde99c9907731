//! MCP adapter: several connections on one bridge (GB §10.1), per-connection subscriptions,
//! and the 2026-07-28 listen stream (acknowledgment race included).

use crate::support::mcp as mcp_support;

use bridge_runtime::mcp::GuiBridgeServer;
use mcp_support::*;
use rmcp::model::{
    ServerConfig, ServerNotification, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::SubscriptionContext;
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::json;
use std::time::Duration;

#[allow(deprecated)]
async fn subscribe(client: &Client) {
    client.subscribe(SubscribeRequestParams::new("app://windows")).await.unwrap();
}

async fn next_notification(sub: &mut rmcp::service::Subscription) -> ServerNotification {
    tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .expect("a notification within 5 s")
        .expect("subscription healthy")
        .expect("subscription open")
}

fn listen_filter() -> SubscriptionFilter {
    SubscriptionFilter::builder().tools_list_changed().resource_subscription("app://windows").build()
}

// GB-10.1-5: unsubscribing stops resources/updated for that connection only;
// OQ-GB-14: tools/list_changed still reaches every connection.
#[tokio::test]
async fn unsubscribe_is_per_connection() {
    let bridge = bridge();
    let (a, rec_a) = legacy_client(&bridge).await;
    let (b, rec_b) = legacy_client(&bridge).await;
    subscribe(&a).await;
    subscribe(&b).await;
    #[allow(deprecated)]
    a.unsubscribe(UnsubscribeRequestParams::new("app://windows")).await.unwrap();

    // A window-content change by B: B is told before its response.
    call(&b, "w-1__set_amount", Some(json!({"amount": 7}))).await;
    assert_eq!(rec_b.events(), [UPDATED]);
    // A's own call flushes whatever A is owed before answering: nothing.
    call(&a, "w-1__load_rows", None).await;
    assert!(rec_a.events().is_empty(), "unsubscribed A got {:?}", rec_a.events());

    // A tool-list change reaches A too, but still without resources/updated.
    call(&b, "w-1__set_recipient", Some(json!({"recipient": "Dan"}))).await;
    call(&a, "w-1__load_rows", None).await;
    assert_eq!(rec_a.events(), [TOOLS_CHANGED]);
    assert_eq!(rec_b.events(), [UPDATED, UPDATED, TOOLS_CHANGED]);

    // Subscribing again resumes updates.
    subscribe(&a).await;
    call(&b, "w-1__set_amount", Some(json!({"amount": 8}))).await;
    call(&a, "w-1__load_rows", None).await;
    assert_eq!(rec_a.events(), [TOOLS_CHANGED, UPDATED]);
}

// GB-10.1-4 across eras: a 2026-07-28 client's listen stream receives the notifications of a
// write made by another (legacy) client, and of the human user's own edit (GB-7.1-5).
#[tokio::test]
async fn modern_listener_sees_other_clients_writes() {
    let bridge = bridge();
    let (modern, _) = modern_client(&bridge).await;
    let mut sub = modern.listen(listen_filter()).await.unwrap();
    let (legacy, _) = legacy_client(&bridge).await;

    call(&legacy, "w-1__set_recipient", Some(json!({"recipient": "Eve"}))).await;
    assert!(matches!(next_notification(&mut sub).await, ServerNotification::ResourceUpdatedNotification(_)));
    assert!(matches!(next_notification(&mut sub).await, ServerNotification::ToolListChangedNotification(_)));

    // The user's edit goes through the same dispatcher and is announced the same way.
    bridge.run(|ui| ui.edit::<Editor, _>("w-1", |e, _| e.amount = 42.0)).await.unwrap().expect("w-1 is an Editor");
    assert!(matches!(next_notification(&mut sub).await, ServerNotification::ResourceUpdatedNotification(_)));

    // Only what the filter asked for: a tools-only listen never sees resources/updated.
    let mut tools_only = modern.listen(SubscriptionFilter::builder().tools_list_changed().build()).await.unwrap();
    assert_eq!(tools_only.acknowledged().resource_subscriptions, None);
    call(&legacy, "w-1__submit", None).await;
    assert!(matches!(next_notification(&mut tools_only).await, ServerNotification::ToolListChangedNotification(_)));
    assert!(matches!(next_notification(&mut sub).await, ServerNotification::ResourceUpdatedNotification(_)));
    assert!(matches!(next_notification(&mut sub).await, ServerNotification::ToolListChangedNotification(_)));
    sub.cancel().await.unwrap();
    tools_only.cancel().await.unwrap();
}

// A filter asking for other resources gets only app://windows acknowledged.
#[tokio::test]
async fn listen_filter_is_reduced_to_what_exists() {
    let bridge = bridge();
    let (modern, _) = modern_client(&bridge).await;
    let filter = SubscriptionFilter::builder().resource_subscriptions(["app://windows", "app://other"]).build();
    let mut sub = modern.listen(filter).await.unwrap();
    assert_eq!(sub.acknowledged().resource_subscriptions.as_deref(), Some(&["app://windows".to_owned()][..]));
    assert_eq!(sub.acknowledged().tools_list_changed, None);
    sub.cancel().await.unwrap();
}

/// The GUI Bridge server with an artificial delay before `listen` runs, to widen the window
/// between rmcp's acknowledgment and `listen` (rmcp-3.11 notes: the race).
struct DelayedListen(GuiBridgeServer);

impl ServerHandler for DelayedListen {
    fn get_info(&self) -> ServerConfig {
        self.0.get_info()
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        self.0.accepted_subscription_filter(requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        tokio::time::sleep(Duration::from_millis(300)).await;
        self.0.listen(context).await
    }
}

// GB-6-1 / GB-10.1-4 despite rmcp acknowledging before listen(): a change made right after
// the acknowledgment, before listen() runs, is still delivered (catch-up from the baseline
// taken in accepted_subscription_filter).
#[tokio::test]
async fn change_between_ack_and_listen_is_not_lost() {
    let bridge = bridge();
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let server = DelayedListen(GuiBridgeServer::new(bridge.clone()));
    tokio::spawn(async move {
        let running = server.serve(server_io).await.unwrap();
        running.waiting().await
    });
    let (modern, _) = modern_client_on(client_io).await;
    let mut sub = modern.listen(listen_filter()).await.unwrap();

    // listen() is still asleep on the server; another client changes the UI now.
    let (other, _) = legacy_client(&bridge).await;
    call(&other, "w-1__set_recipient", Some(json!({"recipient": "Fay"}))).await;

    assert!(matches!(next_notification(&mut sub).await, ServerNotification::ResourceUpdatedNotification(_)));
    assert!(matches!(next_notification(&mut sub).await, ServerNotification::ToolListChangedNotification(_)));
    sub.cancel().await.unwrap();
}

// A listen opened after a change is not told about it (the baseline is the state at
// acknowledgment), and changes coalesce: nothing is sent twice.
#[tokio::test]
async fn listen_starts_from_current_state() {
    let bridge = bridge();
    let (legacy, _) = legacy_client(&bridge).await;
    call(&legacy, "w-1__set_recipient", Some(json!({"recipient": "Gil"}))).await;
    let (modern, _) = modern_client(&bridge).await;
    let mut sub = modern.listen(listen_filter()).await.unwrap();
    call(&legacy, "w-1__set_amount", Some(json!({"amount": 3}))).await;
    // The first notification is the amount change, not the earlier recipient change.
    assert!(matches!(next_notification(&mut sub).await, ServerNotification::ResourceUpdatedNotification(_)));
    // The modern client's own no-op call flushes the stream: nothing else is pending.
    call(&modern, "w-1__load_rows", None).await;
    assert!(futures::FutureExt::now_or_never(sub.next()).is_none(), "unexpected extra notification");
    sub.cancel().await.unwrap();
}
