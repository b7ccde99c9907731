//! Caps on a call's arguments (GB-7.3-1, bounded work per request): a call over the size, key
//! or depth cap is answered `validation_failed` naming the parameters at fault, before it waits
//! for the UI, so a hostile call never holds the UI while other clients' calls wait.

use crate::support::mcp as mcp_support;

use bridge_runtime::catalog::{DescribeActions, DescribeWindow, WindowMeta};
use bridge_runtime::{
    ActionContext, ActionError, ActionHints, ActionSpec, Bridge, BridgeActions, BridgeWindow, ErrorCode, OpenOptions,
    Rendered, ToolError,
};
use mcp_support::{call, error_code, serve, structured};
use rmcp::ServiceExt;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// A window with a text, a free-form tree, and an action that holds the UI until released.
struct Pad {
    text: String,
    gate: Option<Arc<Gate>>,
}

/// Lets a test hold the UI inside an action: `entered` fires when it starts, and it returns
/// when `release` receives.
struct Gate {
    entered: Mutex<mpsc::Sender<()>>,
    release: Mutex<mpsc::Receiver<()>>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct SetText {
    /// The new text.
    text: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct SetTree {
    /// Any JSON value.
    tree: Value,
}

impl DescribeWindow for Pad {
    fn window_meta() -> WindowMeta {
        WindowMeta { type_name: "Pad".into(), title: "Pad".into(), blocks: vec![] }
    }
}

impl BridgeWindow for Pad {
    fn render(&self) -> Rendered {
        Rendered { title: "Pad".into(), summary: Some(format!("Holds '{}'", self.text)), blocks: vec![] }
    }
}

impl DescribeActions for Pad {
    fn action_specs_for(window_level: bool) -> Vec<ActionSpec> {
        let write = ActionHints { read_only: false, destructive: false, idempotent: true, open_world: false };
        vec![
            ActionSpec::new("set_text")
                .description("Set the text")
                .hints(write)
                .params::<SetText>()
                .finish(window_level),
            ActionSpec::new("set_tree").description("Set a tree").hints(write).params::<SetTree>().finish(window_level),
            ActionSpec::new("hold").description("Hold the UI").hints(write).finish(window_level),
        ]
    }
}

impl BridgeActions for Pad {
    fn action_available(&self, _action: &str) -> bool {
        true
    }
    fn invoke_action(
        &mut self,
        action: &str,
        args: Map<String, Value>,
        _cx: &mut ActionContext<'_>,
    ) -> Result<Option<Value>, ActionError> {
        match action {
            "set_text" => {
                let p: SetText = serde_json::from_value(Value::Object(args)).map_err(ActionError::from_deserialize)?;
                self.text = p.text;
            }
            "set_tree" => {
                let p: SetTree = serde_json::from_value(Value::Object(args)).map_err(ActionError::from_deserialize)?;
                self.text = p.tree.to_string().chars().take(16).collect();
            }
            "hold" => {
                if let Some(gate) = &self.gate {
                    let _ = gate.entered.lock().unwrap().send(());
                    let _ = gate.release.lock().unwrap().recv();
                }
            }
            other => return Err(ActionError::not_available(format!("no action {other}"))),
        }
        Ok(None)
    }
}

fn pad() -> Pad {
    Pad { text: String::new(), gate: None }
}

/// A bridge with `w-1` and `w-2` open, built with `limits` applied by `configure`.
fn bridge_with(configure: impl FnOnce(bridge_runtime::BridgeBuilder) -> bridge_runtime::BridgeBuilder) -> Bridge {
    configure(Bridge::builder("caps", "1").window::<Pad>()).spawn_headless(|ui| {
        ui.open(pad(), OpenOptions::window());
        ui.open(pad(), OpenOptions::window());
    })
}

fn flood(n: usize) -> Map<String, Value> {
    let mut args = Map::new();
    args.insert("text".into(), json!("x"));
    for i in 0..n {
        args.insert(format!("k{i:06}"), json!(1));
    }
    args
}

fn err(outcome: bridge_runtime::gui::CallOutcome) -> ToolError {
    outcome.result.expect_err("the call must fail")
}

// GB-7.3-1, GB-10.1-3: 160,000 unknown keys on one window are answered `validation_failed` (never
// `action_timeout`) listing 20 of them and counting the rest, while another client's call to
// another window holds the UI: the hostile call never waits for, nor holds, the UI. On the old
// code the flood queued behind the held call and was answered `action_timeout`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flood_is_answered_while_another_client_holds_the_ui() {
    let (entered_tx, entered_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel();
    let gate = Arc::new(Gate { entered: Mutex::new(entered_tx), release: Mutex::new(release_rx) });
    let bridge =
        Bridge::builder("caps", "1").window::<Pad>().action_timeout(Duration::from_secs(5)).spawn_headless(move |ui| {
            ui.open(pad(), OpenOptions::window());
            ui.open(Pad { text: String::new(), gate: Some(gate) }, OpenOptions::window());
        });
    let connect = || async {
        let (client_io, server_io) = tokio::io::duplex(1 << 20);
        serve(&bridge, server_io);
        mcp_support::Recorder::default().serve(client_io).await.expect("initialize")
    };
    let (attacker, other) = (connect().await, connect().await);

    // Another client's call to window w-2 takes the UI and holds it.
    let held = tokio::spawn(async move {
        let r = call(&other, "w-2__hold", Some(json!({}))).await;
        (r, other)
    });
    tokio::task::spawn_blocking(move || entered_rx.recv()).await.unwrap().expect("the held call started");

    let order = Arc::new(Mutex::new(Vec::new()));
    let r = call(&attacker, "w-1__set_text", Some(Value::Object(flood(160_000)))).await;
    order.lock().unwrap().push("flood answered");
    release_tx.send(()).unwrap();
    let (held_result, _other) = held.await.unwrap();
    order.lock().unwrap().push("held call completed");

    assert_eq!(error_code(&r), "validation_failed", "{:?}", structured(&r));
    let body = structured(&r);
    let fields = body["fields"].as_array().unwrap();
    assert_eq!(fields.len(), 20);
    assert_eq!(fields[0], json!({"field": "k000000", "error": "Unknown parameter"}));
    assert!(fields.iter().all(|f| f["error"] == "Unknown parameter"), "{fields:?}");
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("at most 10000 are accepted"), "{message}");
    assert!(message.contains("159980 more problems left out (at most 20 are listed)"), "{message}");
    assert_ne!(held_result.is_error, Some(true), "{held_result:?}");
    assert_eq!(*order.lock().unwrap(), ["flood answered", "held call completed"]);
    // The window the flood aimed at still works.
    let ok = call(&attacker, "w-1__set_text", Some(json!({"text": "fine"}))).await;
    assert_ne!(ok.is_error, Some(true), "{ok:?}");
}

// GB-7.3-1: with the flood in flight on one connection, another client's call to another window,
// sent after it, completes first; the flood is then answered `validation_failed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn another_clients_call_completes_before_a_flood() {
    let bridge = bridge_with(|b| b);
    let connect = || async {
        let (client_io, server_io) = tokio::io::duplex(1 << 20);
        serve(&bridge, server_io);
        mcp_support::Recorder::default().serve(client_io).await.expect("initialize")
    };
    let (attacker, other) = (connect().await, connect().await);
    let order = Arc::new(Mutex::new(Vec::new()));
    let o = order.clone();
    let flooding = tokio::spawn(async move {
        let r = call(&attacker, "w-1__set_text", Some(Value::Object(flood(160_000)))).await;
        o.lock().unwrap().push("flood");
        r
    });
    let r = call(&other, "w-2__set_text", Some(json!({"text": "mine"}))).await;
    order.lock().unwrap().push("other");
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let flood_result = flooding.await.unwrap();
    assert_eq!(error_code(&flood_result), "validation_failed");
    assert_eq!(*order.lock().unwrap(), ["other", "flood"]);
}

