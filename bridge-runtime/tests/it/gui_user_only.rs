//! Actions and windows only the user takes (issue #20 item 4): never listed as tools, refused
//! to an agent with `action_not_available` (GB-7.4-8 allows no new code), run on the user's
//! path; a user-only window stays in `app://windows` and `operableWindowIds` (the set is
//! structural, GB-4.2) with no tools; chosen at compile time or when a window opens, and
//! switched at run time.

use bridge_runtime::gui::{Actor, Operation};
use bridge_runtime::model::ErrorCode;
use bridge_runtime::prelude::*;
use bridge_runtime::testing::{Notification, TestApp};
use serde_json::json;

/// An order the agent fills in and only the user confirms.
#[bridge_window(title = "Order", summary = "Order {status}")]
pub struct Order {
    #[bridge(text)]
    status: String,
}

#[bridge_actions]
impl Order {
    /// Set the note.
    #[bridge_action]
    pub fn note(&mut self, text: String) {
        self.status = format!("noted: {text}");
    }

    /// Confirm the order.
    #[bridge_action(user_only)]
    pub fn confirm(&mut self) {
        self.status = "confirmed".into();
    }
}

/// An approval dialog: every action is the user's.
#[bridge_window(title = "Approve payment", summary = "Waiting for the user to approve", user_only)]
pub struct Approval {
    #[bridge(text)]
    amount: String,
}

#[bridge_actions]
impl Approval {
    /// Approve the payment.
    #[bridge_action]
    pub fn approve(&mut self, cx: &mut ActionContext) {
        cx.close();
    }
}

/// App-level actions, one of them the user's.
pub struct Shop;

#[bridge_actions]
impl Shop {
    /// Reload the catalogue.
    #[bridge_action]
    pub fn reload(&mut self) {}

    /// Wipe every order.
    #[bridge_action(user_only)]
    pub fn wipe(&mut self) {}
}

fn app() -> TestApp {
    TestApp::new(Bridge::builder("shop", "1.0").app(Shop).window::<Order>().window::<Approval>(), |ui| {
        ui.open(Order { status: "new".into() }, OpenOptions::window());
    })
}

// Never listed; refused by name with action_not_available, state unchanged; journaled as the
// agent's refusal; the user's path runs it.
#[test]
fn a_user_only_action_is_never_a_tool_and_refused_to_agents() {
    let mut app = app();
    let names = app.tool_names();
    assert!(names.contains(&"w-1__note".to_owned()) && names.contains(&"app__reload".to_owned()), "{names:?}");
    assert!(!names.iter().any(|n| n.ends_with("__confirm") || n.ends_with("__wipe")), "{names:?}");
    let version = app.snapshot().windows[0].version;
    let err = app.call("w-1__confirm", json!({})).expect_err(ErrorCode::ActionNotAvailable);
    assert!(err.message.contains("Only the user"), "{}", err.message);
    app.call("app__wipe", json!({})).expect_err(ErrorCode::ActionNotAvailable);
    assert_eq!(app.snapshot().windows[0].version, version, "nothing changed");
    let refusal =
        app.journal().entries().into_iter().find(|e| e.operation == Operation::Tool { name: "w-1__confirm".into() });
    assert!(refusal.is_some_and(|e| e.actor.is_agent()), "the refusal is journaled as the agent's");

    app.user_call("w-1__confirm", json!({})).expect_ok();
    assert_eq!(app.snapshot().windows[0].summary.as_deref(), Some("Order confirmed"));
    assert_eq!(app.journal().last().map(|e| e.actor), Some(Actor::User));
    app.user_call("app__wipe", json!({})).expect_ok();
}

