use crate::catalog::{ArgumentLimits, Catalog};
use crate::gui::actor::{Actor, AgentActor};
use crate::gui::journal::{Journal, JournalLimits, JournalSink, Operation, Outcome, Pending, unread_arguments};
use crate::gui::published::{Listed, Published};
use crate::gui::ui::DEFAULT_UNDO_DEPTH;
use crate::gui::ui::{AgentCall, Ui};
use crate::gui::window::AnyActions;
use crate::gui::{BridgeActions, BridgeWindow};
use crate::model::{ErrorCode, ToolError, ToolResult};
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};

type Command = Box<dyn FnOnce(&mut Ui) + Send>;
type Waker = Arc<dyn Fn() + Send + Sync>;

/// The recommended `instructions` text of GB-8.1-3, verbatim (OQ-GB-24).
pub const GB_INSTRUCTIONS: &str = "You are connected to a \"multi-window desktop application\" — use the interface below to read its UI and operate it on the user's behalf.

Reading the UI: the only resource is `app://windows`; a single read gives you everything. `operableWindowIds` = the windows you can operate right now (the sole authority; only operate windows in this list); each entry of `windows[]` contains `title`/`modal`/`ownerId`, plus its content: `summary` (a one-sentence overview) + `blocks` (semantic UI content: text, fields, tables, notices, media…). Read the `summary` first to understand the window, then read the `blocks` for details.

Operating: everything is a window-level tool, named like `{winId}__{action}`; the list contains only the operations of the \"currently operable windows\" — if you can see it, you can call it. If a window exposes a focus-type action, call it before operating, so the user can see which window you are working on.

Staying in sync: when you receive an `updated` notification for `app://windows` or a tool-list-changed notification, re-read `app://windows` before making a decision.

Concurrent writes: the user may be operating at the same time — you are not the only operator. Attach `expectedVersion` (the window `version` you read) to write operations; if `stale_state` is returned, the UI has been changed — re-read, then decide again.

Failures: returned via `isError`, carrying a `code` (`stale_state`/`validation_failed`/`blocked_by_modal`…); `validation_failed` explains the problem field by field — correct it accordingly and retry.

Large data: a window's state holds only an overview; when you need the complete / large data, call that window's corresponding tool to fetch it (the data is in the returned `result`).";

/// The outcome of one tool call: the result and the state published right after it took
/// effect (so an adapter can deliver the call's notifications before its response).
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// `Ok(ToolResult)` or the GB error object.
    pub result: Result<ToolResult, ToolError>,
    /// The published state right after the call.
    pub published: Arc<Published>,
}

struct Shared {
    catalog: Arc<RwLock<Catalog>>,
    exec: Exec,
    watch: watch::Receiver<Arc<Published>>,
    info: ServerIdentity,
    action_timeout: Duration,
    /// [`BridgeBuilder::max_queued_calls`].
    max_queued: usize,
    /// Agent calls of the headless owner waiting for its lock.
    waiting: AtomicUsize,
    /// [`BridgeBuilder::argument_limits`].
    limits: ArgumentLimits,
    /// The journal the UI appends to; calls refused before their turn are appended here.
    journal: Journal,
    /// [`Bridge::watch_agent_calls`]: the UI's sender, subscribed on demand (it publishes only
    /// while someone holds a receiver).
    agent_calls: Arc<watch::Sender<Option<AgentCall>>>,
}

/// The default of [`BridgeBuilder::max_queued_calls`].
pub const DEFAULT_MAX_QUEUED_CALLS: usize = 256;

/// How operations reach the [`Ui`].
enum Exec {
    /// Queued to the thread that owns it ([`BridgeBuilder::build`], [`BridgeBuilder::build_for_gui`]):
    /// a GUI's event loop, or the fallback thread.
    Queue { tx: mpsc::Sender<Command>, waker: Option<Waker> },
    /// The headless owner ([`BridgeBuilder::spawn_headless`]): the operation runs on the calling
    /// task under a fair (FIFO) lock, so there is no trip to another thread and back. The lock
    /// still runs operations one at a time, in arrival order (GB-10.1-3).
    Inline(Arc<tokio::sync::Mutex<Ui>>),
}

