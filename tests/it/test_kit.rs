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
