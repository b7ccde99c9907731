use crate::catalog::{ActionSpec, AppSpec, Catalog, WindowSpec, schema::EXPECTED_VERSION};
use crate::gui::context::{ActionContext, IdAllocator, Op, OpenOptions};
use crate::gui::window::{AnyActions, AnyWindow, Rendered};
use crate::gui::{BridgeActions, BridgeWindow};
use crate::model::{ErrorCode, ToolError, ToolResult, WindowState, WindowsSnapshot};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::{Arc, RwLock};
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
    if !s.chars().any(|c| bidi(c) || breaks(c)) {
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

/// The state published after every operation: what readers see without entering the queue.
#[derive(Debug, Clone)]
pub struct Published {
    /// Bumps on every commit that changed anything.
    pub generation: u64,
    /// Bumps whenever the `app://windows` content changed (→ `resources/updated`, GB-6).
    pub windows_rev: u64,
    /// Bumps whenever the tool list changed (→ `tools/list_changed`, GB-5.1-6, OQ-GB-16).
    pub tools_rev: u64,
    /// The snapshot.
    pub snapshot: WindowsSnapshot,
    /// The snapshot serialized once, shared by every `resources/read`.
    pub snapshot_json: Arc<str>,
    /// The tools of operable windows whose actions are available (GB-5.1-4).
    pub tools: Arc<[ToolEntry]>,
}

impl Published {
    /// The state before anything was published: no windows, no tools, revisions 0.
    pub(crate) fn empty() -> Self {
        Published {
            generation: 0,
            windows_rev: 0,
            tools_rev: 0,
            snapshot: WindowsSnapshot::default(),
            snapshot_json: Arc::from(r#"{"operableWindowIds":[],"windows":[]}"#),
            tools: Arc::from(Vec::new()),
        }
    }
}

struct Entry {
    handle: String,
    internal_id: Option<String>,
    modal: bool,
    owner: Option<String>,
    version: i64,
    rendered: Rendered,
    spec: Arc<WindowSpec>,
    window: Option<Box<dyn AnyWindow>>,
}

struct AppSlot {
    spec: Arc<AppSpec>,
    actions: Box<dyn AnyActions>,
}

/// The window model: every open window, topology (`modal`, `ownerId`), versions, the operable
/// set, and the one dispatcher every operation goes through, the agent's and the user's.
///
/// A `Ui` lives on one thread (the GUI's, or the headless owner's) and runs one operation at a
/// time (GB-10.1-3). After every operation it re-renders every window, bumps the `version`
/// of each whose `summary`/`blocks` changed (GB-4.2-8), and publishes the new state.
pub struct Ui {
    catalog: Arc<RwLock<Catalog>>,
    app: Option<AppSlot>,
    windows: Vec<Entry>,
    ids: IdAllocator,
    published: watch::Sender<Arc<Published>>,
    current: Arc<Published>,
    /// Set by `apply` when windows opened or closed, so `commit` rebuilds the snapshot.
    topology_changed: bool,
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
    ) -> Self {
        let current = Arc::new(Published::empty());
        let (published, _) = watch::channel(current.clone());
        let app = match (app, app_spec) {
            (Some(actions), Some(spec)) => Some(AppSlot { spec, actions }),
            _ => None,
        };
        let mut ui = Self {
            catalog,
            app,
            windows: Vec::new(),
            ids: IdAllocator::default(),
            published,
            current,
            topology_changed: true,
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
        &self.current.snapshot
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
            self.apply(ops);
        }
        self.commit();
        out
    }

    /// Runs tool `name` with `args` as the agent would (`by_user = false`) or as the human user
    /// (`by_user = true`): the GB-7.2 runtime checks in OQ-GB-21 order (`window_not_found` →
    /// `blocked_by_modal` → `action_not_available` → `stale_state` → `validation_failed`), then
    /// the action, then its effects, then one commit. A rejected call leaves windows unopened
    /// and unclosed.
    pub fn call_tool(&mut self, name: &str, args: Map<String, Value>, by_user: bool) -> Result<ToolResult, ToolError> {
        let listed = (!by_user)
            .then(|| {
                self.current.tools.iter().find(|t| t.name == name).map(|t| (t.window_id.clone(), t.action.name.clone()))
            })
            .flatten();
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
        self.current.snapshot.operable_window_ids.iter().any(|w| w == id)
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
        let app_modal = self.top_app_modal().is_some();
        if win == APP_PREFIX {
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
        if !self.current_operable().iter().any(|id| id == win) {
            return Err(ToolError::new(
                ErrorCode::BlockedByModal,
                format!("Window '{win}' is blocked by a modal dialog; operate the windows in operableWindowIds"),
            ));
        }
        let entry = &self.windows[idx];
        let spec =
            entry.spec.action(action).cloned().ok_or_else(|| not_available_unknown(action, &entry.rendered.title))?;
        let window = entry.window.as_ref().expect("window present outside invoke");
        if !window.available(action) {
            return Err(ToolError::new(
                ErrorCode::ActionNotAvailable,
                format!("'{action}' is not available in '{}' right now", entry.rendered.title),
            ));
        }
        if spec.takes_expected_version()
            && let Some(expected) = args.get(EXPECTED_VERSION)
        {
            check_expected_version(expected, entry.version)?;
        }
        check_args(&spec, &mut args)?;
        args.remove(EXPECTED_VERSION);

        let mut window = self.windows[idx].window.take().expect("window present outside invoke");
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
        self.topology_changed |= !ops.is_empty();
        for op in ops {
            match op {
                Op::Open { handle, internal_id, modal, owner, window, register } => {
                    let spec = register(&mut self.catalog.write().unwrap_or_else(|e| e.into_inner()));
                    // A window-level modal needs a live owner; otherwise it opens as an app-level
                    // modal rather than as a dangling reference (GB-4.2-12).
                    let owner = owner.filter(|o| self.index_of(o).is_some());
                    let rendered = window.render();
                    self.windows.push(Entry {
                        handle,
                        internal_id,
                        modal,
                        owner,
                        version: 1,
                        rendered,
                        spec,
                        window: Some(window),
                    });
                }
                Op::Update { id, apply } => {
                    if let Some(w) = self.windows.iter_mut().find(|e| e.handle == id).and_then(|e| e.window.as_mut()) {
                        apply(w.as_any_mut());
                    }
                }
                Op::Close(id) => {
                    let mut doomed = vec![id];
                    while let Some(id) = doomed.pop() {
                        doomed.extend(
                            self.windows
                                .iter()
                                .filter(|e| e.modal && e.owner.as_deref() == Some(id.as_str()))
                                .map(|e| e.handle.clone()),
                        );
                        self.windows.retain(|e| e.handle != id);
                    }
                }
            }
        }
    }

    fn index_of(&self, id: &str) -> Option<usize> {
        self.windows.iter().position(|e| e.handle == id)
    }

    /// The most recently opened app-level modal (OQ-GB-4).
    fn top_app_modal(&self) -> Option<&Entry> {
        self.windows.iter().rev().find(|e| e.modal && e.owner.is_none())
    }

    /// The operable set (GB-2-5, GB-2-6, GB-10.2-2): with an app-level modal, the tops of its
    /// modal tree; otherwise the tops of every top-level window's modal tree. A tree's tops are
    /// its leaves (OQ-GB-3).
    fn current_operable(&self) -> Vec<String> {
        operable_set(self.windows.iter().map(|e| (e.handle.as_str(), e.modal, e.owner.as_deref())))
    }

    /// Re-renders every window, bumps versions where `summary`/`blocks` changed, recomputes the
    /// operable set and tool list, and publishes when anything differs.
    pub(crate) fn commit(&mut self) {
        let mut content_changed = self.topology_changed;
        self.topology_changed = false;
        for e in &mut self.windows {
            // A panicking render keeps the last good content rather than taking the UI down.
            let fresh = e.window.as_ref().and_then(|w| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.render()))
                    .inspect_err(
                        |_| tracing::error!(window = %e.handle, "render panicked; keeping the previous content"),
                    )
                    .ok()
                    .map(one_line_title_and_summary)
            });
            if let Some(fresh) = fresh
                && fresh != e.rendered
            {
                if fresh.summary != e.rendered.summary || fresh.blocks != e.rendered.blocks {
                    e.version += 1;
                }
                e.rendered = fresh;
                content_changed = true;
            }
        }
        let operable = self.current_operable();
        let prev = self.current.clone();
        let snapshot = if !content_changed && prev.generation > 0 {
            prev.snapshot.clone()
        } else {
            WindowsSnapshot {
                operable_window_ids: operable.clone(),
                windows: self
                    .windows
                    .iter()
                    .map(|e| WindowState {
                        id: e.handle.clone(),
                        title: e.rendered.title.clone(),
                        modal: e.modal,
                        owner_id: e.owner.clone(),
                        version: e.version,
                        summary: e.rendered.summary.clone(),
                        blocks: e.rendered.blocks.clone(),
                    })
                    .collect(),
            }
        };
        let mut tools = Vec::new();
        if let Some(slot) = &self.app
            && self.top_app_modal().is_none()
        {
            for a in &slot.spec.actions {
                if slot.actions.available(&a.name) {
                    tools.push(ToolEntry {
                        name: format!("{APP_PREFIX}__{}", a.name),
                        window_id: None,
                        window_title: None,
                        action: a.clone(),
                        window_type: None,
                    });
                }
            }
        }
        for id in &operable {
            let Some(e) = self.windows.iter().find(|e| &e.handle == id) else { continue };
            let Some(w) = e.window.as_ref() else { continue };
            for a in &e.spec.actions {
                if w.available(&a.name) {
                    tools.push(ToolEntry {
                        name: format!("{}__{}", e.handle, a.name),
                        window_id: Some(e.handle.clone()),
                        window_title: Some(e.rendered.title.clone()),
                        action: a.clone(),
                        window_type: Some(e.spec.clone()),
                    });
                }
            }
        }
        let windows_changed = content_changed && (snapshot != prev.snapshot || prev.generation == 0);
        let tools_changed = tools.len() != prev.tools.len()
            || tools.iter().zip(prev.tools.iter()).any(|(a, b)| a.name != b.name || a.window_title != b.window_title);
        if !windows_changed && !tools_changed {
            return;
        }
        let snapshot_json: Arc<str> = if windows_changed {
            Arc::from(serde_json::to_string(&snapshot).expect("snapshot serializes"))
        } else {
            prev.snapshot_json.clone()
        };
        let next = Arc::new(Published {
            generation: prev.generation + 1,
            windows_rev: prev.windows_rev + u64::from(windows_changed),
            tools_rev: prev.tools_rev + u64::from(tools_changed),
            snapshot,
            snapshot_json,
            tools: Arc::from(tools),
        });
        self.current = next.clone();
        self.published.send_replace(next);
    }

    /// Internal ids of open windows, for diagnostics.
    pub fn internal_id(&self, id: &str) -> Option<&str> {
        self.windows.iter().find(|e| e.handle == id).and_then(|e| e.internal_id.as_deref())
    }
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
    let fields = spec.validate(args);
    if fields.is_empty() { Ok(()) } else { Err(crate::gui::ActionError::fields(fields).into()) }
}

