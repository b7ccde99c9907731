use crate::catalog::{ActionSpec, AppSpec, Catalog, WindowSpec, schema::EXPECTED_VERSION};
use crate::gui::context::{ActionContext, IdAllocator, Op, OpenOptions};
use crate::gui::window::{AnyActions, AnyWindow, Rendered};
use crate::gui::{BridgeActions, BridgeWindow};
use crate::model::{ErrorCode, ToolError, ToolResult, WindowState, WindowsSnapshot};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock, RwLock};
use tokio::sync::watch;

/// Prefix of app-level tools, a pseudo window id never given to a window (OQ-GB-12).
pub const APP_PREFIX: &str = "app";

/// One tool as listed right now: `{winId}__{action}` or `app__{action}` (GB-5.2-1).
#[derive(Debug, Clone)]
pub struct ToolEntry {
    /// The tool name, `^[A-Za-z0-9_-]{1,64}$`.
    pub name: String,
    /// The window's external id; `None` for app-level tools.
    pub window_id: Option<String>,
    /// The window's title when the tool was listed.
    pub window_title: Option<String>,
    /// The action.
    pub action: Arc<ActionSpec>,
    /// The window's type; `None` for app-level tools.
    pub window_type: Option<Arc<WindowSpec>>,
}

impl ToolEntry {
    /// Human-readable tool title, e.g. `Edit field · Order Editor (window w-A)` (GB-5.2-3).
    pub fn title(&self) -> String {
        let action = self.action.title.clone().unwrap_or_else(|| humanize(&self.action.name));
        match (&self.window_title, &self.window_id) {
            (Some(t), Some(id)) => format!("{action} · {t} (window {id})"),
            _ => format!("{action} · app"),
        }
    }

    /// Tool description: the action's doc comment plus which window it acts on.
    pub fn description(&self) -> String {
        let base = if self.action.description.is_empty() {
            humanize(&self.action.name)
        } else {
            self.action.description.clone()
        };
        match (&self.window_title, &self.window_id) {
            (Some(t), Some(id)) => format!("{base}\n\nActs on the \"{t}\" window (id {id})."),
            _ => format!("{base}\n\nApp-level action."),
        }
    }
}

/// A window's `title` and `summary` stay one line whatever the app's data holds (GB-4.2-5,
/// GB-4.2-9; issue #10 item 7). Each run of line breaks and other control characters becomes
/// one space, and bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) are
/// removed, so a title cannot reorder the text around it. Blocks are data and stay as they are.
fn one_line_title_and_summary(mut r: Rendered) -> Rendered {
    if let Cow::Owned(t) = one_line(&r.title) {
        r.title = t;
    }
    if let Some(s) = &r.summary
        && let Cow::Owned(t) = one_line(s)
    {
        r.summary = Some(t);
    }
    r
}

/// `s` as one line (see [`one_line_title_and_summary`]); borrowed when nothing changes.
fn one_line(s: &str) -> Cow<'_, str> {
    let bidi = |c: char| matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
    let breaks = |c: char| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}');
    // Printable ASCII (the common case) needs no character decoding.
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) || !s.chars().any(|c| bidi(c) || breaks(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut in_break = false;
    for c in s.chars() {
        if bidi(c) {
            continue;
        }
        if breaks(c) {
            in_break = true;
            continue;
        }
        if in_break && !out.is_empty() && !out.ends_with(' ') && c != ' ' {
            out.push(' ');
        }
        in_break = false;
        out.push(c);
    }
    Cow::Owned(out)
}

/// Turns `edit_field` into `Edit field`: the rule the macros use for default labels, too.
pub use bridge_rules::humanize;

/// The state published after every operation that changed anything: what readers see without
/// entering the queue.
///
/// Cheap to publish and to share: each window's state is built once, when it changes, and
/// shared with every later `Published` that still shows it; the whole `WindowsSnapshot` and its
/// JSON are built on first use (a `resources/read`), once per change, from per-window JSON
/// built the same way. So publishing after an operation costs what the operation changed, not
/// what is open (issue #10 item 2).
#[derive(Clone)]
pub struct Published {
    /// Bumps on every commit that changed anything.
    pub generation: u64,
    /// Bumps whenever the `app://windows` content changed (→ `resources/updated`, GB-6).
    pub windows_rev: u64,
    /// Bumps whenever the tool list changed (→ `tools/list_changed`, GB-5.1-6, OQ-GB-16).
    pub tools_rev: u64,
    /// The tools of operable windows whose actions are available (GB-5.1-4), app tools first,
    /// then each operable window's in `operableWindowIds` order.
    pub tools: Arc<[ToolEntry]>,
    tool_index: Arc<HashMap<String, usize>>,
    content: Arc<Content>,
}

/// The `app://windows` content of one [`Published`], shared by every later one that shows the
/// same windows.
struct Content {
    operable: Arc<[String]>,
    windows: Vec<Arc<PublishedWindow>>,
    snapshot: OnceLock<WindowsSnapshot>,
    json: OnceLock<Arc<str>>,
}

/// One window's published state, built when it changes.
struct PublishedWindow {
    state: WindowState,
    /// `state` as JSON, built on first read.
    json: OnceLock<String>,
}

impl PublishedWindow {
    fn new(state: WindowState) -> Arc<Self> {
        Arc::new(PublishedWindow { state, json: OnceLock::new() })
    }

    fn json(&self) -> &str {
        self.json.get_or_init(|| serde_json::to_string(&self.state).expect("a window state serializes"))
    }
}

impl Content {
    fn new(operable: Arc<[String]>, windows: Vec<Arc<PublishedWindow>>) -> Arc<Self> {
        Arc::new(Content { operable, windows, snapshot: OnceLock::new(), json: OnceLock::new() })
    }
}

impl std::fmt::Debug for Published {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Published")
            .field("generation", &self.generation)
            .field("windows_rev", &self.windows_rev)
            .field("tools_rev", &self.tools_rev)
            .field("operable_window_ids", &self.content.operable)
            .field("windows", &self.content.windows.len())
            .field("tools", &self.tools.len())
            .finish()
    }
}

