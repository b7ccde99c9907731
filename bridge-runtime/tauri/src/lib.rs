//! `tauri-plugin-bridge`: a Tauri 2 app's UI, described with bridge's `#[bridge_window]` types,
//! served to AI agents over MCP (streamable HTTP on loopback, or stdio) and to the app's own
//! page as plugin commands and events.
//!
//! ```ignore
//! tauri::Builder::default()
//!     .plugin(tauri_plugin_bridge::init(
//!         app::build(),                                   // a bridge_runtime::BridgeBuilder
//!         tauri_plugin_bridge::Options::default().setup_ui(|ui| app::open_initial(ui)),
//!     ))
//!     .run(tauri::generate_context!())
//! ```
//!
//! # What runs where
//!
//! The plugin owns the bridge, and the app's state lives in it (the bridge's [`Ui`]), as in the
//! egui example. The `Ui` has no thread of its own: it is built with
//! [`BridgeBuilder::spawn_headless`], so every operation — an agent's MCP call, a command of the
//! page — runs on the tokio task that asks for it (Tauri's async runtime for the commands, the
//! HTTP server's tasks for agents), one at a time under the bridge's fair lock, in arrival order
//! (GB-10.1-3). That is the right owner for a web-view UI: the page draws from the published
//! JSON in another process and never needs the `Ui` itself, so there is no frame to run
//! operations in (what [`BridgeBuilder::build_for_gui`] is for), and running them on Tauri's main
//! thread would stall its event loop. [`Options::setup_ui`] runs once, on the thread that runs
//! the plugin's setup (Tauri's main thread), before anything is served. The events and the
//! Tauri windows of [`Options::own_window`] follow the published state on one task of Tauri's
//! async runtime (Tauri runs the window creation itself on the main thread).
//!
//! # MCP
//!
//! Over streamable HTTP by default: the plugin's setup binds [`Options::http_addr`] (default
//! `127.0.0.1:0`, any free port) and serves MCP at `http://ADDR/mcp` with
//! `bridge_runtime::mcp::serve_http_on_with` and its access rule: every request needs
//! `Authorization: Bearer TOKEN` (401 without). The token is [`Options::token`], else
//! `$BRIDGE_MCP_TOKEN` (an empty value counts as unset), else read from a file readable by this
//! user only (`0600`), by default `mcp-token` in the app's config directory, generated there on
//! the first start and kept. A token file that is a symbolic link or another user's fails the
//! start; one others could read is replaced with a new token. Give a fixed port
//! (`Options::http_addr`) so that the URL is kept too and the user configures their MCP host
//! once: any free port, the default, changes at each start. Nobody sees a GUI app's stdout: the
//! app shows the user the URL and the token through [`McpConfig`] (the `mcp_config` command,
//! [`BridgeExt::mcp_config`]).
//!
//! Over stdio with [`Options::stdio`], for an app an MCP host starts: the MCP stream keeps the
//! process's original stdin and stdout (moved to private descriptors before the first web view
//! starts), while fd 1 points at stderr and fd 0 at `/dev/null` for everything else, the web
//! view's helper processes included. The app exits when the host closes the stream (end of
//! stdin), as MCP's stdio lifecycle expects.
//!
//! # The page's API
//!
//! Commands (`invoke('plugin:bridge|NAME', args)`; `guest-js/index.js` wraps them). Each runs on
//! Tauri's async runtime, never on the main thread; those that touch the UI take the bridge's
//! turn like an agent's call. Every rejection of the plugin's is an object with a `code` and a
//! `message`; Tauri itself rejects, with a plain string and before the plugin sees the call, a
//! command the page's capability does not allow and arguments its IPC cannot decode (nested
//! deeper than serde_json's recursion limit):
//!
//! | command | arguments | resolves with | rejects with |
//! | --- | --- | --- | --- |
//! | `windows` | — | the `app://windows` JSON, masked: exactly what agents read | — |
//! | `scope` | — | `{"windowId": ID}` in a bridge window's own Tauri window ([`Options::own_window`]), else `null` | — |
//! | `call` | `name` (string), `arguments` (object, optional) | the `ToolResult` of the call, run as the user | the GB error object `{code, message, currentVersion?, fields?}`: `validation_failed` for a `name` that is not a string or `arguments` not an object; `action_not_available` for another window's tool from a scoped page |
//! | `operable` | — | `operableWindowIds` (string array) | — |
//! | `last_agent_call` | — | [`LastAgentCall`] or `null` | [`CommandError`] `owner_gone` |
//! | `journal` | `since` (non-negative integer, optional) | journal entries with `seq > since`, oldest first, masked as the journal masks | [`CommandError`] `invalid_arguments` |
//! | `undo` | `windowId` (string) | [`UndoneView`] | [`CommandError`] |
//! | `can_undo` | `windowId` (string) | [`UndoPointView`] | [`CommandError`] (why not) |
//! | `mcp_config` | — | [`McpConfig`] (holds the token) | — |
//!
//! Events (listening needs `core:event:default`, part of `core:default`):
//! - [`CHANGED_EVENT`] (`bridge://changed`) carries a [`Changed`]: which windows to re-read.
//! - [`JOURNAL_EVENT`] (`bridge://journal`) carries `{"seq": N}` after every journal append: a
//!   journal panel follows without polling.
//! - [`AGENT_CALL_EVENT`] (`bridge://agent-call`) carries a [`LastAgentCall`] after every agent
//!   call, one that changed nothing (a `focus`) or was refused included: for the highlight.
//!
//! # Bridge windows in Tauri windows of their own
//!
//! By default the app's page draws every bridge window. [`Options::own_window`] shows a type's
//! windows (a modal dialog, a report) in Tauri windows of their own: opened when the bridge
//! window opens, labelled with its id (no label is hard-coded; the app's own windows keep
//! theirs), titled with its title, transient for its owner's Tauri window, and closed when the
//! bridge window closes. The window manager's close button never closes one by itself: it asks
//! the bridge ([`OnClose`]: close the bridge window, run an action as the user such as
//! `cancel`, or keep it). A page in such a window is scoped to it: `call` of another window's
//! tool or an app-level one is refused with `action_not_available` (as if not listed), `undo`
//! and `can_undo` of another window with [`CommandError`] `out_of_scope`. Scope limits what the
//! page does, not what it reads: `windows` (masked) and `journal` still show everything. [`Options::focus_action`] names the action that raises a window
//! (GB-5.3-1 reserves no names): after an agent's successful call of it, the plugin raises the
//! window's own Tauri window.
//!
//! # Permissions and trust
//!
//! `bridge:default` grants every command but `mcp_config`, which hands out the MCP token and is
//! granted on its own (`bridge:allow-mcp-config`). `call` runs as the user: it can take actions
//! that are the user's alone (a user-only "Confirm") and is never held to an agent's limits. So
//! the page that holds the capability must be trusted: ship it with the app (`frontendDist`),
//! under a strict CSP, never grant the capability to remote content, and render every string an
//! agent can set as text (no `innerHTML`) — otherwise an agent could write a script into a field
//! and press the user's buttons through this plugin.
//!
//! The page also sees what agents never do: the journal (every client's `clientInfo` and
//! session id, the masked arguments of every call) and undo. Agents read only `app://windows`
//! and their tools; the page is the user's.

