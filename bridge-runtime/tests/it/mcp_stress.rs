//! Stressed, with nothing lost (issue #10 item 6, MCP half): 16 MCP clients over streamable HTTP
//! (8 legacy 2025-11-25 sessions subscribed with `resources/subscribe`, 8 stateless 2026-07-28
//! clients with a `subscriptions/listen` stream) and the simulated user (host edits through
//! `Bridge::run`, on a thread of its own) make 10,000 writes in total to one shared ledger
//! window: 4,000 agent `tools/call`s (250 per client), always with `expectedVersion`, and 6,000
//! user edits. Every write appends its own unique token, so the final state proves what ran:
//!
//! * every write is either applied exactly once or rejected with `stale_state` carrying a newer
//!   `currentVersion` (GB-7.1-2), and a rejected token never appears;
//! * versions strictly increase, one per applied write (GB-4.2-8, GB-10.5-1), and the writes
//!   ran one at a time (GB-10.1-3): the token of an agent write accepted at `expectedVersion v`
//!   sits at position `v - v0` of the ledger, so no two accepted writes shared a version;
//! * every client re-reads `app://windows` on each notification (GB-6-6), and each client's
//!   last such read equals the final state: the last change was announced after it took
//!   effect (GB-6-1), to every connection (GB-10.1-4).
//!
//! Bounded: loopback only, fixed operation count, stops by itself: ~13 s wall (~24 s CPU) in a
//! debug build on 2 shared cores; every wait has a timeout (100 s for the writers).