impl Published {
    /// The state before anything was published: no windows, no tools, revisions 0.
    pub(crate) fn empty() -> Self {
        Published {
            generation: 0,
            windows_rev: 0,
            tools_rev: 0,
            tools: Arc::from(Vec::new()),
            tool_index: Arc::default(),
            content: Content::new(Arc::from([]), Vec::new()),
        }
    }

    /// A state showing `snapshot` (for the test kit's own tests).
    #[cfg(all(test, feature = "testing"))]
    pub(crate) fn from_snapshot(snapshot: WindowsSnapshot, windows_rev: u64) -> Self {
        let windows = snapshot.windows.into_iter().map(PublishedWindow::new).collect();
        let operable = Arc::from(snapshot.operable_window_ids);
        Published { windows_rev, content: Content::new(operable, windows), ..Published::empty() }
    }

    /// The `app://windows` snapshot (GB-4.2), built on first use and shared.
    pub fn snapshot(&self) -> &WindowsSnapshot {
        self.content.snapshot.get_or_init(|| WindowsSnapshot {
            operable_window_ids: self.content.operable.to_vec(),
            windows: self.content.windows.iter().map(|w| w.state.clone()).collect(),
        })
    }

    /// The snapshot serialized, exactly as `serde_json::to_string(self.snapshot())`: what every
    /// `resources/read app://windows` returns. Built on first use from each window's JSON (itself
    /// built once per change of that window) and shared.
    pub fn snapshot_json(&self) -> Arc<str> {
        self.content
            .json
            .get_or_init(|| {
                let c = &self.content;
                let size: usize = c.windows.iter().map(|w| w.json().len() + 1).sum();
                let mut out = String::with_capacity(size + 64);
                out.push_str(r#"{"operableWindowIds":"#);
                out.push_str(&serde_json::to_string(&c.operable).expect("ids serialize"));
                out.push_str(r#","windows":["#);
                for (i, w) in c.windows.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(w.json());
                }
                out.push_str("]}");
                Arc::from(out)
            })
            .clone()
    }

    /// `operableWindowIds` (GB-4.2-2).
    pub fn operable_window_ids(&self) -> &[String] {
        &self.content.operable
    }

    /// Every open window's state, in opening order.
    pub fn windows(&self) -> impl ExactSizeIterator<Item = &WindowState> {
        self.content.windows.iter().map(|w| &w.state)
    }

    /// Window `id`'s state, if it is open.
    pub fn window(&self, id: &str) -> Option<&WindowState> {
        self.windows().find(|w| w.id == id)
    }

    /// The listed tool named `name`, if listed now (a hash lookup).
    pub fn tool(&self, name: &str) -> Option<&ToolEntry> {
        self.tool_index.get(name).and_then(|&i| self.tools.get(i))
    }
}

struct Entry {
    handle: String,
    internal_id: Option<String>,
    modal: bool,
    owner: Option<String>,
    spec: Arc<WindowSpec>,
    window: Option<Box<dyn AnyWindow>>,
    /// `#[bridge_window(shared_state)]`: rendered on every commit.
    shared_state: bool,
    /// Something may have changed it since the last commit.
    dirty: bool,
    /// In `operableWindowIds` (recomputed when windows open or close).
    operable: bool,
    /// What it shows now (`version` included).
    published: Arc<PublishedWindow>,
    /// Its available actions as tools, as of its last render.
    tools: Vec<ToolEntry>,
}

struct AppSlot {
    spec: Arc<AppSpec>,
    actions: Box<dyn AnyActions>,
    /// Its available actions as tools (whether or not an app-level modal hides them).
    tools: Vec<ToolEntry>,
}

/// The window model: every open window, topology (`modal`, `ownerId`), versions, the operable
/// set, and the one dispatcher every operation goes through, the agent's and the user's.
///
/// A `Ui` lives on one thread at a time (the GUI's, the headless owner's or a task holding its
/// lock) and runs one operation at a time (GB-10.1-3). After every operation it re-renders each
/// window the operation could have changed, bumps the `version` of each whose
/// `summary`/`blocks` changed (GB-4.2-8), and publishes the new state.
///
/// # Which windows are re-rendered
/// A window renders from its own value, so it can change only when something changes that
/// value. Those paths are all recorded: one of its own actions ran (whatever its outcome), an
/// operation changed it through [`ActionContext::update`], the host changed it through
/// [`Ui::edit`], or it just opened. Only those windows are re-rendered and re-checked for
/// available actions; app-level availability is re-checked after an app-level action or
/// [`Ui::edit_app`]. A window whose title, summary, blocks or availability read anything else
/// (state shared through an `Arc<Mutex<…>>`, a clock) is declared
/// `#[bridge_window(shared_state)]` and is re-rendered after every operation; a host that
/// changes such state between operations calls [`Ui::refresh_all`]. Debug builds check the
/// contract after every commit: they re-render every other window and panic, naming it, if one
/// changed unrecorded. [`BridgeBuilder::render_every_window`](crate::gui::BridgeBuilder::render_every_window)
/// turns the optimisation off.
pub struct Ui {
    catalog: Arc<RwLock<Catalog>>,
    app: Option<AppSlot>,
    windows: Vec<Entry>,
    /// Handle → index into `windows` (rebuilt when windows open or close).
    index: HashMap<String, usize>,
    ids: IdAllocator,
    published: watch::Sender<Arc<Published>>,
    current: Arc<Published>,
    /// Set by `apply` when windows opened or closed, so `commit` recomputes the topology.
    topology_changed: bool,
    /// An app-level action ran or the host edited the app state since the last commit.
    app_dirty: bool,
    /// Whether an app-level modal is open (recomputed with the topology).
    app_modal: bool,
    /// `operableWindowIds` (recomputed with the topology, shared by the published states).
    operable: Arc<[String]>,
    /// Re-render every window on every commit (`BridgeBuilder::render_every_window`).
    render_all: bool,
    /// The last listed tool an agent called (for a GUI to show what the agent touched).
    last_agent_call: Option<AgentCall>,
}

/// The last tool an agent called through the bridge, for a GUI to show which window the agent
/// works on (e.g. highlight it for a few seconds). Calls by the user (`by_user`) do not count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentCall {
    /// The tool name, `{winId}__{action}` or `app__{action}`.
    pub tool: String,
    /// The window it acted on; `None` for app-level tools.
    pub window_id: Option<String>,
    /// The action's name.
    pub action: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// When it ran.
    pub at: std::time::Instant,
    /// Counts every agent call, so a GUI can tell a new call from the one it already showed.
    pub seq: u64,
}