mod commands;
mod stdio;
mod token;
mod windows;

use bridge_runtime::gui::{Bridge, BridgeBuilder, Published, Ui};
use bridge_runtime::mcp::HttpOptions;
use serde::Serialize;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tauri::plugin::{Builder, TauriPlugin};
use tauri::{Emitter, Manager, Runtime};

pub use commands::{CommandError, LastAgentCall, UndoPointView, UndoneView};
pub use token::TokenSource;
pub use windows::{OnClose, OwnWindow};

/// The event emitted after each commit that changed what the page shows; its payload is a
/// [`Changed`].
pub const CHANGED_EVENT: &str = "bridge://changed";

/// The event emitted after each agent call of a listed tool, whether or not it changed
/// anything (an agent's `focus`, a refused call): its payload is a [`LastAgentCall`]. Calls
/// that come faster than the events are folded into the latest (`seq` counts them all).
pub const AGENT_CALL_EVENT: &str = "bridge://agent-call";

/// The event emitted after each journal append (every operation of anyone, a refused one
/// included, and a repeat counted on the newest entry): `{"seq": N}`, the newest entry's `seq`.
/// A journal panel re-reads `journal` from its last `seq` minus one (the newest entry may have
/// grown) instead of polling. Appends faster than the events fold into one.
pub const JOURNAL_EVENT: &str = "bridge://journal";