/// Name, version and instructions the server announces (GB-3-3, GB-8.1).
#[derive(Debug, Clone)]
pub struct ServerIdentity {
    /// Server name in `serverInfo`.
    pub name: String,
    /// Server version in `serverInfo`.
    pub version: String,
    /// The full `instructions`: [`GB_INSTRUCTIONS`], then the app's own notes (GB-8.1-2).
    pub instructions: String,
}

/// A cheap, cloneable handle to a running UI: every protocol adapter talks to the app through
/// it. Operations run one at a time (GB-10.1-3): queued to the thread that owns the [`Ui`] (a
/// GUI's), or, with the headless owner, on the caller's task under a fair lock. Reads come from
/// the last published state and never wait for operations.
#[derive(Clone)]
pub struct Bridge {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Bridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bridge").field("server", &self.shared.info.name).finish_non_exhaustive()
    }
}

/// The bridge is gone: its owner stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the UI owner has stopped")]
pub struct OwnerGone;

const PENDING: u8 = 0;
const CLAIMED: u8 = 1;
const ABANDONED: u8 = 2;

impl Bridge {
    /// Starts describing an app: `name` and `version` go into `serverInfo`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> BridgeBuilder {
        BridgeBuilder {
            catalog: Catalog::new(),
            app: None,
            name: name.into(),
            version: version.into(),
            notes: None,
            action_timeout: Duration::from_secs(30),
            max_queued: DEFAULT_MAX_QUEUED_CALLS,
            waker: None,
            render_all: false,
            limits: ArgumentLimits::default(),
            journal: true,
            journal_limits: JournalLimits::default(),
            journal_sink: None,
            undo_depth: DEFAULT_UNDO_DEPTH,
        }
    }

    /// The journal of every operation on the UI (see [`Journal`]; [`BridgeBuilder::journal`]):
    /// readable from any thread without waiting for the UI's turn.
    pub fn journal(&self) -> Journal {
        self.shared.journal.clone()
    }

    /// The latest published state (snapshot, its JSON, the tool list).
    pub fn published(&self) -> Arc<Published> {
        self.shared.watch.borrow().clone()
    }

    /// A receiver that wakes whenever new state is published.
    pub fn watch(&self) -> watch::Receiver<Arc<Published>> {
        self.shared.watch.clone()
    }

    /// A receiver that wakes after each agent call of a listed tool, holding its [`AgentCall`]
    /// (`None` before the first): what [`Ui::last_agent_call`] returns, without taking the UI's
    /// turn. It wakes for calls that changed nothing too (an agent's `focus`, a refused call),
    /// which [`Bridge::watch`] does not. A receiver sees the latest call only: calls that come
    /// faster than it reads are folded (`seq` counts them all).
    pub fn watch_agent_calls(&self) -> watch::Receiver<Option<AgentCall>> {
        self.shared.agent_calls.subscribe()
    }

    /// The registry.
    pub fn catalog(&self) -> RwLockReadGuard<'_, Catalog> {
        self.shared.catalog.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Server name, version and instructions.
    pub fn identity(&self) -> &ServerIdentity {
        &self.shared.info
    }

    /// The caps on a call's arguments ([`BridgeBuilder::argument_limits`]); the MCP server
    /// applies them to the companion's tools it serves, too.
    pub fn argument_limits(&self) -> ArgumentLimits {
        self.shared.limits
    }

    /// Runs `f` on the UI owner's thread, in turn with every other operation, and returns its
    /// value. This is the host API for the human user's own edits (`ui.edit(..)`), which thus
    /// bump versions and fire notifications like an agent's call. Each [`Ui`] method `f` calls
    /// names its own actor ([`Ui::edit`] the user, [`Ui::open`] the app; see
    /// [`Actor`]). When the queue is full
    /// ([`BridgeBuilder::max_queued_calls`]) it waits for room rather than failing: the host's
    /// own edits are never refused. `Err(OwnerGone)` also when `f` panicked (the owner keeps
    /// running; a panic in [`Ui::edit`] marks its window failed, see [`Ui::failure`]).
    pub async fn run<R: Send + 'static>(&self, f: impl FnOnce(&mut Ui) -> R + Send + 'static) -> Result<R, OwnerGone> {
        if let Exec::Inline(ui) = &self.shared.exec {
            let mut ui = ui.lock().await;
            return std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut ui))).map_err(|_| {
                tracing::error!("a UI operation panicked; the UI keeps running");
                OwnerGone
            });
        }
        let (tx, rx) = oneshot::channel();
        let Exec::Queue { tx: queue, waker } = &self.shared.exec else { unreachable!("handled above") };
        let cmd: Command = Box::new(move |ui| {
            let _ = tx.send(f(ui));
        });
        queue.send(cmd).await.map_err(|_| OwnerGone)?;
        if let Some(w) = waker {
            w();
        }
        rx.await.map_err(|_| OwnerGone)
    }

    /// Calls tool `name` as an agent. Waits at most the configured action timeout for the
    /// operation to *start*; if it has not started by then it is withdrawn and the call fails
    /// with `action_timeout`, having taken no effect (GB-7.4-7, OQ-GB-17). Once started it runs
    /// to completion and its real outcome is returned. When [`BridgeBuilder::max_queued_calls`]
    /// calls already wait for their turn, the call is refused at once, also with
    /// `action_timeout` (the code that says it took no effect), and a message saying the app
    /// is busy.
    ///
    /// # Caps before the lock
    ///
    /// The arguments are checked against the [`ArgumentLimits`] (size, keys, depth) *before*
    /// the call waits for its turn, in one linear pass, on the caller's task: a call over a cap
    /// is answered `validation_failed` at once, naming the parameters at fault, and never holds
    /// the UI's lock or thread, nor waits behind other calls (so it is never `action_timeout`).
    /// The JSON-Schema validation of calls within the caps stays under the lock, after the
    /// GB-7.2 checks. For OQ-GB-21's order this means: a call over a cap gets
    /// `validation_failed` even when its window is gone, blocked, or its `expectedVersion` is
    /// stale (the caps are judged like a transport's size limit, before the call is looked at);
    /// every call within the caps keeps the order `window_not_found` → `blocked_by_modal` →
    /// `action_not_available` → `stale_state` → `validation_failed`.
    ///
    /// # Who calls
    ///
    /// The call is an agent's: [`AgentActor::in_process`] (no transport, connection or token),
    /// as it always was. The MCP server calls [`Bridge::call_tool_as`] with the agent its
    /// transport identified; a host that runs a tool for the user calls that with
    /// [`Actor::User`] (or [`Ui::call_tool`] on its own thread).
    pub async fn call_tool(&self, name: &str, args: Map<String, Value>) -> CallOutcome {
        self.call_tool_as(Actor::Agent(AgentActor::in_process()), name, args).await
    }

    /// [`Bridge::call_tool`] on the account of `actor` (see [`Actor`]): an agent is held to
    /// what agents may do, the user and the app are not; the action sees `actor` as
    /// [`ActionContext::actor`](crate::gui::ActionContext::actor). The caps, the queue and
    /// the timeout apply whoever calls.
    pub async fn call_tool_as(&self, actor: Actor, name: &str, args: Map<String, Value>) -> CallOutcome {
        self.call(actor, None, name, args).await
    }

    /// [`Bridge::call_tool_as`] of a tool an adapter already found in a published table, so
    /// the operation does not look it up again.
    pub(crate) async fn call_listed(&self, actor: Actor, tool: Listed, args: Map<String, Value>) -> CallOutcome {
        let named = tool.clone();
        self.call(actor, Some(tool), &named.entry().name, args).await
    }

    /// Runs the call of `name` (the `listed` tool, when the caller found it) on the UI for
    /// `actor`, after checking its arguments against the caps (see [`Bridge::call_tool`]).
    async fn call(&self, actor: Actor, listed: Option<Listed>, name: &str, args: Map<String, Value>) -> CallOutcome {
        let limits = &self.shared.limits;
        let capped = match &listed {
            Some(tool) => limits.check(&args, tool.entry().action.declared()),
            None => {
                let published = self.published();
                limits.check(&args, published.tool(name).and_then(|t| t.action.declared()))
            }
        };
        // A call refused before its turn (over a cap, busy, timed out) is journaled with the
        // size of its arguments the caps measured, not their values: nothing read them, and such
        // refusals cost no masking.
        let started = self.shared.journal.is_on().then(|| {
            let mut pending = Pending::new(actor.clone(), tool_operation(name));
            pending.arguments = unread_arguments(capped.bytes);
            pending
        });
        if !capped.is_within() {
            let result = Err(crate::gui::ui::capped_error(limits, capped));
            if let Some(pending) = started {
                self.refused(pending, name, &result);
            }
            // Dropping a huge argument map is linear too; the caller is answered after it.
            drop(args);
            return CallOutcome { result, published: self.published() };
        }
        let before_turn = started;
        let run = move |ui: &mut Ui, name: &str| {
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match &listed {
                Some(tool) => ui.call_listed(actor, tool.entry(), args),
                None => ui.call_prechecked(actor, name, args),
            }));
            let result = ran.unwrap_or_else(|_| {
                // Outside the action itself (which the dispatcher guards): in applying its
                // effects or in the commit. It may have partly applied.
                tracing::error!(tool = name, "a tool call panicked outside the action; the UI keeps running");
                Err(ToolError::new(
                    ErrorCode::ActionNotAvailable,
                    format!(
                        "'{name}' failed inside the app and may have partly applied; do not retry it: re-read \
                         app://windows"
                    ),
                ))
            });
            CallOutcome { result, published: ui.published() }
        };
        if let Exec::Inline(ui) = &self.shared.exec {
            let slot = WaitSlot(&self.shared.waiting);
            if slot.0.fetch_add(1, Ordering::AcqRel) >= self.shared.max_queued {
                return self.refused_outcome(before_turn, name, self.busy(name));
            }
            // The slot is freed once the lock is ours, or when the caller gives up waiting.
            let locked = tokio::time::timeout(self.shared.action_timeout, ui.lock()).await;
            drop(slot);
            let Ok(mut ui) = locked else {
                return self.refused_outcome(before_turn, name, self.withdrawn(name));
            };
            return run(&mut ui, name);
        }
        let state = Arc::new(AtomicU8::new(PENDING));
        let (tx, mut rx) = oneshot::channel();
        let name_owned = name.to_owned();
        let claim = state.clone();
        let sent = self.try_send(Box::new(move |ui| {
            if claim.compare_exchange(PENDING, CLAIMED, Ordering::AcqRel, Ordering::Acquire).is_err() {
                return;
            }
            let _ = tx.send(run(ui, &name_owned));
        }));
        let gone = || CallOutcome {
            result: Err(ToolError::new(ErrorCode::ActionTimeout, "The app is shutting down; the action did not run")),
            published: self.published(),
        };
        match sent {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => return self.refused_outcome(before_turn, name, self.busy(name)),
            Err(mpsc::error::TrySendError::Closed(_)) => return gone(),
        }
        match tokio::time::timeout(self.shared.action_timeout, &mut rx).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(_)) => gone(),
            Err(_) => {
                if state.compare_exchange(PENDING, ABANDONED, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                    self.refused_outcome(before_turn, name, self.withdrawn(name))
                } else {
                    rx.await.unwrap_or_else(|_| gone())
                }
            }
        }
    }

    /// Journals a call refused before its turn (`pending`, when the journal is on), then
    /// returns its `outcome`.
    fn refused_outcome(&self, pending: Option<Pending>, name: &str, outcome: CallOutcome) -> CallOutcome {
        if let Some(pending) = pending {
            self.refused(pending, name, &outcome.result);
        }
        outcome
    }

    /// Appends the entry of a call of `name` refused before its turn with `result`: its window
    /// as the name claims it, with the title and version last published.
    fn refused(&self, mut pending: Pending, name: &str, result: &Result<ToolResult, ToolError>) {
        let published = self.published();
        let window = match crate::catalog::claimed(name) {
            Some(crate::catalog::ToolName::Window { id, .. }) => Some(id),
            _ => None,
        };
        let state = window.as_deref().and_then(|id| published.window(id));
        pending.window_title = state.map(|w| w.title.clone());
        pending.version_before = state.map(|w| w.version);
        pending.window_id = window;
        let (outcome, message) = match result {
            Ok(r) => (Outcome::Ok, r.message.clone()),
            Err(e) => (Outcome::Error { code: e.code }, Some(e.message.clone())),
        };
        let after = pending.version_before;
        self.shared.journal.append(pending.finish(outcome, message, after, Vec::new(), Vec::new()));
    }

    /// `action_timeout`: the call did not start within the action timeout and took no effect.
    fn withdrawn(&self, name: &str) -> CallOutcome {
        CallOutcome {
            result: Err(ToolError::new(
                ErrorCode::ActionTimeout,
                format!(
                    "The app was busy for {} ms; '{name}' was withdrawn and did not take effect",
                    self.shared.action_timeout.as_millis()
                ),
            )),
            published: self.published(),
        }
    }

    /// `action_timeout`: refused because [`BridgeBuilder::max_queued_calls`] calls already wait;
    /// it took no effect (GB-7.4-7).
    fn busy(&self, name: &str) -> CallOutcome {
        CallOutcome {
            result: Err(ToolError::new(
                ErrorCode::ActionTimeout,
                format!(
                    "The app is busy: {} operations are already waiting for their turn; '{name}' was refused and \
                     did not take effect. Retry later",
                    self.shared.max_queued
                ),
            )),
            published: self.published(),
        }
    }

    /// The registry shared by every surface. Build a companion engine on this same handle so
    /// that MCP tools, `capabilities.list` and exports come from one registry (CP-2-13).
    pub fn catalog_handle(&self) -> Arc<RwLock<Catalog>> {
        self.shared.catalog.clone()
    }

    /// Queues an agent's operation if the queue has room.
    fn try_send(&self, cmd: Command) -> Result<(), mpsc::error::TrySendError<Command>> {
        match &self.shared.exec {
            Exec::Queue { tx, waker } => {
                tx.try_send(cmd)?;
                if let Some(w) = waker {
                    w();
                }
            }
            // `run` and `call_tool` take the lock themselves; nothing is queued.
            Exec::Inline(_) => unreachable!("operations of the headless owner are not queued"),
        }
        Ok(())
    }
}