impl Ui {
    pub(crate) fn new(
        catalog: Arc<RwLock<Catalog>>,
        app: Option<Box<dyn AnyActions>>,
        app_spec: Option<Arc<AppSpec>>,
        render_all: bool,
    ) -> Self {
        let current = Arc::new(Published::empty());
        let (published, _) = watch::channel(current.clone());
        let app = match (app, app_spec) {
            (Some(actions), Some(spec)) => Some(AppSlot { spec, actions, tools: Vec::new() }),
            _ => None,
        };
        let mut ui = Self {
            catalog,
            app,
            windows: Vec::new(),
            index: HashMap::new(),
            ids: IdAllocator::default(),
            published,
            current,
            topology_changed: true,
            app_dirty: true,
            app_modal: false,
            operable: Arc::from([]),
            render_all,
            last_agent_call: None,
        };
        ui.commit();
        ui
    }

    pub(crate) fn watch(&self) -> watch::Receiver<Arc<Published>> {
        self.published.subscribe()
    }

    /// The latest published state.
    pub fn published(&self) -> Arc<Published> {
        self.current.clone()
    }

    /// The current snapshot of `app://windows`.
    pub fn snapshot(&self) -> &WindowsSnapshot {
        self.current.snapshot()
    }

    /// Opens a window from the host (not from an action) and publishes the change.
    /// Returns its external id.
    pub fn open<W: BridgeWindow + BridgeActions>(&mut self, window: W, options: OpenOptions) -> String {
        let mut cx = ActionContext::new(&mut self.ids, None, true);
        let id = cx.open_with(window, options);
        let ops = std::mem::take(&mut cx.ops);
        self.apply(ops);
        self.commit();
        id
    }

