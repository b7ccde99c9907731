//! The Order Editor driven through `bridge_runtime::testing::TestApp` (issue #9 item 4): the
//! GB Appendix A session as plain `#[test]`s, no transport and no process. The kit checks the
//! GUI Bridge invariants (operable set, exact versions, redaction, notifications) on every step.

use crate::order_editor::{self, OrderEditor};
use bridge_runtime::ErrorCode;
use bridge_runtime::testing::{Notification, TestApp};
use serde_json::json;

fn app() -> TestApp {
    TestApp::new(order_editor::build(30), |ui| order_editor::open_initial(ui, 30))
}

// GB Appendix A / OQ-GB-25: fill in, submit into the dialog (the editor's tools disappear),
// confirm; GB-7.1-2 stale_state along the way; GB §6 notifications after each effect.
#[test]
fn the_appendix_a_session() {
    let mut app = app();
    assert_eq!(app.operable(), ["w-A", "w-C"]);
    // Submitting without a recipient: one problem per parameter, nothing opens.
    app.call("w-A__submit", json!({})).expect_err(ErrorCode::ValidationFailed);
    assert_eq!(app.take_notifications(), []);

    let v = app.version("w-A");
    app.call("w-A__edit_field", json!({"field": "Recipient", "value": "Ada", "expectedVersion": v})).expect_ok();
    assert_eq!(app.version("w-A"), v + 1);
    assert_eq!(app.take_notifications(), [Notification::ResourceUpdated]);

    // An agent that read version v writes again: stale_state, nothing changes, no notification.
    let e = app.call("w-A__edit_field", json!({"field": "amount", "value": "$5", "expectedVersion": v}));
    assert_eq!(e.structured()["currentVersion"], v + 1);
    e.expect_err(ErrorCode::StaleState);
    assert_eq!(app.take_notifications(), []);

    let submitted = app.call("w-A__submit", json!({})).expect_ok();
    let dialog = submitted.opened_window_ids.unwrap_or_default().remove(0);
    assert_eq!(app.operable(), [dialog.clone(), "w-C".to_owned()]);
    assert!(app.tool_names().iter().all(|t| !t.starts_with("w-A__")), "the dialog blocks the editor");
    app.call("w-A__edit_field", json!({"field": "amount", "value": "$5"})).expect_err(ErrorCode::BlockedByModal);

    assert_eq!(app.take_notifications(), [Notification::ResourceUpdated, Notification::ToolListChanged]);
    app.call(&format!("{dialog}__confirm"), json!({})).expect_ok();
    assert_eq!(app.window("w-A").summary.as_deref(), Some("Order #12345 for Ada was placed"));
    assert!(!app.snapshot().windows.iter().any(|w| w.id == dialog));
    app.call(&format!("{dialog}__cancel"), json!({})).expect_err(ErrorCode::WindowNotFound);
}

// GB-4.5-2: the password never leaves the process, whatever the agent does.
#[test]
fn the_password_is_masked_in_every_read() {
    let mut app = app();
    let text = app.read_windows().to_string();
    assert!(text.contains("••••••") && !text.contains("hunter2"), "{text}");
}

