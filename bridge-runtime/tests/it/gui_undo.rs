//! Undo of the agent's changes (issue #20 item 3): a window type declared
//! `#[bridge_window(undo)]` is copied before each agent call; `Ui::undo` puts the copy back as
//! the user's operation, the version rises (GB-4.2-8) so an agent holding the old version gets
//! `stale_state` (GB-7.1-2), and the journal records it. What cannot be undone is refused with
//! a reason and changes nothing.

use bridge_runtime::gui::{Actor, Operation, UndoError};
use bridge_runtime::model::ErrorCode;
use bridge_runtime::prelude::*;
use bridge_runtime::testing::TestApp;
use serde_json::json;

/// A note whose text the agent edits.
#[derive(Clone)]
#[bridge_window(title = "Note", summary = "Note: {text}", undo)]
pub struct Note {
    #[bridge(text)]
    text: String,
}

#[bridge_actions]
impl Note {
    /// Replace the text.
    #[bridge_action]
    pub fn set_text(&mut self, text: String) -> Result<(), ActionError> {
        if text.is_empty() {
            return Err(ActionError::field("text", "Enter some text"));
        }
        self.text = text;
        Ok(())
    }

    /// Open a copy of this note in a new window.
    #[bridge_action]
    pub fn duplicate(&mut self, cx: &mut ActionContext) {
        self.text.push_str(" (copied)");
        cx.open(Note { text: self.text.clone() });
    }

    /// Ask before clearing: a modal over this note.
    #[bridge_action]
    pub fn ask(&mut self, cx: &mut ActionContext) {
        let me = cx.window_id().unwrap_or_default().to_owned();
        cx.open_with(Note { text: "Sure?".into() }, OpenOptions::modal_of(me));
    }
}

/// The same note without `undo`.
#[bridge_window(title = "Plain", summary = "Plain: {text}")]
pub struct Plain {
    #[bridge(text)]
    text: String,
}

#[bridge_actions]
impl Plain {
    /// Replace the text.
    #[bridge_action]
    pub fn set_text(&mut self, text: String) {
        self.text = text;
    }
}

fn app_with(builder: bridge_runtime::BridgeBuilder) -> TestApp {
    TestApp::new(builder.window::<Note>().window::<Plain>(), |ui| {
        ui.open(Note { text: "draft".into() }, OpenOptions::window());
        ui.open(Plain { text: "plain".into() }, OpenOptions::window());
    })
}

fn app() -> TestApp {
    app_with(Bridge::builder("undo", "1.0"))
}

fn note(app: &mut TestApp) -> (String, i64) {
    let w = app.snapshot().windows.iter().find(|w| w.id == "w-1").expect("w-1 is open");
    (w.summary.clone().unwrap_or_default(), w.version)
}

// The agent's change comes back off: state restored, version up, notification-worthy publish,
// the journal's entry is the user's, and the agent's stale write gets stale_state (GB-7.1-2).
#[test]
fn undo_restores_the_state_and_raises_the_version() {
    let mut app = app();
    let (_, v0) = note(&mut app);
    app.call("w-1__set_text", json!({"text": "agent was here", "expectedVersion": v0})).expect_ok();
    let (summary, v1) = note(&mut app);
    assert_eq!(summary, "Note: agent was here");
    let points = app.ui().undo_points("w-1");
    assert_eq!(points.len(), 1);
    assert_eq!((points[0].tool.as_str(), points[0].version_before, points[0].version_after), ("w-1__set_text", v0, v1));
    assert!(points[0].actor.is_agent());

    let undone = app.undo("w-1").expect("undoable");
    let (summary, v2) = note(&mut app);
    assert_eq!(summary, "Note: draft", "the state before the agent's call is back");
    assert!(v2 > v1, "GB-4.2-8: the version rises ({v1} → {v2})");
    assert_eq!(undone.version, v2);
    assert_eq!(undone.tool, "w-1__set_text");

    let entry = app.journal().last().expect("an entry");
    assert_eq!(entry.operation, Operation::Undo { tool: "w-1__set_text".into() });
    assert_eq!(entry.actor, Actor::User);
    assert_eq!((entry.version_before, entry.version_after), (Some(v1), Some(v2)));

    let stale = app.call("w-1__set_text", json!({"text": "again", "expectedVersion": v1}));
    let err = stale.expect_err(ErrorCode::StaleState);
    assert_eq!(err.current_version, Some(v2));
    assert_eq!(note(&mut app).0, "Note: draft");
}