/// The journal's operation for a call of tool `name` (clipped as messages quote it).
fn tool_operation(name: &str) -> Operation {
    Operation::Tool { name: crate::model::quote::clip(name).into_owned() }
}

/// One agent call counted in [`Shared::waiting`] (counted by the caller), uncounted on drop.
struct WaitSlot<'a>(&'a AtomicUsize);

impl Drop for WaitSlot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Describes an app: its app-level actions, window types, instructions and limits.
pub struct BridgeBuilder {
    catalog: Catalog,
    app: Option<Box<dyn AnyActions>>,
    name: String,
    version: String,
    notes: Option<String>,
    action_timeout: Duration,
    max_queued: usize,
    waker: Option<Waker>,
    render_all: bool,
    limits: ArgumentLimits,
    journal: bool,
    journal_limits: JournalLimits,
    journal_sink: Option<Box<dyn JournalSink>>,
    undo_depth: usize,
}

impl BridgeBuilder {
    /// Whether operations are journaled in memory (default `true`; see [`Journal`], which is
    /// not an audit trail). Off, [`Bridge::journal`] stays empty and operations pay nothing
    /// for it.
    pub fn journal(mut self, on: bool) -> Self {
        self.journal = on;
        self
    }

    /// The journal's bounds (default [`JournalLimits::default`]: 10,000 entries, 16 MiB, 4 KiB
    /// of arguments per entry).
    pub fn journal_limits(mut self, limits: JournalLimits) -> Self {
        self.journal_limits = limits;
        self
    }