    /// Closes window `id` (and the modals it owns) from the host. Returns whether it was open.
    pub fn close(&mut self, id: &str) -> bool {
        let found = self.index_of(id).is_some();
        self.apply(vec![Op::Close(id.to_owned())]);
        self.commit();
        found
    }

    /// The external id for an app-internal window id (GB-12.4-3).
    pub fn handle_of(&self, internal_id: &str) -> Option<String> {
        self.ids.handle_of(internal_id).map(str::to_owned)
    }

    /// Whether window `id` is open.
    pub fn is_open(&self, id: &str) -> bool {
        self.index_of(id).is_some()
    }

    /// The human user's edit of window `id` of type `W`, through the same path as an agent's
    /// operation: it runs in turn, bumps versions and fires notifications (issue #2 §4).
    /// `None` when the window is not open or not a `W`.
    pub fn edit<W: 'static, R>(&mut self, id: &str, f: impl FnOnce(&mut W, &mut ActionContext<'_>) -> R) -> Option<R> {
        let idx = self.index_of(id)?;
        let mut window = self.windows[idx].window.take()?;
        let mut cx = ActionContext::new(&mut self.ids, Some(id.to_owned()), true);
        let out = window.as_any_mut().downcast_mut::<W>().map(|w| f(w, &mut cx));
        let ops = std::mem::take(&mut cx.ops);
        self.windows[idx].window = Some(window);
        if out.is_some() {
            self.windows[idx].dirty = true;
            self.apply(ops);
        }
        self.commit();
        out
    }

    /// The human user's edit of the app-level state of type `A`.
    pub fn edit_app<A: 'static, R>(&mut self, f: impl FnOnce(&mut A, &mut ActionContext<'_>) -> R) -> Option<R> {
        let slot = self.app.as_mut()?;
        let mut cx = ActionContext::new(&mut self.ids, None, true);
        let out = slot.actions.as_any_mut().downcast_mut::<A>().map(|a| f(a, &mut cx));
        let ops = std::mem::take(&mut cx.ops);
        if out.is_some() {
            self.app_dirty = true;
            self.apply(ops);
        }
        self.commit();
        out
    }

    /// Re-renders every window and re-checks every action's availability now, bumping versions
    /// and publishing what changed: for a host that changed state windows read outside their
    /// own value (see [which windows are re-rendered](Ui#which-windows-are-re-rendered)).
    pub fn refresh_all(&mut self) {
        for e in &mut self.windows {
            e.dirty = true;
        }
        self.app_dirty = true;
        self.commit();
    }

    /// Runs tool `name` with `args` as the agent would (`by_user = false`) or as the human user
    /// (`by_user = true`): the GB-7.2 runtime checks in OQ-GB-21 order (`window_not_found` →
    /// `blocked_by_modal` → `action_not_available` → `stale_state` → `validation_failed`), then
    /// the action, then its effects, then one commit. A rejected call leaves windows unopened
    /// and unclosed.
    pub fn call_tool(&mut self, name: &str, args: Map<String, Value>, by_user: bool) -> Result<ToolResult, ToolError> {
        let listed =
            (!by_user).then(|| self.current.tool(name).map(|t| (t.window_id.clone(), t.action.name.clone()))).flatten();
        let out = self.dispatch(name, args, by_user);
        self.commit();
        if let Some((window_id, action)) = listed {
            let seq = self.last_agent_call.as_ref().map_or(1, |c| c.seq + 1);
            let at = std::time::Instant::now();
            self.last_agent_call =
                Some(AgentCall { tool: name.to_owned(), window_id, action, ok: out.is_ok(), at, seq });
        }
        out
    }

    /// Read access for drawing: window `id` if it is open and a `W` (issue #9). A GUI draws
    /// from this and changes it only through [`Ui::edit`] or [`Ui::call_tool`], so versions and
    /// notifications stay right.
    pub fn window<W: 'static>(&self, id: &str) -> Option<&W> {
        let e = self.windows.get(self.index_of(id)?)?;
        e.window.as_ref()?.as_any().downcast_ref::<W>()
    }

    /// Every open window of type `W` with its id, in opening order (for drawing).
    pub fn windows_of<W: 'static>(&self) -> impl Iterator<Item = (&str, &W)> {
        self.windows.iter().filter_map(|e| Some((e.handle.as_str(), e.window.as_ref()?.as_any().downcast_ref::<W>()?)))
    }

    /// The app-level state of type `A`, for drawing.
    pub fn app_state<A: 'static>(&self) -> Option<&A> {
        self.app.as_ref()?.actions.as_any().downcast_ref::<A>()
    }

    /// Whether window `id` is in `operableWindowIds` now. A GUI disables the controls of a
    /// window a modal blocks, for the user as for the agent (GB §2).
    pub fn is_operable(&self, id: &str) -> bool {
        self.index_of(id).is_some_and(|i| self.windows[i].operable)
    }

    /// The last listed tool an agent called ([`AgentCall`]), if any.
    pub fn last_agent_call(&self) -> Option<&AgentCall> {
        self.last_agent_call.as_ref()
    }

    fn dispatch(&mut self, name: &str, mut args: Map<String, Value>, by_user: bool) -> Result<ToolResult, ToolError> {
        let Some((win, action)) = name.split_once("__") else {
            return Err(ToolError::new(
                ErrorCode::WindowNotFound,
                format!("No tool named '{name}': tool names are {{winId}}__{{action}}"),
            ));
        };
        if win == APP_PREFIX {
            let app_modal = self.app_modal;
            let Some(slot) = self.app.as_mut() else {
                return Err(ToolError::new(ErrorCode::WindowNotFound, "This app has no app-level actions"));
            };
            if app_modal {
                return Err(ToolError::new(
                    ErrorCode::BlockedByModal,
                    "An app-level modal blocks the app; operate the windows in operableWindowIds",
                ));
            }
            let spec = slot.spec.action(action).cloned().ok_or_else(|| not_available_unknown(action, "the app"))?;
            if !slot.actions.available(action) {
                return Err(ToolError::new(
                    ErrorCode::ActionNotAvailable,
                    format!("'{action}' is not available right now"),
                ));
            }
            check_args(&spec, &mut args)?;
            self.app_dirty = true;
            let mut cx = ActionContext::new(&mut self.ids, None, by_user);
            let result = guarded(action, || slot.actions.invoke(action, args, &mut cx)).map_err(ToolError::from)?;
            let (ops, opened, message) =
                (std::mem::take(&mut cx.ops), std::mem::take(&mut cx.opened), cx.message.take());
            return Ok(self.finish(ops, opened, message, result));
        }

        let Some(idx) = self.index_of(win) else {
            let why = if self.ids.ever_used(win) { "was closed" } else { "does not exist" };
            return Err(ToolError::new(ErrorCode::WindowNotFound, format!("Window '{win}' {why}")));
        };
        let entry = &self.windows[idx];
        if !entry.operable {
            return Err(ToolError::new(
                ErrorCode::BlockedByModal,
                format!("Window '{win}' is blocked by a modal dialog; operate the windows in operableWindowIds"),
            ));
        }
        let title = &entry.published.state.title;
        let spec = entry.spec.action(action).cloned().ok_or_else(|| not_available_unknown(action, title))?;
        let window = entry.window.as_ref().expect("window present outside invoke");
        if !window.available(action) {
            return Err(ToolError::new(
                ErrorCode::ActionNotAvailable,
                format!("'{action}' is not available in '{title}' right now"),
            ));
        }
        if spec.takes_expected_version()
            && let Some(expected) = args.get(EXPECTED_VERSION)
        {
            check_expected_version(expected, entry.published.state.version)?;
        }
        check_args(&spec, &mut args)?;
        args.remove(EXPECTED_VERSION);

        let entry = &mut self.windows[idx];
        // Whatever the outcome, the action may have changed its window: re-render it.
        entry.dirty = true;
        let mut window = entry.window.take().expect("window present outside invoke");
        let mut cx = ActionContext::new(&mut self.ids, Some(win.to_owned()), by_user);
        let outcome = guarded(action, || window.invoke(action, args, &mut cx));
        let (ops, opened, message) = (std::mem::take(&mut cx.ops), std::mem::take(&mut cx.opened), cx.message.take());
        self.windows[idx].window = Some(window);
        let result = outcome.map_err(ToolError::from)?;
        Ok(self.finish(ops, opened, message, result))
    }

    fn finish(
        &mut self,
        ops: Vec<Op>,
        opened: Vec<String>,
        message: Option<String>,
        result: Option<Value>,
    ) -> ToolResult {
        self.apply(ops);
        let opened: Vec<String> = opened.into_iter().filter(|id| self.index_of(id).is_some()).collect();
        ToolResult { message, opened_window_ids: (!opened.is_empty()).then_some(opened), result }
    }

    fn apply(&mut self, ops: Vec<Op>) {
        for op in ops {
            match op {
                Op::Open { handle, internal_id, modal, owner, window, register, shared_state } => {
                    let spec = register(&mut self.catalog.write().unwrap_or_else(|e| e.into_inner()));
                    // A window-level modal needs a live owner; otherwise it opens as an app-level
                    // modal rather than as a dangling reference (GB-4.2-12).
                    let owner = owner.filter(|o| self.index_of(o).is_some());
                    // Rendered now, at version 1; the commit renders it again for its actions.
                    let rendered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| window.render()))
                        .inspect_err(|_| tracing::error!(window = %handle, "render panicked on open"))
                        .map(one_line_title_and_summary)
                        .unwrap_or_else(|_| Rendered {
                            title: spec.meta.title.clone(),
                            summary: None,
                            blocks: Vec::new(),
                        });
                    let state = WindowState {
                        id: handle.clone(),
                        title: rendered.title,
                        modal,
                        owner_id: owner.clone(),
                        version: 1,
                        summary: rendered.summary,
                        blocks: rendered.blocks,
                    };
                    self.index.insert(handle.clone(), self.windows.len());
                    self.windows.push(Entry {
                        handle,
                        internal_id,
                        modal,
                        owner,
                        spec,
                        window: Some(window),
                        shared_state,
                        dirty: true,
                        operable: false,
                        published: PublishedWindow::new(state),
                        tools: Vec::new(),
                    });
                    self.topology_changed = true;
                }
                Op::Update { id, apply } => {
                    if let Some(i) = self.index_of(&id)
                        && let Some(w) = self.windows[i].window.as_mut()
                    {
                        apply(w.as_any_mut());
                        self.windows[i].dirty = true;
                    }
                }
                Op::Close(id) => {
                    let mut doomed = vec![id];
                    while let Some(id) = doomed.pop() {
                        if self.index_of(&id).is_none() {
                            continue;
                        }
                        doomed.extend(
                            self.windows
                                .iter()
                                .filter(|e| e.modal && e.owner.as_deref() == Some(id.as_str()))
                                .map(|e| e.handle.clone()),
                        );
                        self.windows.retain(|e| e.handle != id);
                        self.reindex();
                        self.topology_changed = true;
                    }
                }
            }
        }
    }

    fn reindex(&mut self) {
        self.index.clear();
        self.index.extend(self.windows.iter().enumerate().map(|(i, e)| (e.handle.clone(), i)));
    }

    fn index_of(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// Renders window `e` (a panicking render keeps the last good content rather than taking
    /// the UI down) and re-checks its actions. Returns (its content changed, its tools changed).
    fn refresh(e: &mut Entry) -> (bool, bool) {
        let Some(w) = e.window.as_ref() else { return (false, false) };
        let fresh = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.render()))
            .inspect_err(|_| tracing::error!(window = %e.handle, "render panicked; keeping the previous content"))
            .ok()
            .map(one_line_title_and_summary);
        let old = &e.published.state;
        let mut content_changed = false;
        let mut title_changed = false;
        if let Some(fresh) = fresh
            && (fresh.title != old.title || fresh.summary != old.summary || fresh.blocks != old.blocks)
        {
            let version = old.version + i64::from(fresh.summary != old.summary || fresh.blocks != old.blocks);
            title_changed = fresh.title != old.title;
            e.published = PublishedWindow::new(WindowState {
                id: e.handle.clone(),
                title: fresh.title,
                modal: e.modal,
                owner_id: e.owner.clone(),
                version,
                summary: fresh.summary,
                blocks: fresh.blocks,
            });
            content_changed = true;
        }
        let title = &e.published.state.title;
        let mut tools_changed = title_changed;
        let mut i = 0;
        for a in &e.spec.actions {
            if !w.available(&a.name) {
                continue;
            }
            match e.tools.get(i) {
                Some(t) if Arc::ptr_eq(&t.action, a) && !title_changed => {}
                _ => {
                    tools_changed = true;
                    let entry = ToolEntry {
                        name: format!("{}__{}", e.handle, a.name),
                        window_id: Some(e.handle.clone()),
                        window_title: Some(title.clone()),
                        action: a.clone(),
                        window_type: Some(e.spec.clone()),
                    };
                    if i < e.tools.len() {
                        e.tools[i] = entry;
                    } else {
                        e.tools.push(entry);
                    }
                }
            }
            i += 1;
        }
        if e.tools.len() > i {
            e.tools.truncate(i);
            tools_changed = true;
        }
        (content_changed, tools_changed)
    }

    /// Re-checks the app-level actions. Returns whether the available ones changed.
    fn refresh_app(slot: &mut AppSlot) -> bool {
        let available: Vec<&Arc<ActionSpec>> =
            slot.spec.actions.iter().filter(|a| slot.actions.available(&a.name)).collect();
        if available.len() == slot.tools.len()
            && available.iter().zip(&slot.tools).all(|(a, t)| Arc::ptr_eq(a, &t.action))
        {
            return false;
        }
        slot.tools = available
            .into_iter()
            .map(|a| ToolEntry {
                name: format!("{APP_PREFIX}__{}", a.name),
                window_id: None,
                window_title: None,
                action: a.clone(),
                window_type: None,
            })
            .collect();
        true
    }

    /// Re-renders the windows an operation could have changed (see [which windows are
    /// re-rendered](Ui#which-windows-are-re-rendered)), bumps versions where `summary`/`blocks`
    /// changed, recomputes the operable set and tool list when they can have changed, and
    /// publishes when anything differs.
    pub(crate) fn commit(&mut self) {
        let topology = std::mem::take(&mut self.topology_changed);
        let mut windows_changed = topology;
        let mut tools_changed = topology;
        for e in &mut self.windows {
            if e.dirty || e.shared_state || self.render_all {
                e.dirty = false;
                let (content, tools) = Self::refresh(e);
                windows_changed |= content;
                tools_changed |= tools && e.operable;
            }
        }
        if let Some(slot) = self.app.as_mut()
            && (std::mem::take(&mut self.app_dirty) || self.render_all)
        {
            tools_changed |= Self::refresh_app(slot);
        }
        #[cfg(debug_assertions)]
        if !self.render_all {
            self.check_recorded_changes();
        }
        if topology {
            self.operable =
                operable_set(self.windows.iter().map(|e| (e.handle.as_str(), e.modal, e.owner.as_deref()))).into();
            let set: std::collections::HashSet<&str> = self.operable.iter().map(String::as_str).collect();
            for e in &mut self.windows {
                e.operable = set.contains(e.handle.as_str());
            }
            self.app_modal = self.windows.iter().any(|e| e.modal && e.owner.is_none());
        }
        let prev = self.current.clone();
        if !windows_changed && !tools_changed && prev.generation > 0 {
            return;
        }
        let content = if windows_changed || prev.generation == 0 {
            Content::new(self.operable.clone(), self.windows.iter().map(|e| e.published.clone()).collect())
        } else {
            prev.content.clone()
        };
        let (tools, tool_index) = if tools_changed {
            let tools = self.tool_list();
            let same = tools.len() == prev.tools.len()
                && tools
                    .iter()
                    .zip(prev.tools.iter())
                    .all(|(a, b)| a.name == b.name && a.window_title == b.window_title);
            if same {
                (prev.tools.clone(), prev.tool_index.clone())
            } else {
                let index = tools.iter().enumerate().map(|(i, t)| (t.name.clone(), i)).collect();
                (Arc::from(tools), Arc::new(index))
            }
        } else {
            (prev.tools.clone(), prev.tool_index.clone())
        };
        let tools_changed = !Arc::ptr_eq(&tools, &prev.tools);
        let windows_changed =
            !Arc::ptr_eq(&content, &prev.content) && (prev.generation == 0 || !same_content(&content, &prev.content));
        if !windows_changed && !tools_changed {
            return;
        }
        let next = Arc::new(Published {
            generation: prev.generation + 1,
            windows_rev: prev.windows_rev + u64::from(windows_changed),
            tools_rev: prev.tools_rev + u64::from(tools_changed),
            tools,
            tool_index,
            content: if windows_changed { content } else { prev.content.clone() },
        });
        self.current = next.clone();
        self.published.send_replace(next);
    }

    /// The listed tools: app tools unless an app-level modal is open, then each operable
    /// window's, in `operableWindowIds` order (GB-5.1-4).
    fn tool_list(&self) -> Vec<ToolEntry> {
        let mut tools = Vec::new();
        if let Some(slot) = &self.app
            && !self.app_modal
        {
            tools.extend(slot.tools.iter().cloned());
        }
        for i in self.operable.iter().filter_map(|id| self.index_of(id)) {
            tools.extend(self.windows[i].tools.iter().cloned());
        }
        tools
    }

    /// Debug builds: every window not re-rendered in this commit must still render what it
    /// published and offer the same actions, or it changed through a path the model did not
    /// record (see [which windows are re-rendered](Ui#which-windows-are-re-rendered)).
    #[cfg(debug_assertions)]
    fn check_recorded_changes(&self) {
        for e in self.windows.iter().filter(|e| !e.shared_state) {
            let Some(w) = e.window.as_ref() else { continue };
            let Ok(fresh) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.render())) else { continue };
            let fresh = one_line_title_and_summary(fresh);
            let old = &e.published.state;
            let available: Vec<&str> =
                e.spec.actions.iter().filter(|a| w.available(&a.name)).map(|a| a.name.as_str()).collect();
            let listed: Vec<&str> = e.tools.iter().map(|t| t.action.name.as_str()).collect();
            if fresh.title != old.title
                || fresh.summary != old.summary
                || fresh.blocks != old.blocks
                || available != listed
            {
                panic!(
                    "bridge: window '{}' ({}) changed without an operation on it (its render or available actions \
                     differ from what was published). A window that reads state outside its own value must be \
                     declared #[bridge_window(shared_state)], or the host must call Ui::refresh_all() after changing \
                     that state (see the Ui docs, 'Which windows are re-rendered')",
                    e.handle, e.spec.meta.type_name
                );
            }
        }
        if let Some(slot) = &self.app {
            let available: Vec<&str> =
                slot.spec.actions.iter().filter(|a| slot.actions.available(&a.name)).map(|a| a.name.as_str()).collect();
            let listed: Vec<&str> = slot.tools.iter().map(|t| t.action.name.as_str()).collect();
            assert!(
                available == listed,
                "bridge: the app-level actions available changed without an app-level operation; call \
                 Ui::refresh_all() after changing the state they read"
            );
        }
    }

    /// Internal ids of open windows, for diagnostics.
    pub fn internal_id(&self, id: &str) -> Option<&str> {
        self.index_of(id).and_then(|i| self.windows[i].internal_id.as_deref())
    }
}