// Several agent changes come off one by one, newest first, each undo leaving the next older
// one undoable; failed calls and the user's calls are not kept.
#[test]
fn undo_steps_back_through_the_agents_changes_only() {
    let mut app = app();
    app.call("w-1__set_text", json!({"text": "one"})).expect_ok();
    app.call("w-1__set_text", json!({"text": ""})).expect_err(ErrorCode::ValidationFailed);
    app.call("w-1__set_text", json!({"text": "two"})).expect_ok();
    assert_eq!(app.ui().undo_points("w-1").len(), 2, "a refused call keeps nothing");
    app.undo("w-1").expect("undo two");
    assert_eq!(note(&mut app).0, "Note: one");
    app.undo("w-1").expect("undo one");
    assert_eq!(note(&mut app).0, "Note: draft");
    assert_eq!(app.undo("w-1"), Err(UndoError::NothingToUndo("w-1".into())));
    app.user_call("w-1__set_text", json!({"text": "mine"})).expect_ok();
    assert!(app.ui().undo_points("w-1").is_empty(), "the user's own call is not the agent's");
}

// Refusals change nothing: the window changed since (the user edited it), the call opened a
// window, a modal blocks it, the type keeps no copies, the window is gone.
#[test]
fn what_cannot_be_undone_is_refused_and_changes_nothing() {
    let mut app = app();
    app.call("w-1__set_text", json!({"text": "agent"})).expect_ok();
    app.user::<Note, _>("w-1", |n, _| n.text = "user".into());
    let (summary, v) = note(&mut app);
    let err = app.undo("w-1").expect_err("the user changed it since");
    assert!(matches!(err, UndoError::ChangedSince { ref id, current, .. } if id == "w-1" && current == v), "{err}");
    assert_eq!(note(&mut app), (summary, v), "nothing changed");

    let mut app = self::app();
    app.call("w-1__duplicate", json!({})).expect_ok();
    assert_eq!(app.undo("w-1"), Err(UndoError::SideEffects { tool: "w-1__duplicate".into() }));
    assert_eq!(note(&mut app).0, "Note: draft (copied)");

    let mut app = self::app();
    app.call("w-1__set_text", json!({"text": "agent"})).expect_ok();
    app.call("w-1__ask", json!({})).expect_ok();
    assert_eq!(app.undo("w-1"), Err(UndoError::BlockedByModal("w-1".into())));
    app.ui().close("w-3");
    app.check();
    assert_eq!(app.undo("w-1"), Err(UndoError::SideEffects { tool: "w-1__ask".into() }));
    assert_eq!(note(&mut app).0, "Note: agent");

    let mut app = self::app();
    app.call("w-2__set_text", json!({"text": "agent"})).expect_ok();
    assert_eq!(app.undo("w-2"), Err(UndoError::NotUndoable("w-2".into())));
    app.ui().close("w-1");
    app.check();
    assert_eq!(app.undo("w-1"), Err(UndoError::WindowGone("w-1".into())));
}

// A modal over the window blocks undo (GB-4.2: the window is not operable).
#[test]
fn a_modal_blocks_undo() {
    let mut app = app();
    app.call("w-1__set_text", json!({"text": "agent"})).expect_ok();
    app.ui().open(Note { text: "Sure?".into() }, OpenOptions::modal_of("w-1"));
    app.check();
    assert_eq!(app.undo("w-1"), Err(UndoError::BlockedByModal("w-1".into())));
    app.ui().close("w-3");
    app.check();
    app.undo("w-1").expect("undoable once the modal is gone");
    assert_eq!(note(&mut app).0, "Note: draft");
}