// GB-4.5-2, GB-7.1-2: the payment password changes only through `set_payment_password`, a
// `user_only` action whose parameter is sensitive: never a tool, refused to an agent, run on the
// user's path; the journal never holds the password in clear; `edit_field` refuses the secret
// field (by label or key, any case) with a coded error and changes nothing; every change bumps
// the window's version, so an agent that read the old version gets stale_state. (Before:
// `edit_field` set it, the journal recorded it in clear, and the version stayed.)
#[test]
fn the_payment_password_changes_only_through_its_sensitive_action() {
    const NEW: &str = "correct-horse-battery-9";
    let mut app = app();
    let v = app.version("w-A");
    for field in ["Payment password", "payment_password", "PAYMENT PASSWORD"] {
        let e = app.call("w-A__edit_field", json!({"field": field, "value": "typed-by-mistake", "expectedVersion": v}));
        let text = e.structured().to_string();
        assert!(text.contains("the user's to enter"), "{text}");
        e.expect_err(ErrorCode::ValidationFailed);
    }
    assert_eq!(app.version("w-A"), v, "a refused edit changes nothing");
    let password = |app: &mut TestApp| {
        app.ui().window::<OrderEditor>("w-A").map(|e| e.form.payment_password.expose().clone()).unwrap()
    };
    assert_eq!(password(&mut app), "hunter2-s3cret");
    assert!(!app.tool_names().iter().any(|n| n.contains("password")), "never a tool");
    app.call("w-A__set_payment_password", json!({"password": NEW, "expectedVersion": v}))
        .expect_err(ErrorCode::ActionNotAvailable);
    assert_eq!(password(&mut app), "hunter2-s3cret", "an agent cannot set it");

    app.user_call("w-A__set_payment_password", json!({"password": NEW})).expect_ok();
    assert_eq!(password(&mut app), NEW);
    assert_eq!(app.version("w-A"), v + 1, "a new password is a change other agents must see");
    // An agent that read version v: stale_state.
    let e = app.call("w-A__edit_field", json!({"field": "amount", "value": "$5", "expectedVersion": v}));
    assert_eq!(e.structured()["currentVersion"], v + 1);
    e.expect_err(ErrorCode::StaleState);
    // Setting the same password again is a change too (no oracle for the current one).
    app.user_call("w-A__set_payment_password", json!({"password": NEW})).expect_ok();
    assert_eq!(app.version("w-A"), v + 2);

    let journal = serde_json::to_string(&app.journal().entries()).unwrap();
    assert!(!journal.contains(NEW) && !journal.contains("hunter2"), "{journal}");
    assert!(journal.contains("w-A__set_payment_password"), "{journal}");
    let read = app.read_windows().to_string();
    assert!(!read.contains(NEW) && read.contains("••••••"), "{read}");
}

// The human user and the agent on one window: the user's edit (through the host API) bumps
// the version, so the agent's write based on the old state is refused rather than lost.
#[test]
fn a_users_edit_makes_the_agents_write_stale() {
    let mut app = app();
    let seen = app.version("w-A");
    app.user::<OrderEditor, _>("w-A", |w, _| w.form.amount = "$42.00".into());
    assert_eq!(app.take_notifications(), [Notification::ResourceUpdated]);
    let e = app.call("w-A__edit_field", json!({"field": "amount", "value": "$1", "expectedVersion": seen}));
    e.expect_err(ErrorCode::StaleState);
    let amount = app.read_windows()["windows"][0]["blocks"][0]["items"][1]["value"].clone();
    assert_eq!(amount, "$42.00", "the user's edit stands");
}

// Validation problems come back per parameter (GB-7.3-1); an app-level modal hides everything
// (GB-10.2, OQ-GB-12); a large table pages through `load_rows` (GB-9).
#[test]
fn errors_modals_and_pages() {
    let mut app = app();
    let e = app.call("w-A__edit_field", json!({"field": "amount", "value": "x".repeat(300)}));
    assert_eq!(e.structured()["fields"][0]["field"], "value");
    e.expect_err(ErrorCode::ValidationFailed);

    let page = app.call("w-C__load_rows", json!({"offset": 25, "limit": 10}));
    assert_eq!(page.value().unwrap()["rows"].as_array().unwrap().len(), 5);
    assert_eq!(page.value().unwrap()["total"], 30);

    let lock = app.call("app__lock", json!({})).expect_ok();
    let locked = lock.opened_window_ids.unwrap_or_default();
    assert_eq!(app.operable(), locked);
    assert!(app.tool_names().iter().all(|t| t.starts_with(&format!("{}__", locked[0]))));
}