    /// Hands every journal entry to `sink` too, before the operation's result returns: an
    /// audit trail that outlives the process (see [`JournalSink`] for when entries are handed
    /// over, repeats, and what happens while the sink fails: agent calls are refused). Turns
    /// the journal on. E.g. `.journal_sink(JsonLinesSink::open("journal.jsonl")?)`.
    pub fn journal_sink(mut self, sink: impl JournalSink) -> Self {
        self.journal_sink = Some(Box::new(sink));
        self
    }

    /// How many of the agent's changes [`Ui::undo`] can take back per window, for window types
    /// declared `#[bridge_window(undo)]` (default [`DEFAULT_UNDO_DEPTH`] = 10; each keeps a
    /// copy of the window's value; 0 keeps none).
    pub fn undo_depth(mut self, depth: usize) -> Self {
        self.undo_depth = depth;
        self
    }

    /// Sets the app-level action set (`app__{action}` tools) and its state.
    pub fn app<A: BridgeActions>(mut self, app: A) -> Self {
        self.catalog.set_app::<A>();
        self.app = Some(Box::new(app));
        self
    }

    /// Registers a window type up front, so that the catalog lists it before any instance opens.
    pub fn window<W: BridgeWindow + BridgeActions>(mut self) -> Self {
        self.catalog.register::<W>();
        self
    }

