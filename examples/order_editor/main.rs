//! GB Appendix A: the Order Editor, served over MCP.
//!
//! ```text
//! cargo run --example order_editor                         # MCP over stdio (for desktop hosts)
//! cargo run --example order_editor -- --http 127.0.0.1:8765 # streamable HTTP at /mcp (bearer token)
//! cargo run --example order_editor -- --http localhost:8765   # the same (localhost binds 127.0.0.1)
//! cargo run --example order_editor -- --simulate-user      # a "human" edits the form too
//! cargo run --example order_editor -- --demo               # scripted agent session, printed
//! cargo run --example order_editor -- --journal j.jsonl    # every operation appended to j.jsonl
//! ```

mod app;
mod demo;
#[path = "../shared/serve_flags.rs"]
mod serve_flags;

use clap::Parser;
use std::net::SocketAddr;
use std::time::Duration;

/// The Order Editor example of the GUI Bridge protocol.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Serve streamable HTTP at http://ADDR/mcp (loopback only) instead of stdio; ADDR is
    /// 127.0.0.1:PORT, [::1]:PORT or localhost:PORT (which binds 127.0.0.1). Clients send
    /// `Authorization: Bearer TOKEN`: the token is $BRIDGE_MCP_TOKEN when set, else generated and
    /// printed to stderr (with the 0600 file it is also written to, deleted on Ctrl-C or SIGTERM).
    #[arg(long, value_name = "ADDR", value_parser = serve_flags::parse_http_addr)]
    http: Option<SocketAddr>,
    /// With --http: serve without an access token, so any local user or process can drive the
    /// app (test rigs only).
    #[arg(long, requires = "http")]
    no_token: bool,
    /// Also edit the Order Editor on a timer, as a human user would: changes a product quantity
    /// every few seconds (watch for stale_state and notifications).
    #[arg(long)]
    simulate_user: bool,
    /// Run a scripted agent session in-process and print what it sees.
    #[arg(long)]
    demo: bool,
    /// Append every operation (the agent's calls, the user's edits, the app's own changes) to
    /// FILE as JSON lines, each written before the operation's result returns: the audit trail.
    /// Secrets are masked as in the snapshot.
    #[arg(long, value_name = "FILE")]
    journal: Option<std::path::PathBuf>,
    /// Only the user confirms orders: "Confirm order" is never a tool and an agent's
    /// `{winId}__confirm` gets action_not_available (there is no user here, so orders stay
    /// unconfirmed; the egui example has the switch in its window).
    #[arg(long)]
    user_confirms: bool,
    /// Benchmarks only (BENCHMARKS.md, "The journal's cost per call"): keep no journal at all.
    #[arg(long, hide = true, conflicts_with = "journal")]
    no_journal: bool,
    /// Benchmarks only (BENCHMARKS.md, "Undo copies"): agent changes kept per window for undo
    /// (0: no copies).
    #[arg(long, hide = true, default_value_t = bridge_runtime::gui::DEFAULT_UNDO_DEPTH)]
    undo_depth: usize,
    /// Rows in each "Report Details" window.
    #[arg(long, default_value_t = 10_000)]
    rows: usize,
    /// Seconds between the simulated user's edits.
    #[arg(long, default_value_t = 5)]
    user_every: u64,
    /// Open this many more Order Editor windows at start (w-1, w-2, …), for measuring a call's
    /// cost with many windows open (BENCHMARKS.md, "Dispatch").
    #[arg(long, default_value_t = 0)]
    extra_editors: usize,
    /// Benchmarks only (BENCHMARKS.md, "Dispatch"): serve stdio with rmcp's own transport,
    /// without bridge's pre-layer, to measure what the pre-layer costs. Calls then run in
    /// scheduling order and malformed input goes unanswered.
    #[arg(long, hide = true)]
    stdio_without_prelayer: bool,
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    serve_flags::init_logging();

    let (rows, extra, user_confirms) = (args.rows, args.extra_editors, args.user_confirms);
    let mut builder = app::build(rows).journal(!args.no_journal).undo_depth(args.undo_depth);
    if let Some(path) = &args.journal {
        match bridge_runtime::gui::JsonLinesSink::open(path) {
            Ok(sink) => builder = builder.journal_sink(sink),
            Err(e) => {
                eprintln!("order_editor: cannot open the journal {}: {e}", path.display());
                std::process::exit(1);
            }
        }
    }
    let bridge = builder.spawn_headless(move |ui| {
        app::open_initial(ui, rows);
        if user_confirms {
            app::set_user_confirms(ui, bridge_runtime::gui::Actor::App, true);
        }
        for i in 0..extra {
            ui.open(app::OrderEditor::new(20_000 + i as u32), bridge_runtime::OpenOptions::window());
        }
    });

    if args.demo {
        if let Err(e) = demo::run(bridge).await {
            eprintln!("demo failed: {e}");
            std::process::exit(1);
        }
        return;
    }
    if args.simulate_user {
        tokio::spawn(simulate_user(bridge.clone(), Duration::from_secs(args.user_every.max(1))));
    }
    let http_options = if args.no_token {
        bridge_runtime::mcp::HttpOptions::default().no_token()
    } else {
        bridge_runtime::mcp::HttpOptions::default()
    };
    let served = match args.http {
        Some(addr) if !addr.ip().is_loopback() => {
            eprintln!(
                "order_editor: refusing to serve on {addr}: only loopback addresses (127.0.0.1, [::1]) are allowed"
            );
            std::process::exit(2);
        }
        Some(addr) => {
            // Bound before it says so, so a busy port is the only message.
            let listener = tokio::net::TcpListener::bind(addr).await.unwrap_or_else(|e| {
                eprintln!("order_editor: cannot listen on {addr}: {e}");
                std::process::exit(1);
            });
            eprintln!("order_editor: serving MCP at http://{addr}/mcp (Ctrl-C to stop)");
            // Stopping drops the server: its connections close, a generated token's file goes.
            tokio::select! {
                served = bridge_runtime::mcp::serve_http_on_with(bridge, listener, http_options) => served,
                () = serve_flags::stop_signal() => Ok(()),
            }
        }
        None if args.stdio_without_prelayer => {
            use rmcp::ServiceExt;
            let served = async {
                let running = bridge_runtime::mcp::GuiBridgeServer::new(bridge).serve(rmcp::transport::stdio()).await?;
                running.waiting().await?;
                Ok::<_, bridge_runtime::mcp::ServeError>(())
            };
            served.await
        }
        None => {
            eprintln!("order_editor: serving MCP over stdio; an MCP host talks to it on stdin/stdout (Ctrl-D to stop)");
            bridge_runtime::mcp::serve_stdio(bridge).await
        }
    };
    if let Err(e) = served {
        eprintln!("order_editor: {e}");
        std::process::exit(1);
    }
}

/// A human at the keyboard: changes the first product's quantity now and then, through the
/// host API, so versions move and every client is notified.
async fn simulate_user(bridge: bridge_runtime::Bridge, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.tick().await;
    loop {
        tick.tick().await;
        let done = bridge
            .run(|ui| {
                let id = "w-A";
                ui.edit::<app::OrderEditor, _>(id, |editor, _| {
                    if let Some(p) = editor.products.first_mut() {
                        p.quantity = p.quantity % 9 + 1;
                    }
                })
            })
            .await;
        if done.is_err() {
            return;
        }
    }
}