/// Whether two contents show the same `app://windows` (windows that were re-rendered to the
/// same state are the same).
fn same_content(a: &Content, b: &Content) -> bool {
    a.operable == b.operable
        && a.windows.len() == b.windows.len()
        && a.windows.iter().zip(&b.windows).all(|(x, y)| Arc::ptr_eq(x, y) || x.state == y.state)
}

fn not_available_unknown(action: &str, owner: &str) -> ToolError {
    ToolError::new(ErrorCode::ActionNotAvailable, format!("'{owner}' has no action '{action}'"))
}

/// `expectedVersion` present on a tool that declares it: a version (an integer from 1 to
/// 2^53 − 1, as its schema says) other than the window's is `stale_state` (GB-7.1-2), checked
/// before argument validation (OQ-GB-21). Anything else (`-1`, `1.5`, `"3"`) is left to the
/// schema, which answers `validation_failed`; `null` is dropped there as absent (GB-7.1-3).
fn check_expected_version(expected: &Value, current: i64) -> Result<(), ToolError> {
    // `5.0` is the integer 5 to JSON Schema too: it must not slip past the version check.
    let n = expected
        .as_i64()
        .or_else(|| expected.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 1e18).map(|f| f as i64));
    let Some(n) = n.filter(|n| (1..=crate::catalog::schema::MAX_SAFE_INTEGER).contains(n)) else {
        return Ok(());
    };
    if n == current { Ok(()) } else { Err(ToolError::stale_state(n, current)) }
}

