//! The in-memory journal through the test kit: an entry per operation with its actor, masked
//! arguments (GB-4.5-2: sensitive values never leave the process, and the journal shows them as
//! the snapshot does), coalesced rejections, bounds and the `dropped` count.

use bridge_runtime::gui::{Actor, JournalEntry, JournalLimits, Outcome};
use bridge_runtime::model::ErrorCode;
use bridge_runtime::prelude::*;
use bridge_runtime::testing::TestApp;
use serde_json::{Value, json};

/// A sign-in form whose actions take secrets every way an author can write one.
#[bridge_window(title = "Sign in", summary = "Signed in as {user}")]
pub struct SignIn {
    #[bridge(text)]
    user: String,
}

/// Card details, nested in a parameter.
#[derive(Deserialize, JsonSchema)]
pub struct Card {
    /// The card number.
    number: Secret<String>,
    /// Who holds it.
    holder: String,
}

/// How to authenticate: an enum whose variants carry secrets.
#[derive(Deserialize, JsonSchema)]
pub enum Auth {
    /// A password.
    Password {
        /// The password.
        pw: Secret<String>,
    },
    /// A key.
    Key(Secret<String>),
    /// Nobody.
    Anonymous {
        /// A display name.
        name: String,
    },
}

/// Login arguments as one struct.
#[derive(Deserialize, JsonSchema, BridgeArgs)]
pub struct Login {
    /// The user name.
    user: String,
    /// The password.
    password: Secret<String>,
}

#[bridge_actions]
impl SignIn {
    /// Sign in.
    #[bridge_action]
    pub fn sign_in(&mut self, user: String, password: Secret<String>) -> Result<(), ActionError> {
        if password.expose().is_empty() {
            return Err(ActionError::field("password", "Enter the password"));
        }
        self.user = user;
        Ok(())
    }

    /// Sign in with one struct.
    #[bridge_action]
    pub fn login(&mut self, #[bridge(args)] login: Login) {
        self.user = login.user;
        let _ = login.password;
    }

    /// Pay with a card; the PIN is optional.
    #[bridge_action]
    pub fn pay(&mut self, card: Card, pin: Option<Secret<String>>, note: String) {
        self.user = format!("{} {note}", card.holder);
        let _ = (card.number, pin);
    }

    /// Store an API key: plain `String`s the author marks sensitive, or write-only as
    /// `Secret` is.
    #[bridge_action]
    pub fn set_key(
        &mut self,
        #[bridge(sensitive)] api_key: String,
        #[schemars(extend("writeOnly" = true))] backup: String,
        label: String,
    ) {
        self.user = format!("{label}: {} chars", api_key.len() + backup.len());
    }

    /// Store secrets by name, and authenticate.
    #[bridge_action]
    pub fn vault(&mut self, secrets: std::collections::BTreeMap<String, Secret<String>>, auth: Auth) {
        let how = match auth {
            Auth::Password { pw } => pw.expose().len(),
            Auth::Key(key) => key.expose().len(),
            Auth::Anonymous { name } => name.len(),
        };
        self.user = format!("{} secrets, {how}", secrets.len());
    }

    /// Say something long.
    #[bridge_action(read_only)]
    pub fn echo(&self, text: String) -> String {
        text
    }

    /// Open another sign-in form.
    #[bridge_action]
    pub fn another(&mut self, cx: &mut ActionContext) {
        cx.open(SignIn { user: String::new() });
    }
}

fn builder() -> bridge_runtime::BridgeBuilder {
    Bridge::builder("journal", "1.0").window::<SignIn>()
}

fn app() -> TestApp {
    TestApp::new(builder(), |ui| {
        ui.open(SignIn { user: String::new() }, OpenOptions::window());
    })
}

fn entries(app: &mut TestApp) -> Vec<JournalEntry> {
    app.ui().journal().entries()
}

fn operation(entry: &JournalEntry) -> Value {
    serde_json::to_value(&entry.operation).unwrap_or(Value::Null)
}

