//! `--bench-frames N`: the app's main-window frame drawn headless (egui without a window or GPU:
//! layout and tessellation, what the app's own code costs per frame; the report windows are
//! left out, as a headless context has no OS windows to give them), with bridge and without, in
//! interleaved rounds so a noisy machine slows both alike (BENCHMARKS.md, issue #9 item 5).
//!
//! With bridge, each frame also locks the owner and drains its queue, and every 10th frame an
//! "agent" has queued one `edit_field` call (the frame runs it, as in the app), so the figure
//! includes the bridge's work per call: dispatch, re-render, version, publish. Without bridge,
//! the plain model takes the same edit every 10th frame.

use crate::gui::{OrderEditorApp, Source};
use crate::model::PlainModel;
use bridge_runtime::Bridge;
use eframe::egui;
use serde_json::{Value, json};
use std::future::Future;
use std::time::{Duration, Instant};

const ROUNDS: usize = 7;

/// One variant: the app, its bridge (if any) and a headless context.
struct Variant {
    name: &'static str,
    app: OrderEditorApp,
    bridge: Option<Bridge>,
    ctx: egui::Context,
}

fn variant(name: &'static str, rows: usize) -> Variant {
    let (source, bridge) = if name == "bridge" {
        // No fallback in the way: the frame runs every operation.
        let (bridge, owner) = crate::app::build(rows).build_for_gui(Duration::from_secs(3600), || {});
        crate::app::open_initial(owner.frame().ui(), rows);
        (Source::Bridge(owner), Some(bridge))
    } else {
        (Source::Plain(Box::new(PlainModel::new(rows))), None)
    };
    Variant { name, app: OrderEditorApp::new(source, None).without_viewports(), bridge, ctx: egui::Context::default() }
}

fn edit_args(n: u32) -> serde_json::Map<String, Value> {
    let args = json!({"field": "recipient", "value": format!("Agent {n}")});
    args.as_object().cloned().unwrap_or_default()
}

fn frame(v: &mut Variant, n: u32) {
    if n.is_multiple_of(10) {
        match &v.bridge {
            // Queued the way the MCP server queues a call (polled once: that sends it; the
            // answer is not awaited); this frame's lock runs it.
            Some(bridge) => {
                let queued = bridge.run(move |ui| ui.call_tool("w-A__edit_field", edit_args(n), false));
                let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
                let _ = std::pin::pin!(queued).poll(&mut cx);
            }
            None => v.app.apply_to_plain("w-A__edit_field", edit_args(n)),
        }
    }
    let input = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(760.0, 620.0))),
        time: Some(f64::from(n) / 60.0),
        ..Default::default()
    };
    let mut output = v.ctx.run_ui(input, |ui| v.app.draw(ui));
    output.textures_delta.clear(); // no GPU to upload the font atlas to
    if n.is_multiple_of(10) && n > 0 {
        debug_assert!(v.app.recipient().is_some_and(|r| r == format!("Agent {n}")), "the edit was applied");
    }
    std::hint::black_box(v.ctx.tessellate(output.shapes, output.pixels_per_point));
}

/// Runs the benchmark and prints one JSON line: `{"frames", "rows", "rounds": [{"bridge": µs,
/// "plain": µs}, …], "medianUs": {…}, "ratio": bridge / plain}` (µs per frame).
pub fn frames(n: u32, rows: usize, only: Option<&str>) {
    let names: Vec<&'static str> = match only {
        Some("bridge") => vec!["bridge"],
        Some(_) => vec!["plain"],
        None => vec!["bridge", "plain"],
    };
    let mut variants: Vec<Variant> = names.iter().map(|name| variant(name, rows)).collect();
    for v in &mut variants {
        for i in 1..=20 {
            frame(v, i); // warm-up: fonts, galley caches
        }
    }
    let rounds = if only.is_some() { 1 } else { ROUNDS };
    let mut per_round = Vec::new();
    for _ in 0..rounds {
        let mut round = serde_json::Map::new();
        for v in &mut variants {
            let start = Instant::now();
            for i in 0..n {
                frame(v, i);
            }
            round.insert(v.name.into(), json!(start.elapsed().as_secs_f64() * 1e6 / f64::from(n)));
        }
        per_round.push(Value::Object(round));
    }
    let median = |name: &str| {
        let mut xs: Vec<f64> = per_round.iter().filter_map(|r| r[name].as_f64()).collect();
        xs.sort_by(f64::total_cmp);
        xs.get(xs.len() / 2).copied()
    };
    let medians: serde_json::Map<String, Value> =
        names.iter().map(|name| ((*name).into(), json!(median(name)))).collect();
    let ratio = match (median("bridge"), median("plain")) {
        (Some(b), Some(p)) if p > 0.0 => json!(b / p),
        _ => Value::Null,
    };
    println!("{}", json!({"frames": n, "rows": rows, "rounds": per_round, "medianUs": medians, "ratio": ratio}));
}
