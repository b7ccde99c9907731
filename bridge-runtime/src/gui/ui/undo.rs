//! Undo of the agent's changes: a window type declared `#[bridge_window(undo)]` is copied before
//! each agent tool call on it (read-only actions excepted), and [`Ui::undo`] puts the copy back
//! as the user's operation.

use super::Ui;
use crate::gui::actor::Actor;
use crate::gui::journal::{Operation, Outcome};
use std::any::Any;
use std::collections::VecDeque;
use std::time::SystemTime;

/// Default of [`BridgeBuilder::undo_depth`](crate::gui::BridgeBuilder::undo_depth): agent
/// changes kept per window.
pub const DEFAULT_UNDO_DEPTH: usize = 10;

/// An agent's change of a window that [`Ui::undo`] can take back ([`Ui::undo_points`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct UndoPoint {
    /// The tool the agent called (`{winId}__{action}`).
    pub tool: String,
    /// The agent.
    pub actor: Actor,
    /// When the call ran.
    pub at: SystemTime,
    /// The window's `version` before the call.
    pub version_before: i64,
    /// Its `version` right after the call (after a later undo, the version the undo left).
    pub version_after: i64,
    /// Whether the call also opened, closed or updated other windows ([`ActionContext::open`],
    /// [`ActionContext::close`], [`ActionContext::update`] of another window): then it cannot
    /// be undone ([`UndoError::SideEffects`]).
    ///
    /// [`ActionContext::open`]: crate::gui::ActionContext::open
    /// [`ActionContext::close`]: crate::gui::ActionContext::close
    /// [`ActionContext::update`]: crate::gui::ActionContext::update
    pub side_effects: bool,
}

/// What [`Ui::undo`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Undone {
    /// The tool whose change was taken back.
    pub tool: String,
    /// The window's `version` now: higher than before the undo when what it shows changed, so an
    /// agent holding the old version gets `stale_state` (GB-7.1-2).
    pub version: i64,
}

/// Why [`Ui::undo`] could not take the change back. Nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UndoError {
    /// No such window is open.
    #[error("no window '{0}' is open")]
    WindowGone(String),
    /// Its type does not keep copies: declare it `#[bridge_window(undo)]`.
    #[error("window '{0}' does not keep undo copies (#[bridge_window(undo)])")]
    NotUndoable(String),
    /// No agent change of it is kept (none was made, all were undone, or older ones went past
    /// [`BridgeBuilder::undo_depth`](crate::gui::BridgeBuilder::undo_depth)).
    #[error("no agent change of window '{0}' is left to undo")]
    NothingToUndo(String),
    /// Someone may have changed it after the agent's change (the user, the app, another call),
    /// whether or not what it shows changed (a hidden field, a secret): putting the old copy
    /// back would throw their change away. `expected` and `current` may be equal then.
    #[error("window '{id}' was changed after the agent's change, by the user, the app or another call")]
    ChangedSince {
        /// The window.
        id: String,
        /// The version the agent's change left.
        expected: i64,
        /// The version now.
        current: i64,
    },
    /// The agent's change opened, closed or updated other windows; restoring this window would
    /// not reverse that.
    #[error("'{tool}' also opened, closed or changed other windows; undo cannot reverse that")]
    SideEffects {
        /// The tool.
        tool: String,
    },
    /// A modal dialog blocks the window (GB-4.2): answer the dialog first.
    #[error("window '{0}' is blocked by a modal dialog")]
    BlockedByModal(String),
}

/// A kept agent change: what it was, and the window's value before it.
pub(super) struct Kept {
    pub(super) point: UndoPoint,
    pub(super) copy: Box<dyn Any + Send>,
    /// The window's change count right after it (see [`Ui::undo`]): anything else that may
    /// have changed the window since makes it `ChangedSince`, shown or not.
    pub(super) changes_after: u64,
}

/// How a call's action ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ran {
    Ok,
    Err,
    Panicked,
}

/// A call that ran an action of a window, settled after the commit: whether it may have changed
/// the window, and the copy taken before it (an agent's call on an undoable window).
pub(super) struct Taken {
    pub(super) window: String,
    pub(super) version_before: i64,
    pub(super) read_only: bool,
    pub(super) ran: Ran,
    pub(super) side_effects: bool,
    /// Only for an agent's call on an undoable window: what an undo point keeps.
    pub(super) copy: Option<UndoCopy>,
}

/// The copy taken before an agent's call, and what the undo point says of the call.
pub(super) struct UndoCopy {
    pub(super) value: Box<dyn Any + Send>,
    pub(super) actor: Actor,
    pub(super) tool: String,
    pub(super) at: SystemTime,
}

/// A window's kept changes, oldest first.
pub(super) type Stack = VecDeque<Kept>;

