//! The plugin's commands: the page's API (`invoke('plugin:bridge|NAME', args)`). Each runs on
//! Tauri's async runtime, never on the main thread (the reads too: a long journal is not
//! serialized on the event loop); operations on the UI take the bridge's turn like an agent's
//! call.

use crate::{BridgeState, McpConfig};
use bridge_runtime::gui::{Actor, JournalEntry, UndoError, UndoPoint, Undone};
use bridge_runtime::{ToolError, ToolResult};
use serde::Serialize;
use serde_json::{Map, Value};
use std::time::UNIX_EPOCH;
use tauri::State;
use tauri::ipc::Response;

/// Why `undo` or `can_undo` refused, or why the bridge could not run the command. Serialized
/// `{"code": "nothing_to_undo", "message": "…"}`. Codes: `window_not_found` (no such window is
/// open), `not_undoable` (its type keeps no copies: `#[bridge_window(undo)]`), `nothing_to_undo`,
/// `changed_since` (someone changed the window after the agent), `side_effects` (the agent's
/// change also opened, closed or changed other windows), `undo_refused` (another reason),
/// `owner_gone` (the bridge stopped).
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

/// `windows`: the `app://windows` JSON, masked, byte for byte what agents read.
#[tauri::command(async)]
pub(crate) fn windows(state: State<'_, BridgeState>) -> Response {
    Response::new(state.bridge.published().snapshot_json().to_string())
}

/// `call`: runs tool `name` with `arguments` as the user (GB's checks, versions and
/// `stale_state` apply; user-only actions are allowed). Resolves with the `ToolResult`, rejects
/// with the GB error object.
#[tauri::command]
pub(crate) async fn call(
    state: State<'_, BridgeState>,
    name: String,
    arguments: Option<Map<String, Value>>,
) -> Result<ToolResult, ToolError> {
    state.bridge.call_tool_as(Actor::User, &name, arguments.unwrap_or_default()).await.result
}

/// `operable`: `operableWindowIds` now.
#[tauri::command(async)]
pub(crate) fn operable(state: State<'_, BridgeState>) -> Vec<String> {
    state.bridge.published().operable_window_ids().to_vec()
}

/// `last_agent_call`: the last tool an agent called, or `null`.
#[tauri::command]
pub(crate) async fn last_agent_call(state: State<'_, BridgeState>) -> Result<Option<LastAgentCall>, CommandError> {
    state
        .bridge
        .run(|ui| {
            ui.last_agent_call().map(|c| LastAgentCall {
                tool: c.tool.clone(),
                window_id: c.window_id.clone(),
                action: c.action.clone(),
                ok: c.ok,
                seq: c.seq,
                age_ms: u64::try_from(c.at.elapsed().as_millis()).unwrap_or(u64::MAX),
            })
        })
        .await
        .map_err(|_| owner_gone())
}

/// `journal`: the entries with `seq` greater than `since` (all kept entries without it), oldest
/// first, arguments masked as the journal masks them.
#[tauri::command(async)]
pub(crate) fn journal(state: State<'_, BridgeState>, since: Option<u64>) -> Vec<JournalEntry> {
    state.bridge.journal().since(since.unwrap_or(0))
}

/// `undo`: takes back the agent's last change of window `window_id`, as the user.
#[tauri::command]
pub(crate) async fn undo(state: State<'_, BridgeState>, window_id: String) -> Result<UndoneView, CommandError> {
    let done = state.bridge.run(move |ui| ui.undo(&window_id)).await.map_err(|_| owner_gone())?;
    done.map(Into::into).map_err(Into::into)
}

/// `can_undo`: the change `undo` would take back, or why there is none.
#[tauri::command]
pub(crate) async fn can_undo(state: State<'_, BridgeState>, window_id: String) -> Result<UndoPointView, CommandError> {
    let point = state.bridge.run(move |ui| ui.can_undo(&window_id)).await.map_err(|_| owner_gone())?;
    point.map(Into::into).map_err(Into::into)
}

/// `mcp_config`: the MCP URL and token (not in `bridge:default`).
#[tauri::command(async)]
pub(crate) fn mcp_config(state: State<'_, BridgeState>) -> McpConfig {
    state.mcp.clone()
}