    /// Registers window type `W` with `view` as its MCP Apps view (MA-6): the same as
    /// `#[bridge_window(view = "…")]`, for HTML built in code or bundled into `OUT_DIR` by a
    /// build script (`WindowView::html(include_str!(concat!(env!("OUT_DIR"), "/view.html")))`).
    /// Replaces a view the attribute declared. Errors: a CSP entry that is not an `https://`
    /// origin ([`ViewCspError`](crate::catalog::ViewCspError)).
    pub fn window_view<W: BridgeWindow + BridgeActions>(
        mut self,
        view: crate::catalog::WindowView,
    ) -> Result<Self, crate::catalog::ViewCspError> {
        self.catalog.set_window_view::<W>(view)?;
        Ok(self)
    }

    /// App-specific notes appended to the GB-8.1-3 instructions (GB-8.1-2).
    pub fn instructions(mut self, notes: impl Into<String>) -> Self {
        self.notes = Some(notes.into());
        self
    }

    /// How long a call may wait for the UI thread before `action_timeout` (default 30 s).
    pub fn action_timeout(mut self, timeout: Duration) -> Self {
        self.action_timeout = timeout;
        self
    }

    /// How many agent calls may wait for their turn at the UI at once (default
    /// [`DEFAULT_MAX_QUEUED_CALLS`], at least 1): operations queued to the UI thread, or, with
    /// the headless owner, calls waiting for its lock. One more is refused at once with
    /// `action_timeout`, the error that says the call took no effect (GB-7.4-7), and a message
    /// saying the app is busy, rather than growing the queue without bound. The host's own
    /// [`Bridge::run`] waits for room instead.
    pub fn max_queued_calls(mut self, n: usize) -> Self {
        self.max_queued = n.max(1);
        self
    }

