//! Bridge windows shown in Tauri windows of their own ([`Options::own_window`]): opened when the
//! bridge window opens, labelled with its id, titled with its title, closed when it closes; the
//! window manager's close button asks the bridge ([`OnClose`]).

use crate::Options;
use bridge_runtime::gui::{Actor, Bridge, Published, Ui};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tauri::{AppHandle, Manager, Runtime, WebviewUrl, WebviewWindowBuilder};

/// What the window manager's close button (or `Alt+F4`) on a bridge window's own Tauri window
/// does. The Tauri window never closes by itself: the close is the user's request to the
/// bridge, and the Tauri window closes when (and only when) the bridge window does — so the
/// page and `app://windows` always agree.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OnClose {
    /// Closes the bridge window (and the modals it owns) with `Ui::close`, journaled as the
    /// app's operation (`Actor::App`). The default.
    #[default]
    Close,
    /// Runs this action of the bridge window as the user (`{winId}__{action}` with no
    /// arguments, e.g. `"cancel"` for a dialog, `"close"` for a report): journaled as the
    /// user's, refused like any user call (a modal above it: nothing happens, the window
    /// stays). The bridge window closes if the action closes it.
    Call(String),
    /// Nothing: the window stays (a dialog the user must answer).
    Keep,
}

/// How a bridge window type is shown in its own Tauri window ([`Options::own_window`]).
#[derive(Debug, Clone)]
#[must_use]
pub struct OwnWindow {
    page: String,
    size: Option<(f64, f64)>,
    parent: Option<String>,
    on_close: OnClose,
}

impl OwnWindow {
    /// A window loading `page` from the app's frontend (`frontendDist`), e.g. `"dialog.html"`,
    /// with `?window=ID` appended: the page learns which bridge window it shows from the query
    /// or from `scope()` (the command).
    pub fn new(page: impl Into<String>) -> Self {
        Self { page: page.into(), size: None, parent: None, on_close: OnClose::default() }
    }

    /// Its inner size in logical pixels (Tauri's default without it).
    pub fn size(mut self, width: f64, height: f64) -> Self {
        self.size = Some((width, height));
        self
    }

    /// Makes it transient for (kept above) the Tauri window labelled `label` when the bridge
    /// window's owner has no Tauri window of its own (a window-level modal whose owner is
    /// drawn in the app's main page: name that page's window). Without it, a window-level
    /// modal is transient for its owner's own Tauri window when there is one.
    pub fn parent(mut self, label: impl Into<String>) -> Self {
        self.parent = Some(label.into());
        self
    }

    /// What the window manager's close does (default [`OnClose::Close`]).
    pub fn on_close(mut self, on_close: OnClose) -> Self {
        self.on_close = on_close;
        self
    }
}

/// Which of the app's types a window is: `true` when window `id` is of the type.
pub(crate) type IsType = Box<dyn Fn(&Ui, &str) -> bool + Send + Sync>;

/// The configured types, in the order [`Options::own_window`] was called.
pub(crate) struct Kinds(pub(crate) Vec<(IsType, OwnWindow)>);

/// The bridge windows that have a Tauri window now: id (= the Tauri label) → what its close
/// does. Read by the commands to scope a page (`call`, `undo` from such a window act on its
/// bridge window only).
#[derive(Default, Clone)]
pub(crate) struct Owned(Arc<Mutex<HashMap<String, OnClose>>>);

impl Owned {
    /// What the window manager's close of Tauri window `label` does, when it is a bridge
    /// window's.
    fn on_close(&self, label: &str) -> Option<OnClose> {
        self.lock().get(label).cloned()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, OnClose>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `label` is the Tauri window of a bridge window (the id it is scoped to).
    pub(crate) fn contains(&self, label: &str) -> bool {
        self.lock().contains_key(label)
    }
}

/// Keeps the Tauri windows in step with the bridge windows; runs on the event task, after each
/// published change.
pub(crate) struct Mirror<R: Runtime> {
    app: AppHandle<R>,
    bridge: Bridge,
    kinds: Arc<Kinds>,
    owned: Owned,
}

impl<R: Runtime> Mirror<R> {
    pub(crate) fn new(app: AppHandle<R>, bridge: Bridge, kinds: Kinds, owned: Owned) -> Self {
        Self { app, bridge, kinds: Arc::new(kinds), owned }
    }

    /// Opens the Tauri windows of the bridge windows open in `now`, the state the first
    /// [`Mirror::step`] starts from: those [`Options::setup_ui`] opened.
    pub(crate) async fn start(&self, now: &Published) {
        if self.kinds.0.is_empty() {
            return;
        }
        self.open_all(now.windows().map(|w| w.id.clone()).collect()).await;
    }

    /// Opens a Tauri window for each of the bridge windows `opened` of a configured type.
    async fn open_all(&self, opened: Vec<String>) {
        if opened.is_empty() {
            return;
        }
        let kinds = self.kinds.clone();
        let ids = opened.clone();
        // Which configured type each new window is (None: shown in the app's own page).
        let matched: Vec<Option<usize>> = self
            .bridge
            .run(move |ui| ids.iter().map(|id| kinds.0.iter().position(|(is, _)| is(ui, id))).collect())
            .await
            .unwrap_or_default();
        for (id, kind) in opened.iter().zip(matched) {
            // Still open now? (It may have closed while this step ran.)
            let Some(state) = self.bridge.published().window(id).cloned() else { continue };
            if let Some(kind) = kind {
                self.open(&state, &self.kinds.0[kind].1);
            }
        }
    }

