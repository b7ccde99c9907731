//! The window manager: every open window, its topology, versions and the commit that
//! publishes them; the operations a host and the dispatcher ([`dispatch`]) run on it.

mod dispatch;
mod undo;

use crate::catalog::{ActionSpec, AppSpec, ArgumentLimits, Catalog, WindowSpec};
use crate::gui::actor::Actor;
use crate::gui::context::{ActionContext, IdAllocator, Op, OpenOptions, UserOnly};
use crate::gui::journal::{Journal, JournalLimits, Operation, Outcome, Pending};
use crate::gui::published::{Content, Published, PublishedWindow, ToolEntry, UserOnlyMap};
use crate::gui::text::one_line_title_and_summary;
use crate::gui::topology::operable_set;
use crate::gui::window::{AnyActions, AnyWindow, Rendered};
use crate::gui::{BridgeActions, BridgeWindow};
use crate::model::{WindowState, WindowsSnapshot};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use tokio::sync::watch;

pub use dispatch::AgentCall;
pub(crate) use dispatch::capped_error;
pub use undo::{DEFAULT_UNDO_DEPTH, UndoError, UndoPoint, Undone};

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
    /// Marked failed (see [`Ui::failure`]): why, shown as a notice; agents cannot operate it.
    failed: Option<String>,
    /// Its type keeps undo copies (`#[bridge_window(undo)]`).
    undoable: bool,
    /// Its actions that are the user's alone beyond the catalog's ([`OpenOptions::user_only`]).
    user_only: UserOnly,
    /// The agent's kept changes, oldest first ([`Ui::undo`]).
    undo: undo::Stack,
    /// Counts the operations that may have changed its value (shown or not): an undo point is
    /// taken back only while nothing else has.
    changes: u64,
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
/// # Who made each operation
/// Every operation has an [`Actor`]: an agent's tool calls ([`Ui::call_tool`] with `by_user =
/// false`, [`Ui::call_tool_as`], and every call through [`Bridge`](crate::gui::Bridge) and MCP),
/// the user's calls and edits ([`Ui::call_tool`] with `by_user = true`, [`Ui::edit`],
/// [`Ui::edit_app`]), and the app's own changes ([`Ui::open`], [`Ui::close`],
/// [`Ui::refresh_all`], [`Ui::clear_failure`]). A `shared_state` window re-rendered after an
/// operation changes as part of that operation, on its actor's account. The table is on
/// [`Actor`]. Each operation appends one entry to the [`Journal`] ([`Ui::journal`]) before it
/// returns.
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
    /// The same, for [`Bridge::watch_agent_calls`](crate::gui::Bridge::watch_agent_calls).
    agent_calls: Arc<watch::Sender<Option<AgentCall>>>,
    /// The app-level action set is marked failed (see [`Ui::failure`]): why.
    app_failed: Option<String>,
    /// Caps on a call's arguments (`BridgeBuilder::argument_limits`).
    limits: ArgumentLimits,
    /// The journal every operation appends to.
    journal: Journal,
    /// Whether it records (so an app without it pays nothing per operation).
    journal_on: bool,
    /// Whether the journal has a sink (agent calls are refused while it fails).
    journal_sink: bool,
    /// Its bounds (read on every call without taking its lock).
    journal_limits: JournalLimits,
    /// Windows opened and closed since the current operation began (its journal entry's).
    op_opened: Vec<String>,
    op_closed: Vec<String>,
    /// Agent changes kept per undoable window (`BridgeBuilder::undo_depth`).
    undo_depth: usize,
    /// The copy taken before the agent call under way, kept if it succeeds.
    undo_taken: Option<undo::Taken>,
}

