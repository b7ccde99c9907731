//! The plugin's commands: the page's API (`invoke('plugin:bridge|NAME', args)`). Each runs on
//! Tauri's async runtime, never on the main thread (the reads too: a long journal is not
//! serialized on the event loop); operations on the UI take the bridge's turn like an agent's
//! call.

use crate::{BridgeState, McpConfig};
use bridge_runtime::gui::{Actor, AgentCall, JournalEntry, UndoError, UndoPoint, Undone};
use bridge_runtime::model::ErrorCode;
use bridge_runtime::{ToolError, ToolResult};
use serde::Serialize;
use serde_json::{Map, Value};
use std::time::UNIX_EPOCH;
use tauri::ipc::Response;
use tauri::{Runtime, State, Webview};

/// Why `undo` or `can_undo` refused, or why the bridge could not run the command. Serialized
/// `{"code": "nothing_to_undo", "message": "…"}`. Codes: `window_not_found` (no such window is
/// open), `not_undoable` (its type keeps no copies: `#[bridge_window(undo)]`), `nothing_to_undo`,
/// `changed_since` (someone changed the window after the agent), `side_effects` (the agent's
/// change also opened, closed or changed other windows), `undo_refused` (another reason),
/// `owner_gone` (the bridge stopped), `invalid_arguments` (a missing or mistyped argument),
/// `out_of_scope` (a page in a bridge window's own Tauri window named another window). A
/// window id longer than 64 bytes is quoted clipped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct CommandError {
    /// A stable code, from the list above.
    pub code: String,
    /// What happened, for the user.
    pub message: String,
}

impl From<UndoError> for CommandError {
    fn from(e: UndoError) -> Self {
        let code = match &e {
            UndoError::WindowGone(_) => "window_not_found",
            UndoError::NotUndoable(_) => "not_undoable",
            UndoError::NothingToUndo(_) => "nothing_to_undo",
            UndoError::ChangedSince { .. } => "changed_since",
            UndoError::SideEffects { .. } => "side_effects",
            _ => "undo_refused",
        };
        CommandError { code: code.to_owned(), message: e.to_string() }
    }
}

fn owner_gone() -> CommandError {
    CommandError { code: "owner_gone".to_owned(), message: "the app's UI has stopped".to_owned() }
}

/// The last tool an agent called, for the page to highlight the window it worked on. Serialized
/// in camelCase: `{"tool": "w-1__edit_field", "windowId": "w-1", "action": "edit_field", "ok":
/// true, "seq": 3, "ageMs": 1200}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LastAgentCall {
    /// The tool name.
    pub tool: String,
    /// The window it acted on; `null` for app-level tools.
    pub window_id: Option<String>,
    /// The action's name.
    pub action: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// Counts agent calls: a new number is a new call.
    pub seq: u64,
    /// Milliseconds since it ran, when the command answered.
    pub age_ms: u64,
}

/// An agent change `undo` can take back now. Serialized in camelCase: `{"tool": "w-1__submit",
/// "actor": {…}, "at": 1764755000000 (ms since the Unix epoch), "versionBefore": 3,
/// "versionAfter": 4}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UndoPointView {
    /// The tool the agent called.
    pub tool: String,
    /// The agent (the journal's shape).
    pub actor: Actor,
    /// When it ran, in milliseconds since the Unix epoch.
    pub at: u64,
    /// The window's `version` before the call.
    pub version_before: i64,
    /// Its `version` after the call.
    pub version_after: i64,
}

impl From<&AgentCall> for LastAgentCall {
    fn from(c: &AgentCall) -> Self {
        LastAgentCall {
            tool: c.tool.clone(),
            window_id: c.window_id.clone(),
            action: c.action.clone(),
            ok: c.ok,
            seq: c.seq,
            age_ms: u64::try_from(c.at.elapsed().as_millis()).unwrap_or(u64::MAX),
        }
    }
}

impl From<UndoPoint> for UndoPointView {
    fn from(p: UndoPoint) -> Self {
        let at = p.at.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        UndoPointView {
            tool: p.tool,
            actor: p.actor,
            at,
            version_before: p.version_before,
            version_after: p.version_after,
        }
    }
}

/// What `undo` did: `{"tool": "w-1__edit_field", "version": 6}` (the window's version now).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct UndoneView {
    /// The tool whose change was taken back.
    pub tool: String,
    /// The window's `version` now.
    pub version: i64,
}

impl From<Undone> for UndoneView {
    fn from(u: Undone) -> Self {
        UndoneView { tool: u.tool, version: u.version }
    }
}

/// The longest window id or tool name a command's error quotes whole (MCP's tool-name cap);
/// longer ones are clipped.
const QUOTE_MAX: usize = 64;

