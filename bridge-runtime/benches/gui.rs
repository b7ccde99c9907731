//! Window-model costs that every protocol surface pays: publishing `app://windows` for 100
//! windows × 20 blocks (vs a plain `serde_json::to_string` of the same value), dispatching a
//! tool call (runtime checks + jsonschema + action + re-render + publish), and building the
//! tool list; and the same operations end to end through the MCP server (rmcp client ↔ server
//! over an in-process pipe). Run: `cargo bench -p bridge-runtime --bench gui`.

// The package's `unreachable_pub` lint is for the library's API; here `pub` marks what the
// fixture modules share.
#![allow(unreachable_pub)]

/// The MCP tests' fixtures (`tests/it/support/mcp.rs`): the server side of the pipe.
#[path = "../tests/it/support/mcp.rs"]
mod mcp_support;

use bridge_runtime::catalog::{
    ActionHints, ActionSpec, BlockKind, BlockSpec, DescribeActions, DescribeWindow, WindowMeta,
};
use bridge_runtime::gui::{ActionContext, ActionError, Bridge, BridgeActions, BridgeWindow, OpenOptions, Rendered};
use bridge_runtime::model::{Block, FieldItem, Severity};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use std::hint::black_box;

#[derive(schemars::JsonSchema, serde::Deserialize)]
#[allow(dead_code)]
struct EditParams {
    field: String,
    value: String,
}

/// A window with 20 blocks of mixed kinds.
struct Big {
    n: usize,
    value: String,
}

impl DescribeWindow for Big {
    fn window_meta() -> WindowMeta {
        WindowMeta {
            type_name: "Big".into(),
            title: "Big".into(),
            blocks: (0..20)
                .map(|i| BlockSpec {
                    id: format!("b{i}"),
                    kind: BlockKind::Fields,
                    label: format!("B{i}"),
                    max_rows: None,
                    sensitive: false,
                })
                .collect(),
        }
    }
}

impl BridgeWindow for Big {
    fn render(&self) -> Rendered {
        let blocks = (0..20)
            .map(|i| match i % 4 {
                0 => Block::Fields {
                    id: Some(format!("b{i}")),
                    items: vec![
                        FieldItem::new("Name", self.value.clone()),
                        FieldItem::new("Count", self.n),
                        FieldItem::redacted("Secret"),
                    ],
                },
                1 => Block::Table {
                    id: Some(format!("b{i}")),
                    columns: vec!["A".into(), "B".into(), "C".into()],
                    rows: (0..5).map(|r| vec![json!(r), json!("cell"), json!(r as f64 * 1.5)]).collect(),
                    offset: None,
                    total: None,
                },
                2 => Block::Notice {
                    id: Some(format!("b{i}")),
                    severity: Severity::Info,
                    text: format!("Window {} is fine", self.n),
                },
                _ => Block::Text { id: Some(format!("b{i}")), text: "Some paragraph of text in the window.".into() },
            })
            .collect();
        Rendered {
            title: format!("Window {}", self.n),
            summary: Some(format!("Window {} showing {}", self.n, self.value)),
            blocks,
        }
    }
}

impl DescribeActions for Big {
    fn action_specs_for(window_level: bool) -> Vec<ActionSpec> {
        vec![
            ActionSpec::new("edit").description("Edit a value").params::<EditParams>().finish(window_level),
            ActionSpec::new("peek")
                .description("Read")
                .hints(ActionHints { read_only: true, ..Default::default() })
                .finish(window_level),
            ActionSpec::new("close").description("Close").finish(window_level),
        ]
    }
}

impl BridgeActions for Big {
    fn action_available(&self, _: &str) -> bool {
        true
    }
    fn invoke_action(
        &mut self,
        action: &str,
        args: Map<String, Value>,
        _: &mut ActionContext<'_>,
    ) -> Result<Option<Value>, ActionError> {
        if action == "edit" {
            self.value = args["value"].as_str().unwrap_or_default().to_owned();
        }
        Ok(None)
    }
}

fn benches(c: &mut Criterion) {
    let (_bridge, mut owner) = Bridge::builder("bench", "0").window::<Big>().build();
    for n in 0..100 {
        owner.ui().open(Big { n, value: "v".into() }, OpenOptions::window());
    }
    let published = owner.ui().published();
    println!("app://windows with 100 windows x 20 blocks: {} bytes", published.snapshot_json().len());

    let mut g = c.benchmark_group("app_windows_read_100x20");
    g.bench_function("published_snapshot_json", |b| {
        b.iter(|| black_box(owner.ui().published().snapshot_json().to_string()))
    });
    g.bench_function("plain_serde_json_to_string", |b| {
        b.iter(|| black_box(serde_json::to_string(published.snapshot()).unwrap()))
    });
    g.finish();

    let mut g = c.benchmark_group("dispatch_100x20");
    let mut i = 0u64;
    g.bench_function("tools_call_edit_rerender_publish", |b| {
        b.iter(|| {
            i += 1;
            let args = json!({"field": "Name", "value": format!("v{i}")}).as_object().cloned().unwrap();
            black_box(owner.ui().call_tool("w-50__edit", args, false).unwrap())
        })
    });
    g.bench_function("tools_call_read_only_no_change", |b| {
        b.iter(|| black_box(owner.ui().call_tool("w-50__peek", Map::new(), false).unwrap()))
    });
    g.bench_function("tools_list_entries_100_windows", |b| {
        b.iter(|| {
            black_box(owner.ui().published().tools.iter().map(|t| (t.name.clone(), t.title())).collect::<Vec<_>>())
        })
    });
    g.finish();
}