impl Ui {
    pub(crate) fn new(
        catalog: Arc<RwLock<Catalog>>,
        app: Option<Box<dyn AnyActions>>,
        app_spec: Option<Arc<AppSpec>>,
        render_all: bool,
        limits: ArgumentLimits,
        journal: Journal,
        undo_depth: usize,
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
            agent_calls: Arc::new(watch::channel(None).0),
            app_failed: None,
            limits,
            journal_on: journal.is_on(),
            journal_sink: journal.has_sink(),
            journal_limits: journal.limits(),
            journal,
            op_opened: Vec::new(),
            op_closed: Vec::new(),
            undo_depth,
            undo_taken: None,
        };
        ui.commit();
        ui
    }

    /// The sender of every agent call's [`AgentCall`] (see [`Ui::last_agent_call`]).
    pub(crate) fn agent_calls(&self) -> Arc<watch::Sender<Option<AgentCall>>> {
        self.agent_calls.clone()
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

    /// Opens a window from the host (not from an action) and publishes the change: an
    /// operation of the app's own code ([`Actor::App`]). Returns its external id.
    pub fn open<W: BridgeWindow + BridgeActions>(&mut self, window: W, options: OpenOptions) -> String {
        let pending = self.begin(Actor::App, Operation::Open, None);
        let mut cx = ActionContext::new(&mut self.ids, None, Actor::App);
        let id = cx.open_with(window, options);
        let ops = std::mem::take(&mut cx.ops);
        self.apply(ops);
        self.commit();
        if let Some(mut pending) = pending {
            pending.window_id = Some(id.clone());
            pending.window_title = self.index_of(&id).map(|i| self.windows[i].published.state.title.clone());
            self.end(pending, Outcome::Ok, None);
        }
        id
    }

    /// Closes window `id` (and the modals it owns) from the host, as the app's own code
    /// ([`Actor::App`]). Returns whether it was open.
    pub fn close(&mut self, id: &str) -> bool {
        let found = self.index_of(id).is_some();
        let pending = if found { self.begin(Actor::App, Operation::Close, Some(id)) } else { None };
        self.apply(vec![Op::Close(id.to_owned())]);
        self.commit();
        if let Some(pending) = pending {
            self.end(pending, Outcome::Ok, None);
        }
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

    /// The human user's edit of window `id` of type `W` ([`Actor::User`]; the app's own code
    /// edits with [`Ui::edit_as`] and [`Actor::App`]), through the same path as an agent's
    /// operation: it runs in turn, bumps versions and fires notifications.
    /// `None` when the window is not open or not a `W`.
    ///
    /// If `f` panics, the window stays open with what `f` changed before panicking, the
    /// windows it asked to open or close are left alone, and the window is marked failed (see
    /// [`Ui::failure`]) and re-rendered with a notice; then the panic resumes, in the caller.
    pub fn edit<W: 'static, R>(&mut self, id: &str, f: impl FnOnce(&mut W, &mut ActionContext<'_>) -> R) -> Option<R> {
        self.edit_as(Actor::User, id, f)
    }

    /// [`Ui::edit`] on the account of `actor`: [`Actor::User`] (what `edit` does),
    /// [`Actor::App`] for the app's own code, or an agent for an app that runs an agent's
    /// request itself. `f` sees it as [`ActionContext::actor`].
    pub fn edit_as<W: 'static, R>(
        &mut self,
        actor: Actor,
        id: &str,
        f: impl FnOnce(&mut W, &mut ActionContext<'_>) -> R,
    ) -> Option<R> {
        let idx = self.index_of(id)?;
        let pending = self.begin(actor.clone(), Operation::Edit, Some(id));
        let mut window = self.windows[idx].window.take()?;
        let mut cx = ActionContext::new(&mut self.ids, Some(id.to_owned()), actor);
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            window.as_any_mut().downcast_mut::<W>().map(|w| f(w, &mut cx))
        }));
        let ops = std::mem::take(&mut cx.ops);
        self.windows[idx].window = Some(window);
        let out = match out {
            Ok(out) => out,
            Err(panic) => {
                tracing::error!(window = id, "a host edit panicked; the window is marked failed");
                self.windows[idx].changes += 1;
                self.mark_failed(Some(idx), EDIT_FAILED.to_owned());
                self.commit();
                if let Some(pending) = pending {
                    self.end(pending, Outcome::Panicked, Some(EDIT_FAILED.to_owned()));
                }
                std::panic::resume_unwind(panic);
            }
        };
        if out.is_some() {
            self.windows[idx].dirty = true;
            self.windows[idx].changes += 1;
            self.apply(ops);
        }
        self.commit();
        if let Some(pending) = pending.filter(|_| out.is_some()) {
            self.end(pending, Outcome::Ok, None);
        }
        out
    }

    /// The human user's edit of the app-level state of type `A` ([`Actor::User`]; see
    /// [`Ui::edit_app_as`]). A panic in `f` marks the app-level action set failed (see
    /// [`Ui::failure`]), then resumes in the caller.
    pub fn edit_app<A: 'static, R>(&mut self, f: impl FnOnce(&mut A, &mut ActionContext<'_>) -> R) -> Option<R> {
        self.edit_app_as(Actor::User, f)
    }

    /// [`Ui::edit_app`] on the account of `actor` (see [`Ui::edit_as`]).
    pub fn edit_app_as<A: 'static, R>(
        &mut self,
        actor: Actor,
        f: impl FnOnce(&mut A, &mut ActionContext<'_>) -> R,
    ) -> Option<R> {
        self.app.as_ref()?;
        let pending = self.begin(actor.clone(), Operation::Edit, None);
        let slot = self.app.as_mut()?;
        let mut cx = ActionContext::new(&mut self.ids, None, actor);
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            slot.actions.as_any_mut().downcast_mut::<A>().map(|a| f(a, &mut cx))
        }));
        let ops = std::mem::take(&mut cx.ops);
        let out = match out {
            Ok(out) => out,
            Err(panic) => {
                tracing::error!("a host edit of the app state panicked; the app-level actions are marked failed");
                self.mark_failed(None, EDIT_FAILED.to_owned());
                self.commit();
                if let Some(pending) = pending {
                    self.end(pending, Outcome::Panicked, Some(EDIT_FAILED.to_owned()));
                }
                std::panic::resume_unwind(panic);
            }
        };
        if out.is_some() {
            self.app_dirty = true;
            self.apply(ops);
        }
        self.commit();
        if let Some(pending) = pending.filter(|_| out.is_some()) {
            self.end(pending, Outcome::Ok, None);
        }
        out
    }

    /// Re-renders every window and re-checks every action's availability now, bumping versions
    /// and publishing what changed: for a host that changed state windows read outside their
    /// own value (see [which windows are re-rendered](Ui#which-windows-are-re-rendered)). An
    /// operation of the app's own code ([`Actor::App`]).
    pub fn refresh_all(&mut self) {
        let pending = self.begin(Actor::App, Operation::Refresh, None);
        for e in &mut self.windows {
            e.dirty = true;
        }
        self.app_dirty = true;
        self.commit();
        if let Some(pending) = pending {
            self.end(pending, Outcome::Ok, None);
        }
    }

    /// Makes action `action` of window `id` the user's alone (`on`) or the agent's again, or
    /// every action of it when `action` is `None` ([`OpenOptions::user_only`] at run time): its
    /// tools leave (or rejoin) the list, and MCP clients get `notifications/tools/list_changed`.
    /// What the type declares `user_only` stays the user's. Not journaled (it changes who may
    /// act, not the window). Returns `false`, changing nothing, when no such window is open or
    /// its type has no action `action` (names are exact: `"confirm"`, not `"Confirm"`).
    pub fn set_user_only(&mut self, id: &str, action: Option<&str>, on: bool) -> bool {
        let Some(i) = self.index_of(id) else { return false };
        let e = &mut self.windows[i];
        if action.is_some_and(|name| e.spec.action(name).is_none()) {
            return false;
        }
        match action {
            None => e.user_only.all = on,
            Some(name) => {
                e.user_only.actions.retain(|a| a != name);
                if on {
                    e.user_only.actions.push(name.to_owned());
                }
            }
        }
        e.dirty = true;
        self.commit();
        true
    }

    /// Whether action `action` of window `id` is the user's alone now (declared so, or chosen
    /// with [`OpenOptions::user_only`] or [`Ui::set_user_only`]); `false` when no such window or
    /// action exists.
    pub fn is_user_only(&self, id: &str, action: &str) -> bool {
        self.index_of(id).is_some_and(|i| {
            let e = &self.windows[i];
            e.spec.action(action).is_some_and(|a| e.user_only.covers(a))
        })
    }

    /// The journal of every operation on this UI (see [`Journal`]): read it for the app's own
    /// display; nothing can change it.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// Starts the journal entry of an operation by `actor` on window `id` (`None`: the app
    /// level or none), when the journal records; clears the windows opened and closed.
    fn begin(&mut self, actor: Actor, operation: Operation, id: Option<&str>) -> Option<Pending> {
        if !self.journal_on {
            return None;
        }
        self.op_opened.clear();
        self.op_closed.clear();
        let mut pending = Pending::new(actor, operation);
        if let Some(id) = id {
            pending.window_id = Some(id.to_owned());
            if let Some(i) = self.index_of(id) {
                let state = &self.windows[i].published.state;
                pending.window_title = Some(state.title.clone());
                pending.version_before = Some(state.version);
            }
        }
        Some(pending)
    }

    /// Appends the entry `pending` began, with `outcome`, `message`, the window's version now
    /// and the windows opened and closed since it began.
    fn end(&mut self, pending: Pending, outcome: Outcome, message: Option<String>) {
        let after = pending
            .window_id
            .as_deref()
            .and_then(|id| self.index_of(id))
            .map(|i| self.windows[i].published.state.version);
        let opened = std::mem::take(&mut self.op_opened);
        let closed = std::mem::take(&mut self.op_closed);
        self.journal.append(pending.finish(outcome, message, after, opened, closed));
    }

    /// Read access for drawing: window `id` if it is open and a `W`. A GUI draws
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

    /// Why window `id` (or, for `id` = [`APP_PREFIX`](crate::catalog::APP_PREFIX) `"app"`, the
    /// app-level action set) is marked failed; `None` when it is not.
    ///
    /// A window is marked failed when an action on it or a host edit of it ([`Ui::edit`])
    /// panicked, so that its state may be half-changed; and, in debug builds, when it changed
    /// without an operation on it (it reads state outside its own value and was not declared
    /// `#[bridge_window(shared_state)]`: the mark says so). A failed window stays open,
    /// re-rendered with its current state plus an error notice holding this text; it lists no
    /// tools, and every agent call to it is refused with `action_not_available` quoting this
    /// text (GB-7.4-8), while the user's own operations go on. It stays marked until the host
    /// has let the user review it and calls [`Ui::clear_failure`].
    pub fn failure(&self, id: &str) -> Option<&str> {
        if id == crate::catalog::APP_PREFIX {
            return self.app_failed.as_deref();
        }
        self.windows.get(self.index_of(id)?)?.failed.as_deref()
    }

    /// Clears the failure mark of window `id` (or of the app-level action set, `id` = `"app"`),
    /// re-rendering it without the notice and listing its tools again. Returns whether it was
    /// marked. See [`Ui::failure`]. An operation of the app's own code ([`Actor::App`]).
    pub fn clear_failure(&mut self, id: &str) -> bool {
        let pending = self.begin(Actor::App, Operation::ClearFailure, (id != crate::catalog::APP_PREFIX).then_some(id));
        let cleared = if id == crate::catalog::APP_PREFIX {
            self.app_dirty = true;
            self.app_failed.take().is_some()
        } else {
            let Some(i) = self.index_of(id) else { return false };
            self.windows[i].dirty = true;
            self.windows[i].failed.take().is_some()
        };
        self.commit();
        if let Some(pending) = pending.filter(|_| cleared) {
            self.end(pending, Outcome::Ok, None);
        }
        cleared
    }

    /// Marks window `idx` (`None`: the app-level action set) failed with `why`, to be
    /// re-rendered with the notice at the next commit.
    fn mark_failed(&mut self, idx: Option<usize>, why: String) {
        match idx {
            Some(i) => {
                self.windows[i].failed = Some(why);
                self.windows[i].dirty = true;
            }
            None => {
                self.app_failed = Some(why);
                self.app_dirty = true;
            }
        }
    }

    fn apply(&mut self, ops: Vec<Op>) {
        for op in ops {
            match op {
                Op::Open { handle, internal_id, modal, owner, window, register, shared_state, user_only } => {
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
                    if self.journal_on {
                        self.op_opened.push(handle.clone());
                    }
                    self.index.insert(handle.clone(), self.windows.len());
                    let undoable = window.undo_copy().is_some();
                    let mut user_only = user_only;
                    // A misspelled approval must not leave the action to agents: fail closed.
                    if let Some(unknown) = user_only.actions.iter().find(|a| spec.action(a).is_none()) {
                        tracing::error!(
                            window = %handle,
                            action = %unknown,
                            "OpenOptions::user_only_action names no action of this window; every action of it is the user's alone"
                        );
                        user_only.all = true;
                    }
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
                        failed: None,
                        undoable,
                        user_only,
                        undo: undo::Stack::new(),
                        changes: 0,
                    });
                    self.topology_changed = true;
                }
                Op::Update { id, apply } => {
                    if let Some(i) = self.index_of(&id)
                        && let Some(w) = self.windows[i].window.as_mut()
                    {
                        apply(w.as_any_mut());
                        self.windows[i].dirty = true;
                        self.windows[i].changes += 1;
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
                        if self.journal_on {
                            self.op_closed.push(id);
                        }
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

    /// Whether action `a` of window `e` (whose value is `w`) is a listed tool now: the window
    /// is not marked failed, the action is not the user's alone, and it is available.
    fn lists(e: &Entry, w: &dyn AnyWindow, a: &ActionSpec) -> bool {
        e.failed.is_none() && !e.user_only.covers(a) && w.available(&a.name)
    }

    /// [`Ui::lists`] for an app-level action (`failed`: the app-level set is marked failed).
    fn lists_app(slot: &AppSlot, failed: bool, a: &ActionSpec) -> bool {
        !failed && !a.user_only && slot.actions.available(&a.name)
    }

    /// Renders window `e` (a panicking render keeps the last good content rather than taking
    /// the UI down) and re-checks its actions. Returns (its content changed, its tools changed).
    fn refresh(e: &mut Entry) -> (bool, bool) {
        let Some(w) = e.window.as_ref() else { return (false, false) };
        let fresh = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.render()))
            .inspect_err(|_| tracing::error!(window = %e.handle, "render panicked; keeping the previous content"))
            .ok()
            .map(|r| with_failure(one_line_title_and_summary(r), e.failed.as_deref()));
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
            if !Self::lists(e, w.as_ref(), a) {
                continue;
            }
            match e.tools.get(i) {
                Some(t) if Arc::ptr_eq(&t.action, a) && !title_changed => {}
                _ => {
                    tools_changed = true;
                    let entry = ToolEntry::window(&e.handle, title, &e.spec, a);
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

    /// Re-checks the app-level actions (none while `failed`). Returns whether the available
    /// ones changed.
    fn refresh_app(slot: &mut AppSlot, failed: bool) -> bool {
        let available: Vec<&Arc<ActionSpec>> =
            slot.spec.actions.iter().filter(|a| Self::lists_app(slot, failed, a)).collect();
        if available.len() == slot.tools.len()
            && available.iter().zip(&slot.tools).all(|(a, t)| Arc::ptr_eq(a, &t.action))
        {
            return false;
        }
        slot.tools = available.into_iter().map(ToolEntry::app).collect();
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
            tools_changed |= Self::refresh_app(slot, self.app_failed.is_some());
        }
        #[cfg(debug_assertions)]
        if !self.render_all {
            let (changed, tools) = self.check_recorded_changes();
            windows_changed |= changed;
            tools_changed |= tools;
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
        if !windows_changed && !tools_changed && self.current.generation > 0 {
            return;
        }
        let content = (windows_changed || self.current.generation == 0)
            .then(|| Content::new(self.operable.clone(), self.windows.iter().map(|e| e.published.clone()).collect()));
        let tools = tools_changed.then(|| self.tool_list());
        let user_only = tools_changed.then(|| self.user_only_map());
        if let Some(next) = self.current.next(content, tools, user_only) {
            self.current = Arc::new(next);
            self.published.send_replace(self.current.clone());
        }
    }

    /// The listed tools: app tools unless an app-level modal is open, then each operable
    /// window's, in `operableWindowIds` order (GB-5.1-4).
    fn user_only_map(&self) -> UserOnlyMap {
        self.windows
            .iter()
            .filter_map(|e| {
                let names: Vec<String> =
                    e.spec.actions.iter().filter(|a| e.user_only.covers(a)).map(|a| a.name.clone()).collect();
                (!names.is_empty()).then(|| (e.handle.clone(), (e.spec.meta.type_name.clone(), names)))
            })
            .collect()
    }

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
    /// record (see [which windows are re-rendered](Ui#which-windows-are-re-rendered)). Such a
    /// window is marked failed with a message naming what its author must declare (the message
    /// every agent call to it then gets, see [`Ui::failure`]) and re-rendered, so what is
    /// published stays true; likewise the app-level action set. Returns (content changed,
    /// tools changed), as [`Ui::commit`] counts them.
    #[cfg(debug_assertions)]
    fn check_recorded_changes(&mut self) -> (bool, bool) {
        let mut changed = (false, false);
        for e in self.windows.iter_mut().filter(|e| !e.shared_state) {
            let Some(w) = e.window.as_ref() else { continue };
            let Ok(fresh) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.render())) else { continue };
            let fresh = with_failure(one_line_title_and_summary(fresh), e.failed.as_deref());
            let old = &e.published.state;
            let available = e.spec.actions.iter().filter(|a| Self::lists(e, w.as_ref(), a));
            let unchanged = fresh.title == old.title
                && fresh.summary == old.summary
                && fresh.blocks == old.blocks
                && available.map(|a| a.name.as_str()).eq(e.tools.iter().map(|t| t.action.name.as_str()));
            if !unchanged {
                let why = format!(
                    "Window '{}' changed without an operation on it: its type `{}` reads state outside its own \
                     value. Its author must declare #[bridge_window(shared_state)] on `{}` (or the host must call \
                     Ui::refresh_all() after changing that state). Debug builds check this; agents cannot operate \
                     this window until the host clears the mark",
                    e.handle, e.spec.meta.type_name, e.spec.meta.type_name
                );
                tracing::error!("bridge: {why}");
                e.failed = Some(why);
                let (content, tools) = Self::refresh(e);
                changed.0 |= content;
                changed.1 |= tools && e.operable;
            }
        }
        if let Some(slot) = &mut self.app
            && self.app_failed.is_none()
        {
            let available: Vec<&str> =
                slot.spec.actions.iter().filter(|a| Self::lists_app(slot, false, a)).map(|a| a.name.as_str()).collect();
            let listed: Vec<&str> = slot.tools.iter().map(|t| t.action.name.as_str()).collect();
            if available != listed {
                let why = "The app-level actions available changed without an app-level operation: the host must \
                           call Ui::refresh_all() after changing the state they read. Debug builds check this; \
                           agents cannot use the app-level actions until the host clears the mark";
                tracing::error!("bridge: {why}");
                self.app_failed = Some(why.to_owned());
                changed.1 |= Self::refresh_app(slot, true);
            }
        }
        changed
    }

    /// Internal ids of open windows, for diagnostics.
    pub fn internal_id(&self, id: &str) -> Option<&str> {
        self.index_of(id).and_then(|i| self.windows[i].internal_id.as_deref())
    }
}

/// The failure mark of a host edit that panicked ([`Ui::edit`]).
const EDIT_FAILED: &str = "An edit of this window failed inside the app and may have partly applied. Agents cannot \
                           operate it until the user has reviewed it";

/// `rendered` with the failure notice of a window marked failed (see [`Ui::failure`]) last.
fn with_failure(mut rendered: Rendered, failed: Option<&str>) -> Rendered {
    if let Some(why) = failed {
        rendered.blocks.push(crate::model::Block::Notice {
            id: None,
            severity: crate::model::Severity::Error,
            text: why.to_owned(),
        });
    }
    rendered
}
