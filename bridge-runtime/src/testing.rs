//! A test kit for app authors (feature `testing`): drive your own windows in a plain `#[test]`
//! the way an agent would, with no transport, no runtime and no process.
//!
//! [`TestApp`] holds the UI owner itself and runs every step at once on the test's thread,
//! through the same dispatcher the MCP server uses. It can list tools, call
//! `w-1__submit` with JSON arguments, read `app://windows`, make the human user's edits, and
//! collect the notifications an MCP client would get. Those notifications are derived from
//! the published state exactly as the MCP layer derives them (a burst coalesces into one of
//! each kind).
//!
//! After every step it also checks the GUI Bridge invariants and panics, naming the step,
//! when one breaks:
//! - `operableWindowIds` is the operable set of the topology (GB-2-5, GB-4.2-2).
//! - Every `ownerId` names an open window, and only modals have one (GB-4.2-7).
//! - Window ids are unique and never reused (GB-10.3-1).
//! - A window's `version` rises if and only if its `summary` or `blocks` changed (GB-4.2-8,
//!   GB-7.1-1).
//! - Tools are listed only for operable windows, one name each (GB-5.1-4).
//! - Every `sensitive` field item shows the mask (GB-4.5-2).
//! - `resources/updated` comes exactly when the snapshot changed, and `tools/list_changed`
//!   exactly when the tool list did (GB-6).
//!
//! ```
//! # use bridge_runtime::prelude::*;
//! # #[bridge_window(title = "Counter", summary = "Count is {count}")]
//! # struct Counter { #[bridge(text)] count: u32 }
//! # use bridge_runtime::model::ErrorCode;
//! # #[bridge_actions]
//! # impl Counter {
//! #     /// Add one.
//! #     #[bridge_action(idempotent)]
//! #     fn add(&mut self) { self.count += 1; }
//! # }
//! use bridge_runtime::testing::{Notification, TestApp};
//! use serde_json::json;
//!
//! let mut app = TestApp::new(Bridge::builder("counter", "1.0").window::<Counter>(), |ui| {
//!     ui.open(Counter { count: 0 }, OpenOptions::window());
//! });
//! assert_eq!(app.tool_names(), ["w-1__add"]);
//! let v = app.version("w-1");
//! app.call("w-1__add", json!({ "expectedVersion": v })).expect_ok();
//! assert_eq!(app.window("w-1").summary.as_deref(), Some("Count is 1"));
//! assert_eq!(app.take_notifications(), [Notification::ResourceUpdated]);
//! app.call("w-1__add", json!({ "expectedVersion": v })).expect_err(ErrorCode::StaleState);
//! ```

use crate::gui::{
    ActionContext, Actor, AgentActor, Bridge, BridgeBuilder, Journal, Published, Ui, UiOwner, operable_set,
};
use crate::mcp::notify::Revs;
use crate::mcp::{to_call_tool_result, to_mcp_tool};
use crate::model::{Block, ErrorCode, REDACTED, ToolError, ToolResult, WindowState, WindowsSnapshot};
use rmcp::model::{CallToolResult, Tool};
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// A notification an MCP client connected to the app would get (GB §6), in the order the MCP
/// layer sends them after one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Notification {
    /// `notifications/resources/updated` for `app://windows`, to clients that subscribed.
    ResourceUpdated,
    /// `notifications/tools/list_changed`, to every client.
    ToolListChanged,
}

/// The app under test: the bridge and its UI owner on the test's own thread.
///
/// Every method that changes something runs one operation, checks the GUI Bridge invariants
/// (see the [module docs](self)) and records the notifications it causes.
pub struct TestApp {
    bridge: Bridge,
    owner: UiOwner,
    last: Arc<Published>,
    /// Every window id ever seen, so reuse is caught (GB-10.3-1).
    ever: BTreeSet<String>,
    notifications: Vec<Notification>,
}

impl std::fmt::Debug for TestApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestApp").field("bridge", &self.bridge).finish_non_exhaustive()
    }
}

