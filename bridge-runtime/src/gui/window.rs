use crate::catalog::{ActionSpec, WindowMeta};
use crate::gui::ActionContext;
use crate::model::{Block, ErrorCode, FieldError, ToolError};
use serde_json::{Map, Value};

/// What a window shows right now: its `title`, `summary` and `blocks`, already redacted
/// (GB-4.2-5, GB-4.2-9, GB-4.2-10, GB-4.5-2).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rendered {
    /// Window title.
    pub title: String,
    /// One sentence on what the window shows.
    pub summary: Option<String>,
    /// Flat semantic blocks.
    pub blocks: Vec<Block>,
}

/// A window type: implemented by `#[bridge_window]` on a struct.
///
/// `render` is the only way window content reaches the wire, and the generated
/// implementation never reads a `sensitive` field, so it cannot leak one (GB-4.5-2).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a window type: put #[bridge_window] on the struct",
    label = "needs #[bridge_window]"
)]
pub trait BridgeWindow: Send + 'static {
    /// The type's static description: default title and block declarations.
    fn window_meta() -> WindowMeta
    where
        Self: Sized;

    /// The current title, summary and blocks.
    fn render(&self) -> Rendered;
}

/// An action set: implemented by `#[bridge_actions]` on an `impl` block (of a window type, or
/// of the app type for `app__{action}` tools).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no action set: add a `#[bridge_actions] impl {Self} {{ … }}` block",
    label = "needs a #[bridge_actions] impl",
    note = "a window without actions still needs one: `#[bridge_actions] impl {Self} {{}}` declares none"
)]
pub trait BridgeActions: Send + 'static {
    /// The actions, in declaration order. Window actions get `expectedVersion`; app actions
    /// do not (`window_level` tells which).
    fn action_specs_for(window_level: bool) -> Vec<ActionSpec>
    where
        Self: Sized;

    /// The actions as window actions (`action_specs_for(true)`).
    fn action_specs() -> Vec<ActionSpec>
    where
        Self: Sized,
    {
        Self::action_specs_for(true)
    }

    /// Whether `action` is available right now (its `available = fn`, or `true`).
    fn action_available(&self, action: &str) -> bool;

    /// Runs `action` with `args` (the tool arguments without `expectedVersion`, already checked
    /// against the inputSchema). Returns the value for ToolResult `result`, or `None` for `()`.
    fn invoke_action(
        &mut self,
        action: &str,
        args: Map<String, Value>,
        cx: &mut ActionContext<'_>,
    ) -> Result<Option<Value>, ActionError>;
}

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
        let field = text.split('`').nth(1).filter(|_| text.contains("field `")).unwrap_or("").to_owned();
        ActionError::fields(vec![FieldError::new(field, text)])
    }
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

/// Object-safe view of a window instance, used by the window manager: an action set that
/// also renders.
pub(crate) trait AnyWindow: AnyActions {
    fn render(&self) -> Rendered;
}

impl<W: BridgeWindow + BridgeActions> AnyWindow for W {
    fn render(&self) -> Rendered {
        BridgeWindow::render(self)
    }
}

/// Object-safe view of the app's action set.
pub(crate) trait AnyActions: Send {
    fn available(&self, action: &str) -> bool;
    fn invoke(
        &mut self,
        action: &str,
        args: Map<String, Value>,
        cx: &mut ActionContext<'_>,
    ) -> Result<Option<Value>, ActionError>;
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

impl<A: BridgeActions> AnyActions for A {
    fn available(&self, action: &str) -> bool {
        self.action_available(action)
    }
    fn invoke(
        &mut self,
        action: &str,
        args: Map<String, Value>,
        cx: &mut ActionContext<'_>,
    ) -> Result<Option<Value>, ActionError> {
        self.invoke_action(action, args, cx)
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
