//! The Order Editor of GB Appendix A, drawn for real with egui (eframe, OpenGL on X11), while
//! the same windows are served to agents over MCP. The human and the agent work on one state.
//!
//! ```text
//! cargo run -p egui-order-editor                                  # MCP over stdio
//! cargo run -p egui-order-editor -- --http 127.0.0.1:8767         # streamable HTTP at /mcp
//! ```
//!
//! How it is wired (issue #9): the app state lives in the bridge's `Ui`, owned through a
//! [`GuiOwner`]. Every operation an agent queues asks egui to repaint. The frame runs it
//! (`App::logic` runs even while the window is hidden), and a fallback thread runs it if no
//! frame comes. Drawing reads the windows through the owner (`Ui::window`, `Ui::windows_of`).
//! The user's edits go through the host API (`Ui::call_tool` with `by_user`), committed like a
//! real form: on Enter or when the field loses focus, not on every keystroke. Agents can
//! therefore keep their `expectedVersion` while the user types, and versions and notifications
//! stay right.

#[path = "../../order_editor/app.rs"]
#[allow(dead_code)]
mod app;
mod bench;
mod gui;
mod model;
#[path = "../../shared/serve_flags.rs"]
mod serve_flags;

use bridge_runtime::gui::GuiOwner;
use clap::Parser;
use eframe::egui;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The Order Editor, drawn with egui and served over MCP.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Serve streamable HTTP at http://ADDR/mcp (loopback only) instead of stdio; ADDR is
    /// 127.0.0.1:PORT, [::1]:PORT or localhost:PORT (which binds 127.0.0.1). Clients send
    /// `Authorization: Bearer TOKEN`: the token is $BRIDGE_MCP_TOKEN when set, else generated and
    /// printed to stderr (with the 0600 file it is also written to, deleted when the app quits).
    #[arg(long, value_name = "ADDR", value_parser = serve_flags::parse_http_addr)]
    http: Option<SocketAddr>,
    /// With --http: serve without an access token, so any local user or process can drive the
    /// app (test rigs only).
    #[arg(long, requires = "http")]
    no_token: bool,
    /// Rows in each "Report Details" window.
    #[arg(long, default_value_t = 10_000)]
    rows: usize,
    /// Write where the main widgets are drawn (screen pixels, JSON) to FILE after each frame
    /// that moved them: for end-to-end tests that click and type like a user.
    #[arg(long, value_name = "FILE")]
    layout_report: Option<PathBuf>,
    /// The same app without bridge (plain state, no MCP): the baseline of the benchmarks.
    #[arg(long)]
    no_bridge: bool,
    /// Draw N frames headless (no window, no GPU) with bridge and without, interleaved in
    /// rounds, and print the time per frame of each as JSON (BENCHMARKS.md; run it under
    /// `valgrind --tool=callgrind` with `--bench-only bridge|plain` for instruction counts).
    #[arg(long, value_name = "N")]
    bench_frames: Option<u32>,
    /// With --bench-frames: only this variant, one round (for callgrind).
    #[arg(long, value_name = "VARIANT", value_parser = ["bridge", "plain"])]
    bench_only: Option<String>,
}

fn main() {
    let args = Args::parse();
    serve_flags::init_logging();
    if let Some(frames) = args.bench_frames {
        bench::frames(frames, args.rows, args.bench_only.as_deref());
        return;
    }
    if args.no_bridge {
        run_gui(gui::Source::Plain(Box::new(model::PlainModel::new(args.rows))), Arc::default(), args.layout_report);
        return;
    }
    if let Some(addr) = args.http
        && !addr.ip().is_loopback()
    {
        eprintln!("egui_order_editor: refusing to serve on {addr}: only loopback addresses are allowed");
        std::process::exit(2);
    }

    // Operations queued by agents ask egui for a frame; the context exists once eframe starts.
    let egui_ctx: Arc<OnceLock<egui::Context>> = Arc::default();
    let repaint_ctx = egui_ctx.clone();
    let (bridge, owner): (_, GuiOwner) = app::build(args.rows).build_for_gui(Duration::from_millis(50), move || {
        if let Some(ctx) = repaint_ctx.get() {
            ctx.request_repaint();
        }
    });
    app::open_initial(owner.frame().ui(), args.rows);

    // MCP in the background; the GUI owns the main thread. When the MCP side ends (the host
    // closed stdin, Ctrl-C, SIGTERM), the app closes; when the window closes, the MCP side is
    // stopped (its server dropped: a generated token's file is deleted) before the app exits.
    let stop = Arc::new(tokio::sync::Notify::new());
    let served = std::thread::Builder::new().name("mcp".into()).spawn({
        let stop = stop.clone();
        let bridge = bridge.clone();
        let egui_ctx = egui_ctx.clone();
        let http = args.http;
        let http_options = if args.no_token {
            bridge_runtime::mcp::HttpOptions::default().no_token()
        } else {
            bridge_runtime::mcp::HttpOptions::default()
        };
        move || {
            let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("egui_order_editor: no async runtime: {e}");
                    std::process::exit(1);
                }
            };
            let result = runtime.block_on(async move {
                let served = async move {
                    match http {
                        Some(addr) => {
                            let listener = tokio::net::TcpListener::bind(addr).await?;
                            eprintln!("egui_order_editor: serving MCP at http://{addr}/mcp");
                            bridge_runtime::mcp::serve_http_on_with(bridge, listener, http_options).await
                        }
                        None => {
                            eprintln!("egui_order_editor: serving MCP over stdio");
                            bridge_runtime::mcp::serve_stdio(bridge).await
                        }
                    }
                };
                tokio::select! {
                    served = served => served,
                    () = serve_flags::stop_signal() => Ok(()),
                    () = stop.notified() => Ok(()),
                }
            });
            if let Err(e) = result {
                eprintln!("egui_order_editor: {e}");
            }
            if let Some(ctx) = egui_ctx.get() {
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
            // The server is dropped by now; do not wait for a blocking stdin read that may never
            // return (the host may keep the pipe open after the window closed).
            runtime.shutdown_background();
        }
    });
    let served = match served {
        Ok(thread) => thread,
        Err(e) => {
            eprintln!("egui_order_editor: cannot start the MCP thread: {e}");
            std::process::exit(1);
        }
    };

    run_gui(gui::Source::Bridge(owner), egui_ctx, args.layout_report);
    stop.notify_one();
    let _ = served.join();
    drop(bridge);
}

/// Runs the window until it is closed; `egui_ctx` gets the context once it exists.
fn run_gui(source: gui::Source, egui_ctx: Arc<OnceLock<egui::Context>>, layout_report: Option<PathBuf>) {
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default().with_title("Order Editor").with_inner_size([760.0, 620.0]),
        ..Default::default()
    };
    let started = eframe::run_native(
        "Order Editor",
        options,
        Box::new(move |cc| {
            let _ = egui_ctx.set(cc.egui_ctx.clone());
            // Anything queued before the context existed runs in the first frame.
            cc.egui_ctx.request_repaint();
            Ok(Box::new(gui::OrderEditorApp::new(source, layout_report)))
        }),
    );
    if let Err(e) = started {
        eprintln!("egui_order_editor: {e}");
        std::process::exit(1);
    }
}
