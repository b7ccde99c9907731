//! `BridgeBuilder::build_for_gui` (issue #9): a GUI's frames run the queued operations, and a
//! fallback thread runs them when no frame comes (a minimized or hidden window), so an agent is
//! never left waiting for one; the read API a GUI draws from; the agent's last call.

use crate::support::mcp::{App, Confirm, Editor};
use bridge_runtime::gui::{Actor, OwnerGone};
use bridge_runtime::{Bridge, OpenOptions};
use serde_json::{Map, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

fn builder() -> bridge_runtime::BridgeBuilder {
    Bridge::builder("gui-app", "1").app(App).window::<Editor>().window::<Confirm>()
}

fn args(v: serde_json::Value) -> Map<String, serde_json::Value> {
    v.as_object().cloned().unwrap_or_default()
}

/// Which thread ran an operation.
async fn ran_on(bridge: &Bridge) -> String {
    bridge.run(|_| std::thread::current().name().unwrap_or("?").to_owned()).await.expect("owner alive")
}

// No frame ever comes (the window is minimized): calls still complete, run by the fallback
// thread, and each queued operation asked for a repaint.
#[tokio::test]
async fn without_frames_the_fallback_thread_runs_calls() {
    let repaints = Arc::new(AtomicUsize::new(0));
    let counter = repaints.clone();
    let (bridge, owner) = builder().build_for_gui(Duration::from_millis(20), move || {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    owner.frame().ui().open(Editor { recipient: String::new(), amount: 1.0 }, OpenOptions::window());
    let outcome = bridge.call_tool("w-1__set_amount", args(json!({"amount": 3}))).await;
    assert!(outcome.result.is_ok(), "{:?}", outcome.result);
    assert_eq!(ran_on(&bridge).await, "bridge-fallback");
    assert!(repaints.load(Ordering::SeqCst) >= 2, "a repaint per queued operation");
    drop(owner);
}

// With frames (a GUI thread that draws whenever asked to repaint), the frame runs them.
#[tokio::test]
async fn frames_run_the_calls_when_they_come() {
    // `true`: draw a frame; `false`: the app quits.
    let (wake_tx, wake_rx) = std::sync::mpsc::channel::<bool>();
    let quit = wake_tx.clone();
    let (bridge, owner) = builder().build_for_gui(Duration::from_secs(30), move || {
        let _ = wake_tx.send(true);
    });
    let gui = owner.clone();
    let frames = std::thread::Builder::new()
        .name("gui-frame".into())
        .spawn(move || {
            let mut n = 0;
            while wake_rx.recv() == Ok(true) {
                let mut frame = gui.frame();
                // Drawing reads the windows through the owner API.
                n += frame.ui().windows_of::<Editor>().count();
            }
            n
        })
        .unwrap();
    owner.frame().ui().open(Editor { recipient: String::new(), amount: 1.0 }, OpenOptions::window());
    let outcome = bridge.call_tool("w-1__set_recipient", args(json!({"recipient": "Ada"}))).await;
    assert!(outcome.result.is_ok(), "{:?}", outcome.result);
    assert_eq!(ran_on(&bridge).await, "gui-frame");
    quit.send(false).unwrap();
    assert!(frames.join().unwrap() >= 1);
    drop(owner);
}

// The read API a GUI draws from, operability, and the agent's last call (issue #9 item 2).
#[tokio::test]
async fn drawing_reads_state_and_sees_the_agents_last_call() {
    let (bridge, owner) = builder().build_for_gui(Duration::from_millis(10), || {});
    let id = owner.frame().ui().open(Editor { recipient: String::new(), amount: 2.5 }, OpenOptions::window());
    {
        let mut frame = owner.frame();
        let ui = frame.ui();
        assert_eq!(ui.window::<Editor>(&id).map(|e| e.amount), Some(2.5));
        assert!(ui.window::<Confirm>(&id).is_none(), "wrong type");
        assert!(ui.window::<Editor>("w-9").is_none());
        assert!(ui.is_operable(&id));
        assert!(ui.last_agent_call().is_none());
    }
    bridge.call_tool(&format!("{id}__set_recipient"), args(json!({"recipient": "Bo"}))).await;
    {
        let mut frame = owner.frame();
        let call = frame.ui().last_agent_call().cloned().expect("a call");
        assert_eq!(
            (call.window_id.as_deref(), call.action.as_str(), call.ok, call.seq),
            (Some(id.as_str()), "set_recipient", true, 1)
        );
        // The user's own call through the host API is not the agent's.
        frame.ui().call_tool(&format!("{id}__set_amount"), args(json!({"amount": 4})), true).unwrap();
        assert_eq!(frame.ui().last_agent_call().map(|c| c.seq), Some(1));
        // A modal blocks its owner for the user too.
        frame.ui().call_tool(&format!("{id}__submit"), Map::new(), true).unwrap();
        assert!(!frame.ui().is_operable(&id));
    }
    drop(owner);
    // The owner is gone with the last GuiOwner handle: operations are refused, never hang.
    assert_eq!(bridge.run(|_| ()).await, Err(OwnerGone));
}

// Issue 21: `Bridge::watch_agent_calls` wakes for every agent call, one that changes nothing
// and a refused one included (`Bridge::watch` does not), and not for the user's calls.
#[tokio::test]
async fn every_agent_call_wakes_its_watchers() {
    let bridge = builder().spawn_headless(|ui| {
        ui.open(Editor { recipient: "Ann".into(), amount: 2.5 }, OpenOptions::window());
    });
    let mut calls = bridge.watch_agent_calls();
    assert!(calls.borrow_and_update().is_none());
    let generation = bridge.published().generation;
    bridge.call_tool("w-1__set_recipient", args(json!({"recipient": "Ann"}))).await;
    assert_eq!(bridge.published().generation, generation, "the same value changes nothing");
    assert!(calls.has_changed().unwrap());
    let call = calls.borrow_and_update().clone().expect("the call");
    assert_eq!((call.tool.as_str(), call.ok, call.seq), ("w-1__set_recipient", true, 1));
    bridge.call_tool("w-1__set_recipient", args(json!({"nope": 1}))).await;
    let call = calls.borrow_and_update().clone().expect("the call");
    assert_eq!((call.ok, call.seq), (false, 2));
    bridge.call_tool_as(Actor::User, "w-1__set_recipient", args(json!({"recipient": "Bo"}))).await;
    assert!(!calls.has_changed().unwrap(), "the user's call is not the agent's");
}
