//! The GUI window model: window types and action sets (the traits the macros implement),
//! topology and the operable set, versions, the one serialized dispatcher, and the handle
//! adapters use (GB §2, §4.2, §7, §10).

mod actor;
mod bridge;
pub(crate) mod context;
mod journal;
mod published;
mod sink;
mod text;
mod topology;
mod ui;
mod window;

pub use crate::catalog::ArgumentLimits;
pub use actor::{Actor, AgentActor, ClientInfo, Transport};
pub use bridge::{
    Bridge, BridgeBuilder, CallOutcome, DEFAULT_MAX_QUEUED_CALLS, GB_INSTRUCTIONS, GuiOwner, OwnerGone, ServerIdentity,
    UiOwner,
};
pub use context::{ActionContext, OpenOptions};
pub use journal::{
    DEFAULT_JOURNAL_ARGUMENT_BYTES, DEFAULT_JOURNAL_BYTES, DEFAULT_JOURNAL_ENTRIES, Journal, JournalEntry,
    JournalLimits, JournalSink, Operation, Outcome,
};
pub use published::{Published, ToolEntry};
pub use sink::JsonLinesSink;
pub use text::{MAX_SUMMARY_CHARS, MAX_TITLE_CHARS};
#[cfg(feature = "testing")]
pub(crate) use topology::operable_set;
#[cfg(feature = "companion")]
pub(crate) use ui::capped_error;
pub use ui::{AgentCall, DEFAULT_UNDO_DEPTH, Ui, UndoError, UndoPoint, Undone};
// `ActionError` lives in `model` (the catalog's capability checks use it too); it stays
// reachable as `gui::ActionError`, where actions meet it.
pub use crate::model::ActionError;
pub use window::{BridgeActions, BridgeWindow, Rendered};
