use crate::catalog::{Catalog, WindowSpec};
use crate::gui::actor::Actor;
use crate::gui::window::AnyWindow;
use crate::gui::{BridgeActions, BridgeWindow};
use serde::Serialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// How a window is opened: plain top-level, window-level modal of an owner, or app-level modal
/// (GB-2-2). `id` is an optional internal id; the external id is a name-safe handle derived
/// from it (GB-12.4-3).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// Whether the window is modal.
    pub modal: bool,
    /// For a window-level modal: the owner's external id. `None` with `modal` = app-level modal.
    pub owner: Option<String>,
    /// The app's own id for the window (any string, e.g. `报表 2`). When it is not name-safe,
    /// the external id is a stable handle instead.
    pub id: Option<String>,
    /// Every action of this window is the user's alone, as `#[bridge_window(user_only)]` makes
    /// a type's: chosen when it opens ([`OpenOptions::user_only`]).
    pub user_only: bool,
    /// These actions of this window are the user's alone, as `#[bridge_action(user_only)]`
    /// makes an action ([`OpenOptions::user_only_action`]).
    pub user_only_actions: Vec<String>,
}

impl OpenOptions {
    /// A normal top-level window: (`modal: false`, `ownerId: null`).
    pub fn window() -> Self {
        Self::default()
    }
    /// A window-level modal owned by `owner`: (`modal: true`, `ownerId: owner`).
    pub fn modal_of(owner: impl Into<String>) -> Self {
        Self { modal: true, owner: Some(owner.into()), ..Self::default() }
    }
    /// An app-level modal: (`modal: true`, `ownerId: null`) (GB-10.2-1).
    pub fn app_modal() -> Self {
        Self { modal: true, owner: None, ..Self::default() }
    }
    /// Sets the app's internal id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
    /// Makes every action of the window the user's alone: agents see the window (in
    /// `operableWindowIds` too: the set is structural, GB-4.2) with no tools, and a call by
    /// name gets `action_not_available`. A run-time choice next to `#[bridge_window(user_only)]`;
    /// [`Ui::set_user_only`](crate::gui::Ui::set_user_only) changes it while the window is open.
    pub fn user_only(mut self) -> Self {
        self.user_only = true;
        self
    }
    /// Makes action `name` of the window the user's alone (as [`OpenOptions::user_only`] does
    /// for all of them). A name the window's type does not declare (a typo) fails closed: every
    /// action of the window is then the user's, and an error is logged.
    pub fn user_only_action(mut self, name: impl Into<String>) -> Self {
        self.user_only_actions.push(name.into());
        self
    }
}

/// Which actions of an open window are the user's alone, besides those its type declares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct UserOnly {
    /// All of them.
    pub(crate) all: bool,
    /// These.
    pub(crate) actions: Vec<String>,
}

impl UserOnly {
    /// Whether `action` is the user's alone here.
    pub(crate) fn covers(&self, action: &crate::catalog::ActionSpec) -> bool {
        self.all || action.user_only || self.actions.contains(&action.name)
    }
}

/// A deferred change to another window, applied after the action returns `Ok`.
pub(crate) type ApplyFn = Box<dyn FnOnce(&mut dyn std::any::Any) + Send>;

pub(crate) enum Op {
    Open {
        handle: String,
        internal_id: Option<String>,
        modal: bool,
        owner: Option<String>,
        window: Box<dyn AnyWindow>,
        register: fn(&mut Catalog) -> Arc<WindowSpec>,
        /// `#[bridge_window(shared_state)]`: re-rendered on every commit.
        shared_state: bool,
        /// The window's actions that are the user's alone: all, or those named.
        user_only: UserOnly,
    },
    Close(String),
    Update {
        id: String,
        apply: ApplyFn,
    },
}

/// Allocates external window ids: handles as [`is_handle_safe`] describes them (never `app` or
/// `companion`, never containing `__`), never reused (GB-10.3-1, GB-12.4-3, OQ-GB-13).
#[derive(Debug, Default)]
pub(crate) struct IdAllocator {
    next: u64,
    used: HashSet<String>,
    by_internal: HashMap<String, String>,
}

impl IdAllocator {
    pub(crate) fn alloc(&mut self, internal: Option<&str>) -> String {
        if let Some(id) = internal
            && is_handle_safe(id)
            && !self.used.contains(id)
        {
            self.used.insert(id.to_owned());
            self.by_internal.insert(id.to_owned(), id.to_owned());
            return id.to_owned();
        }
        let handle = loop {
            self.next += 1;
            let h = format!("w-{}", self.next);
            if !self.used.contains(&h) {
                break h;
            }
        };
        self.used.insert(handle.clone());
        if let Some(id) = internal {
            self.by_internal.entry(id.to_owned()).or_insert_with(|| handle.clone());
        }
        handle
    }

    pub(crate) fn handle_of(&self, internal: &str) -> Option<&str> {
        self.by_internal.get(internal).map(String::as_str)
    }

    pub(crate) fn ever_used(&self, handle: &str) -> bool {
        self.used.contains(handle)
    }
}

/// Whether `id` can be used as an external window id as is: name-safe, at most 14 bytes, not a
/// pseudo window id (`app`, `companion`), no `__`, not ending in `_` (GB-12.4-3, OQ-GB-13).
pub(crate) fn is_handle_safe(id: &str) -> bool {
    crate::catalog::is_window_handle(id)
}