// GB-7.3-1: over the key cap, the unknown parameters are named first (in key order), then the
// declared ones holding the most keys; the message states the cap and counts what is left out.
#[tokio::test]
async fn too_many_keys_names_the_parameters() {
    let bridge = bridge_with(|b| b.max_argument_keys(10).max_reported_problems(3));
    let mut args = flood(12);
    args.remove("text");
    let e = err(bridge.call_tool("w-1__set_text", args).await);
    assert_eq!(e.code, ErrorCode::ValidationFailed);
    let fields = e.fields.unwrap();
    assert_eq!(fields.iter().map(|f| f.field.as_str()).collect::<Vec<_>>(), ["k000000", "k000001", "k000002"]);
    assert!(e.message.contains("12 keys where at most 10 are accepted"), "{}", e.message);
    assert!(e.message.contains("9 more problems left out (at most 3 are listed)"), "{}", e.message);

    // A declared parameter holding too many keys is named with its count.
    let tree: Map<String, Value> = (0..20).map(|i| (format!("n{i}"), json!(i))).collect();
    let e = err(bridge.call_tool("w-1__set_tree", Map::from_iter([("tree".into(), Value::Object(tree))])).await);
    let fields = e.fields.unwrap();
    assert_eq!(fields.len(), 1);
    assert_eq!(fields[0].field, "tree");
    assert_eq!(fields[0].error, "Holds 21 keys; the arguments may hold at most 10 in all");
    // Within the cap the call runs.
    let ok = bridge.call_tool("w-1__set_tree", Map::from_iter([("tree".into(), json!({"a": 1}))])).await;
    assert!(ok.result.is_ok(), "{:?}", ok.result);
}