/// Why the plugin could not start (returned from its setup: Tauri then fails to build the app).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The token is unusable (not 16 to 1,024 visible ASCII characters, no randomness).
    #[error("MCP token: {0}")]
    Token(String),
    /// The token file could not be read or written.
    #[error("MCP token file {path}: {error}", path = .0.display(), error = .1)]
    Io(PathBuf, #[source] std::io::Error),
    /// [`Options::http_addr`] is not a loopback address.
    #[error("refusing to serve MCP on {0}: only loopback addresses are allowed")]
    NonLoopback(SocketAddr),
    /// Binding the HTTP address failed.
    #[error("cannot serve MCP on {0}: {1}")]
    Bind(SocketAddr, #[source] std::io::Error),
    /// The app's config directory is unknown (for the default token file).
    #[error("no config directory for the MCP token file: {0}")]
    ConfigDir(String),
    /// [`Options::stdio`]: the standard streams could not be taken for MCP.
    #[error("MCP over stdio: {0}")]
    Stdio(String),
}

type SetupUi = Box<dyn FnOnce(&mut Ui) + Send>;

/// How the plugin serves: the HTTP address, the token, the first windows. Build from
/// [`Options::default`].
#[must_use]
pub struct Options {
    http_addr: SocketAddr,
    http: HttpOptions,
    token: Option<String>,
    token_file: Option<PathBuf>,
    setup_ui: Option<SetupUi>,
    own: Vec<(windows::IsType, OwnWindow)>,
    focus_action: Option<String>,
    stdio: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            http_addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            http: HttpOptions::default(),
            token: None,
            token_file: None,
            setup_ui: None,
            own: Vec::new(),
            focus_action: None,
            stdio: false,
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("Options")
            .field("http_addr", &self.http_addr)
            .field("token_file", &self.token_file)
            .field("own_windows", &self.own.iter().map(|(_, w)| w).collect::<Vec<_>>())
            .field("focus_action", &self.focus_action)
            .field("stdio", &self.stdio)
            .finish_non_exhaustive()
    }
}

impl Options {
    /// Serves MCP at `http://ADDR/mcp`; a loopback address (`127.0.0.1:PORT`, `[::1]:PORT`),
    /// port 0 for any free port (the default, `127.0.0.1:0`, which changes at each start: give a
    /// fixed port so that the user's MCP host configuration keeps working). [`McpConfig::url`]
    /// names the bound port; a port in use fails the start ([`Error::Bind`]).
    pub fn http_addr(mut self, addr: SocketAddr) -> Self {
        self.http_addr = addr;
        self
    }

    /// The HTTP server's caps and timeouts (`bridge_runtime::mcp::HttpOptions`); its token is
    /// replaced by the one this plugin resolves.
    pub fn http_options(mut self, options: HttpOptions) -> Self {
        self.http = options;
        self
    }

    /// The MCP access token (16 to 1,024 visible ASCII characters); without it,
    /// `$BRIDGE_MCP_TOKEN`, else the token file.
    pub fn token(mut self, secret: impl Into<String>) -> Self {
        self.token = Some(secret.into());
        self
    }

    /// Where the token is kept when neither [`Options::token`] nor `$BRIDGE_MCP_TOKEN` gives it
    /// (default: `mcp-token` in the app's config directory). A missing file is created (`0600`)
    /// with a new token; a file others can read is set to `0600`.
    pub fn token_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.token_file = Some(path.into());
        self
    }

    /// Serves MCP over the process's stdin and stdout instead of HTTP: for an app an MCP host
    /// starts (`"command": "/path/to/app", "args": ["--mcp-stdio"]`; the app decides from its
    /// own arguments whether to call this). No token: the pipe is the host's alone. Before the
    /// first web view starts, the plugin moves the MCP stream to private descriptors and points
    /// fd 1 at stderr and fd 0 at `/dev/null`, so nothing the app or the web view's helper
    /// processes print reaches the stream (Unix only: elsewhere the start fails with
    /// [`Error::Stdio`]). When the host closes the stream (end of stdin: how MCP's stdio
    /// lifecycle ends a server), the app exits ([`tauri::AppHandle::exit`] with status 0), so a
    /// host that restarts its server never piles up app instances.
    pub fn stdio(mut self) -> Self {
        self.stdio = true;
        self
    }

    /// Runs `f` on the bridge's [`Ui`] once, before anything is served: open the initial windows.
    pub fn setup_ui(mut self, f: impl FnOnce(&mut Ui) + Send + 'static) -> Self {
        self.setup_ui = Some(Box::new(f));
        self
    }
}