/// The operable set over `(id, modal, ownerId)` triples in opening order (GB-2-5, GB-2-6,
/// GB-10.2-2, OQ-GB-1, OQ-GB-3, OQ-GB-4). Public so that tests can compare it with a model.
pub fn operable_set<'a>(windows: impl Iterator<Item = (&'a str, bool, Option<&'a str>)> + Clone) -> Vec<String> {
    let all: Vec<(&str, bool, Option<&str>)> = windows.collect();
    let exists = |id: &str| all.iter().any(|w| w.0 == id);
    // Window-level modals whose owner is gone count as roots, never as dangling children.
    let children = |id: &str| -> Vec<&str> { all.iter().filter(|w| w.1 && w.2 == Some(id)).map(|w| w.0).collect() };
    fn tops<'b>(id: &'b str, children: &dyn Fn(&str) -> Vec<&'b str>, out: &mut Vec<String>) {
        let kids = children(id);
        if kids.is_empty() {
            out.push(id.to_owned());
        } else {
            for k in kids {
                tops(k, children, out);
            }
        }
    }
    let mut out = Vec::new();
    if let Some(app_modal) = all.iter().rev().find(|w| w.1 && w.2.is_none()) {
        tops(app_modal.0, &children, &mut out);
        return out;
    }
    for w in &all {
        let is_root = match (w.1, w.2) {
            (_, None) => true,
            (false, Some(_)) => true, // OQ-GB-2: treat as top-level
            (true, Some(owner)) => !exists(owner),
        };
        if is_root {
            tops(w.0, &children, &mut out);
        }
    }
    out
}
