use crate::catalog::{DescribeActions, DescribeWindow};
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

/// A live window: implemented by `#[bridge_window]` on a struct, next to its description
/// ([`DescribeWindow`]: meta, view, shared state), which is what the catalog reads.
///
/// `render` is the only way window content reaches the wire, and the generated
/// implementation never reads a `sensitive` field, so it cannot leak one (GB-4.5-2).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a window type: put #[bridge_window] on the struct",
    label = "needs #[bridge_window]"
)]
pub trait BridgeWindow: DescribeWindow + Send + 'static {
    /// The current title, summary and blocks.
    fn render(&self) -> Rendered;

    /// A copy of the window's value taken before each agent operation, for
    /// [`Ui::undo`](crate::gui::Ui::undo): `Some` for a type declared
    /// `#[bridge_window(undo)]` (which requires `Clone`), `None` (the default) otherwise.
    fn undo_copy(&self) -> Option<Box<dyn std::any::Any + Send>> {
        None
    }

    /// Puts back a copy [`BridgeWindow::undo_copy`] took. Returns `false` (and changes
    /// nothing) when `copy` is not a `Self`.
    fn undo_restore(&mut self, copy: Box<dyn std::any::Any + Send>) -> bool {
        let _ = copy;
        false
    }
}

/// A live action set: implemented by `#[bridge_actions]` on an `impl` block (of a window type,
/// or of the app type for `app__{action}` tools), next to its description
/// ([`DescribeActions`]: the action specs), which is what the catalog reads.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no action set: add a `#[bridge_actions] impl {Self} {{ … }}` block",
    label = "needs a #[bridge_actions] impl",
    note = "a window without actions still needs one: `#[bridge_actions] impl {Self} {{}}` declares none"
)]
pub trait BridgeActions: DescribeActions + Send + 'static {
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
    fn undo_copy(&self) -> Option<Box<dyn std::any::Any + Send>>;
    fn undo_restore(&mut self, copy: Box<dyn std::any::Any + Send>) -> bool;
}

impl<W: BridgeWindow + BridgeActions> AnyWindow for W {
    fn render(&self) -> Rendered {
        BridgeWindow::render(self)
    }
    fn undo_copy(&self) -> Option<Box<dyn std::any::Any + Send>> {
        BridgeWindow::undo_copy(self)
    }
    fn undo_restore(&mut self, copy: Box<dyn std::any::Any + Send>) -> bool {
        BridgeWindow::undo_restore(self, copy)
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