// A user-only window: in app://windows and operableWindowIds, no tools; the agent learns from its
// summary; its actions refused to the agent, run by the user.
#[test]
fn a_user_only_window_is_seen_but_has_no_tools() {
    let mut app = app();
    app.ui().open(Approval { amount: "12 EUR".into() }, OpenOptions::window());
    app.check();
    let snap = app.snapshot().clone();
    assert!(snap.operable_window_ids.contains(&"w-2".to_owned()), "GB-4.2: the operable set is structural");
    let w2 = snap.windows.iter().find(|w| w.id == "w-2").expect("w-2 is in app://windows");
    assert_eq!(w2.summary.as_deref(), Some("Waiting for the user to approve"));
    assert!(!app.tool_names().iter().any(|n| n.starts_with("w-2__")));
    app.call("w-2__approve", json!({})).expect_err(ErrorCode::ActionNotAvailable);
    assert!(app.ui().is_open("w-2"));
    app.user_call("w-2__approve", json!({})).expect_ok();
    assert!(!app.ui().is_open("w-2"));
}

// Chosen when a window opens (OpenOptions), and switched at run time (Ui::set_user_only): the
// tools leave and come back, with tools/list_changed each time.
#[test]
fn user_only_is_chosen_at_open_and_switched_at_run_time() {
    let mut app = app();
    app.ui().open(Order { status: "second".into() }, OpenOptions::window().user_only());
    app.ui().open(Order { status: "third".into() }, OpenOptions::window().user_only_action("note"));
    app.check();
    let names = app.tool_names();
    assert!(!names.iter().any(|n| n.starts_with("w-2__") || n.starts_with("w-3__")), "{names:?}");
    app.call("w-2__note", json!({"text": "x"})).expect_err(ErrorCode::ActionNotAvailable);
    app.call("w-3__note", json!({"text": "x"})).expect_err(ErrorCode::ActionNotAvailable);
    assert!(app.ui().is_user_only("w-3", "note") && app.ui().is_user_only("w-1", "confirm"));
    assert!(!app.ui().is_user_only("w-1", "note"));

    app.take_notifications();
    assert!(app.ui().set_user_only("w-1", Some("note"), true));
    app.check();
    assert!(!app.tool_names().contains(&"w-1__note".to_owned()));
    assert!(app.take_notifications().contains(&Notification::ToolListChanged));
    app.call("w-1__note", json!({"text": "x"})).expect_err(ErrorCode::ActionNotAvailable);
    assert!(app.ui().set_user_only("w-1", Some("note"), false));
    app.check();
    assert!(app.tool_names().contains(&"w-1__note".to_owned()));
    assert!(app.take_notifications().contains(&Notification::ToolListChanged));
    app.call("w-1__note", json!({"text": "x"})).expect_ok();
    // What the type declares stays the user's.
    app.ui().set_user_only("w-1", None, false);
    app.check();
    assert!(app.ui().is_user_only("w-1", "confirm"));
    assert!(!app.ui().set_user_only("w-9", None, true), "no such window");
}

// The build-time export lists no user-only action as a tool.
#[test]
fn the_export_lists_no_user_only_tool() {
    let app = app();
    let catalog = app.bridge().catalog();
    let tools = bridge_runtime::export::mcp_tools(&catalog);
    let text = tools.to_string();
    assert!(
        text.contains("__note") && !text.contains("confirm") && !text.contains("approve") && !text.contains("wipe"),
        "{text}"
    );
}

// A misspelled approval fails closed (a fresh-user trial found `user_only_action("Wipe")` left
// the action to agents, and `set_user_only` with an unknown name answered true).
#[test]
fn a_misspelled_user_only_action_fails_closed() {
    let mut app = app();
    app.ui().open(Order { status: "typo".into() }, OpenOptions::window().user_only_action("Confirm"));
    app.check();
    assert!(app.ui().is_user_only("w-2", "note"), "every action is the user's: the name matched none");
    app.call("w-2__note", json!({"text": "x"})).expect_err(ErrorCode::ActionNotAvailable);
    assert!(!app.ui().set_user_only("w-1", Some("Note"), true), "no action 'Note': nothing changed");
    assert!(!app.ui().is_user_only("w-1", "note"));
    app.call("w-1__note", json!({"text": "x"})).expect_ok();
}
