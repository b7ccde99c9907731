//! GB Appendix A (the Order Editor's `--demo` steps), played by an agent that reads what the
//! protocol tells it to read, and every read counted.

use crate::app;
use crate::wire::{self, Case, Cost, Error, Wire};
use serde_json::{Value, json};
use std::time::Duration;

/// How long the agent waits after each call for the notifications it causes.
const SETTLE: Duration = Duration::from_millis(150);

/// Everything the agent read in one step.
#[derive(Default)]
struct Step {
    what: String,
    /// The window the step acts on (its id in `app://windows`).
    window: String,
    calls: Vec<String>,
    instructions: Cost,
    tools_list: Cost,
    tools_lists: usize,
    windows: Cost,
    windows_reads: usize,
    content: Cost,
    structured: Cost,
}

impl Step {
    /// What an agent whose host forwards `content` reads.
    fn total(&self) -> Cost {
        let mut t = self.instructions;
        t += self.tools_list;
        t += self.windows;
        t += self.content;
        t
    }
}

/// The accessibility-tree agent's reads, one ARIA snapshot per step (tests/ts/aria_session.mjs).
pub struct Aria {
    steps: Vec<(String, String, String)>,
}

impl Aria {
    /// Reads the JSON `{"steps": [{"step", "window", "snapshot"}…]}`.
    pub fn load(path: &std::path::Path) -> Result<Self, Error> {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
        let steps = doc["steps"]
            .as_array()
            .ok_or("no steps[] in the ARIA file")?
            .iter()
            .map(|s| {
                let text = |k: &str| s[k].as_str().unwrap_or_default().to_owned();
                (text("step"), text("window"), text("snapshot"))
            })
            .collect();
        Ok(Self { steps })
    }
}

struct Agent {
    wire: Wire,
    snapshot: Value,
    steps: Vec<Step>,
}

impl Agent {
    fn begin(&mut self, what: &str, window: &str) {
        self.steps.push(Step { what: what.into(), window: window.into(), ..Step::default() });
    }

    fn step(&mut self) -> &mut Step {
        self.steps.last_mut().expect("a step has begun")
    }

    async fn read_windows(&mut self) -> Result<(), Error> {
        let text = self.wire.windows().await?;
        self.snapshot = serde_json::from_str(&text)?;
        let step = self.step();
        step.windows += Cost::of(&text);
        step.windows_reads += 1;
        Ok(())
    }

    async fn list_tools(&mut self) -> Result<(), Error> {
        let list = self.wire.tools_list().await?;
        let step = self.step();
        step.tools_list += Cost::of(&list);
        step.tools_lists += 1;
        Ok(())
    }

    /// GB-6-6, GB-8.3-3: re-read what each notification says has changed.
    async fn react(&mut self) -> Result<(), Error> {
        for n in self.wire.notifications(SETTLE).await {
            match n.method() {
                Some("notifications/resources/updated") => self.read_windows().await?,
                Some("notifications/tools/list_changed") => self.list_tools().await?,
                _ => {}
            }
        }
        Ok(())
    }

    async fn call(&mut self, name: &str, args: Value) -> Result<Value, Error> {
        let raw = self.wire.call(name, args.clone()).await?;
        let part = |key| wire::member(&raw, key).map(Cost::of).unwrap_or_default();
        let (content, structured) = (part("content"), part("structuredContent"));
        let result: Value = serde_json::from_str(&raw)?;
        let step = self.step();
        step.content += content;
        step.structured += structured;
        let outcome = if result["isError"] == true {
            format!("error `{}`", result["structuredContent"]["code"].as_str().unwrap_or("?"))
        } else {
            "ok".into()
        };
        step.calls.push(format!("`{name}` → {outcome}"));
        self.react().await?;
        Ok(result["structuredContent"].clone())
    }

    fn version(&self, id: &str) -> i64 {
        let windows = self.snapshot["windows"].as_array();
        let window = windows.and_then(|all| all.iter().find(|w| w["id"] == id));
        window.and_then(|w| w["version"].as_i64()).unwrap_or(0)
    }
}