// GB-7.3-1: a parameter nested deeper than the cap is named; a tree within it is served.
#[tokio::test]
async fn too_deep_names_the_parameter() {
    let bridge = bridge_with(|b| b);
    let nested = |levels: usize| (0..levels).fold(json!(1), |inner, _| json!([inner]));
    // `arguments` is level 1: 63 more levels are the most the default cap (64) takes.
    let ok = bridge.call_tool("w-1__set_tree", Map::from_iter([("tree".into(), nested(63))])).await;
    assert!(ok.result.is_ok(), "{:?}", ok.result);
    let e = err(bridge.call_tool("w-1__set_tree", Map::from_iter([("tree".into(), nested(64))])).await);
    assert_eq!(e.code, ErrorCode::ValidationFailed);
    let fields = e.fields.unwrap();
    assert_eq!(fields.len(), 1);
    assert_eq!(fields[0].field, "tree");
    assert_eq!(fields[0].error, "Nested deeper than 64 levels, the most this app accepts");
    assert!(e.message.contains("nested deeper than 64 levels"), "{}", e.message);
    // Nothing was left out, so the message does not count "0 more problems".
    assert!(!e.message.contains("more problems left out"), "{}", e.message);
    assert!(e.message.ends_with("were not validated further"), "{}", e.message);
}

// GB-7.3-1: over the byte cap, the largest parameters are named until the rest fits.
#[tokio::test]
async fn too_large_names_the_parameter() {
    let bridge = bridge_with(|b| b.max_argument_bytes(1000));
    let args = Map::from_iter([("tree".into(), json!("y".repeat(2000))), ("expectedVersion".into(), json!(1))]);
    let e = err(bridge.call_tool("w-1__set_tree", args).await);
    assert_eq!(e.code, ErrorCode::ValidationFailed);
    assert!(!serde_json::to_string(&e).unwrap().contains("yyyy"), "the bytes never appear in the error");
    let fields = e.fields.unwrap();
    assert_eq!(fields.len(), 1);
    assert_eq!(fields[0].field, "tree");
    assert_eq!(fields[0].error, "Takes 2009 bytes; the arguments may take at most 1000 bytes in all");
    assert!(e.message.contains("2031 bytes where at most 1000 are accepted"), "{}", e.message);
}