/// Where agents reach the app, for the user to copy into their MCP host. Serialized in
/// camelCase. Over HTTP: `{"transport": "http", "url": "http://127.0.0.1:PORT/mcp", "token":
/// "…", "tokenSource": "file", "tokenFile": "/home/…/mcp-token", "mcpServers": {NAME: {"type":
/// "http", "url": …, "headers": {"Authorization": "Bearer …"}}}}`. Over stdio
/// ([`Options::stdio`]): `{"transport": "stdio", "url": null, "token": null, "tokenSource":
/// null, "tokenFile": null, "mcpServers": {NAME: {"command": "/path/to/app", "args": [...]}}}`
/// (this process's executable and arguments). `mcpServers` is the configuration block MCP hosts
/// read; `NAME` is the server name of the bridge.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct McpConfig {
    /// `"http"` or `"stdio"`.
    pub transport: &'static str,
    /// `http://ADDR/mcp` with the bound port (HTTP only).
    pub url: Option<String>,
    /// The access token (HTTP only; a secret: show it to the user, never log it).
    pub token: Option<String>,
    /// Where the token came from (HTTP only).
    pub token_source: Option<TokenSource>,
    /// The token file, when the token came from one.
    pub token_file: Option<PathBuf>,
    /// A ready `mcpServers` block.
    pub mcp_servers: serde_json::Value,
}

/// The plugin's state, managed by the app (`app.state::<BridgeState>()`, or [`BridgeExt`]).
pub struct BridgeState {
    bridge: Bridge,
    mcp: McpConfig,
    owned: windows::Owned,
}

impl std::fmt::Debug for BridgeState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BridgeState").field("bridge", &self.bridge).field("mcp", &self.mcp).finish_non_exhaustive()
    }
}

impl BridgeState {
    /// The bridge (a cheap handle): run the app's own operations with `Bridge::run`.
    pub fn bridge(&self) -> &Bridge {
        &self.bridge
    }

    /// Where agents reach the app.
    pub fn mcp_config(&self) -> &McpConfig {
        &self.mcp
    }
}

/// The plugin's state from anything that reaches the app (`App`, `AppHandle`, `Window`...).
pub trait BridgeExt<R: Runtime> {
    /// The bridge the plugin owns. Panics if the plugin is not registered (Tauri's `state`).
    fn bridge(&self) -> Bridge;
    /// Where agents reach the app. Panics if the plugin is not registered.
    fn mcp_config(&self) -> McpConfig;
}

impl<R: Runtime, T: Manager<R>> BridgeExt<R> for T {
    fn bridge(&self) -> Bridge {
        self.state::<BridgeState>().bridge.clone()
    }

    fn mcp_config(&self) -> McpConfig {
        self.state::<BridgeState>().mcp.clone()
    }
}

/// What [`CHANGED_EVENT`] carries, after each commit that changed anything a page shows
/// (serialized in camelCase). Changes are measured against the state of the previous event, so
/// commits that come faster than the events are folded into one event naming every window any
/// of them changed: a page that re-renders the windows named here misses nothing.
///
/// A call that changes nothing a page shows emits nothing here, though it is journaled: a call
/// refused by the GB checks, and a successful one that changed no window (an agent's `focus`,
/// a read-only action). Agent calls are each an [`AGENT_CALL_EVENT`], and every journaled
/// operation a [`JOURNAL_EVENT`].
///
/// `{"generation": 7, "changed": ["w-1"], "closed": [], "toolsChanged": false,
/// "operableChanged": false}`
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Changed {
    /// The published generation this event brings the page to (bumps on every commit that
    /// changed anything).
    pub generation: u64,
    /// Windows opened or whose `version` or title changed, in opening order: re-read them
    /// (`windows`).
    pub changed: Vec<String>,
    /// Windows closed since the previous event.
    pub closed: Vec<String>,
    /// Whether the agent's tool list changed (a window opened or closed, an action's
    /// availability, a modal blocking a window).
    pub tools_changed: bool,
    /// Whether `operableWindowIds` changed (to enable or disable a blocked owner).
    pub operable_changed: bool,
}