    /// Opens, retitles and closes the Tauri windows for the step from `before` to `after`.
    pub(crate) async fn step(&self, before: &Published, after: &Published) {
        if self.kinds.0.is_empty() {
            return;
        }
        for w in before.windows().filter(|w| after.window(&w.id).is_none()) {
            self.close(&w.id);
        }
        let opened: Vec<String> =
            after.windows().filter(|w| before.window(&w.id).is_none()).map(|w| w.id.clone()).collect();
        self.open_all(opened).await;
        for w in after.windows() {
            if before.window(&w.id).is_some_and(|old| old.title != w.title)
                && self.owned.contains(&w.id)
                && let Some(window) = self.app.get_webview_window(&w.id)
                && let Err(e) = window.set_title(&w.title)
            {
                tracing::warn!(window = %w.id, error = %e, "could not retitle the window");
            }
        }
    }

    fn open(&self, state: &bridge_runtime::model::WindowState, config: &OwnWindow) {
        let id = state.id.as_str();
        if self.app.get_webview_window(id).is_some() {
            tracing::error!(window = %id, "a Tauri window with this label already exists; the bridge window is not shown in its own");
            return;
        }
        let url = format!("{}?window={id}", config.page);
        let new_builder = || {
            let builder =
                WebviewWindowBuilder::new(&self.app, id, WebviewUrl::App(url.clone().into())).title(&state.title);
            match config.size {
                Some((width, height)) => builder.inner_size(width, height),
                None => builder,
            }
        };
        let parent = state
            .owner_id
            .as_deref()
            .filter(|owner| self.owned.contains(owner))
            .or(config.parent.as_deref())
            .and_then(|label| self.app.get_webview_window(label));
        let builder = match &parent {
            None => new_builder(),
            Some(parent) => new_builder().parent(parent).unwrap_or_else(|e| {
                // Shown without a parent rather than not at all: a modal nobody can see would
                // leave its owner blocked.
                tracing::warn!(window = %id, error = %e, "could not make the window transient for its owner");
                new_builder()
            }),
        };
        // Registered before the page loads, so its first `call` is already scoped.
        self.owned.lock().insert(id.to_owned(), config.on_close.clone());
        match builder.build() {
            Ok(_) => {}
            Err(e) => {
                self.owned.lock().remove(id);
                tracing::error!(window = %id, error = %e, "could not open the window's Tauri window");
            }
        }
    }

    /// Closes (destroys: no second close request) window `id`'s Tauri window, if it has one.
    fn close(&self, id: &str) {
        if self.owned.lock().remove(id).is_none() {
            return;
        }
        if let Some(window) = self.app.get_webview_window(id)
            && let Err(e) = window.destroy()
        {
            tracing::warn!(window = %id, error = %e, "could not close the window's Tauri window");
        }
    }

    /// After an agent's successful call of the focus action on window `id`: raises its Tauri
    /// window, when it has one.
    pub(crate) fn raise(&self, id: &str) {
        if !self.owned.contains(id) {
            return;
        }
        if let Some(window) = self.app.get_webview_window(id) {
            let _ = window.unminimize();
            if let Err(e) = window.set_focus() {
                tracing::warn!(window = %id, error = %e, "could not raise the window");
            }
        }
    }
}

impl Options {
    /// Shows every bridge window of type `W` in a Tauri window of its own, described by
    /// `window`: opened when the bridge window opens (labelled with its id, e.g. `w-3`, titled
    /// with its title and retitled with it), closed when it closes; the window manager's close
    /// does what [`OwnWindow::on_close`] says. A page in such a window is scoped to it: its
    /// `call` and `undo` act on that bridge window only. Other windows are drawn by the app's
    /// own page(s), as before. Types are matched by Rust type, in the order given.
    pub fn own_window<W: 'static>(mut self, window: OwnWindow) -> Self {
        self.own.push((Box::new(|ui: &Ui, id: &str| ui.window::<W>(id).is_some()), window));
        self
    }

    /// The action that raises a window (GB-5.3-1 reserves no names; the egui example's is
    /// `focus`): after an agent's successful call of `{winId}__{action}`, the plugin raises the
    /// window's own Tauri window ([`Options::own_window`]); the page sees every agent call
    /// through [`AGENT_CALL_EVENT`](crate::AGENT_CALL_EVENT) either way.
    pub fn focus_action(mut self, action: impl Into<String>) -> Self {
        self.focus_action = Some(action.into());
        self
    }
}

/// The window manager's close of Tauri window `label` (the plugin's `RunEvent` hook): when it is
/// a bridge window's own, the close is prevented and asks the bridge ([`OnClose`]); the Tauri
/// window closes when the bridge window does ([`Mirror::close`]). Returns whether it was.
pub(crate) fn close_requested(owned: &Owned, bridge: &Bridge, label: &str, api: &tauri::CloseRequestApi) -> bool {
    let Some(on_close) = owned.on_close(label) else { return false };
    api.prevent_close();
    let (bridge, id) = (bridge.clone(), label.to_owned());
    match on_close {
        OnClose::Keep => {}
        OnClose::Close => {
            tauri::async_runtime::spawn(async move {
                let _ = bridge.run(move |ui| ui.close(&id)).await;
            });
        }
        OnClose::Call(action) => {
            tauri::async_runtime::spawn(async move {
                let name = format!("{id}__{action}");
                let done = bridge.call_tool_as(Actor::User, &name, Default::default()).await;
                if let Err(e) = done.result {
                    tracing::info!(window = %id, code = ?e.code, "the window's close action was refused; it stays open");
                }
            });
        }
    }
    true
}