/// The outcome of one tool call: the GB result or error, and the MCP `CallToolResult` an MCP
/// client would get for it.
#[derive(Debug, Clone)]
pub struct CallResult {
    name: String,
    result: Result<ToolResult, ToolError>,
    mcp: CallToolResult,
}

impl TestApp {
    /// Builds the app from `builder` and runs `setup` on its UI (open the initial windows), as
    /// `spawn_headless` would, but keeps the owner here.
    pub fn new(builder: BridgeBuilder, setup: impl FnOnce(&mut Ui)) -> Self {
        let (bridge, mut owner) = builder.build();
        setup(owner.ui());
        let now = owner.ui().published();
        let mut ever = BTreeSet::new();
        if let Err(problem) = invariants(&Published::empty(), &now, &mut ever, false) {
            panic!("GUI Bridge invariant broken after set-up: {problem}");
        }
        Self { bridge, owner, last: now, ever, notifications: Vec::new() }
    }

    /// The bridge handle (catalog, identity), as the MCP server holds it.
    pub fn bridge(&self) -> &Bridge {
        &self.bridge
    }

    /// The UI itself, for steps this kit has no method for; call [`TestApp::check`] after
    /// changing anything through it.
    pub fn ui(&mut self) -> &mut Ui {
        self.owner.ui()
    }

    /// `tools/list` as an MCP client without the Apps extension gets it (`to_mcp_tool` of each
    /// listed tool, in order).
    pub fn tools(&mut self) -> Vec<Tool> {
        self.run_queued();
        self.last.tools.iter().map(to_mcp_tool).collect()
    }

    /// The names in `tools/list`, in order.
    pub fn tool_names(&mut self) -> Vec<String> {
        self.run_queued();
        self.last.tools.iter().map(|t| t.name.clone()).collect()
    }

    /// `tools/call name` with `arguments` (a JSON object, or `null` for none) as an agent makes
    /// it. Panics if `arguments` is neither (a test mistake, not app behaviour).
    /// The agent is [`AgentActor::in_process`](crate::gui::AgentActor::in_process).
    pub fn call(&mut self, name: &str, arguments: Value) -> CallResult {
        self.call_as(Actor::Agent(AgentActor::in_process()), name, arguments)
    }

    /// The same call made by the human user through the app's own controls (GB-7.2 checks
    /// apply; actions see it as the user's, [`Actor::User`]).
    pub fn user_call(&mut self, name: &str, arguments: Value) -> CallResult {
        self.call_as(Actor::User, name, arguments)
    }

    /// The same call on the account of `actor` (see [`Actor`]): e.g. an agent with a
    /// connection or token of its own, or [`Actor::App`].
    pub fn call_as(&mut self, actor: Actor, name: &str, arguments: Value) -> CallResult {
        let args = match arguments {
            Value::Null => Map::new(),
            Value::Object(m) => m,
            other => panic!("TestApp::call({name}): arguments must be a JSON object or null, not {other}"),
        };
        self.run_queued();
        let result = self.owner.ui().call_tool_as(actor, name, args);
        self.settle(name);
        let mcp = to_call_tool_result(&result);
        CallResult { name: name.to_owned(), result, mcp }
    }