/// What an action (or a host edit) can do besides changing its own window: open windows,
/// close windows, set the ToolResult `message`. Effects are applied only when the action
/// returns `Ok`; on `Err` they are discarded.
pub struct ActionContext<'a> {
    pub(crate) ids: &'a mut IdAllocator,
    pub(crate) window_id: Option<String>,
    pub(crate) actor: Actor,
    pub(crate) ops: Vec<Op>,
    pub(crate) opened: Vec<String>,
    pub(crate) message: Option<String>,
}

impl<'a> ActionContext<'a> {
    pub(crate) fn new(ids: &'a mut IdAllocator, window_id: Option<String>, actor: Actor) -> Self {
        Self { ids, window_id, actor, ops: Vec::new(), opened: Vec::new(), message: None }
    }

    /// The external id of the window the action runs on; `None` for app-level actions.
    pub fn window_id(&self) -> Option<&str> {
        self.window_id.as_deref()
    }

    /// Whether someone other than an agent triggered this: the human user or the app's own
    /// code (host API). [`ActionContext::actor`] tells them apart.
    pub fn is_user(&self) -> bool {
        !self.actor.is_agent()
    }

    /// Who triggered this: the agent (with its transport, connection and token), the user or
    /// the app (see [`Actor`]).
    pub fn actor(&self) -> &Actor {
        &self.actor
    }

    /// Opens `window` as described by `options` and returns its external id, which is also
    /// reported in `openedWindowIds` (GB-5.4-5).
    pub fn open_with<W: BridgeWindow + BridgeActions>(&mut self, window: W, options: OpenOptions) -> String {
        let handle = self.ids.alloc(options.id.as_deref());
        self.ops.push(Op::Open {
            handle: handle.clone(),
            internal_id: options.id,
            modal: options.modal,
            owner: if options.modal { options.owner } else { None },
            window: Box::new(window),
            register: Catalog::register::<W>,
            shared_state: W::reads_shared_state(),
            user_only: UserOnly { all: options.user_only || W::user_only(), actions: options.user_only_actions },
        });
        self.opened.push(handle.clone());
        handle
    }

    /// Opens a plain top-level window.
    pub fn open<W: BridgeWindow + BridgeActions>(&mut self, window: W) -> String {
        self.open_with(window, OpenOptions::window())
    }

    /// Opens a modal dialog: a window-level modal owned by the current window, or, from an
    /// app-level action, an app-level modal.
    pub fn open_modal<W: BridgeWindow + BridgeActions>(&mut self, window: W) -> String {
        let options = match &self.window_id {
            Some(id) => OpenOptions::modal_of(id.clone()),
            None => OpenOptions::app_modal(),
        };
        self.open_with(window, options)
    }

    /// Opens an app-level modal (`modal: true`, `ownerId: null`) that blocks every other window
    /// until it closes (GB-10.2).
    pub fn open_app_modal<W: BridgeWindow + BridgeActions>(&mut self, window: W) -> String {
        self.open_with(window, OpenOptions::app_modal())
    }

    /// Closes the current window (and the modals it owns). No-op for app-level actions.
    pub fn close(&mut self) {
        if let Some(id) = self.window_id.clone() {
            self.ops.push(Op::Close(id));
        }
    }

    /// Closes the window `id` (and the modals it owns).
    pub fn close_window(&mut self, id: impl Into<String>) {
        self.ops.push(Op::Close(id.into()));
    }

    /// Changes another open window of type `W` (e.g. a confirmation dialog marking its owner's
    /// order as placed). Runs after the action returns `Ok`, in the same operation, so the
    /// change is in the same commit; ignored if `id` is closed by then or is not a `W`.
    pub fn update<W: 'static>(&mut self, id: impl Into<String>, f: impl FnOnce(&mut W) + Send + 'static) {
        self.ops.push(Op::Update {
            id: id.into(),
            apply: Box::new(move |any| {
                if let Some(w) = any.downcast_mut::<W>() {
                    f(w);
                }
            }),
        });
    }

    /// Sets the ToolResult `message` (GB-5.4-4).
    pub fn set_message(&mut self, message: impl Into<String>) {
        self.message = Some(message.into());
    }
}

/// A GUI action's return value as its ToolResult `result`, once the action has run.
///
/// A value serde cannot encode (a map with non-string keys, a number beyond 64 bits hidden in
/// a struct, a failing `Serialize` impl) is reported as what it is: the action ran and its
/// effects stay, so the call *succeeds*, without `result`, and its `message` says that the
/// result could not be encoded and that the action must not be run again to get it. An error
/// would be the dishonest shape here: every GB error code says, or lets an agent assume, that
/// the call did not take effect (`action_not_available`, `action_timeout`: GB-7.4-7), so an
/// agent retries and applies the action twice. `result` is never `null`, which its
/// `outputSchema` does not allow (GB-12.3-4); it is omitted, which the envelope allows.
/// `u128`/`i128` the macro can see in the return type are refused at compile time instead.
pub fn result_value<T: Serialize + ?Sized>(value: &T, cx: &mut ActionContext<'_>) -> Option<Value> {
    match serde_json::to_value(value) {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::error!(error = %e, "an action ran, but its result could not be encoded as JSON");
            let note = unencodable_result_note(&e.to_string());
            let message = match cx.message.take() {
                Some(m) => format!("{m}. {note}"),
                None => note,
            };
            cx.set_message(message);
            None
        }
    }
}

/// The ToolResult `message` of an action whose result could not be encoded (`why`: serde's
/// error, bounded).
fn unencodable_result_note(why: &str) -> String {
    const MAX_WHY_CHARS: usize = 200;
    let why: String = why.chars().take(MAX_WHY_CHARS).collect();
    format!(
        "The action ran and took effect, but its result could not be encoded as JSON ({why}), so no result is \
         returned. Do not run it again to get the result: re-read app://windows to see its effect"
    )
}
