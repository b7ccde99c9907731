//! Wire types exactly as spec GB names them: the `app://windows` snapshot, semantic
//! blocks, the ToolResult envelope and the ToolError object (GB §4, §5.4, §7.4, Appendix B).
//!
//! Field names are the spec's (`operableWindowIds`, `ownerId`, `mimeType`, `currentVersion`);
//! Rust names are their snake_case twins.

mod action_error;
mod block;
mod error;
pub(crate) mod json;
pub(crate) mod quote;
mod secret;

pub use action_error::ActionError;
pub(crate) use action_error::serde_field;
pub use block::{Block, FieldItem, REDACTED, Severity};
pub use error::{ErrorCode, FieldError, ToolError};
pub use quote::escape_invisible;
pub use secret::Secret;

use serde::{Deserialize, Serialize};

/// The whole `app://windows` resource: one self-consistent snapshot (GB-4.1-2, GB-4.2-1, GB-8.3-2).
///
/// Shape: `{"operableWindowIds": string[], "windows": Window[]}`. Every id in
/// `operableWindowIds` and every non-null `ownerId` names a window in `windows`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct WindowsSnapshot {
    /// The windows operable right now, modal chains and app-level collapse applied (GB-4.2-2).
    pub operable_window_ids: Vec<String>,
    /// Every open window, content inlined; order carries no meaning (GB-4.2-3).
    pub windows: Vec<WindowState>,
}

/// One entry of `windows[]` (GB-4.2-4 … GB-4.2-10).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowState {
    /// External, name-safe window id (`[A-Za-z0-9_-]`, never contains `__`), unique and never
    /// reused (GB-4.2-4, GB-10.3-1, GB-12.4-3).
    pub id: String,
    /// Human-readable title (GB-4.2-5).
    pub title: String,
    /// Whether the window is modal (GB-4.2-6).
    pub modal: bool,
    /// Owner of a window-level modal; `null` for top-level windows and app-level modals.
    /// Always present on the wire (GB-4.2-7).
    pub owner_id: Option<String>,
    /// int64 optimistic-concurrency counter; strictly increases whenever `summary` or `blocks`
    /// change (GB-4.2-8, GB-7.1-1, GB-10.5-1).
    pub version: i64,
    /// One sentence on what the window shows (GB-4.2-9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The window content as flat semantic blocks; `[]` when empty (GB-4.2-10, GB-4.4-1).
    pub blocks: Vec<Block>,
}

/// A successful tool call's `structuredContent` (GB-5.4, GB-B-4). There is no `ok` flag:
/// a normal return means success (GB-5.4-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// Human-readable outcome, e.g. "Submitted; a confirmation dialog popped up" (GB-5.4-4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Ids of the windows this call opened (GB-5.4-5); omitted when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened_window_ids: Option<Vec<String>>,
    /// The action's own structured result, shaped by its `outputSchema` (GB-5.4-6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
}

impl ToolResult {
    /// The one-line text mirror put in MCP `content` (GB-12.3-3): `message`, or a short default.
    pub fn text_mirror(&self) -> String {
        if let Some(m) = &self.message {
            return m.clone();
        }
        match &self.opened_window_ids {
            Some(ids) if !ids.is_empty() => format!("Done; opened {}", ids.join(", ")),
            _ if self.result.is_some() => "Done; see the structured result".to_owned(),
            _ => "Done".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // GB-4.2-13: the spec's own §4.2 example is a valid snapshot and round-trips byte for byte.
    #[test]
    fn spec_example_snapshot_round_trips() {
        let example = r#"{"operableWindowIds":["w-A"],"windows":[{"id":"w-A","title":"Order Editor","modal":false,"ownerId":null,"version":42,"summary":"Editing order #12345, recipient not yet filled in","blocks":[{"type":"fields","id":"b2","items":[{"label":"Recipient","value":""},{"label":"Amount","value":"$100.00"}]},{"type":"notice","id":"b4","severity":"error","text":"Recipient cannot be empty"}]}]}"#;
        let snap: WindowsSnapshot = serde_json::from_str(example).unwrap();
        assert_eq!(snap.windows[0].owner_id, None);
        assert_eq!(serde_json::to_string(&snap).unwrap(), example);
    }

    // GB-B-5, GB-7.4-8: error objects carry exactly the six codes, with their extra fields.
    #[test]
    fn error_objects_have_the_spec_shape() {
        let e = serde_json::to_value(ToolError::stale_state(3, 4)).unwrap();
        assert_eq!(e["code"], "stale_state");
        assert_eq!(e["currentVersion"], 4);
        let codes = [
            ErrorCode::StaleState,
            ErrorCode::ValidationFailed,
            ErrorCode::BlockedByModal,
            ErrorCode::WindowNotFound,
            ErrorCode::ActionNotAvailable,
            ErrorCode::ActionTimeout,
        ];
        let wire: Vec<String> =
            codes.iter().map(|c| serde_json::to_value(c).unwrap().as_str().unwrap().to_owned()).collect();
        assert_eq!(
            wire,
            [
                "stale_state",
                "validation_failed",
                "blocked_by_modal",
                "window_not_found",
                "action_not_available",
                "action_timeout"
            ]
        );
        assert!(codes.iter().zip(&wire).all(|(c, w)| c.as_str() == w));
    }
}