/// Runs an app action, turning a panic inside it into an error instead of killing the UI
/// owner thread. The window's state may be partly changed; the commit that follows re-renders
/// it, so versions and notifications stay truthful.
fn guarded(
    action: &str,
    f: impl FnOnce() -> Result<Option<Value>, crate::gui::ActionError>,
) -> Result<Option<Value>, crate::gui::ActionError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
        tracing::error!(action, "action panicked");
        Err(crate::gui::ActionError::not_available(format!(
            "'{action}' failed inside the app and was aborted; re-read app://windows before retrying"
        )))
    })
}

fn check_args(spec: &ActionSpec, args: &mut Map<String, Value>) -> Result<(), ToolError> {
    let problems = spec.validate(args);
    if problems.is_empty() {
        return Ok(());
    }
    let mut err = ToolError::from(crate::gui::ActionError::fields(problems.fields));
    if problems.omitted > 0 {
        err.message = format!(
            "{}; {} more problems left out (at most {} are listed)",
            err.message,
            problems.omitted,
            crate::catalog::schema::MAX_REPORTED_PROBLEMS
        );
    }
    Err(err)
}

/// The operable set over `(id, modal, ownerId)` triples in opening order (GB-2-5, GB-2-6,
/// GB-10.2-2, OQ-GB-1, OQ-GB-3, OQ-GB-4), in O(windows). Public so that tests can compare it with
/// a model.
pub fn operable_set<'a>(windows: impl Iterator<Item = (&'a str, bool, Option<&'a str>)> + Clone) -> Vec<String> {
    let all: Vec<(&str, bool, Option<&str>)> = windows.collect();
    let ids: HashSet<&str> = all.iter().map(|w| w.0).collect();
    // Window-level modals whose owner is gone count as roots, never as dangling children.
    let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
    for w in &all {
        if let (true, Some(owner)) = (w.1, w.2)
            && ids.contains(owner)
        {
            children.entry(owner).or_default().push(w.0);
        }
    }
    // A tree's tops are its leaves, in opening order (depth first); `seen` guards against
    // ownership cycles in hand-made input.
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut tops = |root: &'a str, out: &mut Vec<String>| {
        let mut stack = vec![root];
        while let Some(id) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            match children.get(id) {
                Some(kids) => stack.extend(kids.iter().rev().copied()),
                None => out.push(id.to_owned()),
            }
        }
    };
    if let Some(app_modal) = all.iter().rev().find(|w| w.1 && w.2.is_none()) {
        tops(app_modal.0, &mut out);
        return out;
    }
    for w in &all {
        let is_root = match (w.1, w.2) {
            (_, None) => true,
            (false, Some(_)) => true, // OQ-GB-2: treat as top-level
            (true, Some(owner)) => !ids.contains(owner),
        };
        if is_root {
            tops(w.0, &mut out);
        }
    }
    out
}