// GB-4.5-2: a `Secret<…>` parameter, a `Secret` field of an args struct, a `Secret` nested in
// an object parameter, an `Option<Secret<…>>`, a parameter marked `#[bridge(sensitive)]` and one
// marked `#[schemars(extend("writeOnly" = true))]` all show the snapshot's mask; other values are
// kept; the secrets appear nowhere in the journal's JSON.
#[test]
fn sensitive_parameters_are_masked_as_in_the_snapshot() {
    let mut app = app();
    app.call("w-1__sign_in", json!({"user": "ada", "password": "hunter2"})).expect_ok();
    app.call("w-1__login", json!({"user": "ada", "password": "hunter3"})).expect_ok();
    app.call(
        "w-1__pay",
        json!({"card": {"number": "4111111111111111", "holder": "Ada"}, "pin": "1234", "note": "thanks"}),
    )
    .expect_ok();
    app.call("w-1__set_key", json!({"api_key": "sk-live-abc", "backup": "sk-backup", "label": "main"})).expect_ok();
    let all = entries(&mut app);
    let calls: Vec<&JournalEntry> = all.iter().filter(|e| operation(e)["kind"] == "tool").collect();
    assert_eq!(
        calls[3].arguments,
        json!({"api_key": "••••••", "backup": "••••••", "label": "main"}),
        "parameters marked sensitive or writeOnly"
    );
    assert_eq!(calls[0].arguments, json!({"user": "ada", "password": "••••••"}));
    assert_eq!(calls[1].arguments, json!({"user": "ada", "password": "••••••"}));
    assert_eq!(
        calls[2].arguments,
        json!({"card": {"number": "••••••", "holder": "Ada"}, "pin": "••••••", "note": "thanks"})
    );
    assert_eq!(calls[0].arguments_bytes, json!({"user": "ada", "password": "hunter2"}).to_string().len());
    let text = serde_json::to_string(&all).unwrap();
    for secret in ["hunter2", "hunter3", "4111111111111111", "1234", "sk-live-abc", "sk-backup"] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
    // The same mask the snapshot shows for sensitive fields.
    assert_eq!(calls[0].arguments["password"], bridge_runtime::model::REDACTED);
}

// GB-4.5-2: secrets in a map's values and in an enum's variants are masked too, and so is the
// value of a key the schema does not declare (a misspelled `password` is refused, but journaled).
#[test]
fn secrets_in_maps_enums_and_unknown_keys_are_masked() {
    let mut app = app();
    app.call("w-1__vault", json!({"secrets": {"k": "S10-map"}, "auth": {"Password": {"pw": "S11-enum"}}})).expect_ok();
    app.call("w-1__vault", json!({"secrets": {}, "auth": {"Key": "S14-enumkey"}})).expect_ok();
    app.call("w-1__vault", json!({"secrets": {}, "auth": {"Anonymous": {"name": "Ada"}}})).expect_ok();
    app.call("w-1__sign_in", json!({"user": "ada", "pasword": "S3-misspelled"}))
        .expect_err(ErrorCode::ValidationFailed);
    let all = entries(&mut app);
    let calls: Vec<&JournalEntry> = all.iter().filter(|e| operation(e)["kind"] == "tool").collect();
    assert_eq!(calls[0].arguments, json!({"secrets": {"k": "••••••"}, "auth": {"Password": {"pw": "••••••"}}}));
    assert_eq!(calls[1].arguments, json!({"secrets": {}, "auth": {"Key": "••••••"}}));
    assert_eq!(calls[2].arguments, json!({"secrets": {}, "auth": {"Anonymous": {"name": "Ada"}}}), "plain data stays");
    assert_eq!(calls[3].arguments, json!({"user": "ada", "pasword": "••••••"}));
    let text = serde_json::to_string(&all).unwrap();
    for secret in ["S10-map", "S11-enum", "S14-enumkey", "S3-misspelled"] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
}

// A call whose action is unknown (window gone, no such action): nothing says which values are
// secret, so every value is masked.
#[test]
fn arguments_of_an_unknown_action_are_all_masked() {
    let mut app = app();
    app.call("w-9__sign_in", json!({"user": "ada", "password": "hunter2"})).expect_err(ErrorCode::WindowNotFound);
    app.call("w-1__nope", json!({"token": "abc"})).expect_err(ErrorCode::ActionNotAvailable);
    let all = entries(&mut app);
    let n = all.len();
    assert_eq!(all[n - 2].arguments, json!({"user": "••••••", "password": "••••••"}));
    assert_eq!(all[n - 2].window_id.as_deref(), Some("w-9"));
    assert_eq!(all[n - 2].window_title, None);
    assert_eq!(all[n - 1].arguments, json!({"token": "••••••"}));
}

