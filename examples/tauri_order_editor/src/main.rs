//! The Order Editor of GB Appendix A in a Tauri 2 app: a plain HTML/CSS/JS page (`dist/`, no
//! npm build step) draws the windows the bridge publishes, while the same windows are served to
//! agents over MCP by `tauri-plugin-bridge`. The human and the agent work on one state.
//!
//! ```text
//! cargo run -p tauri-order-editor                                   # MCP at http://127.0.0.1:<any free port>/mcp
//! cargo run -p tauri-order-editor -- --http 127.0.0.1:8767          # a fixed port: configure the MCP host once
//! cargo run -p tauri-order-editor -- --user-confirms --journal j.jsonl
//! tauri_order_editor --mcp-stdio                                     # started by an MCP host, over stdio
//! ```
//!
//! It needs WebKitGTK 4.1 to build and run (`apt-get install libwebkit2gtk-4.1-dev`). A plain
//! `cargo build` makes a dev build that still embeds the page; `--features tauri/custom-protocol`
//! makes a release build. The MCP URL goes to stderr at start (and to `--mcp-url-file FILE`);
//! the token is `$BRIDGE_MCP_TOKEN` when set, else kept in `mcp-token` in the app's config
//! directory: the page's "Copy MCP configuration" button shows both.
//!
//! How it is wired: the plugin owns the bridge, and the app's state lives in it. The page reads
//! the windows (`plugin:bridge|windows`, the masked `app://windows` JSON), re-renders the
//! windows `bridge://changed` names, and commits the user's edits on Enter or focus loss through
//! `plugin:bridge|call`, which runs as the user: versions and `stale_state` work as in the egui
//! example. "Confirm order" and each "Report Details" open as their own Tauri windows
//! (`dialog.html`, `report.html`), labelled with the bridge window's id; an agent's
//! `{winId}__focus` raises them. The app's own two commands, `set_user_confirms` and
//! `user_confirms`, are the "Only I confirm orders" switch (allowed to the main window only).

#[path = "../../order_editor/app.rs"]
#[allow(dead_code)]
mod app;
#[path = "../../shared/serve_flags.rs"]
#[allow(dead_code)]
mod serve_flags;

use bridge_runtime::gui::Actor;
use clap::Parser;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use tauri::Manager;
use tauri_plugin_bridge::{BridgeExt, OnClose, OwnWindow};

/// The Order Editor in a Tauri window, served over MCP.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Serve MCP at http://ADDR/mcp (loopback only): 127.0.0.1:PORT, [::1]:PORT or
    /// localhost:PORT. Default: any free port on 127.0.0.1, which changes at each start.
    #[arg(long, value_name = "ADDR", value_parser = serve_flags::parse_http_addr)]
    http: Option<SocketAddr>,
    /// Serve MCP over stdin and stdout instead of HTTP, for an MCP host that starts the app
    /// (`"command": "/path/to/tauri_order_editor", "args": ["--mcp-stdio"]`); no token.
    #[arg(long, conflicts_with_all = ["http", "mcp_url_file"])]
    mcp_stdio: bool,
    /// Rows in each "Report Details" window.
    #[arg(long, default_value_t = 10_000)]
    rows: usize,
    /// Start with "Only I confirm orders" on: an agent's `{winId}__confirm` gets
    /// action_not_available and the user confirms in the app.
    #[arg(long)]
    user_confirms: bool,
    /// Append every operation (the agent's calls, the user's edits, the app's own changes) to
    /// FILE as JSON lines, secrets masked: the audit trail.
    #[arg(long, value_name = "FILE")]
    journal: Option<PathBuf>,
    /// Agent changes kept per window for "Undo agent's change" (0: none).
    #[arg(long, default_value_t = bridge_runtime::gui::DEFAULT_UNDO_DEPTH)]
    undo_depth: usize,
    /// Also write the MCP URL to FILE once it serves (replaced atomically), for launchers and
    /// tests that do not read stderr.
    #[arg(long, value_name = "FILE")]
    mcp_url_file: Option<PathBuf>,
    /// Tests only: also open a window ("probe") that no capability grants, showing that a page
    /// without the bridge's permission is refused.
    #[arg(long, hide = true)]
    probe_window: bool,
}

/// The label of the main window (tauri.conf.json); capabilities/default.json grants it the page
/// API. Nothing in the bridge depends on it.
const MAIN_WINDOW: &str = "editor";

/// "Only I confirm orders": turns the user-only confirm mode on or off (as the user, as the
/// journal records it) and resolves with the mode now. Rejects with a message when the bridge
/// has stopped.
#[tauri::command]
async fn set_user_confirms(app: tauri::AppHandle, on: bool) -> Result<bool, String> {
    app.bridge()
        .run(move |ui| {
            app::set_user_confirms(ui, Actor::User, on);
            user_confirms_now(ui)
        })
        .await
        .map_err(|e| e.to_string())
}