    /// The human user's edit of window `id` of type `W` (what a GUI does through
    /// `ui.edit(..)` when the user types and commits). Panics if no such window of type `W`
    /// is open.
    pub fn user<W: 'static, R>(&mut self, id: &str, f: impl FnOnce(&mut W, &mut ActionContext<'_>) -> R) -> R {
        self.run_queued();
        let out = self.owner.ui().edit::<W, R>(id, f);
        self.settle(&format!("user edit of {id}"));
        out.unwrap_or_else(|| panic!("TestApp::user: no open window {id} of type {}", std::any::type_name::<W>()))
    }

    /// An edit of window `id` of type `W` on the account of `actor` ([`Ui::edit_as`]): e.g. the
    /// app's own code, [`Actor::App`]. Panics if no such window of type `W` is open.
    pub fn edit_as<W: 'static, R>(
        &mut self,
        actor: Actor,
        id: &str,
        f: impl FnOnce(&mut W, &mut ActionContext<'_>) -> R,
    ) -> R {
        self.run_queued();
        let out = self.owner.ui().edit_as::<W, R>(actor, id, f);
        self.settle(&format!("edit of {id}"));
        out.unwrap_or_else(|| panic!("TestApp::edit_as: no open window {id} of type {}", std::any::type_name::<W>()))
    }

    /// The user's "undo the agent's last change" of window `id` ([`Ui::undo`]): checked against
    /// the invariants like any step, its notifications recorded.
    ///
    /// # Errors
    /// As [`Ui::undo`]: what cannot be undone, with nothing changed.
    pub fn undo(&mut self, id: &str) -> Result<crate::gui::Undone, crate::gui::UndoError> {
        self.run_queued();
        let out = self.owner.ui().undo(id);
        self.settle(&format!("undo of {id}"));
        out
    }

    /// The journal of every step so far (see [`Journal`]): the agent's calls, the user's, the
    /// app's opens and closes, each with its actor, masked arguments, versions and outcome.
    pub fn journal(&mut self) -> Journal {
        self.run_queued();
        self.owner.ui().journal().clone()
    }

    /// The current `app://windows` snapshot.
    pub fn snapshot(&mut self) -> &WindowsSnapshot {
        self.run_queued();
        self.last.snapshot()
    }

    /// `resources/read app://windows` as an MCP client gets its text, parsed.
    pub fn read_windows(&mut self) -> Value {
        self.run_queued();
        serde_json::from_str(&self.last.snapshot_json()).unwrap_or(Value::Null)
    }

    /// Window `id` as `app://windows` shows it. Panics, listing the open ids, if it is not open.
    pub fn window(&mut self, id: &str) -> WindowState {
        self.run_queued();
        self.last.window(id).cloned().unwrap_or_else(|| {
            let ids: Vec<&str> = self.last.windows().map(|w| w.id.as_str()).collect();
            panic!("TestApp::window: no window {id}; open: {ids:?}")
        })
    }

    /// Window `id`'s `version` (the `expectedVersion` an agent would send).
    pub fn version(&mut self, id: &str) -> i64 {
        self.window(id).version
    }

    /// `operableWindowIds`.
    pub fn operable(&mut self) -> Vec<String> {
        self.run_queued();
        self.last.operable_window_ids().to_vec()
    }

    /// The notifications since the last call of this method, in order, and forgets them.
    pub fn take_notifications(&mut self) -> Vec<Notification> {
        self.run_queued();
        std::mem::take(&mut self.notifications)
    }

    /// Checks the invariants against the current state (after changing the UI through
    /// [`TestApp::ui`]) and records its notifications.
    pub fn check(&mut self) {
        self.settle("a direct UI change");
    }

    /// Runs operations queued through the [`Bridge`] handle (`bridge.run(..)` from other code),
    /// then settles.
    fn run_queued(&mut self) {
        if self.owner.drain() > 0 {
            self.settle("queued operations");
        }
    }

    /// After a step: check the invariants between the last state and now, record notifications.
    fn settle(&mut self, step: &str) {
        let now = self.owner.ui().published();
        if let Err(problem) = invariants(&self.last, &now, &mut self.ever, true) {
            panic!("GUI Bridge invariant broken after {step}: {problem}");
        }
        let (updated, tools_changed) = Revs::of(&now).due_since(Revs::of(&self.last));
        if updated {
            self.notifications.push(Notification::ResourceUpdated);
        }
        if tools_changed {
            self.notifications.push(Notification::ToolListChanged);
        }
        self.last = now;
    }
}