// OQ-GB-21 with the caps ahead of the UI: a call both stale and over a cap is `validation_failed`
// (the caps are judged first, like a transport's size limit); within the caps, a stale and
// invalid call is still `stale_state` first.
#[tokio::test]
async fn caps_come_before_stale_state_validation_after_it() {
    let bridge = bridge_with(|b| b.max_argument_keys(5));
    let mut over = flood(10);
    over.insert("expectedVersion".into(), json!(999));
    assert_eq!(err(bridge.call_tool("w-1__set_text", over).await).code, ErrorCode::ValidationFailed);
    let within = Map::from_iter([("text".into(), json!(5)), ("expectedVersion".into(), json!(999))]);
    assert_eq!(err(bridge.call_tool("w-1__set_text", within).await).code, ErrorCode::StaleState);
    // A call over a cap to a window that does not exist is `validation_failed` too.
    assert_eq!(err(bridge.call_tool("w-9__set_text", flood(10)).await).code, ErrorCode::ValidationFailed);
}

// The caps apply to the host's own `Ui::call_tool` as well, where `validation_failed` stands in
// the OQ-GB-21 order; `ArgumentLimits::unlimited` turns them off and lists every problem.
#[test]
fn caps_hold_in_the_ui_and_can_be_lifted() {
    let (_b, mut owner) = Bridge::builder("caps", "1").window::<Pad>().max_argument_keys(5).build();
    let ui = owner.ui();
    let a = ui.open(pad(), OpenOptions::window());
    let e = ui.call_tool(&format!("{a}__set_text"), flood(10), false).unwrap_err();
    assert!(e.message.contains("11 keys where at most 5 are accepted"), "{}", e.message);

    let (_b, mut owner) = Bridge::builder("caps", "1")
        .window::<Pad>()
        .argument_limits(bridge_runtime::gui::ArgumentLimits::unlimited())
        .build();
    let ui = owner.ui();
    let a = ui.open(pad(), OpenOptions::window());
    let e = ui.call_tool(&format!("{a}__set_text"), flood(100), false).unwrap_err();
    assert_eq!(e.fields.unwrap().len(), 100);
}

// GB-7.3-1, GB-4.5-2: an unknown parameter's name is echoed with its invisible and control
// characters escaped (`\u{200b}`), never raw (a zero-width space would make `te​xt` pass for
// `text`; a bidi override or an escape sequence would reach the agent and the log), and cut to a
// bounded prefix; within the caps (the validator's problem) and over them (the caps' problem)
// alike. (Before: the names came back raw and whole.)
#[tokio::test]
async fn unknown_parameter_names_are_echoed_visibly_and_bounded() {
    let bridge = bridge_with(|b| b.max_argument_keys(3));
    let hostile = ["te\u{200B}xt", "\u{202E}txet", "x\u{1b}[2J", "tag\u{E0041}"];
    let long = "y".repeat(10_000);
    let expect = ["te\\u{200b}xt", "\\u{202e}txet", "x\\u{001b}[2J", "tag\\u{e0041}"];
    // Within the caps (two hostile keys plus the text): the schema validator names them.
    for pair in [[0, 1], [2, 3]] {
        let mut args = Map::from_iter([("text".to_owned(), json!("x"))]);
        for i in pair {
            args.insert(hostile[i].to_owned(), json!(1));
        }
        let e = err(bridge.call_tool("w-1__set_text", args).await);
        assert_eq!(e.code, ErrorCode::ValidationFailed);
        let fields: Vec<String> = e.fields.unwrap().into_iter().map(|f| f.field).collect();
        for i in pair {
            assert!(fields.contains(&expect[i].to_owned()), "{fields:?}");
        }
    }
    // Over the key cap: the caps name them, escaped the same way; a 10,000-character name is cut.
    let mut args: Map<String, Value> = hostile.iter().map(|k| ((*k).to_owned(), json!(1))).collect();
    args.insert(long.clone(), json!(1));
    let e = err(bridge.call_tool("w-1__set_text", args).await);
    let fields: Vec<String> = e.fields.unwrap().into_iter().map(|f| f.field).collect();
    for x in expect {
        assert!(fields.contains(&x.to_owned()), "{fields:?}");
    }
    for f in &fields {
        let hidden = |c: char| {
            c.is_control()
                || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{E0000}'..)
        };
        assert!(!f.chars().any(hidden), "{f:?}");
        assert!(f.chars().count() <= 81, "bounded: {} characters", f.chars().count());
    }
}