impl Changed {
    /// What changed from `before` to `after`; `None` when nothing did.
    pub fn between(before: &Published, after: &Published) -> Option<Self> {
        // The title too: a title-only change keeps the `version` (GB-4.2-8 counts summary and
        // blocks), and a page shows the title.
        let old: HashMap<&str, (i64, &str)> =
            before.windows().map(|w| (w.id.as_str(), (w.version, w.title.as_str()))).collect();
        let changed: Vec<String> = after
            .windows()
            .filter(|w| old.get(w.id.as_str()) != Some(&(w.version, w.title.as_str())))
            .map(|w| w.id.clone())
            .collect();
        let closed: Vec<String> =
            before.windows().filter(|w| after.window(&w.id).is_none()).map(|w| w.id.clone()).collect();
        let event = Changed {
            generation: after.generation,
            changed,
            closed,
            tools_changed: before.tools_rev != after.tools_rev,
            operable_changed: before.operable_window_ids() != after.operable_window_ids(),
        };
        let any =
            !event.changed.is_empty() || !event.closed.is_empty() || event.tools_changed || event.operable_changed;
        any.then_some(event)
    }
}

/// How MCP is served.
enum Serve {
    Http { listener: std::net::TcpListener, secret: String, token_source: TokenSource, token_file: Option<PathBuf> },
    Stdio((std::fs::File, std::fs::File)),
}

/// The plugin: `tauri::Builder::default().plugin(tauri_plugin_bridge::init(builder, options))`.
/// Its setup builds the bridge from `builder` ([`BridgeBuilder::spawn_headless`]), runs
/// [`Options::setup_ui`], resolves the token, binds the HTTP address, manages [`BridgeState`],
/// and starts the MCP server and the [`CHANGED_EVENT`] emitter on Tauri's async runtime. A
/// failure there ([`Error`]) fails the app's build.
pub fn init<R: Runtime>(builder: BridgeBuilder, options: Options) -> TauriPlugin<R> {
    let mut pending = Some((builder, options));
    Builder::new("bridge")
        .invoke_handler(tauri::generate_handler![
            commands::windows,
            commands::scope,
            commands::call,
            commands::operable,
            commands::last_agent_call,
            commands::journal,
            commands::undo,
            commands::can_undo,
            commands::mcp_config,
        ])
        .on_event(|app, event| {
            if let tauri::RunEvent::WindowEvent { label, event: tauri::WindowEvent::CloseRequested { api, .. }, .. } =
                event
                && let Some(state) = app.try_state::<BridgeState>()
            {
                windows::close_requested(&state.owned, &state.bridge, label, api);
            }
        })
        .setup(move |app, _api| {
            let Some((builder, options)) = pending.take() else {
                return Err("the bridge plugin was set up twice".into());
            };
            start(app, builder, options).map_err(Into::into)
        })
        .build()
}