/// The GUI Bridge invariants between two published states (see the module docs).
fn invariants(
    before: &Published,
    now: &Published,
    ever: &mut BTreeSet<String>,
    notifications: bool,
) -> Result<(), String> {
    let snap = now.snapshot();
    let mut ids = BTreeSet::new();
    for w in &snap.windows {
        if !ids.insert(w.id.as_str()) {
            return Err(format!("window id {} appears twice", w.id));
        }
    }
    let old: HashMap<&str, &WindowState> = before.windows().map(|w| (w.id.as_str(), w)).collect();
    for w in &snap.windows {
        if !old.contains_key(w.id.as_str()) && ever.contains(&w.id) {
            return Err(format!("window id {} was reused after its window closed (GB-10.3-1)", w.id));
        }
        if let Some(owner) = &w.owner_id {
            if !w.modal {
                return Err(format!("window {} has ownerId {owner} but is not modal (GB-4.2-7)", w.id));
            }
            if !ids.contains(owner.as_str()) {
                return Err(format!("window {}'s ownerId {owner} is not open (GB-4.2-7)", w.id));
            }
        }
        match old.get(w.id.as_str()) {
            Some(prev) => {
                let changed = prev.summary != w.summary || prev.blocks != w.blocks;
                if changed && w.version <= prev.version {
                    return Err(format!(
                        "window {}'s summary/blocks changed but its version stayed {} (GB-4.2-8)",
                        w.id, w.version
                    ));
                }
                if !changed && w.version != prev.version {
                    return Err(format!(
                        "window {}'s version went {} → {} with no change to its summary/blocks (GB-7.1-1)",
                        w.id, prev.version, w.version
                    ));
                }
            }
            None if w.version < 1 => return Err(format!("window {} opened with version {}", w.id, w.version)),
            None => {}
        }
        for b in &w.blocks {
            if let Block::Fields { items, .. } = b
                && let Some(item) = items.iter().find(|i| i.is_sensitive() && i.value() != REDACTED)
            {
                return Err(format!("window {}: sensitive field {:?} is not masked (GB-4.5-2)", w.id, item.label()));
            }
        }
    }
    ever.extend(snap.windows.iter().map(|w| w.id.clone()));

    let expected = operable_set(snap.windows.iter().map(|w| (w.id.as_str(), w.modal, w.owner_id.as_deref())));
    let mut listed = snap.operable_window_ids.clone();
    let mut want = expected.clone();
    listed.sort();
    want.sort();
    if listed != want {
        return Err(format!(
            "operableWindowIds is {:?}, the topology gives {expected:?} (GB-2-5)",
            snap.operable_window_ids
        ));
    }

    let mut names = BTreeSet::new();
    for t in now.tools.iter() {
        if !names.insert(t.name.as_str()) {
            return Err(format!("tool {} is listed twice", t.name));
        }
        if let Some(id) = &t.window_id
            && !snap.operable_window_ids.contains(id)
        {
            return Err(format!("tool {} is listed while window {id} is not operable (GB-5.1-4)", t.name));
        }
    }

    if !notifications {
        return Ok(());
    }
    let snapshot_changed = before.snapshot() != now.snapshot();
    if snapshot_changed != (now.windows_rev > before.windows_rev) {
        return Err(format!(
            "app://windows {} but resources/updated {} (GB-6)",
            if snapshot_changed { "changed" } else { "did not change" },
            if now.windows_rev > before.windows_rev { "would be sent" } else { "would not be sent" }
        ));
    }
    let tool_list = |p: &Published| p.tools.iter().map(|t| (t.name.clone(), t.title())).collect::<Vec<_>>();
    let tools_changed = tool_list(before) != tool_list(now);
    if tools_changed && now.tools_rev <= before.tools_rev {
        return Err("the tool list changed but tools/list_changed would not be sent (GB-6, OQ-GB-16)".into());
    }
    Ok(())
}

impl CallResult {
    /// Whether the call failed (`isError: true`).
    pub fn is_error(&self) -> bool {
        self.result.is_err()
    }

