//! How an action rejects a call: [`ActionError`], and its wire form ([`ToolError`]).

use super::{ErrorCode, FieldError, ToolError};

/// How an action rejects a call. Maps onto the GB error codes; the call leaves no trace in
/// the UI model (windows it asked to open or close are discarded).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ActionError {
    /// `validation_failed` with per-field errors (GB-7.3-1).
    #[error("{message}")]
    Validation {
        /// Summary, e.g. "Submission rejected: 2 fields are invalid".
        message: String,
        /// `{field, error}` items; `field` is the parameter name.
        fields: Vec<FieldError>,
    },
    /// `action_not_available`: the action cannot run in the window's current state (GB-7.4-6).
    #[error("{0}")]
    NotAvailable(String),
}

impl ActionError {
    /// One invalid parameter.
    pub fn field(field: impl Into<String>, error: impl Into<String>) -> Self {
        let fields = vec![FieldError::new(field, error)];
        ActionError::Validation { message: summary_for(&fields), fields }
    }

    /// Several invalid parameters; the message counts them.
    pub fn fields(fields: Vec<FieldError>) -> Self {
        ActionError::Validation { message: summary_for(&fields), fields }
    }

    /// Adds one more invalid parameter to a `Validation` error.
    pub fn and_field(self, field: impl Into<String>, error: impl Into<String>) -> Self {
        match self {
            ActionError::Validation { mut fields, .. } => {
                fields.push(FieldError::new(field, error));
                Self::fields(fields)
            }
            other => other,
        }
    }

    /// `action_not_available` with a reason.
    pub fn not_available(reason: impl Into<String>) -> Self {
        ActionError::NotAvailable(reason.into())
    }

    /// Builds a `Validation` error from a serde deserialization error of the arguments.
    #[doc(hidden)]
    pub fn from_deserialize(err: impl std::fmt::Display) -> Self {
        let text = err.to_string();
        let field = serde_field(&text).to_owned();
        ActionError::fields(vec![FieldError::new(field, text)])
    }
}

/// The field a serde error message names (`missing field `x``, `unknown field `x`, …`), or `""`.
pub(crate) fn serde_field(text: &str) -> &str {
    text.split('`').nth(1).filter(|_| text.contains("field `")).unwrap_or("")
}

fn summary_for(fields: &[FieldError]) -> String {
    match fields.len() {
        1 => "Rejected: 1 field is invalid".to_owned(),
        n => format!("Rejected: {n} fields are invalid"),
    }
}

impl From<ActionError> for ToolError {
    fn from(e: ActionError) -> Self {
        match e {
            ActionError::Validation { message, fields } => ToolError::validation_failed(message, fields),
            ActionError::NotAvailable(m) => ToolError::new(ErrorCode::ActionNotAvailable, m),
        }
    }
}
