//! The published state: what readers see without entering the operation queue — the
//! `app://windows` content and the tool table, one immutable value per change.

use crate::catalog::{ActionSpec, ToolName, WindowSpec};
use crate::gui::text::{tool_description, tool_title};
use crate::model::{WindowState, WindowsSnapshot};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// One tool as listed right now: `{winId}__{action}` or `app__{action}` (GB-5.2-1).
#[derive(Debug, Clone)]
pub struct ToolEntry {
    /// The tool name, `^[A-Za-z0-9_-]{1,64}$`: `tool` as listed.
    pub name: String,
    /// What the tool runs; its name is `name`.
    pub tool: ToolName,
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
    /// The tool of `action` on window `id` of type `window`, titled `title`.
    pub(crate) fn window(id: &str, title: &str, window: &Arc<WindowSpec>, action: &Arc<ActionSpec>) -> Self {
        let tool = ToolName::window(id, action.name.as_str());
        ToolEntry {
            name: tool.to_string(),
            tool,
            window_id: Some(id.to_owned()),
            window_title: Some(title.to_owned()),
            action: action.clone(),
            window_type: Some(window.clone()),
        }
    }

    /// The app-level tool of `action` (OQ-GB-12).
    pub(crate) fn app(action: &Arc<ActionSpec>) -> Self {
        let tool = ToolName::app(action.name.as_str());
        ToolEntry {
            name: tool.to_string(),
            tool,
            window_id: None,
            window_title: None,
            action: action.clone(),
            window_type: None,
        }
    }

    fn window_label(&self) -> Option<(&str, &str)> {
        self.window_title.as_deref().zip(self.window_id.as_deref())
    }

    /// Human-readable tool title, e.g. `Edit field · Order Editor (window w-A)` (GB-5.2-3).
    pub fn title(&self) -> String {
        tool_title(&self.action, self.window_label())
    }

    /// Tool description: the action's doc comment plus which window it acts on.
    pub fn description(&self) -> String {
        tool_description(&self.action, self.window_label())
    }
}

/// A tool as one published state lists it, for handing a resolved tool down to the operation
/// that runs it without looking it up again: an `Arc` and an index, cheap to send.
#[derive(Clone)]
pub(crate) struct Listed {
    published: Arc<Published>,
    index: usize,
}

impl Listed {
    /// The listed entry.
    pub(crate) fn entry(&self) -> &ToolEntry {
        &self.published.tools[self.index]
    }
}

/// The state published after every operation that changed anything: what readers see without
/// entering the queue.
///
/// Cheap to publish and to share: each window's state is built once, when it changes, and
/// shared with every later `Published` that still shows it; the whole `WindowsSnapshot` and its
/// JSON are built on first use (a `resources/read`), once per change, from per-window JSON
/// built the same way. So publishing after an operation costs what the operation changed, not
/// what is open.
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
    /// The open windows with actions that are the user's alone: id → (type name, action names).
    user_only: Arc<UserOnlyMap>,
}

/// Window id → (its type name, its actions that are the user's alone), for windows with any.
pub(crate) type UserOnlyMap = std::collections::BTreeMap<String, (String, Vec<String>)>;

/// The `app://windows` content of one [`Published`], shared by every later one that shows the
/// same windows.
pub(super) struct Content {
    operable: Arc<[String]>,
    windows: Vec<Arc<PublishedWindow>>,
    snapshot: OnceLock<WindowsSnapshot>,
    json: OnceLock<Arc<str>>,
}

/// One window's published state, built when it changes.
pub(super) struct PublishedWindow {
    pub(super) state: WindowState,
    /// `state` as JSON, built on first read.
    json: OnceLock<String>,
}

impl PublishedWindow {
    pub(super) fn new(state: WindowState) -> Arc<Self> {
        Arc::new(PublishedWindow { state, json: OnceLock::new() })
    }

    fn json(&self) -> &str {
        self.json.get_or_init(|| serde_json::to_string(&self.state).expect("a window state serializes"))
    }
}