// GB-10.3-1: a window reopened under the same app-internal id gets a fresh handle (the kit
// would fail the step if a closed id came back).
#[test]
fn a_reopened_window_gets_a_new_id() {
    let mut app = app();
    assert!(app.ui().close("w-C"));
    app.check();
    let again =
        app.ui().open(order_editor::ReportDetails::new(3), bridge_runtime::OpenOptions::window().with_id("w-C"));
    app.check();
    assert_ne!(again, "w-C");
    // Two steps, each with its own pair of notifications.
    let both = [Notification::ResourceUpdated, Notification::ToolListChanged];
    assert_eq!(app.take_notifications(), [both, both].concat());
}

// The journal of the Appendix A session: one entry per step, in order, each with its actor,
// window, versions, outcome (ok or the GB code) and the windows it opened or closed.
#[test]
fn the_appendix_a_session_is_journaled() {
    use bridge_runtime::gui::Outcome;
    let mut app = app();
    let v = app.version("w-A");
    app.call("w-A__submit", json!({})).expect_err(ErrorCode::ValidationFailed);
    app.call("w-A__edit_field", json!({"field": "Recipient", "value": "Ada", "expectedVersion": v})).expect_ok();
    app.call("w-A__edit_field", json!({"field": "amount", "value": "$5", "expectedVersion": v}))
        .expect_err(ErrorCode::StaleState);
    let dialog = app.call("w-A__submit", json!({})).expect_ok().opened_window_ids.unwrap_or_default().remove(0);
    app.call("w-A__edit_field", json!({"field": "amount", "value": "$5"})).expect_err(ErrorCode::BlockedByModal);
    app.call(&format!("{dialog}__confirm"), json!({})).expect_ok();
    app.call(&format!("{dialog}__cancel"), json!({})).expect_err(ErrorCode::WindowNotFound);

    let entries = app.journal().entries();
    type Row = (u64, String, String, Option<String>, Option<i64>, Option<i64>, Outcome);
    let rows: Vec<Row> = entries
        .iter()
        .map(|e| {
            let op = serde_json::to_value(&e.operation).unwrap();
            let what = op["name"].as_str().unwrap_or(op["kind"].as_str().unwrap_or("")).to_owned();
            let who = serde_json::to_value(&e.actor).unwrap()["kind"].as_str().unwrap_or("").to_owned();
            (e.seq, who, what, e.window_id.clone(), e.version_before, e.version_after, e.outcome)
        })
        .collect();
    let d = dialog.clone();
    let err = |code| Outcome::Error { code };
    let w = |s: &str| Some(s.to_owned());
    let expected = vec![
        (1, "app".into(), "open".into(), w("w-A"), None, Some(1), Outcome::Ok),
        (2, "app".into(), "open".into(), w("w-C"), None, Some(1), Outcome::Ok),
        (3, "agent".into(), "w-A__submit".into(), w("w-A"), Some(v), Some(v), err(ErrorCode::ValidationFailed)),
        (4, "agent".into(), "w-A__edit_field".into(), w("w-A"), Some(v), Some(v + 1), Outcome::Ok),
        (5, "agent".into(), "w-A__edit_field".into(), w("w-A"), Some(v + 1), Some(v + 1), err(ErrorCode::StaleState)),
        (6, "agent".into(), "w-A__submit".into(), w("w-A"), Some(v + 1), Some(v + 1), Outcome::Ok),
        (
            7,
            "agent".into(),
            "w-A__edit_field".into(),
            w("w-A"),
            Some(v + 1),
            Some(v + 1),
            err(ErrorCode::BlockedByModal),
        ),
        (8, "agent".into(), format!("{d}__confirm"), Some(d.clone()), Some(1), None, Outcome::Ok),
        (9, "agent".into(), format!("{d}__cancel"), Some(d.clone()), None, None, err(ErrorCode::WindowNotFound)),
    ];
    assert_eq!(rows, expected);
    assert_eq!(entries[5].opened, std::slice::from_ref(&dialog));
    assert_eq!(entries[7].closed, std::slice::from_ref(&dialog));
    assert_eq!(entries[7].window_title.as_deref(), Some("Confirm order"));
    assert_eq!(entries[3].arguments, json!({"field": "Recipient", "value": "Ada", "expectedVersion": v}));
    assert!(
        entries[4].message.as_deref().is_some_and(|m| m.contains(&(v + 1).to_string())),
        "{:?}",
        entries[4].message
    );
    assert_eq!(app.journal().dropped(), 0);
}