/// `s` for an error message: whole up to [`QUOTE_MAX`] bytes, else clipped with `…`.
fn quote(s: &str) -> String {
    if s.len() <= QUOTE_MAX {
        return s.to_owned();
    }
    let mut end = QUOTE_MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Argument `key` of a command as a string: `Err` names the key (a missing or non-string
/// argument never reaches the bridge, and the page gets the documented error shape rather than
/// Tauri's deserialization text).
fn string_arg(key: &str, value: Option<Value>) -> Result<String, String> {
    match value {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(format!("`{key}` must be a string")),
        None => Err(format!("`{key}` is required")),
    }
}

fn invalid(message: String) -> CommandError {
    CommandError { code: "invalid_arguments".to_owned(), message }
}

/// The bridge window a page is scoped to: the one whose own Tauri window it is in
/// ([`Options::own_window`](crate::Options::own_window)); `None` for the app's other pages.
fn scope_of<R: Runtime>(state: &BridgeState, webview: &Webview<R>) -> Option<String> {
    let label = webview.window().label().to_owned();
    state.owned.contains(&label).then_some(label)
}

fn out_of_scope(scope: &str) -> CommandError {
    CommandError { code: "out_of_scope".to_owned(), message: format!("this page acts on window {scope} only") }
}

/// `windows`: the `app://windows` JSON, masked, byte for byte what agents read.
#[tauri::command(async)]
pub(crate) fn windows(state: State<'_, BridgeState>) -> Response {
    Response::new(state.bridge.published().snapshot_json().to_string())
}

/// `scope`: `{"windowId": "w-3"}` in a bridge window's own Tauri window (its `call` and `undo`
/// act on that window only), `null` in the app's other pages.
#[tauri::command(async)]
pub(crate) fn scope<R: Runtime>(state: State<'_, BridgeState>, webview: Webview<R>) -> Option<Value> {
    scope_of(&state, &webview).map(|id| serde_json::json!({ "windowId": id }))
}

/// `call`: runs tool `name` with `arguments` as the user (GB's checks, versions and
/// `stale_state` apply; user-only actions are allowed). Resolves with the `ToolResult`, rejects
/// with the GB error object; `validation_failed` when `name` is not a string or `arguments`
/// not an object; `action_not_available` for another window's tool from a scoped page.
#[tauri::command]
pub(crate) async fn call<R: Runtime>(
    state: State<'_, BridgeState>,
    webview: Webview<R>,
    name: Option<Value>,
    arguments: Option<Value>,
) -> Result<ToolResult, ToolError> {
    let name = string_arg("name", name).map_err(|m| ToolError::validation_failed(m, Vec::new()))?;
    let arguments = match arguments {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map,
        Some(_) => return Err(ToolError::validation_failed("`arguments` must be an object", Vec::new())),
    };
    if let Some(scope) = scope_of(&state, &webview)
        && name.split_once("__").map(|(id, _)| id) != Some(scope.as_str())
    {
        return Err(ToolError::new(ErrorCode::ActionNotAvailable, out_of_scope(&scope).message));
    }
    state.bridge.call_tool_as(Actor::User, &name, arguments).await.result
}

/// `operable`: `operableWindowIds` now.
#[tauri::command(async)]
pub(crate) fn operable(state: State<'_, BridgeState>) -> Vec<String> {
    state.bridge.published().operable_window_ids().to_vec()
}

/// `last_agent_call`: the last tool an agent called, or `null`.
#[tauri::command]
pub(crate) async fn last_agent_call(state: State<'_, BridgeState>) -> Result<Option<LastAgentCall>, CommandError> {
    state.bridge.run(|ui| ui.last_agent_call().map(LastAgentCall::from)).await.map_err(|_| owner_gone())
}

/// `journal`: the entries with `seq` greater than `since` (all kept entries without it), oldest
/// first, arguments masked as the journal masks them. `invalid_arguments` when `since` is not a
/// non-negative integer.
#[tauri::command(async)]
pub(crate) fn journal(state: State<'_, BridgeState>, since: Option<Value>) -> Result<Vec<JournalEntry>, CommandError> {
    let since = match since {
        None | Some(Value::Null) => 0,
        Some(v) => v.as_u64().ok_or_else(|| invalid("`since` must be a non-negative integer".to_owned()))?,
    };
    Ok(state.bridge.journal().since(since))
}

/// The `windowId` of `undo` / `can_undo`, checked against the page's scope.
fn undo_target<R: Runtime>(
    state: &BridgeState,
    webview: &Webview<R>,
    window_id: Option<Value>,
) -> Result<String, CommandError> {
    let id = string_arg("windowId", window_id).map_err(invalid)?;
    match scope_of(state, webview) {
        Some(scope) if scope != id => Err(out_of_scope(&scope)),
        _ => Ok(id),
    }
}

/// Clips the window id an undo error quotes ([`quote`]).
fn clipped(e: UndoError, id: &str) -> CommandError {
    let mut e = CommandError::from(e);
    if id.len() > QUOTE_MAX {
        e.message = e.message.replace(id, &quote(id));
    }
    e
}

/// `undo`: takes back the agent's last change of window `windowId`, as the user.
#[tauri::command]
pub(crate) async fn undo<R: Runtime>(
    state: State<'_, BridgeState>,
    webview: Webview<R>,
    window_id: Option<Value>,
) -> Result<UndoneView, CommandError> {
    let id = undo_target(&state, &webview, window_id)?;
    let target = id.clone();
    let done = state.bridge.run(move |ui| ui.undo(&target)).await.map_err(|_| owner_gone())?;
    done.map(Into::into).map_err(|e| clipped(e, &id))
}

/// `can_undo`: the change `undo` would take back, or why there is none.
#[tauri::command]
pub(crate) async fn can_undo<R: Runtime>(
    state: State<'_, BridgeState>,
    webview: Webview<R>,
    window_id: Option<Value>,
) -> Result<UndoPointView, CommandError> {
    let id = undo_target(&state, &webview, window_id)?;
    let target = id.clone();
    let point = state.bridge.run(move |ui| ui.can_undo(&target)).await.map_err(|_| owner_gone())?;
    point.map(Into::into).map_err(|e| clipped(e, &id))
}

/// `mcp_config`: the MCP URL and token (not in `bridge:default`).
#[tauri::command(async)]
pub(crate) fn mcp_config(state: State<'_, BridgeState>) -> McpConfig {
    state.mcp.clone()
}
