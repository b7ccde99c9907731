//! What the registry knows about a window type or an action set: the static half of
//! `#[bridge_window]` and `#[bridge_actions]`, which the macros implement next to the live GUI
//! traits (`gui::BridgeWindow`, `gui::BridgeActions`, whose supertraits these are). The
//! [`Catalog`](super::Catalog) registers a type through these alone, so it needs nothing from
//! the layers above it.

use super::{ActionSpec, WindowMeta, WindowView};

/// The description of a window type: its meta (type name, default title, blocks), its own MCP
/// Apps view and whether its content reads shared state. Implemented by `#[bridge_window]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a window type: put #[bridge_window] on the struct",
    label = "needs #[bridge_window]"
)]
pub trait DescribeWindow {
    /// The type's static description: default title and block declarations (GB-4.4).
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
    /// `gui::Ui`, "Which windows are re-rendered"). Default `false`.
    fn reads_shared_state() -> bool
    where
        Self: Sized,
    {
        false
    }

    /// Whether every action of this type is the user's alone (`#[bridge_window(user_only)]`,
    /// e.g. an approval dialog): agents see the window, in `operableWindowIds` too, with no
    /// tools. Default `false`.
    fn user_only() -> bool
    where
        Self: Sized,
    {
        false
    }
}

/// The description of an action set: its actions' specs, in declaration order. Implemented by
/// `#[bridge_actions]` on a window type's `impl` block, or on the app type's for `app__{action}`
/// tools (OQ-GB-12).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no action set: add a `#[bridge_actions] impl {Self} {{ … }}` block",
    label = "needs a #[bridge_actions] impl",
    note = "a window without actions still needs one: `#[bridge_actions] impl {Self} {{}}` declares none"
)]
pub trait DescribeActions {
    /// The actions, in declaration order. Window actions get `expectedVersion` (GB-5.5-1); app
    /// actions do not (`window_level` tells which).
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
}
