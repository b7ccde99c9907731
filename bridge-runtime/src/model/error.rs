use serde::{Deserialize, Serialize};

/// The six GB error codes, byte for byte (GB-7.4-8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// `expectedVersion` did not match; carries `currentVersion` (GB-7.4-2).
    StaleState,
    /// Input validation failed; carries `fields[]` (GB-7.4-3).
    ValidationFailed,
    /// The target window is blocked by a window-level or app-level modal (GB-7.4-4).
    BlockedByModal,
    /// The window was closed or never existed (GB-7.4-5).
    WindowNotFound,
    /// The operation is not available right now (GB-7.4-6).
    ActionNotAvailable,
    /// The operation timed out and did not take effect (GB-7.4-7).
    ActionTimeout,
}

impl ErrorCode {
    /// The wire string, e.g. `"stale_state"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::StaleState => "stale_state",
            ErrorCode::ValidationFailed => "validation_failed",
            ErrorCode::BlockedByModal => "blocked_by_modal",
            ErrorCode::WindowNotFound => "window_not_found",
            ErrorCode::ActionNotAvailable => "action_not_available",
            ErrorCode::ActionTimeout => "action_timeout",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One per-field problem of a `validation_failed` error: `{"field","error"}`, where `field` is
/// the tool parameter's name (GB-7.3-1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FieldError {
    /// The tool parameter's name, e.g. `"recipient"`.
    pub field: String,
    /// What is wrong, for a human and an agent, e.g. `"Cannot be empty"`.
    pub error: String,
}

impl FieldError {
    /// Builds `{"field": field, "error": error}`.
    pub fn new(field: impl Into<String>, error: impl Into<String>) -> Self {
        Self { field: field.into(), error: error.into() }
    }
}

/// A failed tool call's `structuredContent`, sent with `isError: true` (GB-7.4-1, GB-B-5).
///
/// Shape: `{"code", "message", "currentVersion"?, "fields"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[error("{code}: {message}")]
pub struct ToolError {
    /// One of the six GB codes.
    pub code: ErrorCode,
    /// Readable explanation.
    pub message: String,
    /// The window's current `version`, only with `stale_state`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_version: Option<i64>,
    /// Per-field problems, only with `validation_failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<FieldError>>,
}

impl ToolError {
    /// An error with just a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), current_version: None, fields: None }
    }

    /// `stale_state` with `currentVersion` (GB-7.1-2).
    pub fn stale_state(expected: i64, current: i64) -> Self {
        Self {
            current_version: Some(current),
            ..Self::new(
                ErrorCode::StaleState,
                format!(
                    "expectedVersion {expected} is not the window's current version {current}. Re-read \
                     app://windows and decide again"
                ),
            )
        }
    }

    /// `validation_failed` with per-field errors (GB-7.3-1).
    pub fn validation_failed(message: impl Into<String>, fields: Vec<FieldError>) -> Self {
        Self { fields: Some(fields), ..Self::new(ErrorCode::ValidationFailed, message) }
    }
}