// Every operation, in order, with its actor, window, versions, outcome and the windows it
// opened or closed: the app's opens and closes, the agent's calls (refused ones too), the
// user's call and edit, a refresh.
#[test]
fn each_operation_appends_one_entry_with_its_actor() {
    let mut app = app();
    let v = app.version("w-1");
    app.call("w-1__sign_in", json!({"user": "ada", "password": "pw", "expectedVersion": v})).expect_ok();
    app.call("w-1__sign_in", json!({"user": "bob", "password": "pw", "expectedVersion": v}))
        .expect_err(ErrorCode::StaleState);
    app.user_call("w-1__another", json!({})).expect_ok();
    app.user::<SignIn, _>("w-1", |w, _| w.user = "carol".into());
    assert!(app.ui().close("w-2"));
    app.ui().refresh_all();
    app.check();

    let all = entries(&mut app);
    let seqs: Vec<u64> = all.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5, 6, 7]);
    let kinds: Vec<String> = all.iter().map(|e| operation(e)["kind"].as_str().unwrap_or("").to_owned()).collect();
    assert_eq!(kinds, ["open", "tool", "tool", "tool", "edit", "close", "refresh"]);
    let actors: Vec<Value> = all.iter().map(|e| serde_json::to_value(&e.actor).unwrap()["kind"].clone()).collect();
    assert_eq!(actors, ["app", "agent", "agent", "user", "user", "app", "app"]);

    assert_eq!(all[0].window_id.as_deref(), Some("w-1"));
    assert_eq!(all[0].window_title.as_deref(), Some("Sign in"));
    assert_eq!((all[0].version_before, all[0].version_after), (None, Some(1)));
    assert_eq!(all[0].opened, ["w-1"]);

    assert_eq!(operation(&all[1])["name"], "w-1__sign_in");
    assert_eq!(all[1].outcome, Outcome::Ok);
    assert_eq!((all[1].version_before, all[1].version_after), (Some(v), Some(v + 1)));
    assert_eq!(all[1].arguments["expectedVersion"], v);

    assert_eq!(all[2].outcome, Outcome::Error { code: ErrorCode::StaleState });
    assert_eq!((all[2].version_before, all[2].version_after), (Some(v + 1), Some(v + 1)));
    assert!(all[2].message.as_deref().is_some_and(|m| !m.is_empty()));

    assert_eq!(all[3].opened, ["w-2"]);
    assert_eq!(all[4].actor, Actor::User);
    assert_eq!((all[4].version_before, all[4].version_after), (Some(v + 1), Some(v + 2)));
    assert_eq!(all[5].closed, ["w-2"]);
    assert_eq!((all[5].version_before, all[5].version_after), (Some(1), None));
    assert!(all.iter().all(|e| e.count == 1));
}

// Identical rejections one after another are one entry with a count, so a flood of bad calls
// cannot push earlier entries out; a different call ends the run.
#[test]
fn repeated_identical_rejections_are_coalesced() {
    let mut app = app();
    for _ in 0..50 {
        app.call("w-1__sign_in", json!({"user": "ada", "password": ""})).expect_err(ErrorCode::ValidationFailed);
    }
    app.call("w-1__sign_in", json!({"user": "ada", "password": "x"})).expect_ok();
    app.call("w-1__sign_in", json!({"user": "ada", "password": ""})).expect_err(ErrorCode::ValidationFailed);
    let all = entries(&mut app);
    let counts: Vec<(u64, u64)> = all.iter().map(|e| (e.seq, e.count)).collect();
    assert_eq!(counts, [(1, 1), (2, 50), (3, 1), (4, 1)]);
    assert_eq!(app.ui().journal().dropped(), 0);
    // Successes are never coalesced.
    app.call("w-1__echo", json!({"text": "a"})).expect_ok();
    app.call("w-1__echo", json!({"text": "a"})).expect_ok();
    assert_eq!(app.ui().journal().len(), 6);
}

