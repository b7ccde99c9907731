//! The coded errors of CP-6-16/CP-6-17 and their JSON-RPC 2.0 mapping (OQ-CP-12).

use crate::catalog::FieldProblem;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::fmt;

/// A stable error code (CP-6-17), wire string byte for byte (`"QUEUE_FULL"`).
///
/// JSON-RPC mapping (OQ-CP-12): `error.code` is the integer below, `error.message` the readable
/// message, `error.data` = `{"code": "<string>", "retryable": bool, …details}`.
///
/// | code | `error.code` | retryable |
/// | --- | --- | --- |
/// | `INVALID_PARAMS` | -32602 (JSON-RPC "Invalid params") | no |
/// | `INTERNAL_ERROR` | -32603 (JSON-RPC "Internal error") | yes |
/// | `METHOD_NOT_FOUND` | -32601 (JSON-RPC "Method not found") | no |
/// | `UNAUTHENTICATED` | -32001 | no |
/// | `FORBIDDEN` | -32002 | no |
/// | `NOT_FOUND` | -32003 | no |
/// | `RESULT_EXPIRED` | -32004 | no |
/// | `UNSUPPORTED_CAPABILITY` | -32010 | no |
/// | `UNSUPPORTED_STYLE` | -32011 | no |
/// | `QUEUE_FULL` | -32020 | yes |
/// | `RATE_LIMITED` | -32021 | yes |
/// | `RUNTIME_UNAVAILABLE` | -32022 | yes |
/// | `REVISION_CONFLICT` | -32030 | no (re-read, then decide again) |
/// | `IDEMPOTENCY_CONFLICT` | -32031 | no |
///
/// The server-defined integers sit in JSON-RPC's implementation-defined range
/// -32000 … -32099, grouped by family. `retryable` means "the same call may succeed later".
/// `METHOD_NOT_FOUND` is an addition CP-6-17 allows ("at least these codes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// Schema or semantic validation failed; `data.problems` = `[{"path","message"}]`.
    InvalidParams,
    /// Unknown capability, or one the character/settings cannot present without an allowed,
    /// declared fallback (CP-2-28, CP-2-29).
    UnsupportedCapability,
    /// Unknown style, or one that does not apply (CP-2-28).
    UnsupportedStyle,
    /// Missing or invalid credentials (raised by the auth layer, CP-6-20).
    Unauthenticated,
    /// The client lacks a required scope; `data.requiredScopes` (CP-6-20).
    Forbidden,
    /// No such request, or not the caller's; indistinguishable (CP-6-18).
    NotFound,
    /// The caller's own request is past the retention period or unrecoverable (CP-6-19, OQ-CP-10).
    ResultExpired,
    /// Per-client, total or record capacity reached; `data.limit` names it (OQ-CP-8).
    QueueFull,
    /// Create rate limit reached; `data.retryAfterMs` (OQ-CP-8).
    RateLimited,
    /// The sprite is hidden or external interaction is paused (CP-4-15).
    RuntimeUnavailable,
    /// `expectedRevision` is stale; `data.currentRevision` (CP-3-25).
    RevisionConflict,
    /// Same idempotency key, different parameters (CP-4-3).
    IdempotencyConflict,
    /// Anything else, including a failed state write (CP-4-20).
    InternalError,
    /// Unknown method name (JSON-RPC -32601).
    MethodNotFound,
}

impl ErrorCode {
    /// Every code.
    pub const ALL: [ErrorCode; 14] = [
        ErrorCode::InvalidParams,
        ErrorCode::UnsupportedCapability,
        ErrorCode::UnsupportedStyle,
        ErrorCode::Unauthenticated,
        ErrorCode::Forbidden,
        ErrorCode::NotFound,
        ErrorCode::ResultExpired,
        ErrorCode::QueueFull,
        ErrorCode::RateLimited,
        ErrorCode::RuntimeUnavailable,
        ErrorCode::RevisionConflict,
        ErrorCode::IdempotencyConflict,
        ErrorCode::InternalError,
        ErrorCode::MethodNotFound,
    ];