fn mcp_benches(c: &mut Criterion) {
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams};
    let rt = tokio::runtime::Runtime::new().unwrap();
    let bridge = Bridge::builder("bench", "0").window::<Big>().spawn_headless(|ui| {
        for n in 0..100 {
            ui.open(Big { n, value: "v".into() }, OpenOptions::window());
        }
    });
    let client = rt.block_on(async {
        let (server_io, client_io) = tokio::io::duplex(1 << 22);
        mcp_support::serve(&bridge, server_io);
        ().serve(client_io).await.unwrap()
    });
    let mut g = c.benchmark_group("mcp_duplex_100x20");
    g.bench_function("resources_read_app_windows", |b| {
        b.to_async(&rt).iter(|| async {
            black_box(client.read_resource(ReadResourceRequestParams::new("app://windows")).await.unwrap())
        })
    });
    g.bench_function("tools_list_100_windows", |b| {
        b.to_async(&rt).iter(|| async { black_box(client.list_tools(None).await.unwrap()) })
    });
    g.bench_function("tools_call_read_only", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(client.call_tool(CallToolRequestParams::new("w-50__peek")).await.unwrap()) })
    });
    g.finish();
    rt.block_on(async move {
        let _ = client.cancel().await;
    });
}

/// The stdio pre-layer's cost (BENCHMARKS.md "Dispatch"): the same read-only call and the same
/// read through `serve_stdio_on` (pre-layer: classify each line with rmcp's types, one more
/// in-process pipe each way, a call ticket) and through rmcp's own transport on the same kind of
/// pipe, in one run.
fn prelayer_benches(c: &mut Criterion) {
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams};
    let rt = tokio::runtime::Runtime::new().unwrap();
    let bridge = Bridge::builder("bench", "0").window::<Big>().spawn_headless(|ui| {
        for n in 0..100 {
            ui.open(Big { n, value: "v".into() }, OpenOptions::window());
        }
    });
    let (direct, prelayer) = rt.block_on(async {
        let (server_io, client_io) = tokio::io::duplex(1 << 22);
        mcp_support::serve(&bridge, server_io);
        let direct = ().serve(client_io).await.unwrap();
        let (server_io, client_io) = tokio::io::duplex(1 << 22);
        let (read, write) = tokio::io::split(server_io);
        tokio::spawn(bridge_runtime::mcp::serve_stdio_on(bridge.clone(), read, write));
        (direct, ().serve(client_io).await.unwrap())
    });
    let mut g = c.benchmark_group("stdio_prelayer_100x20");
    for (name, client) in [("rmcp_transport", &direct), ("prelayer", &prelayer)] {
        g.bench_function(format!("tools_call_read_only/{name}"), |b| {
            b.to_async(&rt)
                .iter(|| async { black_box(client.call_tool(CallToolRequestParams::new("w-50__peek")).await.unwrap()) })
        });
        g.bench_function(format!("resources_read_app_windows/{name}"), |b| {
            b.to_async(&rt).iter(|| async {
                black_box(client.read_resource(ReadResourceRequestParams::new("app://windows")).await.unwrap())
            })
        });
    }
    g.finish();
    rt.block_on(async move {
        let _ = direct.cancel().await;
        let _ = prelayer.cancel().await;
    });
}

/// A report of many rows whose type keeps undo copies (issue #20 item 3): each agent call of a
/// changing action clones it first.
#[derive(Clone)]
#[bridge_runtime::bridge_window(title = "Report", summary = "Report with {touches} touches", undo)]
struct UndoReport {
    #[bridge(table, id = "rows", max_rows = 20)]
    rows: Vec<UndoRow>,
    #[bridge(skip)]
    touches: u64,
}

/// One row, as the Order Editor's "Report Details" has them.
#[derive(Clone, bridge_runtime::BridgeRow)]
struct UndoRow {
    order: u32,
    customer: String,
    total: f64,
}

#[bridge_runtime::bridge_actions]
impl UndoReport {
    /// Count a touch (changes what the window shows).
    #[bridge_runtime::bridge_action]
    fn touch(&mut self) {
        self.touches += 1;
    }
}

/// The cost of undo copies (BENCHMARKS.md "Undo copies"): the same agent call on a window of
/// `rows` rows whose type keeps undo copies, with `undo_depth(0)` (no copy) and the default
/// (a copy per call, ten kept).
fn undo_benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("undo_copy");
    for rows in [10usize, 10_000] {
        for depth in [0usize, 10] {
            let (_bridge, mut owner) = Bridge::builder("bench", "0").window::<UndoReport>().undo_depth(depth).build();
            let names = ["Alice", "Bob", "Chen", "Dana", "Emeka", "Fatima", "Goro"];
            let report = UndoReport {
                rows: (0..rows)
                    .map(|i| UndoRow { order: i as u32, customer: names[i % 7].into(), total: i as f64 + 0.99 })
                    .collect(),
                touches: 0,
            };
            owner.ui().open(report, OpenOptions::window());
            g.bench_function(format!("tools_call_touch/{rows}_rows/undo_depth_{depth}"), |b| {
                b.iter(|| black_box(owner.ui().call_tool("w-1__touch", Map::new(), false).unwrap()))
            });
        }
    }
    g.finish();
}

criterion_group!(gui, benches, mcp_benches, prelayer_benches, undo_benches);
criterion_main!(gui);
