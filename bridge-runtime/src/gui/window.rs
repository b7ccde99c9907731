use crate::catalog::{ActionSpec, WindowMeta, WindowView};
use crate::gui::ActionContext;
use crate::model::{ActionError, Block};
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

    /// The type's own MCP Apps view (`#[bridge_window(view = "…")]`), or `None` for the
    /// built-in view (MA-6).
    fn window_view() -> Option<WindowView>
    where
        Self: Sized,
    {
        None
    }

    /// Whether this type's title, summary, blocks or action availability read state outside
    /// the window value (`#[bridge_window(shared_state)]`): such windows are re-rendered after
    /// every operation, others only after an operation that can change them (see
    /// [`Ui`](crate::gui::Ui#which-windows-are-re-rendered); issue #10 item 2). Default `false`.
    fn reads_shared_state() -> bool
    where
        Self: Sized,
    {
        false
    }

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
    fn as_any(&self) -> &dyn std::any::Any;
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
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