// Issue 21: `Journal::watch` wakes after every append, a repeat counted on the newest entry
// included, so a journal panel follows without polling.
#[test]
fn the_journal_watch_wakes_on_every_append() {
    let mut app = app();
    let mut watch = app.ui().journal().watch();
    let before = *watch.borrow_and_update();
    app.call("w-1__sign_in", json!({"user": "ada", "password": ""})).expect_err(ErrorCode::ValidationFailed);
    assert!(watch.has_changed().unwrap(), "a refused call is an append");
    assert_eq!(*watch.borrow_and_update(), before + 1);
    app.call("w-1__sign_in", json!({"user": "ada", "password": ""})).expect_err(ErrorCode::ValidationFailed);
    assert!(watch.has_changed().unwrap(), "a repeat counted on the newest entry wakes too");
    assert_eq!(*watch.borrow_and_update(), before + 2);
    assert_eq!(entries(&mut app).last().map(|e| e.count), Some(2));
}

// Bounded by count: the oldest entries go, `dropped` counts them, `seq` keeps counting.
#[test]
fn the_count_bound_drops_the_oldest_and_counts_them() {
    let mut app = TestApp::new(builder().journal_limits(JournalLimits::default().max_entries(3)), |ui| {
        ui.open(SignIn { user: String::new() }, OpenOptions::window());
    });
    for i in 0..5 {
        app.call("w-1__echo", json!({"text": i.to_string()})).expect_ok();
    }
    let journal = app.ui().journal().clone();
    let seqs: Vec<u64> = journal.entries().iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [4, 5, 6]);
    assert_eq!(journal.dropped(), 3);
    assert_eq!(journal.since(4).iter().map(|e| e.seq).collect::<Vec<_>>(), [5, 6]);
}

// Bounded by bytes, and a call's arguments past the argument bound are cut, their size kept.
#[test]
fn the_byte_bounds_cut_arguments_and_drop_old_entries() {
    let limits = JournalLimits::default().max_bytes(4_000).max_argument_bytes(64);
    let mut app = TestApp::new(builder().journal_limits(limits), |ui| {
        ui.open(SignIn { user: String::new() }, OpenOptions::window());
    });
    let long = "x".repeat(1_000);
    app.call("w-1__echo", json!({"text": long})).expect_ok();
    let entry = app.ui().journal().last().expect("an entry");
    assert!(entry.arguments_truncated);
    assert_eq!(entry.arguments_bytes, json!({"text": long}).to_string().len());
    let kept = entry.arguments.as_str().expect("the first bytes, as a string");
    assert_eq!(kept.len(), 64);
    assert!(json!({"text": long}).to_string().starts_with(kept));
    // A cut never splits a character.
    app.call("w-1__echo", json!({"text": "é".repeat(100)})).expect_ok();
    let cut = app.ui().journal().last().expect("an entry");
    assert!(cut.arguments.as_str().is_some_and(|s| s.len() <= 64));

    for i in 0..40 {
        app.call("w-1__echo", json!({"text": i.to_string()})).expect_ok();
    }
    let journal = app.ui().journal().clone();
    assert!(journal.bytes() <= 4_000, "{}", journal.bytes());
    assert!(journal.dropped() > 0);
    let entries = journal.entries();
    assert_eq!(entries.last().map(|e| e.seq), Some(43));
    assert_eq!(entries.first().map(|e| e.seq), Some(43 - entries.len() as u64 + 1));
    assert_eq!(journal.dropped() + entries.len() as u64, 43);
}

// A call refused before its turn (over an argument cap) is journaled with its size only; an
// app that turns the journal off records nothing.
#[tokio::test]
async fn refusals_before_the_turn_and_the_off_switch() {
    let bridge = builder().max_argument_bytes(100).spawn_headless(|ui| {
        ui.open(SignIn { user: String::new() }, OpenOptions::window());
    });
    let args = json!({"user": "ada", "password": "y".repeat(200)});
    let out = bridge.call_tool("w-1__sign_in", args.as_object().cloned().unwrap_or_default()).await;
    assert_eq!(out.result.err().map(|e| e.code), Some(ErrorCode::ValidationFailed));
    let entry = bridge.journal().last().expect("an entry");
    assert_eq!(entry.outcome, Outcome::Error { code: ErrorCode::ValidationFailed });
    assert_eq!((entry.arguments.clone(), entry.arguments_truncated), (Value::Null, true));
    assert_eq!(entry.arguments_bytes, args.to_string().len());
    assert_eq!(entry.window_id.as_deref(), Some("w-1"));
    assert_eq!(entry.version_before, Some(1));
    assert!(entry.actor.is_agent());

    let off = builder().journal(false).spawn_headless(|ui| {
        ui.open(SignIn { user: String::new() }, OpenOptions::window());
    });
    let _ = off.call_tool("w-1__echo", json!({"text": "a"}).as_object().cloned().unwrap_or_default()).await;
    assert!(off.journal().is_empty() && !off.journal().is_on());
}

