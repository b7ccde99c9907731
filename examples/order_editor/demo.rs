//! `--demo`: a scripted agent walks through GB Appendix A over a real MCP connection (rmcp
//! client ↔ this app's server over an in-process pipe) and prints what it sees.

use crate::app::OrderEditor;
use bridge_runtime::Bridge;
use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams, ResourceContents, SubscribeRequestParams};
use rmcp::service::{NotificationContext, RoleClient};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// Records notifications as they arrive, to print them in the transcript.
#[derive(Clone, Default)]
struct Agent {
    seen: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Agent {
    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.seen.lock().unwrap().push(format!("notifications/resources/updated {}", params.uri));
    }
    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.seen.lock().unwrap().push("notifications/tools/list_changed".into());
    }
}

type Client = rmcp::service::RunningService<RoleClient, Agent>;
type Error = Box<dyn std::error::Error + Send + Sync>;

pub async fn run(bridge: Bridge) -> Result<(), Error> {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let server = bridge_runtime::mcp::GuiBridgeServer::new(bridge.clone());
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let agent = Agent::default();
    let client: Client = agent.clone().serve(client_io).await?;
    let info = client.peer_info().ok_or("no server info")?;
    let (name, server_version) =
        info.server_info.as_ref().map_or(("?", "?"), |s| (s.name.as_str(), s.version.as_str()));
    println!("== Connected to '{name}' {server_version}");
    println!("   instructions: {}…", info.instructions.as_deref().unwrap_or("").lines().next().unwrap_or(""));
    // This demo speaks the 2025-11-25 session era, where resources/subscribe is current.
    #[allow(deprecated)]
    client.subscribe(SubscribeRequestParams::new("app://windows")).await?;
    println!("   subscribed to app://windows\n");

    let snap = read(&client).await?;
    print_windows(&snap);
    print_tools(&client).await?;

    step("The agent submits the empty order");
    call(&client, &agent, "w-A__submit", json!({})).await?;

    let v = version(&snap, "w-A");
    step(&format!("The agent fills in the recipient, based on version {v}"));
    call(
        &client,
        &agent,
        "w-A__edit_field",
        json!({"field": "Recipient", "value": "Alice Zhang", "expectedVersion": v}),
    )
    .await?;

    step("Meanwhile the human user changes a quantity in the same window");
    bridge.run(|ui| ui.edit::<OrderEditor, _>("w-A", |e, _| e.products[0].quantity = 3)).await?;
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    for n in agent.seen.lock().unwrap().drain(..) {
        println!("   ← {n}");
    }
    let stale = v + 1;
    step(&format!("The agent writes again with its old version {stale}"));
    call(&client, &agent, "w-A__edit_field", json!({"field": "amount", "value": "$250.00", "expectedVersion": stale}))
        .await?;
    let snap = read(&client).await?;
    let v = version(&snap, "w-A");
    step(&format!("It re-reads app://windows (version is now {v}) and retries"));
    call(&client, &agent, "w-A__edit_field", json!({"field": "amount", "value": "$250.00", "expectedVersion": v}))
        .await?;

    step("The agent submits: a window-level modal pops up");
    let opened = call(&client, &agent, "w-A__submit", json!({"expectedVersion": v + 1})).await?;
    let dialog = opened["openedWindowIds"][0].as_str().unwrap_or("?").to_owned();
    let snap = read(&client).await?;
    print_windows(&snap);
    print_tools(&client).await?;

    step("The blocked Order Editor refuses calls until the dialog is answered");
    call(&client, &agent, "w-A__focus", json!({})).await?;
    step("The agent confirms in the dialog");
    call(&client, &agent, &format!("{dialog}__confirm"), json!({})).await?;

    step("Large data: the report keeps 20 of its rows in state; the agent pages through the rest");
    call(&client, &agent, "w-C__load_rows", json!({"offset": 9_998, "limit": 2})).await?;

    step("App-level action: open another report (its app id '报表 2' is not name-safe)");
    call(&client, &agent, "app__new_report", json!({})).await?;

    step("App-level modal: lock the session; everything else becomes inoperable");
    let locked = call(&client, &agent, "app__lock", json!({})).await?;
    let lock_id = locked["openedWindowIds"][0].as_str().unwrap_or("?").to_owned();
    print_tools(&client).await?;
    call(&client, &agent, &format!("{lock_id}__unlock"), json!({})).await?;

    let snap = read(&client).await?;
    print_windows(&snap);
    let text = serde_json::to_string(&snap)?;
    println!(
        "\n== Redaction: the payment password appears as {:?}; plaintext present: {}",
        bridge_runtime::model::REDACTED,
        text.contains("hunter2")
    );
    client.cancel().await?;
    Ok(())
}

fn step(what: &str) {
    println!("\n-- {what}");
}

async fn read(client: &Client) -> Result<Value, Error> {
    let r = client.read_resource(ReadResourceRequestParams::new("app://windows")).await?;
    match r.contents.first() {
        Some(ResourceContents::TextResourceContents { text, .. }) => Ok(serde_json::from_str(text)?),
        _ => Err("app://windows returned no text".into()),
    }
}

fn version(snap: &Value, id: &str) -> i64 {
    snap["windows"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|w| w["id"] == id)
        .and_then(|w| w["version"].as_i64())
        .unwrap_or(0)
}

fn print_windows(snap: &Value) {
    println!("   app://windows  operableWindowIds = {}", snap["operableWindowIds"]);
    for w in snap["windows"].as_array().into_iter().flatten() {
        println!(
            "   · {} \"{}\" modal={} ownerId={} v{}: {}",
            w["id"].as_str().unwrap_or("?"),
            w["title"].as_str().unwrap_or("?"),
            w["modal"],
            w["ownerId"],
            w["version"],
            w["summary"].as_str().unwrap_or("")
        );
        for b in w["blocks"].as_array().into_iter().flatten() {
            println!("       {}", describe_block(b));
        }
    }
}

fn describe_block(b: &Value) -> String {
    match b["type"].as_str().unwrap_or("") {
        "fields" => {
            let items: Vec<String> = b["items"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|i| format!("{}={}", i["label"].as_str().unwrap_or("?"), i["value"]))
                .collect();
            format!("fields: {}", items.join(", "))
        }
        "table" => format!(
            "table {}: {} rows shown{}",
            b["columns"],
            b["rows"].as_array().map_or(0, Vec::len),
            b["total"].as_u64().map(|t| format!(" of {t}")).unwrap_or_default()
        ),
        "notice" => format!("notice [{}] {}", b["severity"].as_str().unwrap_or("?"), b["text"].as_str().unwrap_or("")),
        "text" => format!("text: {}", b["text"].as_str().unwrap_or("")),
        other => other.to_string(),
    }
}

async fn print_tools(client: &Client) -> Result<(), Error> {
    let tools = client.list_all_tools().await?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    println!("   tools/list ({}): {}", names.len(), names.join(", "));
    Ok(())
}

async fn call(client: &Client, agent: &Agent, name: &str, args: Value) -> Result<Value, Error> {
    println!("   → tools/call {name} {args}");
    let params =
        CallToolRequestParams::new(name.to_owned()).with_arguments(args.as_object().cloned().unwrap_or_default());
    let r = client.call_tool(params).await?;
    for n in agent.seen.lock().unwrap().drain(..) {
        println!("   ← {n}");
    }
    let body = r.structured_content.clone().unwrap_or(Value::Null);
    if r.is_error == Some(true) {
        println!("   ← isError: {body}");
    } else {
        println!("   ← {body}");
    }
    Ok(body)
}