    /// Caps on one call's arguments (default [`ArgumentLimits::default`]: 1 MiB, 10,000 keys,
    /// 64 levels, 20 problems listed; the reasons are on [`ArgumentLimits`]). A call over a cap
    /// is answered `validation_failed` before it waits for the UI (see [`Bridge::call_tool`]);
    /// an app with an import action that takes large data raises them here.
    pub fn argument_limits(mut self, limits: ArgumentLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The most bytes a call's arguments may take as compact JSON (default
    /// [`DEFAULT_MAX_ARGUMENT_BYTES`](crate::catalog::DEFAULT_MAX_ARGUMENT_BYTES), 1 MiB).
    pub fn max_argument_bytes(mut self, bytes: usize) -> Self {
        self.limits.max_bytes = bytes;
        self
    }

    /// The most object keys a call's arguments may hold at every level, the parameters
    /// included (default [`DEFAULT_MAX_ARGUMENT_KEYS`](crate::catalog::DEFAULT_MAX_ARGUMENT_KEYS),
    /// 10,000).
    pub fn max_argument_keys(mut self, keys: usize) -> Self {
        self.limits.max_keys = keys;
        self
    }

    /// The most levels of nested objects and arrays in a call's arguments, the `arguments`
    /// object counting as one (default
    /// [`DEFAULT_MAX_ARGUMENT_DEPTH`](crate::catalog::DEFAULT_MAX_ARGUMENT_DEPTH), 64).
    pub fn max_argument_depth(mut self, depth: usize) -> Self {
        self.limits.max_depth = depth;
        self
    }

    /// The most problems one `validation_failed` lists, at least 1 (default
    /// [`DEFAULT_MAX_REPORTED_PROBLEMS`](crate::catalog::DEFAULT_MAX_REPORTED_PROBLEMS), 20);
    /// the message counts the rest.
    pub fn max_reported_problems(mut self, n: usize) -> Self {
        self.limits.max_problems = n.max(1);
        self
    }

    /// Re-render every window after every operation, as if every window type were
    /// `#[bridge_window(shared_state)]` (default `false`): for apps whose windows read shared
    /// state everywhere. It costs O(open windows) per operation instead of O(what changed) (see
    /// [`Ui`](crate::gui::Ui#which-windows-are-re-rendered)).
    pub fn render_every_window(mut self, on: bool) -> Self {
        self.render_all = on;
        self
    }

    /// Called after each queued operation, from any thread: wake your GUI event loop here so
    /// it calls [`UiOwner::drain`].
    pub fn waker(mut self, waker: impl Fn() + Send + Sync + 'static) -> Self {
        self.waker = Some(Arc::new(waker));
        self
    }

    /// Builds the handle and the owner. Keep the owner on the thread that runs your UI and call
    /// [`UiOwner::drain`] from its event loop.
    pub fn build(self) -> (Bridge, UiOwner) {
        let (tx, rx) = mpsc::channel(self.max_queued);
        let waker = self.waker.clone();
        let (bridge, ui) = self.build_with(|_| Exec::Queue { tx, waker });
        (bridge, UiOwner { ui: ui.expect("a queue leaves the Ui to its owner"), rx })
    }

    /// The bridge over `exec` (given the Ui, which it may keep), and the Ui if it did not.
    fn build_with(self, exec: impl FnOnce(&mut Option<Ui>) -> Exec) -> (Bridge, Option<Ui>) {
        let app_spec = self.catalog.app().cloned();
        let catalog = Arc::new(RwLock::new(self.catalog));
        let journal = Journal::new(self.journal, self.journal_limits, self.journal_sink);
        let ui = Ui::new(
            catalog.clone(),
            self.app,
            app_spec,
            self.render_all,
            self.limits,
            journal.clone(),
            self.undo_depth,
        );
        let watch = ui.watch();
        let agent_calls = ui.agent_calls();
        let mut ui = Some(ui);
        let exec = exec(&mut ui);
        let instructions = match self.notes {
            Some(n) => format!("{GB_INSTRUCTIONS}\n\n{n}"),
            None => GB_INSTRUCTIONS.to_owned(),
        };
        let shared = Arc::new(Shared {
            catalog,
            exec,
            watch,
            info: ServerIdentity { name: self.name, version: self.version, instructions },
            action_timeout: self.action_timeout,
            max_queued: self.max_queued,
            waiting: AtomicUsize::new(0),
            limits: self.limits,
            journal,
            agent_calls,
        });
        (Bridge { shared }, ui)
    }

    /// Builds the bridge for a GUI app whose toolkit draws in frames ([`GuiOwner`]): every
    /// queued operation calls `repaint` (e.g. `egui::Context::request_repaint`), the GUI's
    /// frame runs them ([`GuiOwner::frame`]), and when no frame comes within `grace` (the window
    /// is minimized or hidden and the toolkit stopped drawing) a fallback thread runs them, so
    /// agents are never left waiting for a frame. Nothing polls while the app is idle: the
    /// fallback thread sleeps until an operation is queued. A waker set with
    /// [`BridgeBuilder::waker`] is replaced.
    pub fn build_for_gui(mut self, grace: Duration, repaint: impl Fn() + Send + Sync + 'static) -> (Bridge, GuiOwner) {
        let signal = Arc::new(Signal::default());
        let repaint: Waker = Arc::new(repaint);
        let (wake_signal, wake_repaint) = (signal.clone(), repaint.clone());
        self.waker = Some(Arc::new(move || {
            wake_signal.raise();
            wake_repaint();
        }));
        let (bridge, owner) = self.build();
        let owner = Arc::new(Mutex::new(owner));
        let weak = Arc::downgrade(&owner);
        let thread_signal = signal.clone();
        let spawned = std::thread::Builder::new().name("bridge-fallback".into()).spawn(move || {
            while thread_signal.wait() {
                // Give the GUI its frame first; run what it did not take.
                std::thread::sleep(grace);
                let Some(owner) = weak.upgrade() else { break };
                let ran = owner.lock().unwrap_or_else(|e| e.into_inner()).drain();
                if ran > 0 {
                    tracing::debug!(ran, "operations run without a frame (window hidden or minimized?)");
                    repaint();
                }
            }
        });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "no fallback thread: operations run only in frames");
        }
        (bridge, GuiOwner { owner, _stop: Arc::new(StopOnDrop(signal)) })
    }

    /// Builds the bridge for an app without a GUI loop (headless servers, tests): `setup` runs
    /// first, on this thread (open the initial windows). Operations then run on the task that
    /// asks for them ([`Bridge::call_tool`], [`Bridge::run`]), one at a time under a fair lock,
    /// in arrival order (GB-10.1-3): no thread of its own and no hop to one, so a call costs
    /// what a hand-written server's would. An operation blocks its tokio
    /// worker while it runs, as any synchronous handler does.
    pub fn spawn_headless(self, setup: impl FnOnce(&mut Ui) + Send + 'static) -> Bridge {
        let (bridge, _) = self.build_with(|ui| {
            let mut ui = ui.take().expect("the Ui is built");
            setup(&mut ui);
            Exec::Inline(Arc::new(tokio::sync::Mutex::new(ui)))
        });
        bridge
    }
}