/// Plays the session in `case` and prints what the agent read (beside the ARIA agent's).
pub async fn play(case: Case, aria: Option<&Aria>) -> Result<(), Error> {
    let rows = 10_000;
    let bridge = app::build(rows).spawn_headless(move |ui| app::open_initial(ui, rows));
    let (client_io, server_io) = tokio::io::duplex(1 << 22);
    let (server_read, server_write) = tokio::io::split(server_io);
    let server = bridge_runtime::mcp::GuiBridgeServer::new(bridge.clone());
    tokio::spawn(bridge_runtime::mcp::serve_stdio_on(server, server_read, server_write));
    let (client_read, client_write) = tokio::io::split(client_io);
    let wire = Wire::connect(client_read, client_write, case, None).await?;
    let mut a = Agent { wire, snapshot: Value::Null, steps: Vec::new() };

    a.begin("connect, subscribe, read the windows and the tools", "w-A");
    let instructions = a.wire.instructions();
    a.step().instructions = Cost::of(&instructions);
    a.wire.subscribe(case.modern).await?;
    a.read_windows().await?;
    a.list_tools().await?;

    a.begin("submit the empty order", "w-A");
    a.call("w-A__submit", json!({})).await?;

    let v = a.version("w-A");
    a.begin("fill in the recipient", "w-A");
    a.call("w-A__edit_field", json!({"field": "Recipient", "value": "Alice Zhang", "expectedVersion": v})).await?;

    // The human user changes a quantity; the agent's next write was based on what it knew.
    bridge.run(|ui| ui.edit::<app::OrderEditor, _>("w-A", |e, _| e.products[0].quantity = 3)).await?;
    a.begin("write again with its old version (the user edited meanwhile)", "w-A");
    a.call("w-A__edit_field", json!({"field": "amount", "value": "$250.00", "expectedVersion": v + 1})).await?;

    a.begin("re-read the windows and retry", "w-A");
    a.read_windows().await?;
    let v = a.version("w-A");
    a.call("w-A__edit_field", json!({"field": "amount", "value": "$250.00", "expectedVersion": v})).await?;

    a.begin("submit: a window-level modal opens", "w-A");
    let v = a.version("w-A");
    let opened = a.call("w-A__submit", json!({"expectedVersion": v})).await?;
    let dialog = opened["openedWindowIds"][0].as_str().unwrap_or("?").to_owned();

    a.begin("the blocked Order Editor refuses a call", "w-A");
    a.call("w-A__focus", json!({})).await?;

    a.begin("confirm in the dialog", &dialog);
    a.call(&format!("{dialog}__confirm"), json!({})).await?;

    a.begin("page through the report's rows", "w-C");
    a.call("w-C__load_rows", json!({"offset": 9_998, "limit": 2})).await?;

    a.begin("open another report (app-level action)", "app");
    let opened = a.call("app__new_report", json!({})).await?;
    a.step().window = opened["openedWindowIds"][0].as_str().unwrap_or("app").to_owned();

    a.begin("lock the session (app-level modal)", "app");
    let locked = a.call("app__lock", json!({})).await?;
    let lock = locked["openedWindowIds"][0].as_str().unwrap_or("?").to_owned();
    a.step().window = lock.clone();

    a.begin("unlock", &lock);
    a.call(&format!("{lock}__unlock"), json!({})).await?;
    a.wire.close().await;

    print(case, &a.steps, aria);
    Ok(())
}

fn print(case: Case, steps: &[Step], aria: Option<&Aria>) {
    println!("\n### The Appendix A session, {}\n", case.label());
    let aria = aria.filter(|a| a.steps.len() == steps.len());
    let aria_head = if aria.is_some() { " ARIA agent (snapshot of) |" } else { "" };
    println!(
        "| # | step (window) | calls | `tools/list` | `app://windows` | results: `content` | (`structuredContent`) | read in all |{aria_head}"
    );
    println!("|---|---|---|---|---|---|---|---|{}", if aria.is_some() { "---|" } else { "" });
    let (mut total, mut structured, mut aria_total) = (Cost::default(), Cost::default(), Cost::default());
    for (i, s) in steps.iter().enumerate() {
        let aria_cell = match aria {
            Some(a) => {
                let (_, window, snap) = &a.steps[i];
                let c = Cost::of(snap);
                aria_total += c;
                format!(" {} ({window}) |", super::cell(c))
            }
            None => String::new(),
        };
        let instructions = if s.instructions.bytes > 0 {
            format!(" + instructions {}", super::cell(s.instructions))
        } else {
            String::new()
        };
        println!(
            "| {} | {} (`{}`){instructions} | {} | {}× {} | {}× {} | {} | ({}) | {} |{aria_cell}",
            i + 1,
            s.what,
            s.window,
            if s.calls.is_empty() { "—".into() } else { s.calls.join(", ") },
            s.tools_lists,
            super::cell(s.tools_list),
            s.windows_reads,
            super::cell(s.windows),
            super::cell(s.content),
            super::cell(s.structured),
            super::cell(s.total()),
        );
        total += s.total();
        structured += s.structured;
    }
    let aria_cell = if aria.is_some() { format!(" {} |", super::cell(aria_total)) } else { String::new() };
    println!("| | **total** | | | | | ({}) | {} |{aria_cell}", super::cell(structured), super::cell(total));
    if aria.is_some() && aria_total.tokens > 0 {
        println!(
            "\nThe agent read {:.2}× the accessibility-tree agent's tokens ({} vs {}).",
            total.tokens as f64 / aria_total.tokens as f64,
            super::group(total.tokens),
            super::group(aria_total.tokens)
        );
    }
}