/// Whether "Only I confirm orders" is on (the Order Editor keeps it; it is not in the windows'
/// JSON). Rejects with a message when the bridge has stopped.
#[tauri::command]
async fn user_confirms(app: tauri::AppHandle) -> Result<bool, String> {
    app.bridge().run(|ui| user_confirms_now(ui)).await.map_err(|e| e.to_string())
}

fn user_confirms_now(ui: &bridge_runtime::gui::Ui) -> bool {
    ui.windows_of::<app::OrderEditor>().any(|(_, e)| e.user_confirms)
}

fn main() {
    let args = Args::parse();
    serve_flags::init_logging();
    if let Err(e) = run(args) {
        eprintln!("tauri_order_editor: {e}");
        std::process::exit(1);
    }
}

fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let (rows, confirms_at_start) = (args.rows, args.user_confirms);
    let mut builder = app::build(rows).undo_depth(args.undo_depth);
    if let Some(path) = &args.journal {
        let sink = bridge_runtime::gui::JsonLinesSink::open(path)
            .map_err(|e| format!("cannot open the journal {}: {e}", path.display()))?;
        builder = builder.journal_sink(sink);
    }
    let mut options = tauri_plugin_bridge::Options::default()
        .setup_ui(move |ui| {
            app::open_initial(ui, rows);
            if confirms_at_start {
                app::set_user_confirms(ui, Actor::App, true);
            }
        })
        // "Confirm order" in a window of its own, kept above the main window (its owner, the
        // Order Editor, is drawn there); the window manager's close button cancels the order.
        .own_window::<app::ConfirmOrder>(
            OwnWindow::new("dialog.html")
                .size(420.0, 260.0)
                .parent(MAIN_WINDOW)
                .on_close(OnClose::Call("cancel".into())),
        )
        // Each "Report Details" in a window of its own; closing it closes the report.
        .own_window::<app::ReportDetails>(OwnWindow::new("report.html").size(720.0, 520.0))
        // An agent's successful `{winId}__focus` raises that window.
        .focus_action("focus");
    if let Some(addr) = args.http {
        options = options.http_addr(addr);
    }
    if args.mcp_stdio {
        options = options.stdio();
    }
    let (url_file, probe) = (args.mcp_url_file, args.probe_window);
    tauri::Builder::default()
        .plugin(tauri_plugin_bridge::init(builder, options))
        .invoke_handler(tauri::generate_handler![set_user_confirms, user_confirms])
        // Closing the editor quits the app, as in the egui example: the Order Editor is only
        // ever operated where the user can see it (a report still open in its own window
        // would otherwise keep the app, and the editor's tools, alive with no editor shown).
        .on_window_event(|window, event| {
            if window.label() == MAIN_WINDOW && matches!(event, tauri::WindowEvent::Destroyed) {
                window.app_handle().exit(0);
            }
        })
        .setup(move |app| {
            // The plugin's setup ran before this one: it serves by now.
            match app.mcp_config().url {
                Some(url) => {
                    eprintln!("tauri_order_editor: serving MCP at {url}");
                    if let Some(path) = &url_file {
                        write_atomically(path, &url).map_err(|e| format!("--mcp-url-file {}: {e}", path.display()))?;
                    }
                }
                None => eprintln!("tauri_order_editor: serving MCP over stdio"),
            }
            if probe {
                tauri::WebviewWindowBuilder::new(app, "probe", tauri::WebviewUrl::App("probe.html".into()))
                    .title("Permission probe")
                    .inner_size(420.0, 200.0)
                    .build()?;
            }
            if let Some(main) = app.get_webview_window(MAIN_WINDOW) {
                main.set_focus()?;
            }
            Ok(())
        })
        .run(tauri::generate_context!())?;
    Ok(())
}

/// Writes `text` to `path` through a temporary file beside it, so a reader never sees half.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn flags_are_consistent_and_parse() {
        Args::command().debug_assert();
        let args = Args::try_parse_from([
            "tauri_order_editor",
            "--http",
            "localhost:8767",
            "--rows",
            "100",
            "--user-confirms",
            "--undo-depth",
            "0",
        ])
        .expect("valid flags");
        assert_eq!(args.http, Some(SocketAddr::from(([127, 0, 0, 1], 8767))));
        assert_eq!((args.rows, args.user_confirms, args.undo_depth), (100, true, 0));
        assert!(Args::try_parse_from(["tauri_order_editor", "--http", "example.com:80"]).is_err());
        assert!(Args::try_parse_from(["tauri_order_editor", "--mcp-stdio", "--http", "127.0.0.1:1"]).is_err());
        assert!(Args::try_parse_from(["tauri_order_editor", "--mcp-stdio"]).expect("stdio").mcp_stdio);
    }

    #[test]
    fn the_url_file_is_replaced_whole() {
        let dir = std::env::temp_dir().join(format!("tauri-order-editor-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("mcp-url");
        write_atomically(&path, "http://127.0.0.1:1/mcp").expect("first write");
        write_atomically(&path, "http://127.0.0.1:2/mcp").expect("second write");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "http://127.0.0.1:2/mcp");
        assert!(!dir.join("mcp-url.tmp").exists());
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