/// The plugin's setup (see [`init`]).
fn start<R: Runtime>(app: &tauri::AppHandle<R>, builder: BridgeBuilder, options: Options) -> Result<(), Error> {
    let Options { http_addr, http, token, token_file, setup_ui, own, focus_action, stdio } = options;
    let serve = if stdio {
        Serve::Stdio(stdio::take_stdio()?)
    } else {
        if !http_addr.ip().is_loopback() {
            return Err(Error::NonLoopback(http_addr));
        }
        let (secret, token_source, token_file) = token::resolve(token.as_deref(), || match token_file {
            Some(path) => Ok(path),
            None => app
                .path()
                .app_config_dir()
                .map(|dir| dir.join(token::DEFAULT_FILE))
                .map_err(|e| Error::ConfigDir(e.to_string())),
        })?;
        let listener = std::net::TcpListener::bind(http_addr).map_err(|e| Error::Bind(http_addr, e))?;
        listener.set_nonblocking(true).map_err(|e| Error::Bind(http_addr, e))?;
        Serve::Http { listener, secret, token_source, token_file }
    };

    let bridge = builder.spawn_headless(move |ui| {
        if let Some(f) = setup_ui {
            f(ui);
        }
    });
    let name = bridge.identity().name.clone();
    let mcp = match &serve {
        Serve::Http { listener, secret, token_source, token_file } => {
            let bound = listener.local_addr().map_err(|e| Error::Bind(http_addr, e))?;
            let url = format!("http://{bound}/mcp");
            let mcp_servers = serde_json::json!({
                name: {
                    "type": "http",
                    "url": url,
                    "headers": { "Authorization": format!("Bearer {secret}") },
                }
            });
            McpConfig {
                transport: "http",
                url: Some(url),
                token: Some(secret.clone()),
                token_source: Some(*token_source),
                token_file: token_file.clone(),
                mcp_servers,
            }
        }
        Serve::Stdio(_) => {
            let command = std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_default();
            let args: Vec<String> = std::env::args().skip(1).collect();
            McpConfig {
                transport: "stdio",
                url: None,
                token: None,
                token_source: None,
                token_file: None,
                mcp_servers: serde_json::json!({ name: { "command": command, "args": args } }),
            }
        }
    };
    let owned = windows::Owned::default();
    app.manage(BridgeState { bridge: bridge.clone(), mcp, owned: owned.clone() });
    let mirror = Arc::new(windows::Mirror::new(app.clone(), bridge.clone(), windows::Kinds(own), owned));

    let server = bridge.clone();
    let exit = app.clone();
    tauri::async_runtime::spawn(async move {
        let stdio = matches!(serve, Serve::Stdio(_));
        let served = match serve {
            Serve::Http { listener, secret, .. } => match tokio::net::TcpListener::from_std(listener) {
                Ok(listener) => bridge_runtime::mcp::serve_http_on_with(server, listener, http.token(secret)).await,
                Err(e) => Err(e.into()),
            },
            Serve::Stdio((input, output)) => {
                let (input, output) = (tokio::fs::File::from_std(input), tokio::fs::File::from_std(output));
                bridge_runtime::mcp::serve_stdio_on(server, input, output).await
            }
        };
        match served {
            Ok(()) if stdio => {
                tracing::info!("the MCP host closed stdin; the app exits");
                exit.exit(0);
            }
            Ok(()) => tracing::info!("the MCP server ended"),
            Err(e) => tracing::error!(error = %e, "the MCP server stopped"),
        }
    });

    let emitter = app.clone();
    // The state the first event is measured against, taken before anything else can commit.
    let mut watch = bridge.watch();
    let mut seen: Arc<Published> = watch.borrow_and_update().clone();
    let windows = mirror.clone();
    tauri::async_runtime::spawn(async move {
        // The windows `setup_ui` opened get their Tauri windows before any change is stepped.
        windows.start(&seen).await;
        while watch.changed().await.is_ok() {
            let now = watch.borrow_and_update().clone();
            // The Tauri windows first: a page told about a window finds its Tauri window open.
            windows.step(&seen, &now).await;
            if let Some(event) = Changed::between(&seen, &now)
                && let Err(e) = emitter.emit(CHANGED_EVENT, &event)
            {
                tracing::warn!(error = %e, "could not emit {CHANGED_EVENT}");
            }
            seen = now;
        }
    });

    let emitter = app.clone();
    let mut calls = bridge.watch_agent_calls();
    tauri::async_runtime::spawn(async move {
        while calls.changed().await.is_ok() {
            let Some(call) = calls.borrow_and_update().as_ref().map(LastAgentCall::from) else { continue };
            if call.ok
                && focus_action.as_deref() == Some(call.action.as_str())
                && let Some(id) = &call.window_id
            {
                mirror.raise(id);
            }
            if let Err(e) = emitter.emit(AGENT_CALL_EVENT, &call) {
                tracing::warn!(error = %e, "could not emit {AGENT_CALL_EVENT}");
            }
        }
    });

    let emitter = app.clone();
    let journal = bridge.journal();
    let mut appended = journal.watch();
    tauri::async_runtime::spawn(async move {
        while appended.changed().await.is_ok() {
            appended.borrow_and_update();
            let seq = journal.last().map_or(0, |e| e.seq);
            if let Err(e) = emitter.emit(JOURNAL_EVENT, serde_json::json!({ "seq": seq })) {
                tracing::warn!(error = %e, "could not emit {JOURNAL_EVENT}");
            }
        }
    });
    Ok(())
}