/// Owns the [`Ui`] and the queue of operations for it.
pub struct UiOwner {
    ui: Ui,
    rx: mpsc::Receiver<Command>,
}

impl UiOwner {
    /// Direct access for the owning thread (set-up, rendering the real GUI).
    pub fn ui(&mut self) -> &mut Ui {
        &mut self.ui
    }

    /// Runs every queued operation, one at a time; returns how many ran. Call it from the GUI
    /// event loop whenever the waker fires.
    pub fn drain(&mut self) -> usize {
        let mut n = 0;
        while let Ok(cmd) = self.rx.try_recv() {
            run_guarded(cmd, &mut self.ui);
            n += 1;
        }
        n
    }

    /// Blocks this thread running operations until every [`Bridge`] handle is dropped.
    pub fn run(mut self) {
        while let Some(cmd) = self.rx.blocking_recv() {
            run_guarded(cmd, &mut self.ui);
        }
    }
}

/// The [`UiOwner`] of a GUI app, shared by the GUI's frames and the fallback thread of
/// [`BridgeBuilder::build_for_gui`]; one lock serializes them, so operations still run one at a
/// time (GB-10.1-3). Cloning gives another handle to the same owner; the fallback thread stops
/// when the last handle is dropped.
#[derive(Clone)]
pub struct GuiOwner {
    owner: Arc<Mutex<UiOwner>>,
    _stop: Arc<StopOnDrop>,
}