impl Content {
    pub(super) fn new(operable: Arc<[String]>, windows: Vec<Arc<PublishedWindow>>) -> Arc<Self> {
        Arc::new(Content { operable, windows, snapshot: OnceLock::new(), json: OnceLock::new() })
    }

    /// Whether two contents show the same `app://windows` (windows that were re-rendered to the
    /// same state are the same).
    fn same_as(&self, other: &Content) -> bool {
        self.operable == other.operable
            && self.windows.len() == other.windows.len()
            && self.windows.iter().zip(&other.windows).all(|(x, y)| Arc::ptr_eq(x, y) || x.state == y.state)
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
            user_only: Arc::default(),
        }
    }

    /// A state showing `snapshot` (for the test kit's own tests).
    #[cfg(all(test, feature = "testing"))]
    pub(crate) fn from_snapshot(snapshot: WindowsSnapshot, windows_rev: u64) -> Self {
        let windows = snapshot.windows.into_iter().map(PublishedWindow::new).collect();
        let operable = Arc::from(snapshot.operable_window_ids);
        Published { windows_rev, content: Content::new(operable, windows), ..Published::empty() }
    }

    /// The state after this one, given the content and the tool list a commit rebuilt (`None`:
    /// unchanged since this one). `None` when it shows nothing new: the same windows (re-rendered
    /// to the same states) and the same tool names and titles. Revisions bump only for what
    /// changed; unchanged parts are shared.
    pub(super) fn next(
        &self,
        content: Option<Arc<Content>>,
        tools: Option<Vec<ToolEntry>>,
        user_only: Option<UserOnlyMap>,
    ) -> Option<Published> {
        let first = self.generation == 0;
        let content = content.filter(|c| first || !c.same_as(&self.content));
        let tools = tools.filter(|tools| {
            tools.len() != self.tools.len()
                || tools
                    .iter()
                    .zip(self.tools.iter())
                    .any(|(a, b)| a.name != b.name || a.window_title != b.window_title)
        });
        let user_only = user_only.filter(|u| *u != *self.user_only);
        if content.is_none() && tools.is_none() && user_only.is_none() {
            return None;
        }
        let (windows_changed, tools_changed) = (content.is_some(), tools.is_some());
        let (tools, tool_index) = match tools {
            Some(tools) => {
                let index = tools.iter().enumerate().map(|(i, t)| (t.name.clone(), i)).collect();
                (Arc::from(tools), Arc::new(index))
            }
            None => (self.tools.clone(), self.tool_index.clone()),
        };
        Some(Published {
            generation: self.generation + 1,
            windows_rev: self.windows_rev + u64::from(windows_changed),
            tools_rev: self.tools_rev + u64::from(tools_changed),
            tools,
            tool_index,
            content: content.unwrap_or_else(|| self.content.clone()),
            user_only: user_only.map_or_else(|| self.user_only.clone(), Arc::new),
        })
    }

    /// The actions of window `id` that are the user's alone now (`#[bridge_action(user_only)]`,
    /// `#[bridge_window(user_only)]`, [`OpenOptions::user_only`](crate::gui::OpenOptions::user_only)):
    /// never listed as tools. Empty when there are none or no such window is open.
    pub fn user_only_actions(&self, id: &str) -> &[String] {
        self.user_only.get(id).map_or(&[], |(_, actions)| actions.as_slice())
    }

    /// Every open window with user-only actions: (id, type name, action names).
    pub(crate) fn user_only_windows(&self) -> impl Iterator<Item = (&str, &str, &[String])> {
        self.user_only.iter().map(|(id, (ty, actions))| (id.as_str(), ty.as_str(), actions.as_slice()))
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

    /// The listed tool named `name` as a [`Listed`] handle, if listed in `published`.
    pub(crate) fn listed(published: &Arc<Published>, name: &str) -> Option<Listed> {
        let index = *published.tool_index.get(name)?;
        Some(Listed { published: published.clone(), index })
    }
}