impl Ui {
    /// Settles a call that ran an action of a window: a read-only action that succeeded changed
    /// nothing, nor did one that failed without changing what the window shows (an action that
    /// returns an error leaves its state unchanged, by contract); anything else counts as a
    /// change of the window, shown or hidden, and an agent's copy taken before it is kept (at
    /// most the undo depth).
    pub(super) fn settle_undo(&mut self, taken: Taken) {
        let Some(i) = self.index_of(&taken.window) else { return };
        let depth = self.undo_depth;
        let e = &mut self.windows[i];
        let version = e.published.state.version;
        let changed = match taken.ran {
            Ran::Ok => !taken.read_only,
            Ran::Err => version != taken.version_before,
            Ran::Panicked => true,
        };
        if !changed {
            return;
        }
        e.changes += 1;
        let Some(UndoCopy { value: copy, actor, tool, at }) = taken.copy else { return };
        e.undo.push_back(Kept {
            point: UndoPoint {
                tool,
                actor,
                at,
                version_before: taken.version_before,
                version_after: version,
                side_effects: taken.side_effects,
            },
            copy,
            changes_after: e.changes,
        });
        while e.undo.len() > depth {
            e.undo.pop_front();
        }
    }

    /// The agent's changes of window `id` that are kept, oldest first ([`Ui::undo`] takes back
    /// the newest). Empty when the window is not open or its type keeps none.
    pub fn undo_points(&self, id: &str) -> Vec<UndoPoint> {
        self.index_of(id).map(|i| self.windows[i].undo.iter().map(|k| k.point.clone()).collect()).unwrap_or_default()
    }

    /// The agent change [`Ui::undo`] of window `id` would take back now, or why it cannot (for
    /// an "Undo" button: enabled when this is `Ok`).
    ///
    /// # Errors
    /// As [`Ui::undo`].
    pub fn can_undo(&self, id: &str) -> Result<UndoPoint, UndoError> {
        let i = self.index_of(id).ok_or_else(|| UndoError::WindowGone(id.to_owned()))?;
        let e = &self.windows[i];
        if !e.undoable {
            return Err(UndoError::NotUndoable(id.to_owned()));
        }
        let kept = e.undo.back().ok_or_else(|| UndoError::NothingToUndo(id.to_owned()))?;
        if !e.operable {
            return Err(UndoError::BlockedByModal(id.to_owned()));
        }
        if kept.point.side_effects {
            return Err(UndoError::SideEffects { tool: kept.point.tool.clone() });
        }
        if e.changes != kept.changes_after {
            let current = e.published.state.version;
            return Err(UndoError::ChangedSince { id: id.to_owned(), expected: kept.point.version_after, current });
        }
        Ok(kept.point.clone())
    }

    /// Takes back the agent's newest kept change of window `id` as the user's operation
    /// ([`Actor::User`]; [`Ui::undo_as`] for another actor): the window's value before that
    /// call is put back, the window re-renders, its `version` rises when what it shows changed
    /// (an agent holding the old version gets `stale_state`), subscribers are notified, and the
    /// journal records it ([`Operation::Undo`]).
    ///
    /// What cannot be undone, each leaving everything as it was: a window that is gone
    /// ([`UndoError::WindowGone`]), of a type without `#[bridge_window(undo)]`
    /// ([`UndoError::NotUndoable`]), blocked by a modal ([`UndoError::BlockedByModal`]),
    /// without a kept agent change ([`UndoError::NothingToUndo`]), changed by anyone after the
    /// agent's change ([`UndoError::ChangedSince`]), or whose change also opened, closed or
    /// changed other windows ([`UndoError::SideEffects`]). Only the agent's tool calls are
    /// kept: the user's and the app's own changes are not undone here, and changes outside the
    /// window's value (files, shared state, the network) are not restored.
    ///
    /// # Errors
    /// [`UndoError`], as listed.
    pub fn undo(&mut self, id: &str) -> Result<Undone, UndoError> {
        self.undo_as(Actor::User, id)
    }

    /// [`Ui::undo`] on the account of `actor`.
    ///
    /// # Errors
    /// As [`Ui::undo`].
    pub fn undo_as(&mut self, actor: Actor, id: &str) -> Result<Undone, UndoError> {
        let point = self.can_undo(id)?;
        let i = self.index_of(id).ok_or_else(|| UndoError::WindowGone(id.to_owned()))?;
        let pending = self.begin(actor, Operation::Undo { tool: point.tool.clone() }, Some(id));
        let Some(kept) = self.windows[i].undo.pop_back() else {
            return Err(UndoError::NothingToUndo(id.to_owned()));
        };
        // The copy came from this window, so it is its type.
        let restored = self.windows[i].window.as_mut().is_some_and(|w| w.undo_restore(kept.copy));
        debug_assert!(restored, "an undo copy of another type");
        self.windows[i].dirty = true;
        self.commit();
        let e = &mut self.windows[i];
        e.changes += 1;
        let (version, changes) = (e.published.state.version, e.changes);
        // The next older change left the window as it is again: it is undoable from here.
        if let Some(older) = e.undo.back_mut() {
            older.point.version_after = version;
            older.changes_after = changes;
        }
        if let Some(pending) = pending {
            let message = format!("Undid the agent's '{}'", point.tool);
            self.end(pending, Outcome::Ok, Some(message));
        }
        Ok(Undone { tool: point.tool, version })
    }
}