    /// The wire string, e.g. `"REVISION_CONFLICT"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidParams => "INVALID_PARAMS",
            ErrorCode::UnsupportedCapability => "UNSUPPORTED_CAPABILITY",
            ErrorCode::UnsupportedStyle => "UNSUPPORTED_STYLE",
            ErrorCode::Unauthenticated => "UNAUTHENTICATED",
            ErrorCode::Forbidden => "FORBIDDEN",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::ResultExpired => "RESULT_EXPIRED",
            ErrorCode::QueueFull => "QUEUE_FULL",
            ErrorCode::RateLimited => "RATE_LIMITED",
            ErrorCode::RuntimeUnavailable => "RUNTIME_UNAVAILABLE",
            ErrorCode::RevisionConflict => "REVISION_CONFLICT",
            ErrorCode::IdempotencyConflict => "IDEMPOTENCY_CONFLICT",
            ErrorCode::InternalError => "INTERNAL_ERROR",
            ErrorCode::MethodNotFound => "METHOD_NOT_FOUND",
        }
    }

    /// The JSON-RPC `error.code` integer (table above).
    pub fn jsonrpc_code(self) -> i64 {
        match self {
            ErrorCode::InvalidParams => -32602,
            ErrorCode::InternalError => -32603,
            ErrorCode::MethodNotFound => -32601,
            ErrorCode::Unauthenticated => -32001,
            ErrorCode::Forbidden => -32002,
            ErrorCode::NotFound => -32003,
            ErrorCode::ResultExpired => -32004,
            ErrorCode::UnsupportedCapability => -32010,
            ErrorCode::UnsupportedStyle => -32011,
            ErrorCode::QueueFull => -32020,
            ErrorCode::RateLimited => -32021,
            ErrorCode::RuntimeUnavailable => -32022,
            ErrorCode::RevisionConflict => -32030,
            ErrorCode::IdempotencyConflict => -32031,
        }
    }

    /// Whether the same call may succeed later (CP-6-16).
    pub fn retryable(self) -> bool {
        matches!(
            self,
            ErrorCode::QueueFull | ErrorCode::RateLimited | ErrorCode::RuntimeUnavailable | ErrorCode::InternalError
        )
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed method call: stable code, readable message, `retryable`, and code-specific details
/// (CP-6-16). Messages never contain request content (CP-4-18).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct CompanionError {
    /// The stable code.
    pub code: ErrorCode,
    /// Readable explanation (English).
    pub message: String,
    /// Extra `error.data` keys, e.g. `problems`, `currentRevision`, `limit`, `retryAfterMs`.
    pub details: Map<String, Value>,
}

impl CompanionError {
    /// An error with no details.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), details: Map::new() }
    }

    /// Adds a detail key to `error.data`.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    /// `INVALID_PARAMS` with `data.problems`.
    pub fn invalid_params(message: impl Into<String>, problems: Vec<FieldProblem>) -> Self {
        let problems = serde_json::to_value(problems).unwrap_or(Value::Array(Vec::new()));
        Self::new(ErrorCode::InvalidParams, message).with("problems", problems)
    }

    /// `NOT_FOUND` for a request id: the same text whether the request never existed or belongs
    /// to someone else (CP-6-18).
    pub(crate) fn request_not_found() -> Self {
        Self::new(ErrorCode::NotFound, "No request with this requestId is visible to this client")
    }

    /// Whether the same call may succeed later: the code's default ([`ErrorCode::retryable`]),
    /// unless a boolean `retryable` detail says otherwise (an `INTERNAL_ERROR` for a call that
    /// already took effect must not be repeated).
    pub fn retryable(&self) -> bool {
        self.details.get("retryable").and_then(Value::as_bool).unwrap_or(self.code.retryable())
    }

    /// `error.data`: `{"code": "...", "retryable": bool, ...details}` (OQ-CP-12).
    pub fn data(&self) -> Value {
        let mut data = Map::new();
        data.insert("code".into(), self.code.as_str().into());
        data.insert("retryable".into(), self.retryable().into());
        for (k, v) in &self.details {
            data.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Value::Object(data)
    }

    /// The JSON-RPC 2.0 error object `{"code": int, "message": str, "data": {...}}`.
    pub fn to_jsonrpc(&self) -> Value {
        json!({"code": self.code.jsonrpc_code(), "message": self.message, "data": self.data()})
    }
}