    /// The GB error code of a failed call.
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.result.as_ref().err().map(|e| e.code)
    }

    /// The error object of a failed call.
    pub fn error(&self) -> Option<&ToolError> {
        self.result.as_ref().err()
    }

    /// The ToolResult of a successful call.
    pub fn ok(&self) -> Option<&ToolResult> {
        self.result.as_ref().ok()
    }

    /// `openedWindowIds` of a successful call (empty when none).
    pub fn opened(&self) -> &[String] {
        self.ok().and_then(|r| r.opened_window_ids.as_deref()).unwrap_or_default()
    }

    /// The action's own result (`structuredContent.result`).
    pub fn value(&self) -> Option<&Value> {
        self.ok().and_then(|r| r.result.as_ref())
    }

    /// `structuredContent` as the MCP client gets it (the ToolResult or the error object).
    pub fn structured(&self) -> Value {
        self.mcp.structured_content.clone().unwrap_or(Value::Null)
    }

    /// The MCP result itself.
    pub fn mcp(&self) -> &CallToolResult {
        &self.mcp
    }

    /// The ToolResult; panics with the error's code and message if the call failed.
    #[track_caller]
    pub fn expect_ok(self) -> ToolResult {
        match self.result {
            Ok(r) => r,
            Err(e) => panic!("{} failed with {}: {}", self.name, e.code, e.message),
        }
    }

    /// The error; panics if the call succeeded or failed with another code.
    #[track_caller]
    pub fn expect_err(self, code: ErrorCode) -> ToolError {
        match self.result {
            Err(e) if e.code == code => e,
            Err(e) => panic!("{} failed with {}, not {code}: {}", self.name, e.code, e.message),
            Ok(r) => panic!("{} succeeded ({}), expected {code}", self.name, r.text_mirror()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FieldItem;

    fn window(id: &str, version: i64, text: &str) -> WindowState {
        WindowState {
            id: id.into(),
            title: "W".into(),
            modal: false,
            owner_id: None,
            version,
            summary: None,
            blocks: vec![Block::Text { id: None, text: text.into() }],
        }
    }

    fn published(windows: Vec<WindowState>, windows_rev: u64) -> Published {
        let operable = operable_set(windows.iter().map(|w| (w.id.as_str(), w.modal, w.owner_id.as_deref())));
        Published::from_snapshot(WindowsSnapshot { operable_window_ids: operable, windows }, windows_rev)
    }

    fn check(before: &Published, now: &Published) -> Result<(), String> {
        let mut ever: BTreeSet<String> = before.windows().map(|w| w.id.clone()).collect();
        invariants(before, now, &mut ever, true)
    }

    // The checker catches each broken rule (so a passing TestApp step means something).
    #[test]
    fn each_invariant_is_checked() {
        let a = published(vec![window("w-1", 1, "a")], 1);
        assert_eq!(check(&a, &published(vec![window("w-1", 2, "b")], 2)), Ok(()));
        let stuck = check(&a, &published(vec![window("w-1", 1, "b")], 2)).unwrap_err();
        assert!(stuck.contains("GB-4.2-8"), "{stuck}");
        let bumped = check(&a, &published(vec![window("w-1", 2, "a")], 2)).unwrap_err();
        assert!(bumped.contains("GB-7.1-1"), "{bumped}");
        let silent = check(&a, &published(vec![window("w-1", 2, "b")], 1)).unwrap_err();
        assert!(silent.contains("resources/updated would not be sent"), "{silent}");

        let closed = published(vec![], 2);
        let mut ever = BTreeSet::from(["w-1".to_owned()]);
        let reused = invariants(&closed, &published(vec![window("w-1", 1, "a")], 3), &mut ever, true).unwrap_err();
        assert!(reused.contains("reused"), "{reused}");

        let wrong = Published::from_snapshot(
            WindowsSnapshot { operable_window_ids: vec![], windows: vec![window("w-1", 1, "a")] },
            1,
        );
        assert!(check(&Published::empty(), &wrong).unwrap_err().contains("GB-2-5"));

        let mut orphan = window("w-2", 1, "a");
        orphan.modal = true;
        orphan.owner_id = Some("w-9".into());
        assert!(check(&a, &published(vec![window("w-1", 1, "a"), orphan], 2)).unwrap_err().contains("GB-4.2-7"));

        let mut leaky = window("w-1", 2, "a");
        leaky.blocks = vec![Block::Fields { id: None, items: vec![FieldItem::new("Password", "hunter2")] }];
        let mut items = serde_json::to_value(&leaky.blocks).unwrap();
        items[0]["items"][0]["sensitive"] = Value::Bool(true);
        leaky.blocks = serde_json::from_value(items).unwrap();
        assert!(check(&a, &published(vec![leaky], 2)).unwrap_err().contains("GB-4.5-2"));
    }
}