impl std::fmt::Debug for GuiOwner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuiOwner").finish_non_exhaustive()
    }
}

impl GuiOwner {
    /// Locks the UI for one frame: runs every queued operation first, then gives the [`Ui`] for
    /// drawing ([`Ui::window`], [`Ui::snapshot`]) and for the user's edits ([`Ui::edit`],
    /// [`Ui::call_tool`] with `by_user`, or [`Ui::call_tool_as`] with [`Actor::User`]). Hold it for the frame, not across frames.
    pub fn frame(&self) -> MutexGuard<'_, UiOwner> {
        let mut guard = self.owner.lock().unwrap_or_else(|e| e.into_inner());
        guard.drain();
        guard
    }
}

/// Wakes the fallback thread of a [`GuiOwner`] (or tells it to stop).
#[derive(Default)]
struct Signal {
    state: Mutex<(bool, bool)>, // (an operation was queued, stop)
    cv: Condvar,
}

impl Signal {
    fn raise(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).0 = true;
        self.cv.notify_one();
    }

    fn stop(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        self.cv.notify_one();
    }

    /// Blocks until raised (clearing it; `true`) or stopped (`false`).
    fn wait(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if state.1 {
                return false;
            }
            if state.0 {
                state.0 = false;
                return true;
            }
            state = self.cv.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }
}

struct StopOnDrop(Arc<Signal>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// One queued operation; a panic in host code (`Bridge::run` closures) is logged and the owner
/// keeps serving. (Action panics are already caught inside the dispatcher.)
fn run_guarded(cmd: Command, ui: &mut Ui) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cmd(ui))).is_err() {
        tracing::error!("a queued UI operation panicked; the UI owner keeps running");
    }
}