// Bounded: at most `undo_depth` changes per window are kept, the oldest go first; depth 0 keeps
// none and copies nothing.
#[test]
fn the_undo_depth_bounds_what_is_kept() {
    let mut app = app_with(Bridge::builder("undo", "1.0").undo_depth(2));
    for text in ["a", "b", "c"] {
        app.call("w-1__set_text", json!({"text": text})).expect_ok();
    }
    let kept: Vec<i64> = app.ui().undo_points("w-1").iter().map(|p| p.version_before).collect();
    assert_eq!(kept.len(), 2);
    app.undo("w-1").expect("c");
    app.undo("w-1").expect("b");
    assert_eq!(note(&mut app).0, "Note: a");
    assert!(matches!(app.undo("w-1"), Err(UndoError::NothingToUndo(_))));

    let mut app = app_with(Bridge::builder("undo", "1.0").undo_depth(0));
    app.call("w-1__set_text", json!({"text": "a"})).expect_ok();
    assert!(app.ui().undo_points("w-1").is_empty());
}

/// A window with state it does not show: a hidden flag and a secret.
#[derive(Clone)]
#[bridge_window(title = "Vault", summary = "Vault: {label}", undo)]
pub struct Vault {
    #[bridge(text)]
    label: String,
    #[bridge(skip)]
    locked: bool,
    #[bridge(skip)]
    pin: Secret<String>,
}

#[bridge_actions]
impl Vault {
    /// Rename the vault.
    #[bridge_action]
    pub fn rename(&mut self, label: String) -> Result<(), ActionError> {
        if label == "half" {
            self.label = "half-done".into();
            return Err(ActionError::field("label", "Failed half-way"));
        }
        if label.is_empty() {
            return Err(ActionError::field("label", "Enter a label"));
        }
        self.label = label;
        Ok(())
    }

    /// Change the PIN (the user's alone).
    #[bridge_action(user_only)]
    pub fn set_pin(&mut self, pin: Secret<String>) {
        self.pin = pin;
    }
}

fn vault() -> TestApp {
    TestApp::new(Bridge::builder("vault", "1.0").window::<Vault>(), |ui| {
        ui.open(Vault { label: "home".into(), locked: false, pin: Secret::new("orig".into()) }, OpenOptions::window());
    })
}

// A fresh-user trial found undo throwing away changes nobody sees: the user's hidden flag and
// the user's new PIN (the version did not move, so undo did not notice). Any operation that may
// have changed the window, shown or not, now makes the agent's earlier change `ChangedSince`.
#[test]
fn a_hidden_change_by_the_user_is_never_undone() {
    let mut app = vault();
    app.call("w-1__rename", json!({"label": "agent"})).expect_ok();
    app.user::<Vault, _>("w-1", |v, _| v.locked = true);
    assert!(matches!(app.undo("w-1"), Err(UndoError::ChangedSince { .. })));
    assert!(app.ui().window::<Vault>("w-1").is_some_and(|v| v.locked), "the user's flag stays");

    let mut app = vault();
    app.call("w-1__rename", json!({"label": "agent"})).expect_ok();
    app.user_call("w-1__set_pin", json!({"pin": "NEW"})).expect_ok();
    assert!(matches!(app.undo("w-1"), Err(UndoError::ChangedSince { .. })));
    assert!(app.ui().window::<Vault>("w-1").is_some_and(|v| v.pin.expose() == "NEW"), "the user's PIN stays");
}

// An agent call that fails without changing anything does not block undo; one that fails after
// changing what the window shows is itself undoable.
#[test]
fn failed_agent_calls_and_undo() {
    let mut app = vault();
    app.call("w-1__rename", json!({"label": "agent"})).expect_ok();
    app.call("w-1__rename", json!({"label": ""})).expect_err(ErrorCode::ValidationFailed);
    app.undo("w-1").expect("a failed call that changed nothing does not block undo");
    assert_eq!(app.ui().window::<Vault>("w-1").map(|v| v.label.clone()).as_deref(), Some("home"));

    let mut app = vault();
    app.call("w-1__rename", json!({"label": "half"})).expect_err(ErrorCode::ValidationFailed);
    assert_eq!(app.ui().window::<Vault>("w-1").map(|v| v.label.clone()).as_deref(), Some("half-done"));
    app.undo("w-1").expect("the half-done change can be taken back");
    assert_eq!(app.ui().window::<Vault>("w-1").map(|v| v.label.clone()).as_deref(), Some("home"));
}
