//! # bridge-runtime
//!
//! Hand a desktop app's UI to AI agents safely. Annotate your own types with
//! `#[bridge_window]` and `#[bridge_actions]`; the runtime keeps one registry of windows and
//! actions and serves it as the GUI Bridge protocol over MCP (spec GB): one subscribable
//! resource `app://windows`, window-level tools `{winId}__{action}`, optimistic concurrency,
//! coded errors and notifications.
//!
//! Data flows one way: annotated type → [`catalog`] → [`gui`] model → [`mcp`] adapter → wire.

pub mod catalog;
pub mod companion;
pub mod gui;
pub mod mcp;
pub mod model;
pub mod render;

pub use bridge_macros::{BridgeArgs, BridgeFields, BridgeRow, bridge_action, bridge_actions, bridge_window};
pub use catalog::capability::BridgeCapabilities;
pub use catalog::{ActionHints, ActionSpec, BridgeArgs, Catalog};
pub use gui::{
    ActionContext, ActionError, Bridge, BridgeActions, BridgeBuilder, BridgeWindow, OpenOptions, Rendered, Ui, UiOwner,
};
pub use model::{Block, ErrorCode, FieldError, FieldItem, Secret, Severity, ToolError, ToolResult};
pub use render::{FieldSet, Media, Notice, TableRow};

/// Everything an app author needs in scope.
pub mod prelude {
    pub use crate::catalog::capability::BridgeCapabilities;
    pub use crate::gui::{ActionContext, ActionError, Bridge, BridgeActions, BridgeWindow, OpenOptions, Rendered, Ui};
    pub use crate::model::{Block, FieldError, FieldItem, Secret, Severity};
    pub use crate::render::{FieldSet, Media, Notice, TableRow};
    // `BridgeArgs` is both the trait and its derive, as serde's `Serialize` is.
    pub use crate::{BridgeArgs, BridgeFields, BridgeRow};
    pub use crate::{bridge_action, bridge_actions, bridge_window};
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}

/// Items the generated code refers to. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde;
    pub use serde_json;

    pub use crate::catalog::{ActionHints, ActionSpec, BlockKind, BlockSpec, BridgeArgs, WindowMeta, require_args};
    pub use crate::gui::{ActionContext, ActionError, BridgeActions, BridgeWindow, Rendered};
    pub use crate::model::{Block, FieldItem, Severity};

    pub use crate::render::*;

    // #[bridge_actions(companion)]
    pub use crate::catalog::capability::BridgeCapabilities;
    pub use crate::catalog::capability::macro_support::*;
    pub use crate::catalog::{
        CancelBehavior, CapabilityKind, CapabilitySpec, Completion, FallbackReason, FieldProblem, InteractionType,
        QueueMode, QueuePolicy, Scope, SpecError,
    };
}

/// The README's code, compiled as a doctest so the quick start cannot rot.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