// A call refused as busy (GB-7.4-7: `action_timeout`, it took no effect) is journaled when it
// is refused, with its arguments' size only; the queued call it waited behind is journaled when
// it runs.
#[tokio::test]
async fn a_busy_refusal_is_journaled() {
    use futures::FutureExt;
    let (bridge, mut owner) = builder().max_queued_calls(1).build();
    owner.ui().open(SignIn { user: String::new() }, OpenOptions::window());
    let echo =
        |text: &str| bridge.call_tool("w-1__echo", json!({ "text": text }).as_object().cloned().unwrap_or_default());
    assert!(echo("queued").now_or_never().is_none());
    let refused = echo("refused").now_or_never().expect("refused at once").result.unwrap_err();
    assert_eq!(refused.code, ErrorCode::ActionTimeout);
    assert_eq!(owner.drain(), 1);
    let entries = bridge.journal().entries();
    let rows: Vec<(u64, Outcome, Value, bool)> =
        entries.iter().map(|e| (e.seq, e.outcome, e.arguments.clone(), e.arguments_truncated)).collect();
    assert_eq!(
        rows,
        [
            (1, Outcome::Ok, Value::Null, false),
            (2, Outcome::Error { code: ErrorCode::ActionTimeout }, Value::Null, true),
            (3, Outcome::Ok, json!({"text": "queued"}), false),
        ]
    );
    assert_eq!(entries[1].arguments_bytes, json!({"text": "refused"}).to_string().len());
    assert_eq!(entries[1].message.as_deref(), Some(refused.message.as_str()));
}

// The JSON-lines sink (issue #20, item 2): every entry is in the file, as one line of the
// entry's JSON, by the time the operation's result returns; secrets are masked there as in
// memory; a run of identical rejections is rewritten with the same `seq` and a larger count.
#[test]
fn a_json_lines_sink_has_each_entry_before_the_result_returns() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("journal.jsonl");
    let sink = bridge_runtime::gui::JsonLinesSink::open(&path).expect("the file opens");
    let mut app = TestApp::new(builder().journal_sink(sink), |ui| {
        ui.open(SignIn { user: String::new() }, OpenOptions::window());
    });
    let lines = |path: &std::path::Path| -> Vec<Value> {
        std::fs::read_to_string(path)
            .expect("the file reads")
            .lines()
            .map(|l| serde_json::from_str(l).expect("each line is JSON"))
            .collect()
    };
    app.call("w-1__sign_in", json!({"user": "ada", "password": "hunter2"})).expect_ok();
    let file = lines(&path);
    let memory: Vec<Value> = entries(&mut app).iter().map(|e| serde_json::to_value(e).expect("JSON")).collect();
    assert_eq!(file, memory, "the file holds exactly the in-memory entries, in order");
    assert_eq!(file[1]["operation"], json!({"kind": "tool", "name": "w-1__sign_in"}));
    assert_eq!(file[1]["arguments"]["password"], "••••••");
    let bytes = std::fs::read(&path).expect("the file reads");
    assert!(!String::from_utf8_lossy(&bytes).contains("hunter2"), "GB-4.5-2: no secret in the file");
    for _ in 0..5 {
        app.call("w-1__sign_in", json!({"user": "ada", "password": ""})).expect_err(ErrorCode::ValidationFailed);
    }
    let seq_count = |file: &[Value]| -> Vec<(u64, u64)> {
        file.iter().map(|l| (l["seq"].as_u64().unwrap_or(0), l["count"].as_u64().unwrap_or(0))).collect()
    };
    // A run of one rejection: a line at 1, 2, 4, … and one when the run ends.
    assert_eq!(seq_count(&lines(&path)[2..]), [(3, 1), (3, 2), (3, 4)]);
    app.call("w-1__echo", json!({"text": "next"})).expect_ok();
    assert_eq!(seq_count(&lines(&path)[2..]), [(3, 1), (3, 2), (3, 4), (3, 5), (4, 1)]);
    assert_eq!(app.journal().sink_error(), None);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).expect("metadata").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the journal file is the user's alone");
    }
}

