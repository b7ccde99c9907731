//! The token benchmark: what an agent reads from the examples, in bytes and in `o200k_base`
//! tokens (`bridge_runtime::export::count_tokens`: tiktoken-rs behind the `tokens` feature, which
//! only the root package's dev-dependency turns on), as the servers send it (compact wire JSON).
//!
//! ```text
//! cargo build --examples
//! cargo run --example token_budget                       # every figure, as Markdown tables
//! node tests/ts/aria_session.mjs > /tmp/aria.json          # the accessibility-tree agent (Chromium)
//! cargo run --example token_budget -- --aria /tmp/aria.json  # … and the session beside it
//! ```
//!
//! `--dump DIR` also writes the Order Editor's texts (2025-11-25, no extension) as measured, to
//! count them with another tokenizer. Then the export's per-tool report (`export::tool_costs`).
//!
//! For the Order Editor, the Order Editor with 20 windows (`--extra-editors 18`) and the schema
//! zoo, each a real example binary over stdio, in four cases (2025-11-25 sessions and
//! 2026-07-28 stateless requests, with and without `io.modelcontextprotocol/ui` in the client's
//! capabilities): `tools/list`, each tool in it, `app://windows`, each window in it, and
//! `instructions`. Then the GB Appendix A session (the `--demo` steps) played by an agent that
//! follows GB-6-6 and GB-8.3-3: it re-reads `app://windows` after every
//! `notifications/resources/updated` and `tools/list` after every
//! `notifications/tools/list_changed`, and reads each call's result (`content` and
//! `structuredContent` counted apart). The session runs the Order Editor's own code in this
//! process (served by `mcp::serve_stdio_on` over a pipe), because a human user edits the form
//! in the middle of it, through the host API, as `--demo` does.
//!
//! `--aria FILE`: the accessibility-tree agent's reads, one ARIA snapshot of the acted-on
//! window per step (written by tests/ts/aria_session.mjs), counted with the same tokenizer.

#[path = "../order_editor/app.rs"]
#[allow(dead_code)]
mod app;
mod session;
mod wire;

use clap::Parser;
use std::path::PathBuf;
use wire::{Case, Cost, Wire};

#[derive(Parser, Debug)]
struct Args {
    /// Where the example binaries are (default: beside this one).
    #[arg(long)]
    examples_dir: Option<PathBuf>,
    /// The accessibility-tree agent's snapshots (JSON from tests/ts/aria_session.mjs).
    #[arg(long)]
    aria: Option<PathBuf>,
    /// Also write the Order Editor's texts (2025-11-25, no extension) as measured, one file
    /// each, to this directory: to count them with another tokenizer.
    #[arg(long)]
    dump: Option<PathBuf>,
}

/// An example server and the arguments it is started with.
struct Server {
    label: &'static str,
    bin: &'static str,
    args: &'static [&'static str],
}

const SERVERS: [Server; 3] = [
    Server { label: "Order Editor", bin: "order_editor", args: &[] },
    Server { label: "Order Editor, 20 windows", bin: "order_editor", args: &["--extra-editors", "18"] },
    Server { label: "schema zoo", bin: "schema_zoo", args: &[] },
];

/// What one connection reads before acting.
struct Static {
    list: String,
    windows: String,
    instructions: String,
}

async fn measure(bin: &std::path::Path, args: &[&str], case: Case) -> Result<Static, wire::Error> {
    let mut w = Wire::spawn(bin, args, case).await?;
    let list = w.tools_list().await?;
    let windows = w.windows().await?;
    let instructions = w.instructions();
    w.close().await;
    Ok(Static { list, windows, instructions })
}

fn cell(c: Cost) -> String {
    format!("{} B / **{}** tok", group(c.bytes), group(c.tokens))
}

/// 12345 → "12,345".
fn group(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    if let Err(e) = run(args).await {
        eprintln!("token_budget: {e}");
        std::process::exit(1);
    }
}

async fn run(args: Args) -> Result<(), wire::Error> {
    let dir = match args.examples_dir {
        Some(d) => d,
        None => std::env::current_exe()?.parent().ok_or("no examples dir")?.to_path_buf(),
    };
    println!("## What the agent reads before acting (o200k_base, compact wire JSON)\n");
    println!("| server | case | `tools/list` | per tool | `app://windows` | `instructions` |");
    println!("|---|---|---|---|---|---|");
    let mut detail = None;
    for server in &SERVERS {
        for case in Case::ALL {
            let s = measure(&dir.join(server.bin), server.args, case).await?;
            let tools = wire::tools(&s.list);
            let list = Cost::of(&s.list);
            println!(
                "| {} | {} | {} ({} tools) | {} tok | {} ({} windows) | {} |",
                server.label,
                case.label(),
                cell(list),
                tools.len(),
                group(list.tokens / tools.len().max(1)),
                cell(Cost::of(&s.windows)),
                wire::windows(&s.windows).len(),
                cell(Cost::of(&s.instructions)),
            );
            if server.bin == "order_editor" && server.args.is_empty() && !case.modern {
                detail.get_or_insert_with(Vec::new).push((case, s));
            }
        }
    }
    if let (Some(dir), Some((_, s))) = (&args.dump, detail.as_ref().and_then(|d| d.first())) {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("tools-list.json"), &s.list)?;
        std::fs::write(dir.join("app-windows.json"), &s.windows)?;
        std::fs::write(dir.join("instructions.txt"), &s.instructions)?;
        for (name, raw) in wire::tools(&s.list) {
            std::fs::write(dir.join(format!("tool-{name}.json")), raw)?;
        }
    }
    for (case, s) in detail.iter().flatten() {
        println!("\n### Order Editor, {}: each tool and window\n", case.label());
        println!("| what | bytes / tokens | `outputSchema` | `inputSchema` |");
        println!("|---|---|---|---|");
        let mut w_a = Cost::default();
        for (name, raw) in wire::tools(&s.list) {
            let cost = Cost::of(raw);
            if name.starts_with("w-A__") {
                w_a += cost;
            }
            let part = |key| wire::member(raw, key).map(Cost::of).unwrap_or_default();
            println!("| `{name}` | {} | {} | {} |", cell(cost), cell(part("outputSchema")), cell(part("inputSchema")));
        }
        println!("| `w-A`'s tools together | {} | | |", cell(w_a));
        for (id, raw) in wire::windows(&s.windows) {
            println!("| window `{id}` in `app://windows` | {} | | |", cell(Cost::of(raw)));
        }
    }

    // What the author sees: the export's per-tool report (feature `tokens`), from the catalog.
    let (bridge, _owner) = app::build(10_000).build();
    println!("\n### What the export reports to the Order Editor's author (`export::tool_costs`)\n");
    println!("| tool (window) | tool | description | `inputSchema` | `outputSchema` |");
    println!("|---|---|---|---|---|");
    for c in bridge_runtime::export::tool_costs(&bridge.catalog())? {
        println!(
            "| `{}` ({}) | {} B / **{}** tok | {} tok | {} tok | {} tok |",
            c.name,
            c.window.as_deref().unwrap_or("app"),
            group(c.bytes),
            group(c.tokens),
            c.description_tokens,
            c.input_schema_tokens,
            c.output_schema_tokens
        );
    }

    let aria = match &args.aria {
        Some(path) => Some(session::Aria::load(path)?),
        None => None,
    };
    for case in Case::ALL {
        session::play(case, aria.as_ref()).await?;
    }
    Ok(())
}