// Issue #20 item 3: the user takes the agent's edit back. The field shows the old value, the
// version rises (GB-4.2-8), the agent's write with the version it read gets stale_state
// (GB-7.1-2), and the journal records the undo as the user's.
#[test]
fn the_user_undoes_the_agents_edit() {
    let mut app = app();
    let v = app.version("w-A");
    app.call("w-A__edit_field", json!({"field": "Recipient", "value": "Mallory", "expectedVersion": v})).expect_ok();
    assert_eq!(app.version("w-A"), v + 1);
    let undone = app.undo("w-A").expect("the agent's edit can be undone");
    assert_eq!(undone.tool, "w-A__edit_field");
    assert_eq!(app.window("w-A").summary.as_deref(), Some("Editing order #12345, recipient not yet filled in"));
    assert_eq!(app.version("w-A"), v + 2);
    assert_eq!(app.take_notifications().last(), Some(&Notification::ResourceUpdated));
    let e = app.call("w-A__edit_field", json!({"field": "Recipient", "value": "Eve", "expectedVersion": v + 1}));
    e.expect_err(ErrorCode::StaleState);
    let last = app.journal().entries().into_iter().rev().find(|e| e.outcome == bridge_runtime::gui::Outcome::Ok);
    assert!(last.is_some_and(|e| e.actor == bridge_runtime::gui::Actor::User), "the undo is the user's");
    // A read-only call keeps no copy; the undo stack is empty again.
    assert!(app.ui().undo_points("w-A").is_empty());
}

// Issue #20 item 4: with "only the user confirms orders" on, the dialog is in app://windows and
// in operableWindowIds without its confirm tool, its summary says it waits for the user; the agent's
// confirm gets action_not_available; the user's confirm places the order. Switched off, the
// agent may confirm again.
#[test]
fn only_the_user_confirms_the_order_when_the_app_says_so() {
    let mut app = app();
    order_editor::set_user_confirms(app.ui(), bridge_runtime::gui::Actor::User, true);
    app.check();
    app.call("w-A__edit_field", json!({"field": "Recipient", "value": "Ada"})).expect_ok();
    let dialog = app.call("w-A__submit", json!({})).expect_ok().opened_window_ids.unwrap_or_default().remove(0);
    assert_eq!(app.operable(), [dialog.clone(), "w-C".to_owned()]);
    // Confirming is the user's alone; cancelling (nothing placed) stays the agent's too.
    assert!(!app.tool_names().contains(&format!("{dialog}__confirm")), "{:?}", app.tool_names());
    assert!(app.tool_names().contains(&format!("{dialog}__cancel")));
    let summary = app.window(&dialog).summary.clone().unwrap_or_default();
    assert!(summary.starts_with("Waiting for the user to confirm"), "{summary}");
    app.call(&format!("{dialog}__confirm"), json!({})).expect_err(ErrorCode::ActionNotAvailable);
    assert!(app.ui().is_open(&dialog));
    app.user_call(&format!("{dialog}__confirm"), json!({})).expect_ok();
    assert_eq!(app.window("w-A").summary.as_deref(), Some("Order #12345 for Ada was placed"));

    // Switched off while a dialog is open: its confirm is a tool again.
    let mut app = self::app();
    order_editor::set_user_confirms(app.ui(), bridge_runtime::gui::Actor::User, true);
    app.call("w-A__edit_field", json!({"field": "Recipient", "value": "Bo"})).expect_ok();
    let dialog = app.call("w-A__submit", json!({})).expect_ok().opened_window_ids.unwrap_or_default().remove(0);
    order_editor::set_user_confirms(app.ui(), bridge_runtime::gui::Actor::User, false);
    app.check();
    assert!(app.tool_names().contains(&format!("{dialog}__confirm")));
    app.call(&format!("{dialog}__confirm"), json!({})).expect_ok();
}