// While the sink refuses entries: the entry waits in a backlog, agent calls are refused with
// `action_not_available` before they run (GB-7.4-8; state unchanged), the user's calls go on;
// once the sink takes entries again the backlog reaches it first, in order, with no gap.
#[test]
fn a_failing_sink_refuses_agents_but_not_the_user_and_loses_nothing() {
    use std::sync::atomic::Ordering;
    let (failing, taken, sink) = switchable_sink();
    let mut app = TestApp::new(builder().journal_sink(sink), |ui| {
        ui.open(SignIn { user: String::new() }, OpenOptions::window());
    });
    app.call("w-1__sign_in", json!({"user": "ada", "password": "x"})).expect_ok();
    failing.store(true, Ordering::SeqCst);
    // The call during which the sink first fails has already taken effect: its entry waits.
    app.call("w-1__sign_in", json!({"user": "bob", "password": "x"})).expect_ok();
    let journal = app.journal();
    assert_eq!(journal.sink_error().as_deref(), Some("disk full"));
    let before = app.snapshot().windows[0].version;
    let refused = app.call("w-1__sign_in", json!({"user": "eve", "password": "x"}));
    refused.expect_err(ErrorCode::ActionNotAvailable);
    assert_eq!(app.snapshot().windows[0].version, before, "the refused call changed nothing");
    app.user_call("w-1__sign_in", json!({"user": "carol", "password": "x"})).expect_ok();
    assert_eq!(app.snapshot().windows[0].summary.as_deref(), Some("Signed in as carol"), "the user is not locked out");
    assert_eq!(journal.sink_backlog(), 3);
    failing.store(false, Ordering::SeqCst);
    app.call("w-1__sign_in", json!({"user": "dan", "password": "x"})).expect_ok();
    assert_eq!(journal.sink_error(), None);
    assert_eq!(journal.sink_backlog(), 0);
    let seqs: Vec<u64> = taken.lock().map(|t| t.iter().map(|e| e.seq).collect()).unwrap_or_default();
    assert_eq!(seqs, (1..=6).collect::<Vec<u64>>(), "every entry reached the sink once, in order");
    assert_eq!(journal.sink_dropped(), 0);
}

// A sink that panics is a sink that failed: the panic stays inside the journal, the UI goes on,
// agents are refused until the sink takes entries again (a fresh-user trial saw every later
// operation panic).
#[test]
fn a_panicking_sink_fails_without_taking_the_ui_down() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let panicking = Arc::new(AtomicBool::new(false));
    let sink = {
        let panicking = panicking.clone();
        move |_: &JournalEntry| -> std::io::Result<()> {
            if panicking.load(Ordering::SeqCst) {
                panic!("the sink broke");
            }
            Ok(())
        }
    };
    let mut app = TestApp::new(builder().journal_sink(sink), |ui| {
        ui.open(SignIn { user: String::new() }, OpenOptions::window());
    });
    panicking.store(true, Ordering::SeqCst);
    app.call("w-1__echo", json!({"text": "a"})).expect_ok();
    assert_eq!(app.journal().sink_error().as_deref(), Some("the journal sink panicked"));
    app.call("w-1__echo", json!({"text": "b"})).expect_err(ErrorCode::ActionNotAvailable);
    app.user_call("w-1__echo", json!({"text": "c"})).expect_ok();
    panicking.store(false, Ordering::SeqCst);
    app.call("w-1__echo", json!({"text": "d"})).expect_ok();
    assert_eq!(app.journal().sink_error(), None);
}