use crate::support::mcp::{authed, http_options};
use bridge_runtime::catalog::{DescribeActions, DescribeWindow, WindowMeta};
use bridge_runtime::mcp::serve_http_on_with;
use bridge_runtime::model::FieldItem;
use bridge_runtime::{
    ActionContext, ActionError, ActionHints, ActionSpec, Block, Bridge, BridgeActions, BridgeWindow, OpenOptions,
    Rendered,
};
use rmcp::model::{
    CallToolRequestParams, ProtocolVersion, ReadResourceRequestParams, ResourceContents,
    ResourceUpdatedNotificationParam, SubscribeRequestParams, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, Peer, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

const CLIENTS: usize = 16;
const OPS_PER_CLIENT: usize = 250;
const USER_OPS: usize = 10_000 - CLIENTS * OPS_PER_CLIENT;
const WINDOW: &str = "w-1";
const APPEND: &str = "w-1__append";

/// A shared ledger: every write appends one token. Renders only the count, an order-sensitive
/// checksum and the last token, so a render costs the same at 10 entries and at 10,000.
struct Ledger {
    tokens: Vec<String>,
    checksum: u64,
}

impl Ledger {
    fn push(&mut self, token: String) -> u64 {
        for b in token.bytes() {
            self.checksum = (self.checksum ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.tokens.push(token);
        self.tokens.len() as u64
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Append {
    /// The token to append; unique per write.
    token: String,
}

#[derive(Serialize, schemars::JsonSchema)]
struct Position {
    /// 1-based position of the appended token.
    position: u64,
}

impl DescribeWindow for Ledger {
    fn window_meta() -> WindowMeta {
        WindowMeta { type_name: "Ledger".into(), title: "Ledger".into(), blocks: vec![] }
    }
}

impl BridgeWindow for Ledger {
    fn render(&self) -> Rendered {
        Rendered {
            title: "Ledger".into(),
            summary: Some(format!("A ledger of {} entries", self.tokens.len())),
            blocks: vec![Block::Fields {
                id: Some("totals".into()),
                items: vec![
                    FieldItem::new("Entries", json!(self.tokens.len())),
                    FieldItem::new("Checksum", json!(format!("{:016x}", self.checksum))),
                    FieldItem::new("Last entry", json!(self.tokens.last())),
                ],
            }],
        }
    }
}

impl DescribeActions for Ledger {
    fn action_specs_for(window_level: bool) -> Vec<ActionSpec> {
        vec![
            ActionSpec::new("append")
                .description("Append an entry to the ledger")
                .hints(ActionHints { read_only: false, destructive: false, idempotent: false, open_world: false })
                .params::<Append>()
                .returns::<Position>()
                .finish(window_level),
        ]
    }
}

impl BridgeActions for Ledger {
    fn action_available(&self, _action: &str) -> bool {
        true
    }
    fn invoke_action(
        &mut self,
        action: &str,
        args: Map<String, Value>,
        _cx: &mut ActionContext<'_>,
    ) -> Result<Option<Value>, ActionError> {
        match action {
            "append" => {
                let p: Append = serde_json::from_value(Value::Object(args)).map_err(ActionError::from_deserialize)?;
                let position = self.push(p.token);
                Ok(Some(json!(Position { position })))
            }
            other => Err(ActionError::not_available(format!("no action {other}"))),
        }
    }
}

fn ledger_bridge() -> Bridge {
    Bridge::builder("stress-app", "1.0.0").window::<Ledger>().spawn_headless(|ui| {
        ui.open(Ledger { tokens: Vec::new(), checksum: 0xcbf2_9ce4_8422_2325 }, OpenOptions::window());
    })
}

/// Forwards every `resources/updated` to the client's reader task.
#[derive(Clone)]
struct Notified(mpsc::UnboundedSender<()>);

impl ClientHandler for Notified {
    async fn on_resource_updated(
        &self,
        _params: ResourceUpdatedNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(());
    }
}

type Client = RunningService<RoleClient, Notified>;

/// The ledger window as `app://windows` shows it to `peer`.
async fn read_window(peer: &Peer<RoleClient>) -> Value {
    let r = peer.read_resource(ReadResourceRequestParams::new("app://windows")).await.expect("resources/read");
    let ResourceContents::TextResourceContents { text, .. } = &r.contents[0] else {
        panic!("expected text contents");
    };
    let snapshot: Value = serde_json::from_str(text).expect("snapshot JSON");
    window_of(&snapshot)
}

fn window_of(snapshot: &Value) -> Value {
    snapshot["windows"].as_array().and_then(|w| w.iter().find(|w| w["id"] == WINDOW)).cloned().expect("the ledger")
}

/// What one client did.
#[derive(Default)]
struct Log {
    /// `(token, expectedVersion, position)` of each applied write.
    accepted: Vec<(String, i64, u64)>,
    rejected: Vec<String>,
}

/// Reads made on notifications, in order.
type Reads = Arc<Mutex<Vec<Value>>>;

/// Re-reads the window after each burst of notifications (GB-6-6), as an agent would: a
/// notification, a short pause for the burst to settle, then one read.
fn spawn_reader(peer: Peer<RoleClient>, mut rx: mpsc::UnboundedReceiver<()>, reads: Reads) {
    tokio::spawn(async move {
        while rx.recv().await.is_some() {
            tokio::time::sleep(Duration::from_millis(50)).await;
            while rx.try_recv().is_ok() {}
            let window = read_window(&peer).await;
            reads.lock().unwrap().push(window);
        }
    });
}

async fn connect(url: &str, modern: bool, tx: mpsc::UnboundedSender<()>) -> Client {
    let transport = StreamableHttpClientTransport::from_config(authed(url.to_owned()));
    if modern {
        Notified(tx)
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
            )
            .await
            .expect("discover")
    } else {
        Notified(tx).serve(transport).await.expect("initialize")
    }
}

/// `OPS_PER_CLIENT` appends with `expectedVersion`, starting from a read; on `stale_state` the
/// next write is based on `currentVersion`.
async fn write_loop(client: &Client, n: usize) -> Log {
    let mut log = Log::default();
    let mut expected = read_window(client.peer()).await["version"].as_i64().expect("version");
    for i in 0..OPS_PER_CLIENT {
        let token = format!("c{n}-{i}");
        let mut args = Map::new();
        args.insert("token".into(), json!(token));
        args.insert("expectedVersion".into(), json!(expected));
        let r = client
            .call_tool(CallToolRequestParams::new(APPEND).with_arguments(args))
            .await
            .expect("tools/call is never a JSON-RPC error");
        let content = r.structured_content.clone().expect("structuredContent");
        if r.is_error == Some(true) {
            assert_eq!(content["code"], "stale_state", "GB-7.1-2: the only failure is stale_state: {content}");
            let current = content["currentVersion"].as_i64().expect("currentVersion");
            assert!(current > expected, "GB-4.2-8: currentVersion {current} after expectedVersion {expected}");
            log.rejected.push(token);
            expected = current;
        } else {
            let position = content["result"]["position"].as_u64().expect("position");
            log.accepted.push((token, expected, position));
            expected += 1;
        }
    }
    log
}

// GB-7.1-2, GB-4.2-8, GB-10.1-3, GB-6-1, GB-10.1-4 under load: see the module docs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_clients_and_the_user_lose_nothing() {
    let bridge = ledger_bridge();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(serve_http_on_with(bridge.clone(), listener, http_options()));
    let v0 = window_of(&serde_json::from_str(&bridge.published().snapshot_json()).unwrap())["version"]
        .as_i64()
        .expect("initial version");

    // Connect and subscribe everyone before the first write.
    let mut clients = Vec::new();
    let mut subscriptions = Vec::new();
    let mut reads = Vec::new();
    for n in 0..CLIENTS {
        let modern = n % 2 == 1;
        let (tx, rx) = mpsc::unbounded_channel();
        let client = connect(&url, modern, tx.clone()).await;
        if modern {
            let filter = SubscriptionFilter::builder().resource_subscription("app://windows").build();
            let mut sub = client.listen(filter).await.expect("listen");
            subscriptions.push(tokio::spawn(async move {
                while let Ok(Some(_)) = sub.next().await {
                    if tx.send(()).is_err() {
                        break;
                    }
                }
            }));
        } else {
            #[allow(deprecated)]
            client.subscribe(SubscribeRequestParams::new("app://windows")).await.expect("subscribe");
        }
        let log: Reads = Arc::default();
        spawn_reader(client.peer().clone(), rx, log.clone());
        reads.push(log);
        clients.push(Arc::new(client));
    }

    // The writers and the user, all at once.
    let writers: Vec<_> = clients
        .iter()
        .enumerate()
        .map(|(n, client)| {
            let client = client.clone();
            tokio::spawn(async move { write_loop(&client, n).await })
        })
        .collect();
    // The user on a thread of its own, as a GUI's event loop would be: its pace does not depend
    // on the test runtime's scheduling.
    let user_bridge = bridge.clone();
    let user = tokio::task::spawn_blocking(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("user runtime");
        let mut done = Vec::new();
        for i in 0..USER_OPS {
            let token = format!("user-{i}");
            let t = token.clone();
            let position = rt
                .block_on(user_bridge.run(move |ui| ui.edit::<Ledger, _>(WINDOW, |ledger, _| ledger.push(t))))
                .expect("the UI owner is alive")
                .expect("w-1 is the ledger");
            done.push((token, position));
            std::thread::sleep(Duration::from_micros(300));
        }
        done
    });
    let mut logs = Vec::new();
    for w in writers {
        logs.push(tokio::time::timeout(Duration::from_secs(100), w).await.expect("writers finish").unwrap());
    }
    let user_log = tokio::time::timeout(Duration::from_secs(100), user).await.expect("user finishes").unwrap();

    // What the ledger holds, from the UI itself.
    let tokens = bridge
        .run(|ui| ui.window::<Ledger>(WINDOW).map(|l| l.tokens.clone()))
        .await
        .unwrap()
        .expect("the ledger is open");
    let final_window = window_of(&serde_json::from_str(&bridge.published().snapshot_json()).unwrap());
    let final_version = final_window["version"].as_i64().unwrap();

    let accepted: usize = logs.iter().map(|l| l.accepted.len()).sum();
    let rejected: usize = logs.iter().map(|l| l.rejected.len()).sum();
    assert_eq!(accepted + rejected + user_log.len(), 10_000, "every operation answered");
    assert!(accepted > 0 && rejected > 0, "the run exercised both outcomes: {accepted} applied, {rejected} stale");

    // Applied exactly once, rejected never (GB-7.1-2); serialized, one version each (GB-10.1-3,
    // GB-4.2-8).
    assert_eq!(tokens.len(), accepted + user_log.len(), "one entry per applied write");
    assert_eq!(tokens.iter().collect::<HashSet<_>>().len(), tokens.len(), "no entry twice");
    assert_eq!(final_version, v0 + tokens.len() as i64, "one version per applied write");
    for log in &logs {
        for (token, expected, position) in &log.accepted {
            assert_eq!(*position as i64, expected - v0 + 1, "{token} applied at expectedVersion {expected}");
            assert_eq!(&tokens[*position as usize - 1], token);
        }
        let present: HashSet<&String> = tokens.iter().collect();
        for token in &log.rejected {
            assert!(!present.contains(token), "rejected {token} was applied");
        }
    }
    for (token, position) in &user_log {
        assert_eq!(&tokens[*position as usize - 1], token, "the user's edit applied once, in order");
    }

    // Each client's reads only move forward, and its last read after its last notification is
    // the final state (GB-6-1, GB-10.1-4).
    for (n, reads) in reads.iter().enumerate() {
        let mut last = None;
        for _ in 0..400 {
            last = reads.lock().unwrap().last().cloned();
            if last.as_ref() == Some(&final_window) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert_eq!(last.as_ref(), Some(&final_window), "client {n}'s last read is not the final state");
        let versions: Vec<i64> = reads.lock().unwrap().iter().map(|w| w["version"].as_i64().unwrap()).collect();
        assert!(versions.windows(2).all(|w| w[0] <= w[1]), "client {n} read versions going back: {versions:?}");
    }

    for s in subscriptions {
        s.abort();
    }
    for client in clients {
        if let Ok(client) = Arc::try_unwrap(client) {
            let _ = client.cancel().await;
        }
    }
}