// While the sink fails, a flood of refused calls cannot push the entry of a change that took
// effect out of the backlog: rejections are dropped first (a fresh-user trial lost an answered
// "ok" call's line this way).
#[test]
fn a_flood_of_refusals_cannot_push_a_change_out_of_the_backlog() {
    use std::sync::atomic::Ordering;
    let (failing, taken, sink) = switchable_sink();
    let limits = JournalLimits::default().max_entries(5);
    let mut app = TestApp::new(builder().journal_limits(limits).journal_sink(sink), |ui| {
        ui.open(SignIn { user: String::new() }, OpenOptions::window());
    });
    failing.store(true, Ordering::SeqCst);
    app.call("w-1__sign_in", json!({"user": "HARMFUL", "password": "x"})).expect_ok();
    for i in 0..50 {
        app.call("w-1__sign_in", json!({"user": format!("u{i}"), "password": "x"}))
            .expect_err(ErrorCode::ActionNotAvailable);
    }
    failing.store(false, Ordering::SeqCst);
    app.call("w-1__echo", json!({"text": "after"})).expect_ok();
    let taken = taken.lock().map(|t| t.clone()).unwrap_or_default();
    let harmful = taken.iter().find(|e| e.arguments["user"] == "HARMFUL" && e.outcome == Outcome::Ok);
    assert!(harmful.is_some(), "the change that took effect reached the sink");
    assert!(app.journal().sink_dropped() > 0, "refusals were dropped, and counted");
}

// An object parameter sent as a scalar is masked: nothing says which part of it is secret (a
// fresh-user trial found a card sent as a string journaled in clear).
#[test]
fn a_structure_sent_as_a_scalar_is_masked() {
    let mut app = app();
    app.call("w-1__pay", json!({"card": "4111-SECRET", "note": "n"})).expect_err(ErrorCode::ValidationFailed);
    let entry = app.journal().last().expect("an entry");
    assert_eq!(entry.arguments["card"], "••••••");
    assert_eq!(entry.arguments["note"], "n");
    app.call("w-1__pay", json!({"card": {"number": "1", "holder": "h"}, "pin": null, "note": "n"})).expect_ok();
    assert_eq!(app.journal().last().map(|e| e.arguments["pin"].clone()), Some(Value::Null), "null is not a secret");
}

// A value of a JSON type its schema does not declare is masked: a secret sent as
// `expectedVersion` (a string where an integer goes) or as a string parameter's number is
// refused, but was journaled in clear (issue 21 trial); a well-typed version is kept.
#[test]
fn a_value_of_an_undeclared_type_is_masked() {
    let mut app = app();
    let card = json!({"number": "1", "holder": "h"});
    app.call("w-1__pay", json!({"card": card, "note": "n", "expectedVersion": "S3CRET-PIN-4242"}))
        .expect_err(ErrorCode::ValidationFailed);
    let entry = app.journal().last().expect("an entry");
    assert_eq!(entry.arguments["expectedVersion"], "••••••");
    assert_eq!(entry.arguments["card"]["holder"], "h", "well-typed values stay");
    app.call("w-1__pay", json!({"card": card, "note": 4242_4242, "expectedVersion": 1.5}))
        .expect_err(ErrorCode::ValidationFailed);
    let entry = app.journal().last().expect("an entry");
    assert_eq!(
        (entry.arguments["note"].clone(), entry.arguments["expectedVersion"].clone()),
        (json!("••••••"), json!("••••••"))
    );
    let version = app.version("w-1");
    app.call("w-1__pay", json!({"card": card, "note": "n", "expectedVersion": version})).expect_ok();
    assert_eq!(app.journal().last().map(|e| e.arguments["expectedVersion"].clone()), Some(json!(version)));
    let text = serde_json::to_string(&app.journal().since(0)).unwrap();
    assert!(!text.contains("S3CRET") && !text.contains("42424242"), "{text}");
}

/// A sink that fails with "disk full" while the flag is set, and otherwise keeps every entry it
/// takes.
#[allow(clippy::type_complexity)]
fn switchable_sink() -> (
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    std::sync::Arc<std::sync::Mutex<Vec<JournalEntry>>>,
    impl FnMut(&JournalEntry) -> std::io::Result<()> + Send + 'static,
) {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    let failing = Arc::new(AtomicBool::new(false));
    let taken = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let (failing, taken) = (failing.clone(), taken.clone());
        move |entry: &JournalEntry| {
            if failing.load(Ordering::SeqCst) {
                return Err(std::io::Error::other("disk full"));
            }
            taken.lock().map_err(|_| std::io::Error::other("poisoned"))?.push(entry.clone());
            Ok(())
        }
    };
    (failing, taken, sink)
}
